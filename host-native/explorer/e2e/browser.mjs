// Launches Debian's Chromium through playwright-core (no browser download),
// with the flags of host-wasm/e2e/browser.mjs (each e2e package has its own
// node_modules, so the file is not shared).
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

export function launch(extraArgs = []) {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run", ...extraArgs],
  });
}

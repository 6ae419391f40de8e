// Launches Debian's Chromium through playwright-core (no browser download).
import { chromium } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";

export function launch() {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
}

/** Opens the demo page at `url` and loads the packaged module as `window.wasm`. */
export async function loadModule(page, url, timeout = 30_000) {
  await page.goto(`${url}/demo/`);
  await page.waitForSelector("body[data-ready=true]", { timeout });
  await page.evaluate(async () => {
    const m = await import("/pkg/mentisdb_wasm.js");
    await m.default();
    window.wasm = m;
  });
}

#!/usr/bin/env python3
"""Checks that the test command builds each of our crates once (native, debug).

Cargo unifies a dependency's features over what one invocation builds, so
`cargo build --bin mentisdbd` and `cargo test -p mentisdb-tests` can see
different feature sets of, say, tokio, and then rebuild mentisdb-core and
everything above it. workspace-hack/Cargo.toml lists the union of every
varying feature set so that all native builds agree. This script asks cargo
(the pinned nightly's `--unit-graph`, whose resolver the stable one
follows; nothing is compiled) what each native `cargo test` / `build` /
`run -p` line of scripts/stages/*.sh and scripts/*.sh would build, and
fails when a crate of this workspace would be built in more than one
configuration, printing the third-party feature sets that differ (their
union) for workspace-hack/Cargo.toml. Stage 90 runs it.

Usage: python3 scripts/feature_splits.py [--toolchain NIGHTLY]
"""

import argparse
import collections
import hashlib
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
# A cargo command of this workspace's native debug builds: `cargo test`,
# `build` or `run` naming its package (cross-target builds, other toolchains
# and release builds are built once by design and not asked about).
CARGO_COMMAND = re.compile(r"(?:^|[;&|(]\s*|\s)(?:[A-Z0-9_]+=\S+\s+)*cargo (test|build|run) (.*)$")


def script_lines(path):
    """A script's lines, `\\`-continued lines joined, comments dropped."""
    joined, pending = [], ""
    for line in path.read_text().splitlines():
        line = line.split(" #")[0] if not line.lstrip().startswith("#") else ""
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        joined.append(pending + line)
        pending = ""
    return joined


def stage_invocations():
    """The native `cargo test|build|run -p ...` invocations the test command makes:
    the stage scripts and the scripts they run."""
    scripts = sorted((ROOT / "scripts" / "stages").glob("*.sh"))
    scripts += [p for p in sorted((ROOT / "scripts").glob("*.sh")) if p.name != "test.sh"]
    found = []
    for script in scripts:
        for line in script_lines(script):
            match = CARGO_COMMAND.search(line)
            if not match:
                continue
            args = match.group(2).split(" -- ")[0]
            args = re.split(r"\s*(?:\|\||&&|2>&1|\||;|\))", args)[0].split()
            args = ["-p" if a == "--package" else a for a in args]
            if "-p" not in args or "--target" in args or "--release" in args or any(a.startswith("+") for a in args):
                continue
            if match.group(1) == "run":
                # What `cargo run` builds is what `cargo build` with its arguments builds.
                args = [a for a in args if a not in ("-q", "--quiet")]
                found.append(["build"] + args)
            else:
                found.append([match.group(1)] + args)
    return found


def unit_graph(toolchain, invocation):
    args = list(invocation)
    if args[0] == "test" and "--doc" not in args and "--no-run" not in args:
        args.append("--no-run")
    out = subprocess.run(
        ["cargo", f"+{toolchain}"] + args + ["--unit-graph", "-Z", "unstable-options"],
        cwd=ROOT, capture_output=True, text=True,
    )
    if out.returncode != 0:
        sys.exit(f"cargo {' '.join(args)} --unit-graph failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout)["units"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    pinned = re.search(r"^nightly=(\S+)$", (ROOT / "scripts" / "build-wasm-pkg.sh").read_text(), re.M)
    parser.add_argument("--toolchain", default=pinned.group(1) if pinned else "nightly",
                        help="a nightly toolchain (for --unit-graph); default: the one scripts/build-wasm-pkg.sh pins")
    options = parser.parse_args()

    # Our crate's library -> configuration hash -> invocations building it.
    ours = collections.defaultdict(lambda: collections.defaultdict(list))
    # Third-party package (target or host side) -> feature set -> invocations.
    theirs = collections.defaultdict(lambda: collections.defaultdict(list))
    invocations = stage_invocations()
    for number, invocation in enumerate(invocations):
        units = unit_graph(options.toolchain, invocation)
        host = set()

        def mark_host(index):
            if index not in host:
                host.add(index)
                for dep in units[index]["dependencies"]:
                    mark_host(dep["index"])

        for index, unit in enumerate(units):
            kind = unit["target"]["kind"]
            if kind == ["proc-macro"] or (kind == ["custom-build"] and unit["mode"] == "build"):
                mark_host(index)
        memo = {}

        def identity(index):
            # What makes cargo build a unit again: the unit (its profile's
            # settings, not the profile's name) and, recursively, its deps.
            if index not in memo:
                unit = units[index]
                profile = {k: v for k, v in unit["profile"].items() if k != "name"}
                text = json.dumps([unit["pkg_id"], unit["target"]["name"], unit["mode"],
                                   unit["features"], profile], sort_keys=True)
                text += "".join(sorted(identity(d["index"]) for d in unit["dependencies"]))
                memo[index] = hashlib.sha1(text.encode()).hexdigest()
            return memo[index]

        for index, unit in enumerate(units):
            if unit["mode"] != "build" or unit["target"]["kind"] == ["custom-build"]:
                continue
            if unit["pkg_id"].startswith("path+file://"):
                package = unit["pkg_id"].split("#")[-1].split("@")[0]
                ours[f"{package} {'/'.join(unit['target']['kind'])} {unit['target']['name']}"][identity(index)].append(number)
            elif "registry+" in unit["pkg_id"]:
                side = "host" if index in host else "target"
                theirs[(unit["pkg_id"].split("#")[-1], side)][tuple(unit["features"])].append(number)

    print(f"{len(invocations)} cargo invocations of scripts/stages/*.sh and scripts/*.sh")
    split = {name: configs for name, configs in ours.items() if len(configs) > 1}
    if not split:
        print(f"each of our {len(ours)} libraries and binaries is built in one configuration")
        return
    for name, configs in sorted(split.items()):
        print(f"{name} is built in {len(configs)} configurations:")
        for numbers in configs.values():
            print("   by", "; ".join("cargo " + " ".join(invocations[n]) for n in sorted(set(numbers))[:3]))
    print("\nthird-party feature sets that differ (union, for workspace-hack/Cargo.toml):")
    for (package, side), sets in sorted(theirs.items()):
        if len(sets) > 1:
            union = sorted(set().union(*sets))
            print(f"  [{side}] {package}: {union}")
    sys.exit(1)


if __name__ == "__main__":
    main()

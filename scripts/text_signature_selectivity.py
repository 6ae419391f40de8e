#!/usr/bin/env python3
"""How many thoughts the `text` filter's signatures let through to be read
(core/src/text_filter.rs), on LoCoMo's turns with words from its questions.

Replicates the signature: one bit of 128 per run of three word bytes (ASCII
letters and digits, any non-ASCII byte) of the lower-cased text, the bit
being the top 7 bits of (the three bytes, big-endian) * 0x9E3779B1 mod 2^32.
A measuring aid for the module's docs, not a test.

Usage: scripts/text_signature_selectivity.py [LOCOMO_DIR] (default ../shared/bench/locomo)
"""
import glob
import json
import random
import re
import statistics
import sys


def word_byte(b):
    return b >= 0x80 or chr(b).isalnum()


def signature(text, n=3):
    bits, run, data = 0, 0, text.lower().encode()
    for i, b in enumerate(data):
        run = run + 1 if word_byte(b) else 0
        if run >= n:
            gram = int.from_bytes(data[i - n + 1:i + 1], "big")
            bits |= 1 << (((gram * 0x9E3779B1) & 0xFFFFFFFF) >> 25)
    return bits


def pair_signature(text):
    bits, data = 0, text.lower().encode()
    for a, b in zip(data, data[1:]):
        bits |= 1 << (((((a << 8) | b) * 0x9E3779B1) & 0xFFFFFFFF) >> 25)
    return bits


def main():
    if len(sys.argv) > 2 or sys.argv[1:2] in (["-h"], ["--help"]):
        print(__doc__.strip())
        sys.exit(0 if sys.argv[1:2] in (["-h"], ["--help"]) else 2)
    root = sys.argv[1] if len(sys.argv) > 1 else "../shared/bench/locomo"
    paths = sorted(glob.glob(f"{root}/conv-*.json"))
    if not paths:
        sys.exit(f"text_signature_selectivity: no conv-*.json in {root}")
    turns, questions = [], []
    for path in paths:
        for value in json.load(open(path)).values():
            for item in value if isinstance(value, list) else []:
                if isinstance(item, dict) and "text" in item:
                    turns.append(item["text"])
                if isinstance(item, dict) and "question" in item:
                    questions.append(item["question"])
    words = sorted({w for q in questions for w in re.findall(r"[a-z]{4,}", q.lower())})
    words = random.Random(1).sample(words, min(200, len(words)))
    for name, sign in (("runs of three word bytes", signature), ("byte pairs", pair_signature)):
        sigs = [sign(t) for t in turns]
        read = statistics.mean(sum(1 for s in sigs if s & sign(w) == sign(w)) / len(sigs) for w in words)
        bits = statistics.mean(bin(s).count("1") for s in sigs)
        print(f"{name}: {bits:.1f} of 128 bits set a turn; a question word reads {read:.1%} of {len(turns)} turns")
    holds = statistics.mean(sum(1 for t in turns if w in t.lower()) / len(turns) for w in words)
    print(f"turns holding the word: {holds:.1%}")


if __name__ == "__main__":
    main()

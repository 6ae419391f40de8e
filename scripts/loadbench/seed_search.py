#!/usr/bin/env python3
"""Seeds the chain `bench-search` of a running mentisdbd with the 1,000
thoughts the filtered-search loads query (scripts/loadbench/search.lua).
Usage: scripts/loadbench/seed_search.py http://127.0.0.1:PORT"""
import json
import sys
import urllib.request

if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    sys.exit(0)
if len(sys.argv) != 2:
    sys.exit("usage: scripts/loadbench/seed_search.py http://127.0.0.1:PORT")
base = sys.argv[1]
types = ["Finding", "Decision", "Constraint", "Insight", "Mistake", "Correction", "Plan"]
topics = ["rate limit", "deployment", "database latency", "memory", "rust", "embeddings"]
for i in range(1000):
    body = {"chain_key": "bench-search", "agent_id": f"agent-{i % 8}", "thought_type": types[i % len(types)],
            "importance": (i % 10) / 10, "tags": [f"t{i % 20}", "bench"], "concepts": [topics[i % len(topics)]],
            "content": f"Thought {i} about {topics[(i // 3) % len(topics)]} observed during load testing of the daemon."}
    req = urllib.request.Request(f"{base}/v1/thoughts", json.dumps(body).encode(), {"content-type": "application/json"})
    urllib.request.urlopen(req).read()
print("seeded bench-search with 1000 thoughts")

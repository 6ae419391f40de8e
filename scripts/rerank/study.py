#!/usr/bin/env python3
"""Offline study for issue 46: does a re-ranker learned only on LongMemEval
improve LoCoMo retrieval, which it never sees?

Inputs are the `--dump` files of the two benches (top 50 hits per question
with their score parts):

    cargo run --release -p mentisdb-tests --bin longmemeval-bench -- \
        target/longmemeval/longmemeval_oracle.json --haystack pooled --dump /tmp/rr/lme-lex.jsonl
    cargo run --release -p mentisdb-tests --bin locomo-bench -- \
        ../shared/bench/locomo --deep 50 --dump /tmp/rr/locomo-lex.jsonl
    python scripts/rerank/study.py --lme /tmp/rr/lme-lex.jsonl --locomo /tmp/rr/locomo-lex.jsonl

Protocol: every model (and the one parameter of the diversification) is
fitted/chosen on LongMemEval questions at EVEN positions of the dump (the
bench's half A) only. Reported: LongMemEval ODD positions (half B, held
out) and every LoCoMo question of categories 1-4 (held out; the locomo
dump holds only those). Nothing is fitted on LoCoMo.

Metrics are the benches' own:
- LoCoMo: per question the share of its (deduplicated) evidence dia_ids
  among the top k, averaged over questions (locomo_bench.rs `share`).
- LongMemEval: turns recall_any@k (some has_answer turn in the top k);
  sessions recall_any@10 (sessions ordered by their first appearance in the
  ranked top 50, some evidence session among the first 10).

Deps (PyPI): numpy, scikit-learn, lightgbm. Deterministic (fixed seeds,
single thread).
"""
import argparse
import json
import math
import re
import sys
from collections import defaultdict

import numpy as np

SEED = 46
PARTS = ["lexical", "expansion", "vector", "graph", "relation", "importance", "recency", "context", "length", "agent", "stretch"]
RANKED_PARTS = ["lexical", "expansion", "vector", "context", "length", "agent", "stretch"]


# ---------------------------------------------------------------- loading

def load_lme(path):
    qs = []
    for pos, line in enumerate(open(path)):
        q = json.loads(line)
        hits = []
        for h in q["hits"]:
            hits.append({"session": h["session"], "turn": int(h["turn"]), "score": h["score"], "label": bool(h["evidence"])})
        qs.append({"pos": pos, "id": q["id"], "kind": q["kind"], "evidence_sessions": set(q["evidence_sessions"]),
                   "n_evidence": q["evidence_turns"], "hits": hits})
    return qs


DIA = re.compile(r"^D(\d+):(\d+)$")


def load_locomo(path):
    qs = []
    for pos, line in enumerate(open(path)):
        q = json.loads(line)
        hits = []
        for h in q["hits"]:
            dia = (h["dia"] or "")
            dia = dia[4:] if dia.startswith("dia:") else dia
            m = DIA.match(dia)
            session, turn = (f"D{m.group(1)}", int(m.group(2)) - 1) if m else (dia, 0)
            hits.append({"session": session, "turn": turn, "dia": dia, "score": h["score"], "index": h.get("index")})
        ev = list(q["evidence"])
        for h in hits:
            h["label"] = h["dia"] in ev
        qs.append({"pos": pos, "conv": q["conv"], "cat": q["cat"], "evidence": ev, "hits": hits})
    return qs


# ---------------------------------------------------------------- features

def features(q, drop=()):
    """One row per hit; only what the first stage returned (no label)."""
    hits = q["hits"]
    n = len(hits)
    tot = np.array([h["score"]["total"] for h in hits], dtype=float)
    top = max(tot[0], 1e-9) if n else 1.0
    part = {p: np.array([h["score"].get(p, 0.0) for h in hits], dtype=float) for p in PARTS}
    lexmax = max(part["lexical"].max(), 1e-9) if n else 1.0
    # rank of each hit by a part (0 = largest), normalized by the list length
    prank = {}
    for p in RANKED_PARTS:
        order = sorted(range(n), key=lambda i: (-part[p][i], i))
        r = np.empty(n)
        for k, i in enumerate(order):
            r[i] = k
        prank[p] = r / max(n, 1)
    sess = [h["session"] for h in hits]
    in_top10 = defaultdict(int)
    in_top50 = defaultdict(int)
    sess_best = {}
    sess_sum = defaultdict(float)
    for i, s in enumerate(sess):
        if i < 10:
            in_top10[s] += 1
        in_top50[s] += 1
        sess_best.setdefault(s, tot[i])
        sess_sum[s] += tot[i]
    seen = defaultdict(int)
    pos_in_sess = []
    for s in sess:
        pos_in_sess.append(seen[s])
        seen[s] += 1
    turns = {(h["session"], h["turn"]): i for i, h in enumerate(hits)}
    distinct10 = len(set(sess[:10]))
    rows, names = [], None
    for i, h in enumerate(hits):
        f = {}
        for p in PARTS:
            f[f"{p}/top"] = part[p][i] / top
        f["total/top"] = tot[i] / top
        f["lexical/lexmax"] = part["lexical"][i] / lexmax
        f["own_match"] = float(part["lexical"][i] + part["expansion"][i] + part["vector"][i] > 0)
        for p in RANKED_PARTS:
            f[f"rank_by_{p}"] = prank[p][i]
        f["rank"] = i
        f["log_rank"] = math.log1p(i)
        f["inv_rank"] = 1.0 / (1 + i)
        f["gap_next"] = (tot[i] - tot[i + 1]) / top if i + 1 < n else 0.0
        f["gap_prev"] = (tot[i - 1] - tot[i]) / top if i > 0 else 0.0
        f["sess_in_top10"] = in_top10[sess[i]]
        f["sess_in_top50"] = in_top50[sess[i]]
        f["rank_in_sess"] = pos_in_sess[i]
        f["sess_best/top"] = sess_best[sess[i]] / top
        f["sess_sum/top"] = sess_sum[sess[i]] / top
        nb1 = [turns.get((h["session"], h["turn"] + d)) for d in (-1, 1)]
        nb2 = [turns.get((h["session"], h["turn"] + d)) for d in (-2, -1, 1, 2)]
        f["nbr1_in_top50"] = sum(j is not None for j in nb1)
        f["nbr2_in_top50"] = sum(j is not None for j in nb2)
        f["nbr_best/top"] = max([tot[j] for j in nb2 if j is not None], default=0.0) / top
        f["log_turn"] = math.log1p(h["turn"])
        f["distinct_sess_top10"] = distinct10
        if isinstance(drop, Keep):
            f = {k: v for k, v in f.items() if k in drop.names}
        for d in () if isinstance(drop, Keep) else drop:
            f.pop(d, None)
        if names is None:
            names = list(f)
        rows.append([f[k] for k in names])
    return np.array(rows, dtype=float), names


def matrix(qs, drop=()):
    X, y, g, names = [], [], [], None
    for qi, q in enumerate(qs):
        if not q["hits"]:
            continue
        F, names = features(q, drop)
        X.append(F)
        y.extend(int(h["label"]) for h in q["hits"])
        g.extend([qi] * len(q["hits"]))
    return np.vstack(X), np.array(y), np.array(g), names


# ---------------------------------------------------------------- metrics

def locomo_metrics(qs, orders):
    r5 = r10 = 0.0
    per_q = []
    for q, order in zip(qs, orders):
        found = [q["hits"][i]["dia"] for i in order]
        ev = q["evidence"]
        s5 = sum(1 for e in ev if e in found[:5]) / len(ev)
        s10 = sum(1 for e in ev if e in found[:10]) / len(ev)
        per_q.append((s5, s10))
    a = np.array(per_q)
    return a  # (n, 2)


def lme_metrics(qs, orders):
    out = []
    for q, order in zip(qs, orders):
        lab = [q["hits"][i]["label"] for i in order]
        sess = []
        for i in order:
            s = q["hits"][i]["session"]
            if s not in sess:
                sess.append(s)
        any5 = any(lab[:5])
        any10 = any(lab[:10])
        cov10 = sum(lab[:10]) / max(q["n_evidence"], 1)
        s10 = any(s in q["evidence_sessions"] for s in sess[:10])
        out.append((any5, any10, s10, cov10))
    return np.array(out, dtype=float)  # (n, 4)


def base_orders(qs):
    return [list(range(len(q["hits"]))) for q in qs]


def orders_from_scores(qs, scores, groups):
    out = []
    for qi, q in enumerate(qs):
        s = scores[groups == qi]
        # higher first; ties keep the first stage's order
        out.append(sorted(range(len(q["hits"])), key=lambda i: (-s[i], i)))
    return out


def diversify(qs, lam, scores=None, groups=None, depth=50):
    """Greedy: pick the candidate maximizing norm score - lam * (hits already
    picked from its session). Normalized by the query's best score."""
    out = []
    for qi, q in enumerate(qs):
        n = len(q["hits"])
        if scores is None:
            s = np.array([h["score"]["total"] for h in q["hits"]], dtype=float)
            s = s / max(s[0], 1e-9) if n else s
        else:
            s = scores[groups == qi]
            s = (s - s.min()) / max(s.max() - s.min(), 1e-9) if n else s
        left = list(range(n))
        picked, count = [], defaultdict(int)
        while left:
            best = max(left, key=lambda i: (s[i] - lam * count[q["hits"][i]["session"]], -i))
            picked.append(best)
            count[q["hits"][best]["session"]] += 1
            left.remove(best)
        out.append(picked)
    return out


def boot_ci(diff, seed=SEED, n=2000):
    rng = np.random.default_rng(seed)
    m = len(diff)
    means = np.array([diff[rng.integers(0, m, m)].mean() for _ in range(n)])
    return 100 * np.percentile(means, 2.5), 100 * np.percentile(means, 97.5)


# ---------------------------------------------------------------- models

def fit_models(X, y, g, names):
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler
    from sklearn.pipeline import make_pipeline
    from sklearn.ensemble import HistGradientBoostingClassifier
    import lightgbm as lgb

    models = {}
    lr = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000, random_state=SEED))
    lr.fit(X, y)
    models["logreg"] = lr
    hgb = HistGradientBoostingClassifier(max_iter=150, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=40,
                                         l2_regularization=1.0, random_state=SEED)
    hgb.fit(X, y)
    models["hgb"] = hgb
    # LambdaMART (pairwise/listwise), groups = questions in order
    sizes = np.bincount(g)[np.unique(g)]
    rk = lgb.LGBMRanker(n_estimators=150, learning_rate=0.05, num_leaves=15, min_child_samples=40, reg_lambda=1.0,
                        subsample=1.0, colsample_bytree=1.0, random_state=SEED, deterministic=True, n_jobs=1,
                        force_row_wise=True, verbose=-1)
    rk.fit(X, y, group=sizes)
    models["lambdamart"] = rk
    return models


def predict(model, X):
    if hasattr(model, "predict_proba"):
        return model.predict_proba(X)[:, 1]
    return model.predict(X)


def model_size(name, m, nfeat):
    if name == "logreg":
        return f"{nfeat + 1} weights (+{2 * nfeat} scaler floats)"
    if name == "hgb":
        nodes = sum(len(p[0].nodes) for p in m._predictors)
        return f"{len(m._predictors)} trees, {nodes} nodes"
    if name == "lambdamart":
        s = m.booster_.model_to_string()
        return f"{m.booster_.num_trees()} trees, {len(s) / 1024:.0f} KB as text"
    return "?"


# ---------------------------------------------------------------- report

def run(lme_path, loc_path, label, drop=()):
    lme = load_lme(lme_path)
    loc = load_locomo(loc_path)
    even = [q for q in lme if q["pos"] % 2 == 0]
    odd = [q for q in lme if q["pos"] % 2 == 1]
    Xtr, ytr, gtr, names = matrix(even, drop)
    Xod, _, god, _ = matrix(odd, drop)
    Xlo, ylo, glo, _ = matrix(loc, drop)
    print(f"\n=== {label}: train LME even n={len(even)} ({len(ytr)} hits, {ytr.sum()} positive); "
          f"LME odd n={len(odd)}; LoCoMo n={len(loc)} ({ylo.sum()} evidence hits in top 50); {len(names)} features")

    lme_all = lme_metrics(lme, base_orders(lme))
    print(f"check vs bench print: LME all turns any@5 {100*lme_all[:,0].mean():.1f} any@10 {100*lme_all[:,1].mean():.1f} "
          f"sessions any@10 {100*lme_all[:,2].mean():.1f}; halves A {100*lme_all[0::2,0].mean():.1f}/{100*lme_all[0::2,2].mean():.1f} "
          f"B {100*lme_all[1::2,0].mean():.1f}/{100*lme_all[1::2,2].mean():.1f}")
    base_lo = locomo_metrics(loc, base_orders(loc))
    ub10 = np.mean([min(10, sum(1 for e in q["evidence"] if e in [h["dia"] for h in q["hits"]])) / len(q["evidence"]) for q in loc])
    ub5 = np.mean([min(5, sum(1 for e in q["evidence"] if e in [h["dia"] for h in q["hits"]])) / len(q["evidence"]) for q in loc])
    print(f"check vs bench print: LoCoMo R@5 {100*base_lo[:,0].mean():.1f} R@10 {100*base_lo[:,1].mean():.1f}; "
          f"perfect re-rank of the top 50 would give R@5 {100*ub5:.1f} R@10 {100*ub10:.1f}")

    rows = []

    def record(name, o_odd, o_even, o_loc):
        mo = lme_metrics(odd, o_odd)
        me = lme_metrics(even, o_even)
        ml = locomo_metrics(loc, o_loc)
        rows.append((name, mo, me, ml))

    record("first stage (before)", base_orders(odd), base_orders(even), base_orders(loc))

    models = fit_models(Xtr, ytr, gtr, names)
    preds = {}
    for name, m in models.items():
        so, se, sl = predict(m, Xod), predict(m, Xtr), predict(m, Xlo)
        preds[name] = (so, se, sl)
        record(name, orders_from_scores(odd, so, god), orders_from_scores(even, se, gtr), orders_from_scores(loc, sl, glo))

    # diversification: lambda chosen on LME even only
    grid = [0.0, 0.02, 0.05, 0.1, 0.15, 0.2, 0.3, 0.5, 1.0]
    print("diversification grid on LME even (train half): lam -> turns any@5 any@10 cov@10 sessions any@10  [objective = any@10 + cov@10 + sess any@10]")
    best = None
    for lam in grid:
        me = lme_metrics(even, diversify(even, lam)).mean(axis=0)
        obj = me[1] + me[3] + me[2]
        print(f"  {lam:<5} {100*me[0]:5.1f} {100*me[1]:5.1f} {100*me[3]:5.1f} {100*me[2]:5.1f}  obj {obj:.4f}")
        if best is None or obj > best[1] + 1e-12:
            best = (lam, obj)
    lam = best[0]
    record(f"diversify lam={lam}", diversify(odd, lam), diversify(even, lam), diversify(loc, lam))
    # sensitivity on LoCoMo across the grid, for information only (not used to choose)
    sens = []
    for l in grid:
        ml = locomo_metrics(loc, diversify(loc, l)).mean(axis=0)
        sens.append(f"{l}:{100*ml[0]:.1f}/{100*ml[1]:.1f}")
    print("  LoCoMo R@5/R@10 across the grid (information only, NOT used to choose): " + "  ".join(sens))

    print(f"\n{'model':<24} | LME odd (held out) t@5  t@10  s@10 | LME even (train) t@5  t@10  s@10 | LoCoMo c1-4 R@5  R@10 | mean-left-out R@5 R@10 | LoCoMo dR@10 95% CI")
    base_ml = rows[0][3]
    for name, mo, me, ml in rows:
        a, b, c = 100 * mo.mean(axis=0), 100 * me.mean(axis=0), 100 * ml.mean(axis=0)
        convs = np.array([q["conv"] for q in loc])
        nconv = len(set(convs))
        mlo5 = mlo10 = 0.0
        for fold in range(nconv):
            mask = (convs == fold) | (convs == (fold + 1) % nconv)
            mlo5 += 100 * ml[mask, 0].mean() / nconv
            mlo10 += 100 * ml[mask, 1].mean() / nconv
        lo, hi = boot_ci(ml[:, 1] - base_ml[:, 1])
        print(f"{name:<24} | {a[0]:18.1f} {a[1]:5.1f} {a[2]:5.1f} | {b[0]:16.1f} {b[1]:5.1f} {b[2]:5.1f} | {c[0]:12.1f} {c[1]:5.1f} | {mlo5:13.1f} {mlo10:5.1f} | [{lo:+.1f}, {hi:+.1f}]")
    cats = sorted(set(q["cat"] for q in loc))
    print("LoCoMo per category R@5/R@10: " + "; ".join(
        f"{name}: " + " ".join(f"c{c} {100*ml[[q['cat']==c for q in loc],0].mean():.1f}/{100*ml[[q['cat']==c for q in loc],1].mean():.1f}" for c in cats)
        for name, _, _, ml in rows))

    # what mattered
    lr = models["logreg"]
    coef = lr[-1].coef_[0]
    top = sorted(zip(names, coef), key=lambda t: -abs(t[1]))[:12]
    print("logreg standardized coefficients (largest |w|): " + ", ".join(f"{n} {w:+.2f}" for n, w in top))
    rk = models["lambdamart"]
    gain = rk.booster_.feature_importance(importance_type="gain")
    top = sorted(zip(names, gain), key=lambda t: -t[1])[:12]
    tg = gain.sum()
    print("lambdamart gain share: " + ", ".join(f"{n} {100*v/tg:.0f}%" for n, v in top))
    from sklearn.inspection import permutation_importance
    Xod_, yod_, _, _ = matrix(odd, drop)
    pi = permutation_importance(models["hgb"], Xod_, yod_, scoring="average_precision", n_repeats=3, random_state=SEED)
    top = sorted(zip(names, pi.importances_mean), key=lambda t: -t[1])[:10]
    print("hgb permutation importance on LME odd (avg precision drop): " + ", ".join(f"{n} {v:.3f}" for n, v in top))
    for name, m in models.items():
        print(f"size {name}: {model_size(name, m, len(names))}")
    # feature shift: agent part
    ag_lme = np.mean([h["score"].get("agent", 0) > 0 for q in lme for h in q["hits"]])
    ag_loc = np.mean([h["score"].get("agent", 0) > 0 for q in loc for h in q["hits"]])
    print(f"share of hits with agent > 0: LME {100*ag_lme:.1f}%, LoCoMo {100*ag_loc:.1f}%")
    return rows


class Keep:
    """A feature preset that keeps only `names` (instead of a list to drop)."""

    def __init__(self, names):
        self.names = set(names)


# The ablations reported in core/src/ranked/README.md.
PRESETS = {
    "all": (),
    # Without what describes how LongMemEval was built (the answer's turn
    # position) or signals one benchmark never exercises.
    "safe": ("log_turn", "agent/top", "rank_by_agent", "importance/top", "recency/top"),
    # Only the first stage's normalized parts and rank.
    "minimal": Keep(["lexical/top", "expansion/top", "vector/top", "context/top", "length/top", "stretch/top", "total/top", "rank", "log_rank"]),
}


def main():
    ap = argparse.ArgumentParser(description="Offline re-ranker study (issue 46): learn on LongMemEval, judge on LoCoMo.")
    ap.add_argument("--lme", required=True)
    ap.add_argument("--locomo", required=True)
    ap.add_argument("--label", default="run")
    ap.add_argument("--features", default="all", choices=sorted(PRESETS), help="feature preset (the README's ablations)")
    ap.add_argument("--drop", default="", help="comma-separated feature names to leave out as well (an ablation)")
    a = ap.parse_args()
    np.random.seed(SEED)
    preset = PRESETS[a.features]
    extra = tuple(d for d in a.drop.split(",") if d)
    drop = preset if isinstance(preset, Keep) and not extra else tuple(preset) + extra if not isinstance(preset, Keep) else Keep(preset.names - set(extra))
    run(a.lme, a.locomo, a.label, drop)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""relaunch.py RESULTS.json L -- a `threadmap bench` run's figures at L launches per input.

Nothing is measured here: every option's times come from RESULTS.json, and the
total per launch is docs/bench.md's formula, kernel + apply + (prediction +
algorithm) / L (gpu-path: no prediction; its algorithm time is what a new input
adds to the same input's time), so a run at --launches 1 gives the figures at
any L.  It first recomputes every option at the run's own L and stops if any
differs from the JSON's speedup_total (the formula is the bench's).  Prints per
kernel the option regroup() delivered (the chosen one) and the best, then the
geometric mean over the divergent kernels (with overlap too), the least
speedup and the count within 5% of the best: issue 15's figures.
"""
import json
import math
import sys


def total(k, o, launches, overlap=False):
    if not o["valid"]:
        return None
    if o is k["options"][0]:
        return o["kernel_ms"]
    algo = o["algo_ms"] or 0
    if overlap and o["on_gpu"] and k.get("gpu_overlap_algo_ms") is not None:
        algo = k["gpu_overlap_algo_ms"]
    pred = 0 if o["on_gpu"] else (k["predict_ms"] or 0)
    return o["kernel_ms"] + (o["apply_ms"] or 0) + (pred + algo) / launches


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else float("nan")


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: relaunch.py RESULTS.json L")
    run = json.load(open(sys.argv[1]))
    launches = int(sys.argv[2])
    if launches < 1:
        sys.exit("relaunch.py: L must be at least 1")
    own = run["settings"]["launches"]
    for k in (k for k in run["kernels"] if k["ok"]):
        t0 = k["options"][0]["kernel_ms"]
        for o in k["options"]:
            t = total(k, o, own)
            if t is not None and abs(t0 / t - o["speedup_total"]) > 1e-9 * o["speedup_total"]:
                sys.exit("relaunch.py: %s %s: %.9g recomputed, %.9g in the run: not the bench's "
                         "formula" % (k["name"], o["name"], t0 / t, o["speedup_total"]))
    print("# %s at %d launches per input (the run: --launches %d, %s, %s)"
          % (sys.argv[1], launches, own, run["device"]["name"], run["date"]))
    print("%-20s %-10s %9s %9s %-12s %9s" % ("kernel", "chosen", "speedup", "overlap", "best",
                                             "within5%"))
    sp, spo, low, within, n = [], [], [], 0, 0
    for k in (k for k in run["kernels"] if k["ok"]):
        t0 = k["options"][0]["kernel_ms"]
        opts = [(total(k, o, launches), o) for o in k["options"]]
        c = next(o for o in k["options"] if o["chosen"])
        tc, tco = total(k, c, launches), total(k, c, launches, True)
        tb, b = min((t, o) for t, o in opts if t is not None)
        ok = tc is not None and tc <= 1.05 * tb
        within += ok
        n += 1
        if tc is not None:
            low.append((t0 / tc, k["name"]))
            if k["divergent"]:
                sp.append(t0 / tc)
                spo.append(t0 / tco)
        print("%-20s %-10s %8.2fx %8.2fx %-12s %9s" % (k["name"], c["name"], t0 / tc, t0 / tco,
                                                       b["name"], "yes" if ok else "NO"))
    print("geometric mean over %d divergent kernels: %.4fx (with overlap %.4fx)"
          % (len(sp), geomean(sp), geomean(spo)))
    print("lowest: %.3fx (%s); within 5%% of the best: %d of %d" % (min(low) + (within, n)))


if __name__ == "__main__":
    main()

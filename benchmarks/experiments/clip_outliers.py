#!/usr/bin/env python3
"""clip_outliers.py -- an experiment on a bench_model dump (no GPU): copy one kernel's folder
of a `bench_model --dump` and clip every CFG block's warp counts c at the 99.99th percentile
over the warps plus 5, so that the few warps holding an outlier thread look like the rest;
`bench_model --from` on the copy then shows what those threads do to the model's figures
(issue 16: mummer_match's one thread of 1044 k-mer lookups, docs/model.md, "mummer_match's
outlier thread").  Blocks that every warp runs at its maximum (the loop's bound) are left
alone by the same rule.

    python3 benchmarks/experiments/clip_outliers.py DUMP KERNEL OUT
"""
import os
import shutil
import sys

import numpy as np


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    dump, kernel, out = sys.argv[1:]
    meta = dict(l.split(None, 1) for l in open(os.path.join(dump, kernel, "meta.txt"))
                if not l.startswith("cand") and len(l.split(None, 1)) == 2)
    ncand = sum(1 for l in open(os.path.join(dump, kernel, "meta.txt")) if l.startswith("cand"))
    nth, nb, bs = int(meta["nthreads"]), int(meta["nblocks"]), int(meta["block_size"])
    nw = nth // bs * ((bs + 31) // 32) + (nth % bs + 31) // 32
    shutil.copytree(os.path.join(dump, kernel), os.path.join(out, kernel), symlinks=False)
    path = os.path.join(out, kernel, "agg.bin")
    raw = np.fromfile(path, dtype=np.uint32)
    o = 0
    for i in range(ncand):
        c = raw[o:o + nw * nb].reshape(nw, nb)
        for b in range(nb):
            lim = int(np.percentile(c[:, b], 99.99)) + 5
            clipped = int((c[:, b] > lim).sum())
            if clipped:
                print(f"candidate {i} block {b}: {clipped} warps over {lim} (most {c[:, b].max()})")
            np.minimum(c[:, b], lim, out=c[:, b])
        o += 2 * nw * nb + nw
    raw.tofile(path)


if __name__ == "__main__":
    main()

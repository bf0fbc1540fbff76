#!/usr/bin/env python3
"""The memory model (docs/memory.md, Choosing) against the committed rows of
benchmarks/results/memirr_apps.txt, on the CPU: for every input and layout,
the measured time of a kernel launch (run_ms over the launches of a run:
bfs's levels, cg's 50 SpMVs with its dot products and axpys) beside the
model's prediction (kernel terms + the gather of A', no build) before and
after the L1's capacity (tmap_memre_l1_keeps), and the candidates examined.

The rows give sectors and blocks' sectors per request (2 decimals) and the
model's per-launch total as printed (build over the launches included);
the gather's share is that total less the build and the kernel terms of the
model that printed it (before or after the L1's capacity: the one whose
kernel terms reproduce the original's printed prediction).
Usage: memirr_model_rows.py [results file] [--table]"""
import itertools
import math
import re
import sys

L1_NS = 1.0 / (132 * 1.98)      # an L1 wavefront a cycle per SM (H100 SXM)
L2_NS, DRAM_NS = 0.0095, 0.0235  # the model's per-sector costs (memirr.txt)
GATHER_NS = 1.0 / (0.524 * 132 * 1.98)  # sm:l2.gather_sectors_per_cycle
L1_BYTES, SM_THREADS, BLOCK = 256 << 10, 2048, 256
L2_LATENCY = 283.7               # sm:l2.latency, cycles


def parse(text):
    inputs = []
    for sec in re.split(r'\n######## ', text)[1:]:
        name = sec.split('\n', 1)[0]
        prev = None
        for part in re.split(r'\n(?=(?:md|bfs|spmv|cg), )', sec)[1:]:
            hdr = part.split('\n', 1)[0]
            m = re.search(r'(\d+) threads x (\d+) accesses', hdr)
            if m:
                threads, k, fits = int(m.group(1)), int(m.group(2)), 'fits L2' in hdr
            else:
                threads, k, fits = prev['threads'], prev['k'], prev['fits']
            cg = hdr.startswith('cg')
            lv = re.search(r'(\d+) levels from', part)
            rows = {}
            for r in re.finditer(r'^  ([a-z]+)[0-9.]*\s+\|\s+([\d.]+)\s+([\d.]+) \|\s+([\d.]+)'
                                 r'\s+([\d.]+)\s+([\d.]+)\s+([\d.]+) \|', part, re.M):
                rows[r.group(1)] = dict(sec=float(r.group(2)), blk=float(r.group(3)),
                                        run=float(r.group(4)), build=float(r.group(5)),
                                        amort=float(r.group(7)))
            mm = re.search(r'model, predicted per launch .*?build over ([\d.]+) launches\): (.*)',
                           part)
            for kind, ms in re.findall(r'(\w+) ([\d.]+) ms;', mm.group(2)):
                rows[kind]['pred'] = float(ms)
            d = dict(name=name[2:] + (' cg' if cg else ''), threads=threads, k=k, fits=fits,
                     launches=float(mm.group(1)),
                     per=50 if cg else int(lv.group(1)) if lv else 1,
                     rows={n: r for n, r in rows.items() if 'pred' in r})
            inputs.append(d)
            prev = d
    return inputs


def kernel_ms(d, r, variant):
    req = math.ceil(d['threads'] / 32) * d['k']
    s, b = r['sec'] * req, r['blk'] * req
    s2 = (GATHER_NS if variant == 'l2-gathered' else L2_NS) if d['fits'] else DRAM_NS
    passed, extra = b, 0.0
    if variant in ('l1-capacity', 'both'):
        blocks = math.ceil(d['threads'] / BLOCK)
        working = b / blocks * 32 * (SM_THREADS // BLOCK)
        keeps = min(1.0, L1_BYTES / working) if working > 0 else 1.0
        passed = b + (1 - keeps) * max(s - b, 0)
    if variant in ('index-wavefronts', 'both'):
        # P's own reads, P[t*k + j] (u32): 32 sectors a request when k >= 8, else 4k
        extra = req * min(32, 4 * d['k']) * L1_NS
    elif variant == 'l2-latency':
        # each request waits an L2 hit; 64 warps an SM overlap their waits
        extra = req / 132 / 64 * L2_LATENCY / 1.98e6  # ms
        return max(1e-6 * (s * L1_NS + b * s2), extra)
    return 1e-6 * (s * L1_NS + passed * s2 + extra)


def evaluate(inputs, variant):
    """(pairs ordered as measured, pairs, mean |ln(pred / meas)|, proposals, table)."""
    good = pairs = 0
    errs, props, table = [], [], []
    for d in inputs:
        rows, res = d['rows'], {}
        # which model printed the rows: the one that reproduces the original's
        # prediction (it has no gather and no build)
        o = rows['original']
        printed_by = min((None, 'l1-capacity'), key=lambda v: abs(kernel_ms(d, o, v) - o['pred']))
        for n, r in rows.items():
            gather = r['pred'] - r['build'] / d['launches'] - kernel_ms(d, r, printed_by)
            pred = kernel_ms(d, r, variant) + gather
            res[n] = (pred, r['run'] / d['per'], pred + r['build'] / d['launches'])
            errs.append(abs(math.log(pred / res[n][1])))
            table.append((d['name'], n, res[n][1], pred))
        for a, b in itertools.combinations(res, 2):
            (pa, ma, _), (pb, mb, _) = res[a], res[b]
            if abs(ma - mb) / max(ma, mb) >= 0.03:  # a measured tie orders nothing
                pairs += 1
                good += (pa - pb) * (ma - mb) > 0
        bar = res['original'][2] * 0.97
        prop = [n for n in res if n != 'original' and (res[n][2] < bar or n == 'partial')]
        best = max(rows, key=lambda n: rows['original']['run'] / rows[n]['amort'])
        props.append((d['name'], prop, best))
    return good, pairs, sum(errs) / len(errs), props, table


def main():
    path = next((a for a in sys.argv[1:] if not a.startswith('--')),
                'benchmarks/results/memirr_apps.txt')
    inputs = parse(open(path).read())
    variants = [None, 'l1-capacity', 'index-wavefronts', 'both', 'l2-gathered', 'l2-latency']
    results = {v: evaluate(inputs, v) for v in variants}
    if '--table' in sys.argv:
        print('| input | layout: measured / before / after (ms a launch) |')
        print('|---|---|')
        cells = {}
        for (i, n, m, p), (_, _, _, q) in zip(results[None][4], results['l1-capacity'][4]):
            cells.setdefault(i, []).append('%s %.3f / %.3f / %.3f' % (n, m, p, q))
        for i, c in cells.items():
            print('| %s | %s |' % (i, '; '.join(c)))
        print()
    for v in variants:
        good, pairs, err, props, _ = results[v]
        hits = sum(b == 'original' or b in p for _, p, b in props)
        print('%-17s pairs of layouts ordered as measured %d of %d; mean |ln(pred/meas)| %.3f; '
              'best measured in the proposal %d of %d' % (v or 'before', good, pairs, err, hits,
                                                          len(props)))
        for name, p, b in props:
            print('    %-12s proposal: original%s  best measured: %s' %
                  (name, ''.join(', ' + x for x in p), b))


if __name__ == '__main__':
    main()

#!/usr/bin/env bash
# bench_attach.sh BUILD [RUNS] -- the cost of attaching (`threadmap profile -- ./app`),
# measured by the application itself: tests/apps/skewed prints the wall time of its
# launch loop (LAUNCHES launches of `work`, then one cudaDeviceSynchronize).  Each
# case runs RUNS times (default 5); the median is printed.
#   launches not selected: the loop of 2000 launches over 32768 threads (small, so
#     that a launch's host cost shows), alone and under profile with
#       -k nomatch          no kernel matches: each launch takes the lock and a lookup
#       -k work -s 2000     every launch matches and is skipped: the lock, the count
#       -k work -c 1        the first launch profiled, the other 1999 after the count
#                           is reached: no lock (the selected launch is in the loop)
#   a selected launch: one launch of 2^20 threads, alone and profiled (-k work -c 1):
#     the instrumented module's JIT compilation, the counters, the wait, the files.
#   run mode: 2000 launches of 2^20 threads, alone and under `threadmap run` (the
#     regrouper made once, the trial, then every launch regrouped), and its summary.
set -euo pipefail
b=$1 runs=${2:-5}
tm=$b/threadmap app=$b/tests/apps/skewed
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# median of RUNS wall times (ms) the application prints for: CMD...
median() {
  for _ in $(seq "$runs"); do
    { "$@" 2>&1 >/dev/null || true; } | sed -n 's/^skewed: .*: \([0-9.]*\) ms$/\1/p'
  done | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
row() { # row NAME BASE MS LAUNCHES
  awk -v n="$1" -v b="$2" -v m="$3" -v l="$4" \
    'BEGIN { printf "%-44s %10.3f ms %10.4f ms/launch %7.3fx\n", n, m, m / l, m / b }'
}

echo "== launches not selected: 2000 launches of work over 32768 threads (median of $runs)"
base=$(median "$app" 32768 2000)
row "alone" "$base" "$base" 2000
row "profile -k nomatch" "$base" "$(median "$tm" profile -q -o "$tmp/a" -k nomatch -- "$app" 32768 2000)" 2000
row "profile -k work -s 2000 (all skipped)" "$base" "$(median "$tm" profile -q -o "$tmp/b" -k work -s 2000 -- "$app" 32768 2000)" 2000
row "profile -k work -c 1 (1 profiled, 1999 after)" "$base" "$(median "$tm" profile -q -o "$tmp/c" -k work -c 1 -- "$app" 32768 2000)" 2000
echo "== a selected launch: 1 launch of work over 1048576 threads (median of $runs)"
one=$(median "$app" 1048576 1)
row "alone" "$one" "$one" 1
row "profile -k work -c 1 (profiled)" "$one" "$(median "$tm" profile -q -o "$tmp/d" -k work -c 1 -- "$app" 1048576 1)" 1
echo "== run mode: 2000 launches of work over 1048576 threads, key arg0[t] (median of $runs)"
big=$(median "$app" 1048576 2000)
row "alone" "$big" "$big" 2000
row "run -k work --key 'arg0[t]'" "$big" "$(median "$tm" run -q -k work --key 'arg0[t]' -- "$app" 1048576 2000)" 2000
"$tm" run -k work --key 'arg0[t]' -- "$app" 1048576 2000 2>&1 >/dev/null | grep '^threadmap run:'

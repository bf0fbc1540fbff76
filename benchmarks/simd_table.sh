#!/usr/bin/env bash
# simd_table.sh DIR -- the SIMD efficiency predicted from BBVs (threadmap
# estimate --json, blocks weighted by their PTX instructions, and with
# --sass sm_90 by their SASS instructions) next to Nsight Compute's measured
# smsp__thread_inst_executed_per_inst_executed.ratio, from the files that
# gpu_session.sh's `simd` step leaves in DIR; prints a Markdown table, then
# the SASS-weighted prediction's thread and warp instruction totals against
# ncu's smsp__thread_inst_executed.sum and smsp__inst_executed.sum.
set -euo pipefail
dir=${1:?usage: simd_table.sh DIR}
key() { sed -n "s/.*\"$2\": \([0-9.e+]*\).*/\1/p" "$1" 2>/dev/null | head -n 1; }
# active threads per warp instruction (of 32); files written before the keys
# stated their units call it simd_efficiency
simd() { local v; v=$(key "$1" simd_active_threads_per_inst); [ -n "$v" ] || v=$(key "$1" simd_efficiency); echo "$v"; }
ncu() { grep -h "$2\"" "$1" 2>/dev/null | awk -F'","' '{gsub(/[",]/, "", $NF); print $NF}' | head -n 1 || true; }
diffpct() { awk -v p="$1" -v m="$2" 'BEGIN { printf "%+.1f%%", 100 * (p - m) / m }'; }
within() { awk -v p="$1" -v m="$2" 'BEGIN { d = (p - m) / m; print (d < 0 ? -d : d) <= 0.05 }'; }
echo "| kernel | measured (ncu, SASS) | predicted, PTX weights | difference | predicted, SASS weights | difference |"
echo "|---|---|---|---|---|---|"
in_ptx=0 in_sass=0 total=0
for est in "$dir"/*.estimate.json; do
  n=$(basename "$est" .estimate.json)
  ptx=$(simd "$est")
  sass=$(simd "$dir/$n.estimate-sass.json")
  meas=$(ncu "$dir/$n.ncu.csv" smsp__thread_inst_executed_per_inst_executed.ratio)
  if [ -z "$ptx" ] || [ -z "$sass" ] || [ -z "$meas" ]; then
    echo "| $n | ${meas:-n/a} | ${ptx:-n/a} | | ${sass:-n/a} | not measured |"
    continue
  fi
  in_ptx=$((in_ptx + $(within "$ptx" "$meas"))) in_sass=$((in_sass + $(within "$sass" "$meas")))
  total=$((total + 1))
  printf '| %s | %.2f | %.2f | %s | %.2f | %s |\n' "$n" "$meas" "$ptx" "$(diffpct "$ptx" "$meas")" \
    "$sass" "$(diffpct "$sass" "$meas")"
done
echo
echo "within 5%: $in_sass of $total kernels with SASS weights, $in_ptx of $total with PTX weights (target: all)"
echo
echo "| kernel | thread instructions: ncu | predicted (SASS) | difference | warp instructions: ncu | predicted (SASS) | difference |"
echo "|---|---|---|---|---|---|---|"
for est in "$dir"/*.estimate-sass.json; do
  n=$(basename "$est" .estimate-sass.json)
  pt=$(key "$est" thread_instructions) pw=$(key "$est" warp_instructions)
  mt=$(ncu "$dir/$n.ncu.csv" smsp__thread_inst_executed.sum)
  mw=$(ncu "$dir/$n.ncu.csv" smsp__inst_executed.sum)
  [ -n "$pt" ] && [ -n "$pw" ] && [ -n "$mt" ] && [ -n "$mw" ] || continue
  printf '| %s | %.4g | %.4g | %s | %.4g | %.4g | %s |\n' "$n" "$mt" "$pt" "$(diffpct "$pt" "$mt")" \
    "$mw" "$pw" "$(diffpct "$pw" "$mw")"
done

#!/usr/bin/env bash
# simd_table.sh DIR -- the SIMD efficiency predicted from BBVs (threadmap
# estimate --json, blocks weighted by their PTX instructions, and with
# --sass sm_90 by their SASS instructions) next to Nsight Compute's measured
# smsp__thread_inst_executed_per_inst_executed.ratio, from the files that
# gpu_session.sh's `simd` step leaves in DIR; prints a Markdown table.
set -euo pipefail
dir=${1:?usage: simd_table.sh DIR}
simd() { sed -n 's/.*"simd_efficiency": \([0-9.]*\).*/\1/p' "$1" 2>/dev/null | head -n 1; }
diffpct() { awk -v p="$1" -v m="$2" 'BEGIN { printf "%+.1f%%", 100 * (p - m) / m }'; }
within() { awk -v p="$1" -v m="$2" 'BEGIN { d = (p - m) / m; print (d < 0 ? -d : d) <= 0.05 }'; }
echo "| kernel | measured (ncu, SASS) | predicted, PTX weights | difference | predicted, SASS weights | difference |"
echo "|---|---|---|---|---|---|"
in_ptx=0 in_sass=0 total=0
for est in "$dir"/*.estimate.json; do
  n=$(basename "$est" .estimate.json)
  ptx=$(simd "$est")
  sass=$(simd "$dir/$n.estimate-sass.json")
  meas=$(grep -h 'thread_inst_executed_per_inst_executed.ratio' "$dir/$n.ncu.csv" 2>/dev/null |
         awk -F'","' '{gsub(/"/, "", $NF); print $NF}' | head -n 1 || true)
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

#!/usr/bin/env bash
# simd_table.sh DIR -- the SIMD efficiency predicted from BBVs (threadmap
# estimate --json) next to Nsight Compute's measured
# smsp__thread_inst_executed_per_inst_executed.ratio, from the files that
# gpu_session.sh's `simd` step leaves in DIR; prints a Markdown table.
set -euo pipefail
dir=${1:?usage: simd_table.sh DIR}
echo "| kernel | predicted (BBV x PTX instructions) | measured (ncu, SASS) | difference |"
echo "|---|---|---|---|"
within=0 total=0
for est in "$dir"/*.estimate.json; do
  n=$(basename "$est" .estimate.json)
  pred=$(sed -n 's/.*"simd_efficiency": \([0-9.]*\).*/\1/p' "$est" | head -n 1)
  meas=$(grep -h 'thread_inst_executed_per_inst_executed.ratio' "$dir/$n.ncu.csv" 2>/dev/null |
         awk -F'","' '{gsub(/"/, "", $NF); print $NF}' | head -n 1 || true)
  if [ -z "$pred" ] || [ -z "$meas" ]; then
    echo "| $n | ${pred:-n/a} | ${meas:-n/a} | not measured |"
    continue
  fi
  diff=$(awk -v p="$pred" -v m="$meas" 'BEGIN { printf "%+.1f%%", 100 * (p - m) / m }')
  ok=$(awk -v p="$pred" -v m="$meas" 'BEGIN { d = (p - m) / m; print (d < 0 ? -d : d) <= 0.05 }')
  within=$((within + ok)) total=$((total + 1))
  printf '| %s | %.2f | %.2f | %s |\n' "$n" "$pred" "$meas" "$diff"
done
echo
echo "within 5%: $within of $total kernels (target: all)"

#!/usr/bin/env bash
# gpu_session.sh OUT [STEP...] -- everything that needs the GPU, in one go:
# the GPU tests (and compute-sanitizer on them), the profiling-overhead
# benchmark, BBVs of the benchmark manifests with the model's SIMD
# efficiency next to ncu's measured one, and the bundled example's recorded
# BBVs, the latency table, and the whole pipeline (profile, train, run) on the
# bundled example and on benchmark manifests, and the paper's evaluation
# (`threadmap bench`: every benchmarks/suite kernel, or benchmarks/manifests
# when the suite is empty).  Results land under OUT.
# Steps: tests sanitizer overhead simd example latency pipeline bench (default: all).
# Expects a built tree in ./build (cmake -S . -B build && cmake --build build).
set -uo pipefail
out=${1:?usage: gpu_session.sh OUT [STEP...]}
shift
steps=${*:-tests sanitizer overhead simd example latency pipeline bench}
mkdir -p "$out"
tm=./build/threadmap
export PATH=/usr/local/cuda/bin:$PATH

device_banner() {
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem,clocks.sm --format=csv
  nvcc --version | tail -n 2
}

has() { [[ " $steps " == *" $1 "* ]]; }

device_banner > "$out/device.txt" 2>&1

if has tests; then
  (cd build && ctest --output-on-failure -R 'test_gpu|test_latency_measure') > "$out/gpu_tests.log" 2>&1
  echo "gpu tests: rc=$?" | tee -a "$out/summary.txt"
fi

if has sanitizer; then
  for t in build/test_gpu_*; do
    compute-sanitizer --tool memcheck --error-exitcode 9 "$t" > "$out/sanitizer_$(basename "$t").log" 2>&1
    echo "compute-sanitizer memcheck $(basename "$t"): rc=$?" | tee -a "$out/summary.txt"
  done
fi

if has overhead; then
  ./build/bench_overhead --reps 20 --warmup 3 > "$out/overhead.md" 2>&1
  echo "overhead: rc=$?" | tee -a "$out/summary.txt"
fi

if has simd; then
  mkdir -p "$out/simd"
  for m in benchmarks/manifests/*.json; do
    n=$(basename "$m" .json)
    p=/tmp/tmap_prof/$n
    $tm profile "$m" -o "$p" -q > "$out/simd/$n.profile.log" 2>&1 || { echo "profile $n failed" >> "$out/summary.txt"; continue; }
    k=$(sed -n 's/^ *"kernel": "\(.*\)",$/\1/p' "$p/profile.json" | head -n 1)
    bps=$(grep -A5 '"original"' "$p/profile.json" | sed -n 's/.*"blocks_per_sm": \([0-9]*\).*/\1/p' | head -n 1)
    $tm estimate --bbv "$p/run0.bbv.npy" --cfg "$p/kernel.ptx" --kernel "$k" --blocks-per-sm "${bps:-8}" \
      --sms 132 --json \
      > "$out/simd/$n.estimate.json" 2> "$out/simd/$n.estimate.err"
    $tm estimate --bbv "$p/run0.bbv.npy" --cfg "$p/kernel.ptx" --kernel "$k" --blocks-per-sm "${bps:-8}" \
      --sms 132 --json --sass sm_90 \
      > "$out/simd/$n.estimate-sass.json" 2> "$out/simd/$n.estimate-sass.err"
    cp "$p/kernel.ptx" "$out/simd/$n.ptx"
    cp "$p/profile.json" "$out/simd/$n.profile.json"
    ncu --metrics smsp__thread_inst_executed_per_inst_executed.ratio,smsp__inst_executed.sum,smsp__thread_inst_executed.sum \
      --csv --kernel-name-base mangled -k "regex:^${k}\$" --launch-count 1 ./build/bench_overhead --reps 1 --warmup 0 "$m" \
      > "$out/simd/$n.ncu.csv" 2> "$out/simd/$n.ncu.err"
    echo "simd $n: kernel $k, blocks/SM $bps" >> "$out/summary.txt"
  done
  bash benchmarks/simd_table.sh "$out/simd" > "$out/simd.md"
fi

if has example; then
  $tm profile examples/divergent/manifest.json -o "$out/example" --runs 3 > "$out/example.log" 2>&1
  echo "example profile: rc=$?" | tee -a "$out/summary.txt"
fi

if has latency; then
  $tm latency --measure --base latency_tables/sm_90.tsv -o "$out/sm_90.tsv" > "$out/latency.log" 2>&1
  echo "latency: rc=$?" | tee -a "$out/summary.txt"
fi

if has pipeline; then
  mkdir -p "$out/pipeline"
  ex=examples/divergent
  table=latency_tables/sm_90.tsv
  [ -s "$out/sm_90.tsv" ] && table="$out/sm_90.tsv"
  { $tm profile $ex/manifest.json -o /tmp/tmap_ex/profile --runs 2 --seed 1 &&
    $tm train /tmp/tmap_ex/profile -o "$out/pipeline/divergent.model.txt" &&
    $tm run $ex/manifest.json --model "$out/pipeline/divergent.model.txt" --seed 7 \
      --table "$table" -o "$out/pipeline/divergent"; } > "$out/pipeline/divergent.log" 2>&1
  echo "pipeline divergent: rc=$?" | tee -a "$out/summary.txt"
  for m in ${TMAP_RUN_MANIFESTS:-benchmarks/manifests/loop_per_thread.json benchmarks/manifests/mandelbrot.json}; do
    n=$(basename "$m" .json)
    $tm run "$m" --table "$table" -o "$out/pipeline/$n" > "$out/pipeline/$n.log" 2>&1
    echo "pipeline $n: rc=$?" | tee -a "$out/summary.txt"
  done
fi
if has bench; then
  # under ten minutes on one GPU; per-kernel wall times are in bench.log and report.md
  $tm bench --out "$out/bench" > "$out/bench.log" 2>&1
  echo "bench: rc=$? ($(tail -n 1 "$out/bench.log"))" | tee -a "$out/summary.txt"
fi
exit 0

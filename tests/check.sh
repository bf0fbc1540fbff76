#!/usr/bin/env bash
# check.sh BUILD SOURCE -- `threadmap check` without a GPU: the good
# manifests of tests/manifests exit 0 with no finding (text and JSON); each
# tests/manifests/check_bad_*.json exits 1, lists its findings on stdout and
# names the field (and parameter) in one line on stderr; bad usage exits 2.
set -uo pipefail
tm=$1/threadmap src=$2 dir=$2/tests/manifests
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0 passes=0

# expect CODE FINDINGS NEEDLE MANIFEST [ARGS...]: exit CODE, "findings: N"
# on stdout, NEEDLE in the one stderr line (none when CODE is 0).
expect() {
  local code=$1 findings=$2 needle=$3 manifest=$4
  shift 4
  "$tm" check "$dir/$manifest" "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$? lines
  lines=$(wc -l < "$tmp/err")
  if [ "$rc" -ne "$code" ] || ! grep -qx "findings: $findings" "$tmp/out" ||
     [ "$lines" -ne $((code != 0)) ] || { [ -n "$needle" ] && ! grep -qF -- "$needle" "$tmp/err"; }; then
    echo "FAIL: check $manifest -> exit $rc (want $code), want $findings findings and '$needle':"
    sed 's/^/    /' "$tmp/out" "$tmp/err"
    fails=$((fails + 1))
  else
    passes=$((passes + 1))
  fi
}

for m in loop_small switch_small vector_small gather_small; do
  expect 0 0 "" $m.json
  expect 0 0 "" $m.json --seed 9
done
"$tm" check "$dir/loop_small.json" --json > "$tmp/ok.json" &&
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["ok"] and d["threads"] == 5120 and d["entry"] == "loop_per_thread" and d["findings"] == [] and d["safety"]["scope"] == "grid"' "$tmp/ok.json" ||
  { echo "FAIL: check --json of loop_small.json"; fails=$((fails + 1)); }

expect 1 1 "field 'args': 2 arguments for the 3 parameters of kernel loop_per_thread: parameter 2 (.u32 loop_per_thread_param_2) has none" check_bad_missing_arg.json
expect 1 1 "field 'args[2]': scalar i64 (8 bytes) for parameter 2 loop_per_thread_param_2 (.u32, 4 bytes)" check_bad_arg_size.json
expect 1 1 "field 'args[0]': scalar u64 (8 bytes) for parameter 0 loop_per_thread_param_0 (.u64, 8 bytes) of kernel loop_per_thread: the parameter is a pointer" check_bad_scalar_pointer.json
expect 1 1 "field 'grid': y is 1073741824, at most 65535" check_bad_grid.json
expect 1 1 "field 'args[2]': 1e+300 does not fit type i32" check_bad_i32.json
expect 1 1 "field 'arrays.n': the fill value (10000000000) does not fit type i32" check_bad_fill.json
expect 1 1 "field 'features[0]': expression '((((" check_bad_deep.json
grep -q "nested more than 256 deep" "$tmp/err" || { echo "FAIL: check_bad_deep.json: no depth message"; fails=$((fails + 1)); }
expect 1 1 "features.next, thread 5119: expression 'n[t+1] - n[t]' at column 7: index out of the array's range" check_bad_feature_index.json
expect 1 1 "field 'arrays.n': " check_bad_npy.json
grep -q "missing.npy" "$tmp/err" || { echo "FAIL: check_bad_npy.json does not name the file"; fails=$((fails + 1)); }
expect 1 1 "field 'arrays.n': count is smaller than per_thread * threads" check_bad_per_thread.json
expect 1 1 "field 'references[0].index': p[100] = 100 is not an element of a (100 elements of 4 bytes)" check_bad_index.json
# both findings are listed: the arguments, and a feature index
expect 1 2 "field 'args': 2 arguments" check_bad_two.json
grep -q "features.next, thread 5119" "$tmp/out" || { echo "FAIL: check_bad_two.json: second finding missing"; fails=$((fails + 1)); }

# profile and run report the manifest's errors, with or without a GPU
for cmd in "profile -o $tmp/prof" run; do
  "$tm" $cmd "$dir/check_bad_missing_arg.json" > /dev/null 2> "$tmp/err"
  rc=$?
  if [ $rc -ne 1 ] || ! grep -qF "field 'args': 2 arguments" "$tmp/err"; then
    echo "FAIL: threadmap $cmd check_bad_missing_arg.json -> exit $rc:"; sed 's/^/    /' "$tmp/err"
    fails=$((fails + 1))
  fi
done

"$tm" check > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL: check without a manifest is not exit 2"; fails=$((fails + 1)); }
"$tm" check --seed -1 "$dir/loop_small.json" > /dev/null 2>&1; [ $? -eq 2 ] || { echo "FAIL: --seed -1 is not exit 2"; fails=$((fails + 1)); }

echo "check.sh: $passes passed, $fails failed"
[ "$fails" -eq 0 ]

# cli_options.sh -- sourced by cli_errors.sh (uses its tm, src, tmp, expect
# and counters): the option conventions of every command.  For each: help
# CMD and --help (with an example), an unknown option (one line + hint,
# exit 2), --opt=value and a short option, - for stdin/stdout where a file
# is read or written (and refused where it cannot be), > /dev/full for the
# commands that print (exit 1, one line), the JSON outputs' keys; outputs
# that name an input refused, a replaced file keeping its mode, multi-file
# outputs replaced together, train past 64 runs, feature names checked,
# NVRTC errors in one line.

# check WHAT -- cond...: counts a pass if the command succeeds
check() {
  local what=$1
  shift 2
  if "$@" > /dev/null 2>&1; then passes=$((passes + 1)); else
    echo "FAIL: $what"; fails=$((fails + 1)); fi
}
# rc_is CODE -- cmd...: the exit code alone
rc_is() {
  local code=$1
  shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"
  local rc=$?
  if [ "$rc" -eq "$code" ]; then passes=$((passes + 1)); else
    echo "FAIL: $* -> exit $rc (want $code)"; sed 's/^/    /' "$tmp/err"; fails=$((fails + 1)); fi
}
# json_keys FILE KEY... -- FILE is one JSON value holding every KEY (top level)
json_keys() {
  python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d = d[0] if isinstance(d, list) else d
missing = [k for k in sys.argv[2:] if k not in d]
assert not missing, (sys.argv[1], missing, sorted(d))
PY
}

k=$src/examples/divergent/recorded/kernel.ptx
gunzip -c "$src/examples/divergent/recorded/run0.features.npy.gz" > "$tmp/rec/f.npy"
cp "$k" "$tmp/k.ptx"
gpu_cmds="bench device profile run"
all_cmds="bench cfg check device estimate instrument latency predict profile regroup report run safety train version"

# help, --help with an example, unknown options: every command
for c in $all_cmds; do
  rc_is 0 -- "$tm" help "$c"
  cp "$tmp/out" "$tmp/help1"
  check "$c --help equals help $c and has an example" -- \
    bash -c "'$tm' $c --help | cmp - '$tmp/help1' && grep -q 'example' '$tmp/help1'"
  check "$c -h" -- "$tm" "$c" -h
  expect 2 "unknown option '--no-such-option'" -- "$tm" "$c" --no-such-option
  expect 2 "unknown option '-Z'" -- "$tm" "$c" -Z
done
expect 2 "unknown command 'nosuch'" -- "$tm" help nosuch
rc_is 0 -- "$tm" --version
check "-V and version agree" -- bash -c "[ \"\$('$tm' -V)\" = \"\$('$tm' version)\" ]"
"$tm" version --json > "$tmp/v.json"; check "version --json" -- json_keys "$tmp/v.json" version
expect 2 "takes no value" -- "$tm" version --json=yes
expect 2 "--reps needs a value" -- "$tm" run m.json --reps

# --opt=value, short options, - for stdin and stdout
b=$tmp/rec/b.npy f=$tmp/rec/f.npy
rc_is 0 -- "$tm" cfg --kernel=divergent --format=json "$k"
cp "$tmp/out" "$tmp/cfg1.json"
rc_is 0 -- bash -c "'$tm' cfg -k divergent -f json - < '$k' > '$tmp/cfg2.json'"
check "cfg - reads stdin" -- python3 -c "import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); assert a['kernels']==b['kernels']" "$tmp/cfg1.json" "$tmp/cfg2.json"
check "cfg --json keys" -- json_keys "$tmp/cfg1.json" file kernels
rc_is 0 -- "$tm" safety -j -k divergent "$k"
check "safety --json keys" -- bash -c "'$tm' safety --json - < '$k' > '$tmp/s.json' && python3 -c \"import json; d=json.load(open('$tmp/s.json'))['kernels'][0]; assert {'name','scope','layout_ok','redirect_ok','reasons'} <= set(d)\""
rc_is 0 -- "$tm" safety -q "$k"
check "safety -q prints nothing" -- test ! -s "$tmp/out"
rc_is 0 -- bash -c "'$tm' instrument - -o - < '$k' > '$tmp/i.ptx'"
check "instrument - -o -: PTX on stdout, nothing else" -- bash -c "head -c 300 '$tmp/i.ptx' | grep -q '^\.version' && grep -q __tmap_bbv_base '$tmp/i.ptx'"
rc_is 0 -- "$tm" instrument --output="$tmp/i2.ptx" --kernel=divergent --json "$k"
check "instrument --json keys" -- json_keys "$tmp/out" input output kernels
expect 2 "--json prints on stdout" -- "$tm" instrument "$k" -o - --json
lat=(--cfg "$k" -k divergent --blocks-per-sm 8)
rc_is 0 -- bash -c "'$tm' estimate --bbv=- --cfg='$k' --kernel=divergent --json < '$b' > '$tmp/e1.json'"
check "estimate --json keys" -- json_keys "$tmp/e1.json" bbv_weighted_cycles divergent_warps_pct simd_efficiency_pct zero_divergence_cycles
rc_is 0 -- "$tm" estimate -q --bbv "$b" "${lat[@]}"
check "estimate -q prints nothing" -- test ! -s "$tmp/out"
rc_is 0 -- "$tm" regroup -a sorting --bbv="$b" "${lat[@]}" -o "$tmp/p1.npy"
rc_is 0 -- bash -c "'$tm' regroup --algo=sorting --bbv '$b' ${lat[*]} -o - > '$tmp/p2.npy'"
check "regroup -o - writes the permutation on stdout" -- cmp "$tmp/p1.npy" "$tmp/p2.npy"
rc_is 0 -- "$tm" regroup -a sorting --bbv "$b" "${lat[@]}" -o "$tmp/p1.npy" --json
check "regroup --json keys" -- json_keys "$tmp/out" candidates chosen decision perm zero_divergence_cycles
expect 2 "unknown option '--perm'" -- "$tm" regroup -a sorting --bbv "$b" "${lat[@]}" --perm "$tmp/p1.npy" -o "$tmp/p3.npy"
rc_is 0 -- "$tm" estimate --bbv "$b" "${lat[@]}" --perm="$tmp/p1.npy" --json
check "estimate --perm estimates the regrouping" -- python3 -c "import json,sys; a,b=(json.load(open(p)) for p in sys.argv[1:]); assert a['divergent_warps_pct'] > b['divergent_warps_pct']" "$tmp/e1.json" "$tmp/out"
rc_is 0 -- bash -c "'$tm' report --bbv - ${lat[*]} -f json --device-name=GPU0 --mechanism redirect < '$b' > '$tmp/r.json'"
check "report --json keys and names" -- python3 -c "import json; d=json.load(open('$tmp/r.json')); assert d['device']=='GPU0' and d['mechanism']=='redirection' and 'rows' in d, d['mechanism']"
expect 2 "cannot be - (stdout)" -- "$tm" report --bbv "$b" "${lat[@]}" -o -
expect 2 "--mechanism is layout or redirect" -- "$tm" report --bbv "$b" "${lat[@]}" --mechanism=magic
rc_is 0 -- "$tm" train --features="$f" --bbv="$b" -k divergent --folds=0 -o "$tmp/m1.txt" -q
check "train -q prints nothing" -- test ! -s "$tmp/out"
rc_is 0 -- bash -c "'$tm' train --features - --bbv '$b' --kernel divergent --folds 0 -o - < '$f' > '$tmp/m2.txt'"
check "train: features from stdin, MODEL on stdout" -- cmp "$tmp/m1.txt" "$tmp/m2.txt"
expect 2 "only one input can be -" -- "$tm" train --features - --bbv - --kernel divergent -o "$tmp/m3.txt"
rc_is 0 -- bash -c "'$tm' predict - --features '$f' --output='$tmp/pr.npy' --json < '$tmp/m1.txt' > '$tmp/pr.json'"
check "predict --json keys" -- json_keys "$tmp/pr.json" output sidecar model kernel threads blocks nfeatures
expect 2 "BBV.npy has a sidecar" -- "$tm" predict "$tmp/m1.txt" --features "$f" -o -
rc_is 0 -- "$tm" latency --list --json
check "latency --list --json keys" -- json_keys "$tmp/out" opcode class chain min_arch
rc_is 0 -- "$tm" latency --print-ptx=add.s32 --n=8
rc_is 0 -- "$tm" latency --list -q
check "latency --list -q prints nothing" -- test ! -s "$tmp/out"
# the GPU commands parse their options before they look for a GPU: not 2
for cmdline in "device --device=0 -q" "device -d 0 --json" \
    "profile $src/examples/divergent/manifest.json --runs=2 -o $tmp/prof -q" \
    "run $src/examples/divergent/manifest.json --seed=3 -a sorting -d 0 -q" \
    "bench --kernels=$src/examples/divergent/manifest.json --bbv-source=measured -o $tmp/bench -q" \
    "latency --measure --reps=3 -d 0 -q -o $tmp/lat.tsv --only add.s32"; do
  # shellcheck disable=SC2086
  "$tm" $cmdline > "$tmp/out" 2> "$tmp/err"
  rc=$?
  if [ $rc -eq 2 ] || { [ $gpu -eq 0 ] && [ $rc -ne 3 ]; }; then
    echo "FAIL: $cmdline -> exit $rc"; sed 's/^/    /' "$tmp/err"; fails=$((fails + 1))
  else passes=$((passes + 1)); fi
done
expect 2 "MANIFEST cannot be -" -- "$tm" profile - -o "$tmp/prof"
expect 2 "MANIFEST cannot be -" -- "$tm" run -
expect 2 "cannot be - (stdout)" -- "$tm" profile "$src/examples/divergent/manifest.json" -o -
expect 2 "cannot be - (stdout)" -- "$tm" bench -o -
expect 2 "--bbv-source is predicted or measured" -- "$tm" bench --bbv-source=guessed

# a failed write to stdout exits 1 with one line, for every command that prints
for cmdline in "cfg $k" "cfg $k --format json" "safety $k" "safety $k --json" \
    "instrument $k -o $tmp/i3.ptx" "instrument $k -o $tmp/i3.ptx --json" \
    "estimate --bbv $b ${lat[*]}" "estimate --bbv $b ${lat[*]} --json" \
    "regroup -a sorting --bbv $b ${lat[*]} -o $tmp/p4.npy" \
    "regroup -a sorting --bbv $b ${lat[*]} -o $tmp/p4.npy --json" \
    "report --bbv $b ${lat[*]}" "report --bbv $b ${lat[*]} --json" \
    "train --features $f --bbv $b -k divergent --folds 0 -o $tmp/m4.txt" \
    "train --features $f --bbv $b -k divergent --folds 0 -o $tmp/m4.txt --json" \
    "predict $tmp/m1.txt --features $f -o $tmp/pr2.npy" \
    "latency --list" "latency --list --json" "latency --print-ptx add.s32" \
    "version" "cfg --help" "help"; do
  # shellcheck disable=SC2086
  "$tm" $cmdline > /dev/full 2> "$tmp/err"
  rc=$?
  if [ $rc -ne 1 ] || [ "$(wc -l < "$tmp/err")" -ne 1 ] || ! grep -qi "writ.*failed" "$tmp/err"; then
    echo "FAIL: $cmdline > /dev/full -> exit $rc (want 1, one line)"; sed 's/^/    /' "$tmp/err"
    fails=$((fails + 1))
  else passes=$((passes + 1)); fi
done

# outputs: never an input (however spelled), a replaced file keeps its mode,
# temporaries do not collide with what is there, files of a set replaced
# together or not at all
ln -sf "$tmp/k.ptx" "$tmp/k-link.ptx"
expect 2 "is the input" -- "$tm" instrument "$tmp/k.ptx" -o "$tmp/./k-link.ptx"
expect 2 "is the input" -- "$tm" regroup -a sorting --bbv "$b" "${lat[@]}" -o "$tmp/rec/../rec/b.npy"
expect 2 "is the input" -- "$tm" train --features "$f" --bbv "$b" -k divergent -o "$f"
check "the inputs are untouched" -- cmp "$tmp/k.ptx" "$k"
printf 'old\n' > "$tmp/i4.ptx"
chmod 640 "$tmp/i4.ptx"
mkdir -p "$tmp/i4.ptx.tmp~"
rc_is 0 -- "$tm" instrument "$k" -o "$tmp/i4.ptx" -q
check "a replaced file keeps its mode (640)" -- test "$(stat -c %a "$tmp/i4.ptx")" = 640
check "the output was written beside a stale temporary name" -- grep -q __tmap_bbv_base "$tmp/i4.ptx"
check "no temporary is left behind" -- bash -c "! ls '$tmp' | grep -q 'i4.ptx.tmp[^~]'"
mkdir -p "$tmp/rep"
printf 'old\n' > "$tmp/rep/report.txt"
mkdir -p "$tmp/rep/report.html"
expect 1 "report.html" -- "$tm" report --bbv "$b" "${lat[@]}" -q -o "$tmp/rep"
check "a failed report -o DIR replaces none of its files" -- bash -c "[ \"\$(cat '$tmp/rep/report.txt')\" = old ] && [ ! -e '$tmp/rep/report.md' ] && ! ls '$tmp/rep' | grep -q tmp"
printf 'old\n' > "$tmp/pr3.npy"
mkdir -p "$tmp/pr3.npy.json"
expect 1 "pr3.npy.json" -- "$tm" predict "$tmp/m1.txt" --features "$f" -o "$tmp/pr3.npy"
check "a failed predict leaves BBV.npy as it was" -- bash -c "[ \"\$(cat '$tmp/pr3.npy')\" = old ]"
rc_is 0 -- "$tm" regroup -a sorting --bbv "$b" "${lat[@]}" -o /dev/null -q

# train: more than 64 runs (all are used), feature names that are names
python3 - "$tmp/many" <<'PY'
import os, struct, sys
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
def npy(path, descr, shape, fmt, values):
    head = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    head += " " * ((64 - (10 + len(head) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(head)) + head.encode())
        f.write(struct.pack("<%d%s" % (len(values), fmt), *values))
for r in range(70):  # 4 threads, 1 feature, 2 blocks: block 1 = feature
    feat = [r + t for t in range(4)]
    npy("%s/f%d.npy" % (d, r), "<f8", "(4, 1)", "d", feat)
    npy("%s/b%d.npy" % (d, r), "<u4", "(4, 2)", "I", sum(([1, int(x)] for x in feat), []))
PY
args=()
for r in $(seq 0 69); do args+=(--features "$tmp/many/f$r.npy" --bbv "$tmp/many/b$r.npy"); done
rc_is 0 -- "$tm" train "${args[@]}" -k k --folds 0 --json -o "$tmp/many/m.txt"
check "train uses all 70 runs" -- python3 -c "import json; d=json.load(open('$tmp/out')); assert d['runs'] == 70 and d['threads'] == 280, d['runs']"
mkdir -p "$tmp/names"
cp "$tmp/many/f0.npy" "$tmp/many/b0.npy" "$tmp/names/"
printf '{"kernel": "k", "features": ["a,b"], "runs": [{"bbv": "b0.npy", "features": "f0.npy"}]}' > "$tmp/names/profile.json"
expect 1 "features[0] is not a name" -- "$tm" train "$tmp/names" -o "$tmp/names/m.txt"
printf '{"kernel": "k", "features": [7], "runs": [{"bbv": "b0.npy", "features": "f0.npy"}]}' > "$tmp/names/profile.json"
expect 1 "features[0] is not a name" -- "$tm" train "$tmp/names" -o "$tmp/names/m.txt"
expect 1 "name 0 is empty" -- "$tm" train --features "$tmp/many/f0.npy" --bbv "$tmp/many/b0.npy" -k k --feature-names "" -o "$tmp/names/m.txt"

# .cu: an NVRTC error in one line (the log with -v), a file without kernels
printf '__global__ void k(int *p) { p[0] = undefined_name; }\nint x = ;\n' > "$tmp/bad.cu"
: > "$tmp/empty.cu"
if "$tm" cfg "$src/examples/divergent/divergent.cu" > /dev/null 2>&1; then
  expect 1 "undefined_name" -- "$tm" cfg "$tmp/bad.cu"
  check "-v prints NVRTC's whole log" -- bash -c "'$tm' safety -v '$tmp/bad.cu' 2>&1 | grep -q 'errors detected'"
  expect 1 "no kernel" -- "$tm" safety "$tmp/empty.cu"
else
  echo "cli_errors: SKIPPED the .cu checks: NVRTC cannot compile $src/examples/divergent/divergent.cu here"
fi
printf '.version 8.0\n.target sm_90\n.address_size 64\n' > "$tmp/nokernel.ptx"
expect 1 "no kernel" -- "$tm" cfg "$tmp/nokernel.ptx"

# docs/cli.md holds the top-level help and every command's --help as the tool prints them
for c in $all_cmds; do "$tm" "$c" --help > "$tmp/help-$c.txt"; done
"$tm" --help > "$tmp/help-.txt"
check "docs/cli.md holds every command's --help" -- python3 - "$src/docs/cli.md" "$tmp" <<'PY'
import re, sys
doc, d = open(sys.argv[1]).read(), sys.argv[2]
top = re.search(r"## Commands\n\n```\n(.*?)```", doc, re.S).group(1)
assert top == open(d + "/help-.txt").read(), "threadmap --help differs from docs/cli.md"
blocks = dict(re.findall(r"### threadmap (\w+)\n\n```\n(.*?)```", doc, re.S))
for c in "bench cfg check device estimate instrument latency predict profile regroup report run safety train version".split():
    assert blocks.get(c) == open("%s/help-%s.txt" % (d, c)).read(), c + ": docs/cli.md differs"
PY

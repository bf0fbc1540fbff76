#!/bin/sh
# prepare.sh -- real sequence data for the suite's sw_swissprot.json and
# nw_embl.json: installs Debian's emboss-test package (the EMBOSS test
# databases: SwissProt proteins in swiss/seq.dat, EMBL DNA in embl/*.dat) when
# it is missing, builds seq2raw.c and writes the raw little-endian arrays the
# manifests read into data/out/ (git-ignored).  Nothing here needs Python.
#   SW: the 100 SwissProt proteins, cycled over 32768 threads; the query is the
#       first 64 residues of the first entry.
#   NW: the EMBL DNA cut after every GATC (an in-silico MboI digest: real
#       fragment lengths), fragments of 16..384 bases (longer ones truncated),
#       thread t aligns fragment t with fragment t + 1, 16384 threads.
# EMBOSS_TEST=DIR uses a copy of the test databases instead of the package.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out="$here/out"
db=${EMBOSS_TEST:-/usr/share/EMBOSS/test}

if [ ! -r "$db/swiss/seq.dat" ] || ! ls "$db"/embl/*.dat >/dev/null 2>&1; then
    echo "prepare.sh: $db lacks the test databases; installing emboss-test"
    sudo=""
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    if ! { timeout 300 $sudo apt-get update -qq &&
           timeout 600 $sudo apt-get install -y -qq --no-install-recommends emboss-test; }; then
        echo "prepare.sh: could not install emboss-test (the package registry is unreachable," >&2
        echo "  or apt-get/sudo is unavailable here).  The synthetic manifests (sw_synthetic.json," >&2
        echo "  nw_synthetic.json) run without it; set EMBOSS_TEST to a folder holding" >&2
        echo "  swiss/seq.dat and embl/*.dat to use a copy of the databases." >&2
        exit 1
    fi
fi

mkdir -p "$out"
${CC:-cc} -std=c11 -O2 -D_POSIX_C_SOURCE=200809L -o "$out/seq2raw" "$here/seq2raw.c"
"$out/seq2raw" -n 32768 -c 1048576 -q 64 "$out/swissprot" "$db/swiss/seq.dat"
"$out/seq2raw" -n 16384 -c 4194304 -d GATC -m 384 -l 16 "$out/embl_a" "$db"/embl/*.dat
"$out/seq2raw" -n 16384 -c 4194304 -d GATC -m 384 -l 16 -s 1 "$out/embl_b" "$db"/embl/*.dat
rm -f "$out/embl_b.res" # the same residues as embl_a.res
echo "prepare.sh: wrote $out"

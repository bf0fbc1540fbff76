#!/usr/bin/env bash
# layers.sh SRC -- the layering check (scripts/check_layers.py) passes on the
# tree, and fails, naming the file and line, on a copy of it with an include
# planted that runs back up the data flow: one from a stage into a later
# stage's private header, one into a later stage's public header, and one
# from the command into a stage's private header.
set -euo pipefail
src=$1
check="python3 $src/scripts/check_layers.py"
$check "$src"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
plant() { # plant FILE LINE: copy of the tree with LINE added at the top of FILE
    rm -rf "$tmp/tree"
    mkdir -p "$tmp/tree"
    (cd "$src" && cp -r common instrument runtime model latency_tables regroup pipeline attach report \
        cli include "$tmp/tree/")
    printf '%s\n' "$2" | cat - "$tmp/tree/$1" > "$tmp/f" && mv "$tmp/f" "$tmp/tree/$1"
    if $check "$tmp/tree" > "$tmp/out"; then
        echo "FAIL: the check passed with $2 planted in $1"; exit 1
    fi
    grep -q "^$1:1: includes" "$tmp/out" || { echo "FAIL: no line names $1:1"; cat "$tmp/out"; exit 1; }
    echo "ok: $1 with $2 -> $(grep "^$1:1" "$tmp/out")"
}
plant model/metrics.c '#include "report/report_priv.h"'
plant instrument/cfg.c '#include "threadmap/regroup.h"'
plant cli/cmd_cfg.c '#include "instrument/ptx.h"'
plant include/threadmap/model.h '#include "threadmap/pipeline.h"'
# a header whose guard names another path
rm -rf "$tmp/tree"; mkdir -p "$tmp/tree"; cp -r "$src/common" "$tmp/tree/"
sed -i "s/TMAP_COMMON_BASE_H/TMAP_BASE_H/" "$tmp/tree/common/base.h"
if $check "$tmp/tree" > "$tmp/out"; then echo "FAIL: a stale guard passed"; exit 1; fi
grep -q "^common/base.h: include guard TMAP_BASE_H" "$tmp/out" || { echo "FAIL: no line names the guard"; cat "$tmp/out"; exit 1; }
echo "ok: a stale include guard -> $(head -n 1 "$tmp/out")"

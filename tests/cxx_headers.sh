#!/usr/bin/env bash
# cxx_headers.sh SRC [NVCC] -- the public headers compile as C++: a .cpp including
# threadmap.h, built with g++ -Wall -Wextra -Werror -pedantic, and the same
# file as a .cu built with nvcc.  It zero-initializes every public struct the
# C way (`tmap_error e = {0};`, as the docs and examples do), calls one
# function of each header's kind and links nothing (-fsyntax-only / -c).
# Without nvcc the .cu half is skipped and says so (exit 77).
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{
  echo '#include "threadmap.h"'
  echo 'static int cxx_sink(const void *p, size_t n) { return p != 0 && n > 0; }'
  echo 'int cxx_uses(void);'
  echo 'int cxx_uses(void) {'
  echo '    int r = 0;'
  sed -n 's/^typedef struct \(tmap_[a-z0-9_]*\) {.*/    \1 v_\1 = {0}; r += cxx_sink(\&v_\1, sizeof v_\1);/p' \
    "$src"/include/threadmap/*.h
  echo '    tmap_error e = {0};'
  echo '    tmap_bbv b = {0};'
  echo '    return r + (int)tmap_bbv_create(&b, 1, 1, &e);'
  echo '}'
} > "$tmp/uses.cpp"
n=$(grep -c ' = {0}; r +=' "$tmp/uses.cpp")
[ "$n" -ge 20 ] || { echo "FAIL: only $n public structs found in $src/include/threadmap"; exit 1; }
for std in c++11 c++17; do
  g++ -std=$std -Wall -Wextra -Wno-missing-field-initializers -Werror -pedantic -I"$src/include" -c "$tmp/uses.cpp" -o "$tmp/uses.o"
done
echo "ok: g++ -std=c++11 and c++17 -Wall -Wextra -Werror -pedantic: threadmap.h, $n structs = {0}"
nvcc=${2:-}
[ -n "$nvcc" ] || nvcc=$(command -v nvcc || true)
if [ ! -x "$nvcc" ]; then
  echo "[  SKIPPED ] the .cu half: no nvcc (CMake found none in the CUDA toolkit, none on PATH)"
  exit 77
fi
cp "$tmp/uses.cpp" "$tmp/uses.cu"
"$nvcc" -std=c++17 -Werror all-warnings -Xcompiler -Wall,-Werror -I"$src/include" \
  -c "$tmp/uses.cu" -o "$tmp/uses_cu.o"
echo "ok: nvcc -Werror all-warnings: threadmap.h from a .cu file"

#!/usr/bin/env bash
# install_example.sh BUILD SOURCE [SANITIZERS] -- installs the built tree into a temporary
# prefix, builds examples/divergent/host.c against it twice (with
# find_package(threadmap) and with pkg-config), runs it (exit 3 means no
# GPU, which is a pass here), and checks the installed command runs.  A
# library built with sanitizers needs the example built with them too.
set -euo pipefail
build=$1 src=$2 san=${3:-}
cflags=""
[ -n "$san" ] && cflags="-fsanitize=$san"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
cmake -S "$src/examples/divergent" -B "$tmp/ex" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_C_FLAGS="$cflags" >/dev/null
cmake --build "$tmp/ex" >/dev/null
cc -std=c11 $cflags -o "$tmp/host_pc" "$src/examples/divergent/host.c" \
  $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs threadmap) \
  -Wl,-rpath,"$tmp/prefix/lib"
for exe in "$tmp/ex/divergent_host" "$tmp/host_pc"; do
  set +e
  (cd "$src/examples/divergent" && "$exe" divergent.cu)
  rc=$?
  set -e
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 3 ]; then
    echo "install_example: $exe exited $rc" >&2
    exit 1
  fi
done
"$tmp/prefix/bin/threadmap" version
THREADMAP_DATA= "$tmp/prefix/bin/threadmap" estimate --help >/dev/null
echo "install_example: installed library, headers, CMake package and pkg-config file work"

#!/usr/bin/env bash
# The consumer test: earlybird as an application gets it. Installs the build
# tree BUILD into a temporary prefix; builds examples/ out of tree with
# find_package(earlybird) and runs eb-cg at P = 2 (its own checks: converged,
# iteration counts within 1 of blocking CG) and eb-sgd at P = 2 (every form's
# test loss falls, accuracy within 0.03 of MPI_Allreduce's); builds a program with
# `pkg-config earlybird` alone and runs it at P = 2; packs a Debian package
# and checks its dependencies and contents.
#   tests/consumer/consumer.sh BUILD SOURCE
set -euo pipefail
build="$1"
source_dir="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
prefix="$work/prefix"

echo "== install into $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null

echo "== examples/ against the installed package"
cmake -S "$source_dir/examples" -B "$work/examples" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build "$work/examples" -j "$(nproc)" >/dev/null
mpirun -n 2 --oversubscribe "$work/examples/eb-cg" --n 48 --repeat 1
mpirun -n 2 --oversubscribe "$work/examples/eb-sgd" --epochs 3 --samples 512 --imbalance none,one-late:1

echo "== a program built with pkg-config earlybird"
flags="$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs earlybird)"
# shellcheck disable=SC2086  # the flags are words
mpicxx "$source_dir/tests/consumer/hello_pkgconfig.cpp" -o "$work/hello" $flags
mpirun -n 2 --oversubscribe "$work/hello"

echo "== cpack -G DEB"
(cd "$build" && cpack -G DEB -B "$work/deb" >/dev/null)
deb="$(ls "$work"/deb/*.deb)"
depends="$(dpkg-deb -f "$deb" Depends)"
echo "$(basename "$deb"): Depends: $depends"
for needed in libopenmpi-dev libtbb-dev libhwloc-dev; do
  grep -q "$needed" <<<"$depends" || { echo "FAIL: the package does not depend on $needed" >&2; exit 1; }
done
contents="$(dpkg-deb -c "$deb")"
for file in usr/lib/libearlybird.a usr/lib/libearlybird_collectives.a usr/lib/libearlybird_mpi.so \
            usr/lib/cmake/earlybird/earlybirdConfig.cmake usr/lib/pkgconfig/earlybird.pc \
            usr/include/earlybird/communicator.hpp usr/bin/eb-bench; do
  grep -q " \./$file\$" <<<"$contents" || { echo "FAIL: the package lacks $file" >&2; exit 1; }
done
echo "consumer: ok"

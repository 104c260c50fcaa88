#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds switchyard-cli, the core and every plugin with CUDA for sm_90 (plus the default
# architectures) in a build folder of its own, and gathers a self-contained folder for the
# GPU host (../shared/GPU.md): bin/switchyard-cli, lib/ with libswitchyard-core and the
# non-system libraries it needs, lib/switchyard/plugins/ with the manifests, check.sh and
# isa_levels.sh (the host CPU's ISA levels, which check.sh runs last).
# Stripped, under 60 MiB. Run there as: FOLDER/check.sh "$OUT".
#
#   tests/gpu/bundle.sh [FOLDER]     (default: gpu-bundle/ at the top of the tree, git-ignored)
# Environment: SWITCHYARD_GPU_BUILD (build folder, default build-gpu/), JOBS (default 2),
#              SWITCHYARD_CUDA_ARCHITECTURES (default "75;80;90;100").
set -euo pipefail

src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${SWITCHYARD_GPU_BUILD:-$src/build-gpu}
out=${1:-$src/gpu-bundle}
archs=${SWITCHYARD_CUDA_ARCHITECTURES:-75;80;90;100}
case ";$archs;" in *";90;"* | *";90-real;"*) ;; *) echo "bundle.sh: the architectures must include 90 (the H200)" >&2; exit 2 ;; esac

launcher=()
if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
    export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$(dirname "$src")}
fi
mkdir -p "$build"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DSWITCHYARD_ENABLE_GUI=OFF -DSWITCHYARD_ENABLE_TESTS=OFF -DSWITCHYARD_ENABLE_BENCHMARKS=OFF \
    -DSWITCHYARD_ENABLE_CUDA=ON "-DSWITCHYARD_CUDA_ARCHITECTURES=$archs" "${launcher[@]}" >"$build/configure.log" ||
    { cat "$build/configure.log" >&2; exit 1; }
# With the GUI and the tests off, the default target is the CLI, the core and the plugins.
cmake --build "$build" -j "${JOBS:-2}"

plugins=$build/lib/switchyard/plugins
[[ -f $plugins/libswitchyard-cuda.so ]] || { echo "bundle.sh: the cuda plugin was not built (see $build/configure.log)" >&2; exit 1; }

rm -rf "$out"
mkdir -p "$out/bin" "$out/lib/switchyard/plugins"
cp "$build/bin/switchyard-cli" "$out/bin/"
cp -L "$build"/lib/libswitchyard-core.so.* "$out/lib/" 2>/dev/null || true
find "$out/lib" -maxdepth 1 -name 'libswitchyard-core.so.*.*' -delete # keep the soname only
cp "$plugins"/*.so "$plugins"/*.plugin.json "$out/lib/switchyard/plugins/"
cp "$src/tests/gpu/check.sh" "$out/check.sh"
cp "$src/tests/bench/isa_levels.sh" "$out/isa_levels.sh"
chmod 0755 "$out/check.sh" "$out/isa_levels.sh"

# The non-system libraries the CLI, the core and the plugins need (ldd, resolved here).
# The GPU host has the C/C++ runtime, the driver, cuBLAS and an OpenCL ICD loader of its own.
wanted='^(libelf|libopenblas|libgfortran|libquadmath|libz|libcpu_features|libblas|liblapack)\.so'
for f in "$out/bin/switchyard-cli" "$out"/lib/libswitchyard-core.so.* "$out"/lib/switchyard/plugins/*.so; do
    LD_LIBRARY_PATH="$out/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r soname path; do
    if [[ $soname =~ $wanted && ! -e $out/lib/$soname ]]; then
        cp -L "$path" "$out/lib/$soname"
    fi
done

chmod -R u+w "$out"
strip --strip-unneeded "$out/bin/switchyard-cli" "$out"/lib/*.so* "$out"/lib/switchyard/plugins/*.so

size_mib=$(du -sm "$out" | cut -f1)
echo "bundle: $out (${size_mib} MiB)"
ls -l "$out/bin" "$out/lib" "$out/lib/switchyard/plugins" | sed 's/^/  /'
if ((size_mib >= 60)); then
    echo "bundle.sh: the bundle is ${size_mib} MiB; it must stay under 60 MiB" >&2
    exit 1
fi
# Anything else the binaries need must be on every Linux host.
missing=$(for f in "$out/bin/switchyard-cli" "$out"/lib/*.so*; do
    LD_LIBRARY_PATH="$out/lib" ldd "$f" | grep 'not found' || true
done)
[[ -z $missing ]] || { echo "bundle.sh: unresolved libraries:"$'\n'"$missing" >&2; exit 1; }

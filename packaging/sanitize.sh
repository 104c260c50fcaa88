#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the core, the CLI and their test suites under the sanitizers and runs them
# (CMakePresets.json: asan = AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/,
# tsan = ThreadSanitizer in build-tsan/; GUI, CUDA, OpenCL and benchmarks off).
#   packaging/sanitize.sh            both presets
#   packaging/sanitize.sh asan       one
# Prints how long each build and each test run took. A sanitizer report fails the run.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
jobs=$(nproc 2>/dev/null || echo 2)
presets=("$@")
[ ${#presets[@]} -eq 0 ] && presets=(asan tsan)

launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)

for preset in "${presets[@]}"; do
    case "$preset" in
    asan | tsan) ;;
    *) echo "sanitize.sh: unknown preset '$preset' (asan or tsan)" >&2; exit 2 ;;
    esac
    start=$(date +%s)
    cmake --preset "$preset" "${launcher[@]}" >/dev/null
    cmake --build --preset "$preset" -j "$jobs"
    built=$(date +%s)
    ctest --preset "$preset" -j "$((jobs + 1))" # the suites wait on workers as often as they compute
    done_at=$(date +%s)
    echo "sanitize.sh: $preset: build $((built - start)) s, tests $((done_at - built)) s"
done

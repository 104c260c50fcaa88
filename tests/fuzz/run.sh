#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets with clang (ASan + UBSan) in their own build folder and runs
# each for a bounded time from its seed corpus in tests/fuzz/corpus/<target>/.
#   tests/fuzz/run.sh [SECONDS_PER_TARGET]      default 60; .ci/run passes a shorter time
# FUZZ_BUILD_DIR (default build-fuzz) is where it builds; new corpus entries and crash
# artifacts go under $FUZZ_BUILD_DIR/fuzz/<target>/. A folder already configured with
# SWITCHYARD_ENABLE_FUZZ=ON (the `asan` preset's build-asan/, which .ci/run builds for the
# sanitizer suites) is reused as it is. A crash fails the run: turn the
# artifact into a regression test in tests/core/tst_untrusted.cpp, then fix it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
seconds="${1:-60}"
build="${FUZZ_BUILD_DIR:-build-fuzz}"
targets=(manifest report elfdeps jsonread)

launcher=()
if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
if ! grep -qs "^SWITCHYARD_ENABLE_FUZZ:BOOL=ON" "$build/CMakeCache.txt"; then
    CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DSWITCHYARD_ENABLE_FUZZ=ON -DSWITCHYARD_ENABLE_GUI=OFF -DSWITCHYARD_ENABLE_TESTS=OFF \
        -DSWITCHYARD_ENABLE_BENCHMARKS=OFF -DSWITCHYARD_ENABLE_OPENCL=OFF -DSWITCHYARD_ENABLE_VULKAN=OFF \
        -DSWITCHYARD_ENABLE_CUDA=OFF "${launcher[@]}" >/dev/null
fi
cmake --build "$build" --target "${targets[@]/#/fuzz_}"

status=0
for t in "${targets[@]}"; do
    work="$build/fuzz/$t"
    mkdir -p "$work/corpus" "$work/artifacts"
    echo "== fuzz_$t for ${seconds}s"
    if ! ASAN_OPTIONS=detect_leaks=1 "$build/bin/fuzz_$t" -max_total_time="$seconds" \
        -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$work/artifacts/" "$work/corpus" "tests/fuzz/corpus/$t" \
        >"$work/log" 2>&1; then
        status=1
        echo "fuzz_$t FAILED; the input is in $work/artifacts/:"
        tail -n 60 "$work/log"
    fi
    grep -E "^stat::number_of_executed_units|^stat::peak_rss_mb" "$work/log" | sed "s/^/  /"
done
exit $status

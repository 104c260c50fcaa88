#!/bin/sh
# SPDX-License-Identifier: MIT
# Measures the issue-4 figures in one run of bench_kernels and prints them as ratios.
# Usage: tests/bench/figures.sh [build-dir] [out.json]
set -eu
build=${1:-build}
out=${2:-figures.json}
"$build/bin/bench/bench_kernels" --benchmark_min_time=0.2 --figures-json="$out" >&2
python3 - "$out" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))
fm, g, r = f["flow_match_64MiB"], f["gemm_1024"], f["reference_flow_match_1M"]
print(f"flow_match_step 64 MiB: best {fm['best_cell']} {fm['best_gbs']:.1f} GB/s / triad {fm['triad_gbs']:.1f} GB/s = {fm['ratio']:.2f} (goal >= 0.90)")
print(f"gemm 1024^3: best {g['best_cell']} {g['best_gflops']:.1f} GFLOP/s / OpenBLAS {g['openblas_gflops']:.1f} GFLOP/s = {g['ratio']:.2f}")
print(f"reference flow_match_step 1M: Switchyard median {r['switchyard_median_s']*1e6:.1f} us / Google Benchmark median {r['google_benchmark_median_s']*1e6:.1f} us = {r['ratio']:.3f} (goal 0.95..1.05); vs its CPU time {r['google_benchmark_cpu_median_s']*1e6:.1f} us = {r['ratio_vs_cpu_time']:.3f}")
for w in f.get("warnings", []):
    print("warning:", w)
PY

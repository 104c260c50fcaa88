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
print(f"flow_match_step 64 MiB: best {fm['best_cell']} {fm['best_gbs']:.1f} GB/s / triad probe {fm['triad_gbs']:.1f} GB/s (medians of 25 alternating rounds, best of 3 passes each) = {fm['ratio']:.2f} (goal >= 0.90)")
for name, c in sorted(fm["cells"].items()):
    print(f"  {name}: {c['kernel_median_gbs']:.1f} / {c['triad_median_gbs']:.1f} GB/s = {c['ratio']:.2f}")
print(f"gemm 1024^3: best {g['best_cell']} {g['best_gflops']:.1f} GFLOP/s / OpenBLAS {g['openblas_gflops']:.1f} GFLOP/s = {g['ratio']:.2f}")
print(f"reference flow_match_step 1M: Switchyard median / Google Benchmark median, median of {len(r['rounds'])} alternating rounds = {r['ratio']:.3f} (goal 0.95..1.05); vs its CPU time = {r['ratio_vs_cpu_time']:.3f}")
for i, x in enumerate(r["rounds"]):
    print(f"  round {i + 1}: Switchyard {x['switchyard_median_s']*1e6:.1f} us, Google Benchmark {x['google_benchmark_median_s']*1e6:.1f} us")
for w in f.get("warnings", []):
    print("warning:", w)
PY

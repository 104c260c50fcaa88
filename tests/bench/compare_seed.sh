#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Runs the BM_ResolveFirst7Rungs* benchmarks (the plain call, the same kept as an owning
# CellPtr, and a PreparedChain) and the Python seed's resolve_first on the same chain in one
# run and prints each ratio. Usage: tests/bench/compare_seed.sh [build-dir] [seed004.txt]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$root/build}
seed=${2:-$(ls "$root"/../shared/seeds/004_*.txt 2>/dev/null | head -n1)}
[ -f "$seed" ] || { echo "the seed kernel registry (kernel_registry.py) not found; pass its path as the second argument" >&2; exit 2; }
bench="$build/bin/bench/bench_registry"
[ -x "$bench" ] || { echo "$bench not built (cmake --build $build --target bench_registry)" >&2; exit 2; }
# Both sides are timed the same way: best of 5 repeats (timeit.repeat's min for the seed, the
# fastest of 5 benchmark repetitions for C++), so a busy machine's preemptions do not count
# against one side only. The C++ median is printed too.
json=$("$bench" --benchmark_filter='BM_ResolveFirst7Rungs' --benchmark_repetitions=5 \
    --benchmark_format=json 2>/dev/null)
py_ns=$(python3 "$root/tests/bench/seed_resolve.py" "$seed")
python3 -c '
import json, statistics, sys
d = json.loads(sys.argv[1]); py = float(sys.argv[2])
what = {"BM_ResolveFirst7Rungs": "plain resolve_first(keys)",
        "BM_ResolveFirst7RungsOwned": "resolve_first(keys) kept as a CellPtr",
        "BM_ResolveFirst7RungsPrepared": "resolve_first(PreparedChain)"}
runs = {}
for b in d["benchmarks"]:
    if b.get("run_type") == "iteration":
        runs.setdefault(b["run_name"], []).append(b["real_time"])
for name, times in runs.items():
    ns = min(times)
    print(f"{name} ({what.get(name, name)}): C++ {ns:.1f} ns (median {statistics.median(times):.1f}), "
          f"Python seed {py:.1f} ns, ratio {py / ns:.0f}x (goal >= 50x)")
' "$json" "$py_ns"

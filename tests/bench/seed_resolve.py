#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Times seed 004's TupleRegistry.resolve_first on the same 7-rung chain and cells as
bench_registry.cpp's BM_ResolveFirst7Rungs. Prints nanoseconds per call."""
import sys
import timeit

seed_path = sys.argv[1]
src = open(seed_path, encoding="utf-8").read()
src = src[src.index("from __future__"):]
ns = {}
exec(compile(src, "seed004", "exec"), ns)
reg = ns["TupleRegistry"]("kernels", ("op", "device", "arch", "variant"))
for op in ("flow_match_step", "flow_sde_step", "gemm", "rms_norm"):
    for arch in ("x86-64-v3", "x86-64-v2", "generic"):
        reg.put((op, "cpu", arch, "default"), lambda: None, available=lambda: True)
    reg.put((op, "cpu", "generic", "reference"), lambda: None, available=lambda: True)
chain = [("gemm", "cuda", a, "default") for a in ("sm_90", "sm_89", "sm_86", "sm_80", "sm_75", "generic")]
chain.append(("gemm", "cpu", "generic", "reference"))
assert reg.resolve_first(chain).key == ("gemm", "cpu", "generic", "reference")
number = 200000
best = min(timeit.repeat(lambda: reg.resolve_first(chain), number=number, repeat=5))
print(f"{best / number * 1e9:.1f}")

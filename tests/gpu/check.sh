#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The GPU check, run on the GPU host from the folder bundle.sh gathered:
#     FOLDER/check.sh "$OUT"
# doctor, then every op on cuda:0 with every available variant at sizes well past the L2
# (2-3 GiB working sets; gemm 4096^3), then flow_match_step on every OpenCL device when
# the opencl plugin is present, each against the CPU reference; then the host CPU's ISA
# levels against each other (isa_levels.sh, informational). Writes the JSON reports, the
# logs and summary.txt under OUT. Exit 0: every row passed; 1: a row failed or a step
# broke; 3: no CUDA device.
# SWITCHYARD_CHECK_SECONDS (default 450): the whole check's deadline. Each step's timeout
# is the smaller of its own cap and the time left, so the steps that come last (the
# OpenCL comparison, then the host CPU's levels) are the ones cut short.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=${1:-$here/out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export SWITCHYARD_PLUGIN_PATH="$here/lib/switchyard/plugins"
cli=$here/bin/switchyard-cli
summary=$out/summary.txt
: >"$summary"
say() { echo "$*" | tee -a "$summary"; }
started=$(date +%s)
deadline=$((started + ${SWITCHYARD_CHECK_SECONDS:-450}))
# within CAP CMD...: CMD under `timeout`, at most CAP seconds and never past the deadline.
within() {
    local cap=$1 left=$((deadline - $(date +%s) - 5))
    shift
    ((left < cap)) && cap=$left
    if ((cap < 10)); then
        echo "check.sh: no time left for: $*" >&2
        return 124
    fi
    timeout "$cap" "$@"
}

# Figures measured on the H200 (GPU.md): the ceilings the goals are fractions of.
copy_gbs=4256 cublas_fp32_gflops=51200 cublas_tf32_gflops=454000

say "== Switchyard GPU check on $(hostname) ($(date -u +%Y-%m-%dT%H:%M:%SZ))"
"$cli" --version >>"$summary" 2>&1 || true
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >>"$summary" 2>&1

within 60 "$cli" doctor >"$out/doctor.txt" 2>&1
say "doctor: exit $? (full text in doctor.txt)"
within 60 "$cli" doctor --json >"$out/doctor.json" 2>/dev/null
within 30 "$cli" show cuda >"$out/show-cuda.txt" 2>&1
within 30 "$cli" show cuda-cublas >"$out/show-cuda-cublas.txt" 2>&1
within 30 "$cli" matrix >"$out/matrix.txt" 2>&1

# Is there a CUDA device? A one-element row on cuda:0 answers with the real path.
probe_cuda() {
    within 90 "$cli" profile --device cuda:0 --op flow_match_step --sizes 1 --budget 0.01 \
        --warmup 0 --min-samples 1 --csv 2>&1
}
probe=$(probe_cuda)
prc=$?
if [[ $prc -ne 0 && -z ${SWITCHYARD_CONTAINMENT:-} ]]; then
    # The workers run in a PID namespace of their own when they can (as root): does the CUDA
    # runtime start in one? The same probe with the workers contained by a subreaper instead.
    say "cuda:0 probe failed (exit $prc): $(echo "$probe" | grep -v '^\[' | head -2)"
    probe=$(SWITCHYARD_CONTAINMENT=subreaper probe_cuda)
    prc=$?
    say "the same probe with SWITCHYARD_CONTAINMENT=subreaper: exit $prc"
    if [[ $prc -eq 0 ]]; then
        export SWITCHYARD_CONTAINMENT=subreaper
        say "so the rest of the check runs with SWITCHYARD_CONTAINMENT=subreaper"
    fi
fi
if [[ $prc -ne 0 ]]; then
    say ""
    say "no CUDA device: switchyard-cli cannot profile on cuda:0 here."
    say "$(echo "$probe" | grep -v '^\[' | head -3)"
    say "The cuda backend says:"
    say "$(sed -n '1p;/^Dependencies:/,/^$/p;/^Problem/,$p' "$out/show-cuda.txt")"
    exit 3
fi

# summarise CSV: one line per row with the rate and its fraction of the ceiling.
summarise() {
    awk -F, -v copy="$copy_gbs" -v fp32="$cublas_fp32_gflops" -v tf32="$cublas_tf32_gflops" '
    NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } # columns by name (report.cpp)
    {
        op = $1; size = $2; dev = $4; cell = $5 "/" $6; status = $7; med = $(col["median_s"])
        gbps = $(col["gbps"]); gflops = $(col["gflops"]); parity = $(col["parity"])
        rel = $(col["max_rel_error"]); level = $(col["level"]); frac = $(col["ceiling_fraction"])
        ghz = $(col["clock_ghz"]); dropped = $(col["clock_samples_discarded"]); xref = $(col["speedup_vs_reference"])
        if (op == "gemm") {
            ceil = ($6 == "cublas_tf32") ? tf32 : fp32
            rate = sprintf("%8.0f GFLOP/s  %.3f of cuBLAS %s", gflops, gflops / ceil, ($6 == "cublas_tf32") ? "TF32" : "fp32")
            if ($6 == "cublas") blas = gflops
            if ($5 == "sm_90" && $6 == "default") own = gflops
        } else {
            rate = sprintf("%8.1f GB/s     %.3f of device copy (%.3f of its %s ceiling)", gbps, gbps / copy, frac, level)
        }
        xref_text = (xref > 0) ? sprintf("%6.1fx ref", xref) : "  (no ref)" # gemm: reference not timed
        printf "%-16s %-12s %-9s %-20s %-6s %10.4f ms  %s  %s  clock %.2f GHz (%d dropped)  parity %s (max rel %.2g)\n", op, size, dev, cell, status, med * 1e3, rate, xref_text, ghz, dropped, parity, rel
        if (status != "ok") bad++
    }
    END {
        if (bad == "") bad = 0
        if (own > 0 && blas > 0) printf "own sm_90 gemm / cuBLAS fp32 (same run): %.3f (goal >= 0.5)\n", own / blas
        exit (bad > 0 ? 1 : 0)
    }' "$1"
}

common=(--all-variants --warmup 0.2 --min-samples 10 --timeout 240)
say ""
say "== cuda:0, every op, every available variant"
say "goals: flow_match_step >= 0.95 of device copy ($copy_gbs GB/s); rms_norm, flow_sde_step >= 0.90;"
say "       cuBLAS within 5 % of its figure; own sm_90 gemm >= 0.5 of cuBLAS fp32"
# gemm runs on its own, without the reference rung timed: the CPU reference (one thread,
# double accumulation) takes 30-60 s a launch at 4096^3; parity still runs it once.
rc=0
for part in memory gemm; do
    if [[ $part == memory ]]; then
        args=(--op flow_match_step flow_sde_step rms_norm --budget 1
            --sizes flow_match_step:268435456,flow_sde_step:131072x1024,rms_norm:65536x4096)
        cap=170
    else
        args=(--op gemm --sizes gemm:4096x4096x4096 --budget 1 --reference-budget 0)
        cap=150
    fi
    within "$cap" "$cli" profile --device cuda:0 "${common[@]}" "${args[@]}" \
        -o "$out/report-cuda-$part.json" --csv >"$out/cuda-$part.csv" 2>"$out/cuda-$part.log"
    prc=$?
    say "profile ($part): exit $prc after $(($(date +%s) - started)) s"
    if [[ -s $out/cuda-$part.csv ]]; then
        summarise "$out/cuda-$part.csv" | tee -a "$summary"
        ((PIPESTATUS[0] == 0)) || prc=1
    fi
    [[ $prc -ne 0 ]] && { tail -5 "$out/cuda-$part.log" | tee -a "$summary"; rc=1; }
done

# The device's ceilings as the report records them: the directed probes and the working-set
# sweep's plateaus (L1s, L2, HBM), the sweep's points under them.
if command -v python3 >/dev/null && [[ -s $out/report-cuda-memory.json ]]; then
    say ""
    say "== cuda:0 ceilings and working-set sweep"
    python3 - "$out/report-cuda-memory.json" <<'PY' | tee -a "$summary"
import json, sys
report = json.load(open(sys.argv[1]))
for d in report.get("context", {}).get("devices", []):
    if not d.get("id", "").startswith("cuda:"):
        continue
    print(d["id"], d.get("name", ""))
    for c in d.get("ceilings", []):
        cap = c.get("capacity_bytes", 0)
        print("  %-22s %10.1f %s  %s%s" % (c["id"], c["value"], "GFLOP/s" if c["kind"] == "compute" else "GB/s   ",
              c.get("method", ""), "  (holds %.1f MiB)" % (cap / 2**20) if cap else ""))
    sweep = d.get("properties", {}).get("sweep", {})
    if "error" in sweep:
        print("  sweep failed:", sweep["error"])
    for p in sweep.get("plateaus", []):
        print("  plateau %-4s %10.1f GB/s over %.1f - %.1f MiB" % (p["level"], p["gbs"], p["first_bytes"] / 2**20, p["last_bytes"] / 2**20))
    pts = sweep.get("points", [])
    if pts:
        print("  points (MiB:GB/s):", " ".join("%.0f:%.0f" % (p["working_set_bytes"] / 2**20, p["gbs"]) for p in pts))
PY
fi

if ls "$here"/lib/switchyard/plugins/*opencl*.plugin.json >/dev/null 2>&1; then
    say ""
    say "== flow_match_step on every OpenCL device (NVIDIA's and PoCL's)"
    within 120 "$cli" profile --device opencl --op flow_match_step "${common[@]}" --budget 0.5 \
        --sizes flow_match_step:268435456 -o "$out/report-opencl.json" --csv >"$out/opencl.csv" 2>"$out/opencl.log"
    orc=$?
    say "profile: exit $orc"
    if [[ -s $out/opencl.csv ]]; then
        summarise "$out/opencl.csv" | tee -a "$summary"
        ((PIPESTATUS[0] == 0)) || orc=1
    fi
    [[ $orc -ne 0 ]] && { tail -5 "$out/opencl.log" | tee -a "$summary"; rc=1; }
else
    say ""
    say "(no opencl plugin in this bundle: the OpenCL comparison is skipped)"
fi

# The host CPU (an AVX-512 Xeon): does each ISA level earn its rung, and gemm 2048^3 against
# OpenBLAS (issue 19). Informational: it does not change the exit status.
if [[ -x $here/isa_levels.sh ]] && command -v python3 >/dev/null; then
    say ""
    say "== host CPU: each ISA level against the one below, gemm 2048^3 against OpenBLAS"
    within 180 "$here/isa_levels.sh" --cli "$cli" --out "$out/isa-levels" --rounds 2 --budget 0.2 \
        >"$out/isa-levels.log" 2>&1
    irc=$?
    if [[ -s $out/isa-levels/isa_levels.txt ]]; then
        tee -a "$summary" <"$out/isa-levels/isa_levels.txt"
    else
        tail -5 "$out/isa-levels.log" | tee -a "$summary"
    fi
    say "isa_levels.sh: exit $irc (1: a row loses; 3: no SIMD level to compare; 124: timed out)"
fi

say ""
say "done in $(($(date +%s) - started)) s; exit $rc"
exit $rc

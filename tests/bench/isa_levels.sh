#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Does each ISA level earn its rung on this machine? The cells of the best level (x86-64-v4
# on an AVX-512 CPU) against the cells the level below resolves (x86-64-v3's; generic's
# below v3), per op, at an in-cache and a DRAM size, on one thread (`default`) and on all
# (`threaded`); and gemm at 256^3 and 2048^3 against OpenBLAS, on one thread
# (OPENBLAS_NUM_THREADS=1) and on all, with its kernels for the best level (an OpenBLAS that
# does not know this CPU runs a weaker core: then OPENBLAS_CORETYPE is set, and said).
#
# The cells under comparison run in one profile run each (profile --cells ... --repeat N):
# pass after pass over the plan, so the cells of one (op, size) run seconds apart, N times
# over, and drift hits them alike. Each pass gives a paired ratio (the other cell's median
# time / the best level's); the speed is the median of the ratios, the noise their half
# spread (or the rows' own noise with one pass). The CPU ceilings are probed once (the first
# run) and reused (--ceilings-from).
#
#   tests/bench/isa_levels.sh [--cli PATH] [--out DIR] [--rounds N] [--budget S]
#
# --rounds: the passes (profile --repeat; default 3). Prints one table and writes it to
# OUT/isa_levels.txt with every run's CSV, JSON and log beside it. Exit 0 when every row of
# the best level is at least as fast as the level below within the noise (and gemm reaches
# OpenBLAS within it), 1 when a row loses or nothing could be compared, 2 on a usage error,
# 3 when the machine has a single level with cells (nothing to compare).
# Used by tests/gpu/check.sh (the GPU host is an AVX-512 Xeon). Needs python3.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cli=""
out=""
rounds=3
budget=0.3
while (($#)); do
    case $1 in
    --cli) cli=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    -h | --help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "isa_levels.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done
if [[ -z $cli ]]; then
    for c in "$here/../../build/bin/switchyard-cli" "$here/bin/switchyard-cli" "$(command -v switchyard-cli)"; do
        [[ -n $c && -x $c ]] && { cli=$c; break; }
    done
fi
[[ -n $cli && -x $cli ]] || { echo "isa_levels.sh: no switchyard-cli found; pass --cli PATH" >&2; exit 2; }
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "isa_levels.sh: --rounds must be a positive integer, got '$rounds'" >&2; exit 2; }
command -v python3 >/dev/null || { echo "isa_levels.sh: needs python3 for the table" >&2; exit 2; }
out=${out:-$(mktemp -d /tmp/isa_levels.XXXXXX)}
mkdir -p "$out"

best=$("$cli" hardware --json --no-probe | python3 -c 'import json,sys; print(json.load(sys.stdin)["cpu"].get("best_level",""))')
case $best in
x86-64-v4) low=x86-64-v3 ;;
x86-64-v3) low=generic ;; # x86-64-v2 has no cells of its own: it resolves the generic ones
*) echo "isa_levels.sh: the best level here is '${best:-unknown}': no SIMD level to compare" >&2; exit 3 ;;
esac
echo "best level: $best, against: $low (passes: $rounds, budget $budget s a row and pass)"

sizes=flow_match_step:43690,flow_match_step:33554432,flow_sde_step:42x1024,flow_sde_step:16384x1024
sizes+=,rms_norm:42x1024,rms_norm:4096x4096,gemm:256x256x256
# gemm 2048^3 runs on its own with a larger budget: a launch takes 0.02-2 s, and a row of
# one sample has no noise to judge it by.
big=gemm:2048x2048x2048
big_budget=$(python3 -c "import sys; print(max(1.5, 5 * float(sys.argv[1])))" "$budget") ||
    { echo "isa_levels.sh: --budget must be a number of seconds, got '$budget'" >&2; exit 2; }
common=(--device cpu --reference-budget 0 --min-samples 5 --timeout 120 --repeat "$rounds" --csv)

ceilings=()
run() { # NAME OPENBLAS_THREADS -- CLI ARGUMENTS...: one profile run, its CSV, JSON and log under OUT
    local name=$1 blas=$2; shift 3
    local envs=(-u SWITCHYARD_MAX_ISA -u OPENBLAS_NUM_THREADS)
    [[ -n $blas ]] && envs+=("OPENBLAS_NUM_THREADS=$blas")
    [[ -n $blas_core ]] && envs+=("OPENBLAS_CORETYPE=$blas_core")
    echo "run $name"
    env "${envs[@]}" "$cli" profile "$@" "${common[@]}" "${ceilings[@]}" -o "$out/$name.json" \
        >"$out/$name.csv" 2>"$out/$name.log" ||
        { echo "isa_levels.sh: run $name failed:" >&2; tail -3 "$out/$name.log" >&2; }
    [[ ${#ceilings[@]} -eq 0 && -s $out/$name.json ]] && ceilings=(--ceilings-from "$out/$name.json")
}
# OpenBLAS only where this build has it (--cells refuses a name no cell has).
blas=""
"$cli" matrix 2>/dev/null | awk '$1 == "gemm" && $2 == "cpu" && $3 == "generic" && $4 == "openblas" && $5 == "yes" {f = 1} END {exit !f}' &&
    blas=,generic/openblas
[[ -n $blas ]] || echo "no OpenBLAS cell in this build: gemm is compared between the levels only"
# OpenBLAS against its own kernels for this level: an OpenBLAS that does not know this CPU
# runs a weaker core (0.3.21 on the GPU host's Xeon: 'Prescott', 24 GFLOP/s on one thread;
# on Zen 5: 'Haswell'), and beating that proves nothing. Unless OPENBLAS_CORETYPE is set,
# the runs force the core of the best level (SkylakeX: AVX-512; Haswell: AVX2 + FMA).
blas_core=""
if [[ -n $blas && -z ${OPENBLAS_CORETYPE:-} ]]; then
    corename=$("$cli" hardware --json --no-probe 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("openblas", {}).get("corename", ""))' 2>/dev/null)
    case $best:$corename in
    x86-64-v4:SkylakeX | x86-64-v4:Cooperlake | x86-64-v4:SapphireRapids | x86-64-v4:Zen4) ;;
    x86-64-v3:Haswell | x86-64-v3:Zen | x86-64-v3:SkylakeX | x86-64-v3:Cooperlake) ;;
    x86-64-v4:*) blas_core=SkylakeX ;;
    x86-64-v3:*) blas_core=Haswell ;;
    esac
    [[ -n $blas_core ]] &&
        echo "OpenBLAS runs its '${corename:-unknown}' core here; compared with OPENBLAS_CORETYPE=$blas_core, its kernels for $best"
fi
run 1t 1 -- --cells "$best/default,$low/default$blas" --sizes "$sizes" --budget "$budget"
run all "" -- --cells "$best/threaded,$low/threaded$blas" --sizes "$sizes" --budget "$budget"
run 1t-big 1 -- --cells "$best/default,$low/default$blas" --op gemm --sizes "$big" --budget "$big_budget"
run all-big "" -- --cells "$best/threaded,$low/threaded$blas" --op gemm --sizes "$big" --budget "$big_budget"

python3 - "$out" "$best" "$low" "${blas_core:-${OPENBLAS_CORETYPE:-}}" <<'PY' | tee "$out/isa_levels.txt"
import json, statistics, sys
out, best, low, blas_core = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]

def rows(name):
    """(op, size) -> {cell: row} of one run's measured rows that passed parity."""
    got = {}
    try:
        with open(f"{out}/{name}.json") as f:
            report = json.load(f)
    except (OSError, ValueError):
        return got
    for r in report.get("rows", []):
        if r.get("status") != "ok" or (r.get("parity") or {}).get("verdict") != "PASS":
            continue
        got.setdefault((r["op"], r["size"]), {})[r["arch"] + "/" + r["variant"]] = r
    return got

def medians(row):
    """The row's median time per pass (one entry when it ran a single pass)."""
    return [run["median"] for run in row.get("runs", [])] or [row["stats"]["median"]]

def spread(values):
    return (max(values) - min(values)) / 2 / statistics.median(values) if len(values) > 1 else 0.0

def compare(base, other):
    """(speed, noise, passes) of `base` against `other`: other's time / base's, paired by pass.
    A pass that failed is left out of a row's runs, so rows with different numbers of runs
    cannot be paired: their medians are compared, with the larger spread as the noise."""
    b, o = medians(base), medians(other)
    if len(b) == len(o) and len(b) >= 2:
        ratios = [o[i] / b[i] for i in range(len(b))]
        speed = statistics.median(ratios)
        return speed, spread(ratios), str(len(b))
    if len(b) >= 2 and len(o) >= 2:
        return (statistics.median(o) / statistics.median(b), max(spread(b), spread(o)),
                f"{len(b)}/{len(o)} unpaired")
    noise = max(base["stats"].get("rel_noise", 0), other["stats"].get("rel_noise", 0))
    return o[0] / b[0], noise, "1"

def rate(row):
    """What the row moved: GFLOP/s for gemm, GB/s for the rest."""
    if row["op"] == "gemm":
        return f"{row['gflops']:.1f} GFLOP/s"
    return f"{row['gbps']:.1f} GB/s"

def verdict(speed, noise):
    if speed >= 1.0:
        return "earns"
    return "within noise" if speed >= 1.0 - max(0.05, 2 * noise) else "LOSES"

losses = compared = 0
missing = []
print(f"{best} against {low} (speed = {low} time / {best} time, the median of the passes' ratios;"
      " >= 1: the higher rung is as fast)")
print(f"| op | size | threads | {low} | {best} | speed | noise | passes | verdict |")
print("|---|---|---|---|---|---|---|---|---|")
tables = (("default", "1", ("1t", "1t-big")), ("threaded", "all", ("all", "all-big")))
for variant, threads, runs in tables:
    got = {}
    for name in runs:
        got.update(rows(name))
    top, below = f"{best}/{variant}", f"{low}/{variant}"
    for key in sorted(got):
        cells = got[key]
        if top not in cells or below not in cells:
            missing.append(f"{key[0]} {key[1]} ({threads} threads)")
            continue
        speed, noise, n = compare(cells[top], cells[below])
        v = verdict(speed, noise)
        losses += v == "LOSES"
        compared += 1
        print(f"| {key[0]} | {key[1]} | {threads} | {rate(cells[below])} | "
              f"{rate(cells[top])} | {speed:.2f} | {noise * 100:.0f} % | {n} | {v} |")

print()
print(f"gemm against OpenBLAS (speed = OpenBLAS time / {best} time; OpenBLAS on 1 thread"
      " (OPENBLAS_NUM_THREADS=1) and on all"
      + (f", its {blas_core} core (OPENBLAS_CORETYPE)" if blas_core else "") + ")")
print(f"| size | threads | {best} GFLOP/s | OpenBLAS GFLOP/s | speed | noise | passes | verdict |")
print("|---|---|---|---|---|---|---|---|")
for variant, threads, runs in tables:
    got = {}
    for name in runs:
        got.update(rows(name))
    top = f"{best}/{variant}"
    for key in sorted(k for k in got if k[0] == "gemm"):
        cells = got[key]
        if top not in cells or "generic/openblas" not in cells:
            missing.append(f"gemm {key[1]} against OpenBLAS ({threads} threads)")
            continue
        speed, noise, n = compare(cells[top], cells["generic/openblas"])
        v = verdict(speed, noise)
        losses += v == "LOSES"
        compared += 1
        print(f"| {key[1]} | {threads} | {cells[top]['gflops']:.1f} | "
              f"{cells['generic/openblas']['gflops']:.1f} | {speed:.2f} | {noise * 100:.0f} % | {n} | {v} |")
print()
for m in missing:
    print(f"missing: {m} (a cell failed or did not run; see the logs in {out})")
if not compared:
    print(f"no row could be compared: every run failed (their logs are under {out})")
    sys.exit(1)
print(f"{losses} row(s) lose; runs under {out}")
sys.exit(1 if losses else 0)
PY

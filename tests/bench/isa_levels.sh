#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Does each ISA level earn its rung on this machine? The resolved cells of the best level
# (x86-64-v4 on an AVX-512 CPU) against those of the level below (what the same CLI resolves
# under --max-isa), per op, at an in-cache and a DRAM size, on one thread (`default`) and
# on all (`threaded`); and gemm at 2048^3 against OpenBLAS, on one thread
# (OPENBLAS_NUM_THREADS=1) and on all. The runs alternate, round after round, so drift hits
# both sides alike; each cell's figure is the median of its rounds' medians. The CPU ceilings
# are probed once (the first run, uncapped) and reused (--ceilings-from).
#
#   tests/bench/isa_levels.sh [--cli PATH] [--out DIR] [--rounds N] [--budget S]
#
# Prints one table and writes it to OUT/isa_levels.txt with every run's CSV and JSON beside
# it. Exit 0 when every row of the best level is at least as fast as the level below within
# the noise (and gemm reaches OpenBLAS within it), 1 when a row loses, 2 on a usage error,
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
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
x86-64-v3) low=x86-64-v2 ;; # no cells of its own: resolves the generic ones
*) echo "isa_levels.sh: the best level here is '${best:-unknown}': no SIMD level to compare" >&2; exit 3 ;;
esac
echo "best level: $best, against: $low (rounds: $rounds, budget $budget s a row)"

sizes=flow_match_step:43690,flow_match_step:33554432,flow_sde_step:42x1024,flow_sde_step:16384x1024
sizes+=,rms_norm:42x1024,rms_norm:4096x4096,gemm:256x256x256
# gemm 2048^3 runs on its own with a larger budget: a launch takes 0.1-2 s, and a row of one
# sample has no noise to judge it by.
big=gemm:2048x2048x2048
big_budget=$(python3 -c "import sys; print(max(1.5, 5 * float(sys.argv[1])))" "$budget") ||
    { echo "isa_levels.sh: --budget must be a number of seconds, got '$budget'" >&2; exit 2; }
common=(--device cpu --reference-budget 0 --min-samples 5 --timeout 120 --csv)

ceilings=()
run() { # NAME [env ARGUMENTS...] -- CLI ARGUMENTS...: one profile run, its CSV and JSON under OUT
    local name=$1; shift
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    env "${envs[@]}" "$cli" profile "$@" "${common[@]}" "${ceilings[@]}" -o "$out/$name.json" \
        >"$out/$name.csv" 2>"$out/$name.log" ||
        { echo "isa_levels.sh: run $name failed:" >&2; tail -3 "$out/$name.log" >&2; }
    ((${#ceilings[@]})) || ceilings=(--ceilings-from "$out/$name.json")
}
for ((r = 1; r <= rounds; r++)); do
    echo "round $r of $rounds"
    # Alternate the sides, so neither always runs first; the first run is uncapped, so the
    # ceilings every later run reuses are the machine's, not the capped level's.
    if ((r % 2)); then order=(top low); else order=(low top); fi
    for side in "${order[@]}"; do
        cap=(-u SWITCHYARD_MAX_ISA)
        [[ $side == low ]] && cap=("SWITCHYARD_MAX_ISA=$low")
        run "$side-default-$r" "${cap[@]}" -- --sizes "$sizes" --budget "$budget"
        run "$side-threaded-$r" "${cap[@]}" -- --variant threaded --sizes "$sizes" --budget "$budget"
        run "$side-default-big-$r" "${cap[@]}" -- --op gemm --sizes "$big" --budget "$big_budget"
        run "$side-threaded-big-$r" "${cap[@]}" -- --variant threaded --op gemm --sizes "$big" --budget "$big_budget"
    done
    run "openblas-1t-big-$r" -u SWITCHYARD_MAX_ISA OPENBLAS_NUM_THREADS=1 -- --variant openblas --op gemm --sizes "$big" --budget "$big_budget"
    run "openblas-all-big-$r" -u SWITCHYARD_MAX_ISA -u OPENBLAS_NUM_THREADS -- --variant openblas --op gemm --sizes "$big" --budget "$big_budget"
done

python3 - "$out" "$rounds" "$best" "$low" <<'PY' | tee "$out/isa_levels.txt"
import csv, statistics, sys
out, rounds, best, low = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]

def rows(name):
    """(op, size) -> (cell, median seconds, relative noise) of one run's resolved rows."""
    got = {}
    try:
        with open(f"{out}/{name}.csv") as f:
            for r in csv.DictReader(f):
                if r["status"] != "ok" or r["parity"] != "PASS":
                    continue
                got[(r["op"], r["size"])] = (r["arch"] + "/" + r["variant"], float(r["median_s"]),
                                             float(r["rel_noise"] or 0), float(r["gflops"] or 0))
    except FileNotFoundError:
        pass
    return got

def merged(prefix):
    """(op, size) -> (cell, median of the rounds' medians, largest noise, GFLOP/s at it)."""
    per = {}
    for r in range(1, rounds + 1):
        for name in (f"{prefix}-{r}", f"{prefix}-big-{r}"):
            for key, v in rows(name).items():
                per.setdefault(key, []).append(v)
    res = {}
    for key, vs in per.items():
        med = statistics.median(v[1] for v in vs)
        # Spread between rounds counts as noise as well as each row's own.
        spread = (max(v[1] for v in vs) - min(v[1] for v in vs)) / med if len(vs) > 1 else 0.0
        noise = max(max(v[2] for v in vs), spread)
        gflops = statistics.median(v[3] for v in vs)
        res[key] = (vs[0][0], med, noise, gflops)
    return res

def verdict(speed, noise):
    if speed >= 1.0:
        return "earns"
    return "within noise" if speed >= 1.0 - max(0.05, 2 * noise) else "LOSES"

losses = compared = 0
print(f"{best} against {low} (speed = {low} time / {best} time; >= 1: the higher rung is as fast)")
print("| op | size | threads | %s cell | %s cell | speed | noise | verdict |" % (low, best))
print("|---|---|---|---|---|---|---|---|")
for variant, threads in (("default", "1"), ("threaded", "all")):
    lo, hi = merged(f"low-{variant}"), merged(f"top-{variant}")
    for key in sorted(set(lo) & set(hi)):
        (lc, lt, ln, _), (hc, ht, hn, _) = lo[key], hi[key]
        speed, noise = lt / ht, max(ln, hn)
        v = verdict(speed, noise)
        losses += v == "LOSES"
        compared += 1
        print(f"| {key[0]} | {key[1]} | {threads} | {lc} | {hc} | {speed:.2f} | {noise * 100:.0f} % | {v} |")
    for key in sorted(set(lo) ^ set(hi)):
        print(f"| {key[0]} | {key[1]} | {threads} | - | - | - | - | missing (see the logs in {out}) |")

print()
print(f"gemm against OpenBLAS (speed = OpenBLAS time / {best} time)")
print("| size | threads | cell | GFLOP/s | OpenBLAS GFLOP/s | speed | noise | verdict |")
print("|---|---|---|---|---|---|---|---|")
for variant, threads, blas in (("default", "1", "openblas-1t"), ("threaded", "all", "openblas-all")):
    mine, ob = merged(f"top-{variant}"), merged(blas)
    for key in sorted(k for k in set(mine) & set(ob) if k[0] == "gemm"):
        (c, t, n, g), (_, bt, bn, bg) = mine[key], ob[key]
        speed, noise = bt / t, max(n, bn)
        v = verdict(speed, noise)
        losses += v == "LOSES"
        print(f"| {key[1]} | {threads} | {c} | {g:.1f} | {bg:.1f} | {speed:.2f} | {noise * 100:.0f} % | {v} |")
print()
if not compared:
    print(f"no row could be compared: every run failed (their logs are under {out})")
    sys.exit(1)
print(f"{losses} row(s) lose; runs under {out}")
sys.exit(1 if losses else 0)
PY

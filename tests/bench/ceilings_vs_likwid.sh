#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Switchyard's CPU ceilings side by side with likwid-bench's at the same working sets and
# thread counts, in one run:
#
#   tests/bench/ceilings_vs_likwid.sh [path/to/switchyard-cli]   (default: build/bin/...)
#
# For each ceiling of `switchyard-cli hardware --json` (cpu_peaks.ceilings): its value, the
# best likwid-bench figure for the same level, working set and threads, and their ratio.
# The likwid kernels are those of the widest vector ISA the CPU has and Switchyard's probes
# use (ISA below: avx512 with AVX-512F, else avx where AVX2 and FMA are there):
#   triad  stream_sp_ISA, stream_sp_ISA_fma (A = B*s + C, two loads and a store per
#          element, 12 bytes, as Switchyard's triad); in DRAM also the non-temporal
#          stream_sp_mem_ISA(_fma) (Switchyard's triad tries both store flavours)
#   read   sum_sp_ISA, load_ISA
# In the caches each triad kernel also runs with its three streams placed 256 bytes
# apart modulo 4 KiB ("@skew": likwid-bench's per-stream offsets, -w ...-0:S0:0,1:S0:N,..).
# By default likwid-bench page-aligns every stream, so A(i), B(i) and C(i) sit a multiple
# of 4 KiB apart: each store then 4K-aliases the next loads and the core stalls them (on
# Zen 4 in L1: 266 GB/s aligned against 333 for Switchyard's skewed triad). Switchyard's
# probe skews its arrays the same way, so "@skew" is the same loop on the same placement.
# In DRAM each also runs with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 ("@thp" in the
# table): Switchyard's buffers and probes are on 2 MiB pages, likwid-bench's on 4 KiB
# pages by default, and on a KVM guest that alone is 20-35 % of DRAM bandwidth.
#   fma    peakflops_sp_ISA_fma (at an L1 working set)
# Both tools count bytes the same way (each element's loads and stores once, no
# write-allocate). likwid-bench's "kB"/"MB" are decimal; sizes go to it in bytes.
#
# likwid-bench is installed on demand (apt-get, as root). Where it cannot be installed or
# cannot run (no root, no apt, not x86-64 with AVX2+FMA, a VM that refuses it) the script
# says why and exits 0: the comparison is a check for machines that can make it.
#
# Measurements run under flock /tmp/switchyard-measure.lock (one at a time on a shared
# machine). As root both tools also run under `chrt -f 1` (SCHED_FIFO, each invocation
# short; single-thread runs only): on a loaded 2-core VM an ordinary process is preempted mid-pass and
# likwid-bench's long runs then measure the scheduler (5 GB/s "DRAM" under load 8).
# SWITCHYARD_LIKWID_REPEATS (default 2) likwid runs per kernel; SWITCHYARD_PROBE_REPEATS
# (default 2) Switchyard probe runs, best of each taken per ceiling.
set -uo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
cli=${1:-$here/build/bin/switchyard-cli}
repeats=${SWITCHYARD_LIKWID_REPEATS:-2}
probe_repeats=${SWITCHYARD_PROBE_REPEATS:-2}
lock=/tmp/switchyard-measure.lock

skip() {
    echo "ceilings_vs_likwid: skipped: $*"
    exit 0
}

[ -x "$cli" ] || skip "no switchyard-cli at $cli (build it, or pass its path)"
command -v python3 >/dev/null || skip "python3 is needed to read the JSON"
# The widest likwid kernels this CPU runs, matching the widest loads Switchyard's probes use
# (SWITCHYARD_MAX_ISA caps the probes: the likwid kernels follow the cap).
isa=
if grep -qw avx512f /proc/cpuinfo; then
    isa=avx512
elif grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo; then
    isa=avx
fi
case "${SWITCHYARD_MAX_ISA:-}" in
x86-64-v3) [ "$isa" = avx512 ] && isa=avx ;;
x86-64-v2 | generic) isa= ;;
esac
[ -n "$isa" ] || skip "this CPU (or SWITCHYARD_MAX_ISA) gives neither AVX-512F nor AVX2+FMA, the vector ISAs whose likwid kernels are compared"

if ! command -v likwid-bench >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "ceilings_vs_likwid: installing likwid (apt-get install -y likwid)..."
        DEBIAN_FRONTEND=noninteractive apt-get install -y likwid >/tmp/ceilings_vs_likwid.apt.log 2>&1 ||
            skip "apt-get install likwid failed (see /tmp/ceilings_vs_likwid.apt.log)"
    else
        skip "likwid-bench is not installed, and installing it needs root and apt-get"
    fi
fi
command -v likwid-bench >/dev/null || skip "likwid-bench is still not on PATH after installing likwid"
# likwid-bench needs no performance counters, but it reads the topology and pins threads:
# check it runs here at all.
likwid-bench -t "sum_sp_$isa" -w S0:16kB:1 -i 10 >/tmp/ceilings_vs_likwid.check.log 2>&1 ||
    skip "likwid-bench does not run here: $(tail -n 3 /tmp/ceilings_vs_likwid.check.log | tr '\n' ' ')"

rt=()
if [ "$(id -u)" = 0 ] && command -v chrt >/dev/null && chrt -f 1 true 2>/dev/null; then
    rt=(chrt -f 1)
fi
# Every run is bounded (timeout 60 s). SCHED_FIFO only for single-thread runs: two
# likwid-bench threads under SCHED_FIFO on a 2-core VM spun for minutes without finishing.
measure() { flock "$lock" timeout 60 "$@"; }
measure_rt() { flock "$lock" timeout 60 "${rt[@]}" "$@"; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "ceilings_vs_likwid: Switchyard's probes ($probe_repeats runs of $cli hardware --json)..."
for ((i = 0; i < probe_repeats; ++i)); do
    measure "$cli" hardware --json >"$work/hw$i.json" 2>/dev/null ||
        skip "switchyard-cli hardware --json failed"
done

# The ceilings to compare: id, kind, threads (1 or all), working set in bytes.
python3 - "$work" "$probe_repeats" >"$work/ceilings.tsv" <<'EOF'
import json, sys, os
work, n = sys.argv[1], int(sys.argv[2])
best, meta = {}, {}
for i in range(n):
    with open(os.path.join(work, f"hw{i}.json")) as f:
        p = json.load(f).get("cpu_peaks", {})
    for c in p.get("ceilings", []):
        best[c["id"]] = max(best.get(c["id"], 0.0), c["value"])
        meta[c["id"]] = c
for cid, c in meta.items():
    print(cid, c["kind"], c["threads"], int(c.get("working_set_bytes", 0)), best[cid], sep="\t")
EOF
threads_all=$(nproc)

likwid_best() { # test threads bytes field -> best value over $repeats runs (0: failed)
    local test=$1 threads=$2 bytes=$3 field=$4 best=0 v env=() streams=
    # "<test>@thp": the same with glibc advising its large allocations for huge pages
    # (glibc.malloc.hugetlb=1), the page size Switchyard's buffers and probes run on.
    if [[ $test == *@thp ]]; then
        test=${test%@thp}
        env=(env GLIBC_TUNABLES=glibc.malloc.hugetlb=1)
    fi
    # "<test>@skew": the three streams at offsets of 0, 64 and 128 floats (0, 256 and 512
    # bytes past their page), as Switchyard's probe places its arrays; offsets are in
    # elements and must be multiples of the kernel's loop stride (32 or 64 here).
    if [[ $test == *@skew ]]; then
        test=${test%@skew}
        streams="-0:S0:0,1:S0:64,2:S0:128"
    fi
    for ((r = 0; r < repeats; ++r)); do
        local run=measure
        [ "$threads" = 1 ] && run=measure_rt
        # Iterations set so each run moves ~4 GB (0.02-0.2 s): with -s, likwid-bench's
        # calibration gave 2-thread runs its minimum of 10 iterations (13 us for 24 KiB),
        # timing the threads' start instead of the kernel.
        local iters=$((4000000000 / bytes))
        [ "$iters" -lt 10 ] && iters=10
        v=$($run "${env[@]}" likwid-bench -t "$test" -w "S0:${bytes}B:$threads$streams" -i "$iters" 2>/dev/null |
            awk -v f="$field:" '$1 == f {v = $2} END {print v + 0}')
        best=$(python3 -c "print(max($best, ${v:-0}))")
    done
    echo "$best"
}

echo "ceilings_vs_likwid: likwid-bench (best of $repeats runs each${rt[*]:+; 1-thread runs under ${rt[*]}})..."
rows=()
while IFS=$'\t' read -r id kind threads bytes value; do
    t=$threads
    [ "$t" = 0 ] && t=$threads_all
    field=MByte/s scale=1000
    case "$id" in
    dram.triad.*)
        tests="stream_sp_$isa stream_sp_${isa}_fma stream_sp_mem_$isa stream_sp_mem_${isa}_fma"
        tests="$tests stream_sp_mem_$isa@thp stream_sp_mem_${isa}_fma@thp" ;;
    dram.read.*) tests="sum_sp_$isa load_$isa sum_sp_$isa@thp load_$isa@thp" ;;
    *.triad.*) tests="stream_sp_$isa stream_sp_${isa}_fma stream_sp_$isa@skew stream_sp_${isa}_fma@skew" ;;
    *.read.*) tests="sum_sp_$isa load_$isa" ;;
    fma.fp32.*)
        tests="peakflops_sp_${isa}_fma"
        bytes=24576
        field=MFlops/s ;;
    *) continue ;;
    esac
    # likwid-bench needs at least a few KiB per thread and per stream.
    [ "$bytes" -gt 0 ] || continue
    best=0 best_test=-
    for test in $tests; do
        v=$(likwid_best "$test" "$t" "$bytes" "$field")
        if python3 -c "import sys; sys.exit(0 if $v > $best else 1)"; then
            best=$v best_test=$test
        fi
    done
    rows+=("$id"$'\t'"$kind"$'\t'"$t"$'\t'"$bytes"$'\t'"$value"$'\t'"$best"$'\t'"$scale"$'\t'"$best_test")
done <"$work/ceilings.tsv"

printf '%s\n' "${rows[@]}" >"$work/rows.tsv"
python3 - "$work/rows.tsv" <<'EOF_TABLE'
import sys
hdr = ("ceiling", "threads", "working set", "Switchyard", "likwid best", "ratio")
print(f"{hdr[0]:<16} {hdr[1]:>7} {hdr[2]:>12} {hdr[3]:>11} {hdr[4]:>12} {hdr[5]:>6}  likwid kernel")
worst, compared = 0.0, 0
for line in open(sys.argv[1]):
    cid, kind, t, b, v, l, scale, test = line.rstrip("\n").split("\t")
    b, v, l = int(b), float(v), float(l) / float(scale)
    ws = "-" if kind == "compute" else (f"{b / 2**20:.0f} MiB" if b >= 2**20 else f"{b / 1024:.0f} KiB")
    unit = "GFLOP/s" if kind == "compute" else "GB/s"
    ratio = v / l if l > 0 else float("nan")
    if l > 0:
        worst = max(worst, abs(ratio - 1))
        compared += 1
    print(f"{cid:<16} {t:>7} {ws:>12} {v:>11.1f} {l:>12.1f} {ratio:>6.2f}  {test} ({unit})")
if compared:
    print(f"\nlargest deviation from likwid-bench: {worst * 100:.0f} % over {compared} ceilings (goal: within 10 %)")
else:
    print("\nno likwid-bench figure could be read: nothing compared")
EOF_TABLE

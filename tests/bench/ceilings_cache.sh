#!/bin/sh
# SPDX-License-Identifier: MIT
# The issue-36 quick-run figures in one run: the one-row profile
#   switchyard-cli profile --device cpu --op rms_norm --sizes 64x1024 --budget 0.1
# with a cold cache of CPU ceilings (an empty folder: the run measures them, as every run
# did before the cache, and keeps them) and then warm (the same folder: the run uses the kept
# set), each under /usr/bin/time: wall time and peak RSS (the largest process of the run,
# the probing worker included). Warm is the best of 3 runs. Prints both figures, the cold/warm
# ratios, and the goal: warm < 1 s and < 64 MB.
# Usage: tests/bench/ceilings_cache.sh [build-dir]
set -eu
build=${1:-build}
cli="$build/bin/switchyard-cli"
[ -x "$cli" ] || { echo "ceilings_cache.sh: no $cli; build switchyard-cli first" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "ceilings_cache.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/switchyard-ceilings-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# One run: prints "WALL_S RSS_KB"; fails when the profile does.
run() {
    if ! SWITCHYARD_CEILINGS_CACHE="$tmp/cache" /usr/bin/time -f "%e %M" -o "$tmp/time" \
        "$cli" profile --device cpu --op rms_norm --sizes 64x1024 --budget 0.1 \
        >"$tmp/out" 2>"$tmp/err"; then
        echo "ceilings_cache.sh: the profile failed:" >&2
        cat "$tmp/err" "$tmp/out" >&2
        exit 1
    fi
    tail -n 1 "$tmp/time"
}

cold=$(run)
grep -q "note: ceilings measured in this run" "$tmp/out" ||
    { echo "ceilings_cache.sh: the cold run did not measure" >&2; cat "$tmp/out" >&2; exit 1; }
warm=""
for _ in 1 2 3; do
    w=$(run)
    grep -q "note: ceilings from .*, this machine" "$tmp/out" ||
        { echo "ceilings_cache.sh: a warm run did not use the cache" >&2; cat "$tmp/out" >&2; exit 1; }
    warm=$(printf '%s\n%s\n' "$warm" "$w" | awk 'NF' | sort -n | head -n 1)
done

echo "$cold" "$warm" | awk '{
    cw = $1; cr = $2 / 1024; ww = $3; wr = $4 / 1024
    printf "one-row profile (rms_norm 64x1024, cpu, --budget 0.1)\n"
    printf "  cold cache (measures the ceilings): %6.2f s  %7.1f MB peak RSS\n", cw, cr
    printf "  warm cache (best of 3):             %6.2f s  %7.1f MB peak RSS\n", ww, wr
    printf "  cold / warm: wall %.1fx, peak RSS %.1fx\n", cw / (ww > 0 ? ww : 0.01), cr / wr
    printf "  goal (warm < 1 s and < 64 MB): %s\n", (ww < 1 && wr < 64) ? "met" : "MISSED"
}'

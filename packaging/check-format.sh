#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fails when a tracked C++/CUDA file differs from what clang-format (the repo's
# .clang-format) would write; prints the diff. Run by .ci/run before the build.
#   packaging/check-format.sh          check
#   packaging/check-format.sh --fix    reformat in place
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
command -v clang-format >/dev/null 2>&1 || { echo "check-format: clang-format not found (Debian: clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh')
if [ "${1:-}" = "--fix" ]; then
    clang-format -i "${files[@]}"
    exit 0
fi
bad=0
for f in "${files[@]}"; do
    if ! clang-format --style=file "$f" | diff -u --label "$f" --label "$f (clang-format)" "$f" - ; then
        bad=$((bad + 1))
    fi
done
if [ "$bad" -ne 0 ]; then
    echo "check-format: $bad file(s) differ from clang-format ($(clang-format --version | head -n1))." >&2
    echo "  Fix with: packaging/check-format.sh --fix" >&2
    exit 1
fi
echo "check-format: ${#files[@]} files match .clang-format"

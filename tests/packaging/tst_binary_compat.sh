#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Binary compatibility (docs/plugins.md, "Compatibility"): the fixture plugin, built from the
# sources and SDK headers of the ABI baseline's commit (packaging/abi/baseline.env, taken
# with git archive), loads in this build's core and its kernels pass parity. Usage:
#   tst_binary_compat.sh <build-dir> <source-dir> <c++ compiler>
# Exits 77 (skipped) outside a git checkout or when neither the baseline's commit nor its SDK
# header tree is in it (a shallow clone): it never fetches.
set -euo pipefail
build=$1
src=$2
cxx=$3
info="$src/packaging/abi/baseline.env"
[ -e "$info" ] || { echo "no $info: take a baseline with packaging/abi-check.sh --update" >&2; exit 1; }
commit=$(sed -n 's/^commit=//p' "$info")
[ -n "$commit" ] || { echo "$info names no commit" >&2; exit 1; }
if ! git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
    echo "SKIP: $src is not a git checkout, so the baseline's SDK headers cannot be taken"
    exit 77
fi
sdk_tree=$(sed -n 's/^sdk_tree=//p' "$info")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if git -C "$src" cat-file -e "$commit^{commit}" 2>/dev/null; then
    # What an old plugin had: the SDK headers, the fixture's source and manifest, as of the
    # baseline.
    git -C "$src" archive "$commit" core/include/switchyard/sdk \
        tests/fixtures/plugins/fixture_plugin.cpp tests/fixtures/plugins/good/good.plugin.json.in |
        tar -x -C "$work"
elif [ -n "$sdk_tree" ] && git -C "$src" cat-file -e "$sdk_tree^{tree}" 2>/dev/null; then
    # The commit is gone (a rebased or squashed branch) but its SDK headers are here: they are
    # what the plugin is built against; the fixture's source and manifest are today's.
    echo "note: the baseline's commit $commit is not in this checkout; using its SDK tree $sdk_tree"
    git -C "$src" archive --prefix=core/include/switchyard/sdk/ "$sdk_tree" | tar -x -C "$work"
    mkdir -p "$work/tests/fixtures/plugins/good"
    cp "$src/tests/fixtures/plugins/fixture_plugin.cpp" "$work/tests/fixtures/plugins/"
    cp "$src/tests/fixtures/plugins/good/good.plugin.json.in" "$work/tests/fixtures/plugins/good/"
else
    echo "SKIP: neither the ABI baseline's commit $commit nor its SDK tree is in this checkout" \
        "(a shallow clone?); fetch it (git fetch --unshallow) to run this test"
    exit 77
fi
# Only the SDK is there: a plugin that needed another header would not build.
[ "$(ls "$work/core/include/switchyard")" = "sdk" ]
plugins="$work/plugins"
mkdir -p "$plugins"
# The generated core_export.h (and buildinfo.h) come from this build: they are CMake's, not
# part of what a revision of the SDK changes.
"$cxx" -std=c++20 -O1 -fPIC -shared -fvisibility=hidden -DFIXTURE_VARIANT='"abi_baseline"' \
    -I"$work/core/include" -I"$build/core/generated" \
    "$work/tests/fixtures/plugins/fixture_plugin.cpp" \
    -L"$build/lib" -lswitchyard-core -o "$plugins/libabi-baseline.so"
sed -e 's/@FIXTURE_LIBRARY@/libabi-baseline.so/' -e 's/@FIXTURE_VARIANT@/abi_baseline/' \
    "$work/tests/fixtures/plugins/good/good.plugin.json.in" >"$plugins/abi-baseline.plugin.json"
name=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["name"])' \
    "$plugins/abi-baseline.plugin.json")

cli="$build/bin/switchyard-cli"
export SWITCHYARD_PLUGIN_PATH="$plugins"
"$cli" show "$name" --json >"$work/show.json"
python3 - "$work/show.json" "$commit" <<'PY'
import json, sys
info = json.load(open(sys.argv[1]))
assert info["state"] == "loaded", f"the plugin built at {sys.argv[2][:12]} did not load: {info}"
assert info["diagnostics"] == [], info["diagnostics"]
PY
"$cli" profile --op rms_norm --sizes 3x1023 --all-variants --budget 0.05 --json >"$work/report.json"
python3 - "$work/report.json" "$commit" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r.get("variant") == "abi_baseline"]
assert rows, "the baseline plugin's rms_norm kernel was not profiled"
for r in rows:
    assert r["status"] == "ok", r
    assert r["parity"]["verdict"] == "PASS", r["parity"]
print(f"plugin built against the SDK of {sys.argv[2][:12]}: loaded, {len(rows)} rows, parity PASS")
PY

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the build into a temporary prefix, builds packaging/example-plugin against it
# with find_package(Switchyard) + switchyard_add_plugin(), and checks the installed CLI loads
# it and its kernel passes parity. Usage: tst_out_of_tree.sh <build-dir> <source-dir>
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/packaging/example-plugin" -B "$work/plugin" -G Ninja \
    -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/plugin" >/dev/null
cli="$work/prefix/bin/switchyard-cli"
export SWITCHYARD_PLUGIN_PATH="$work/plugin/plugins"
show=$("$cli" show oot --json)
echo "$show" | python3 -c '
import json, sys
info = json.load(sys.stdin)
assert info["state"] == "loaded", info
assert info["source"] == "plugin", info
assert info["diagnostics"] == [], info["diagnostics"]
assert info["library_dependencies"]["unresolved"] == [], info["library_dependencies"]
'
"$cli" profile --op flow_match_step --sizes 4097 --all-variants --budget 0.05 --json >"$work/report.json"
python3 - "$work/report.json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["rows"] if r.get("variant") == "oot"]
assert rows, "the out-of-tree variant was not profiled"
for r in rows:
    assert r["status"] == "ok", r
    assert r["parity"]["verdict"] == "PASS", r["parity"]
print("out-of-tree plugin: built, loaded, profiled, parity PASS")
PY

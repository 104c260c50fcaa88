#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds packaging/example-plugin with find_package(Switchyard) + switchyard_add_plugin() as
# the README says, against the build folder itself (CMAKE_PREFIX_PATH=build, and with only
# build/bin on PATH, which finds build/SwitchyardConfig.cmake), then against the build
# installed into a temporary prefix; checks that each CLI loads it and, installed, that its
# kernel passes parity. Usage: tst_out_of_tree.sh <build-dir> <source-dir>
set -euo pipefail
build=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
build=$(cd "$build" && pwd)
# Against the build folder: CMAKE_PREFIX_PATH, then PATH alone (as a newcomer has it).
for how in prefix path; do
    if [ "$how" = prefix ]; then
        cmake -S "$src/packaging/example-plugin" -B "$work/in-tree-$how" -G Ninja \
            -DCMAKE_PREFIX_PATH="$build" >"$work/configure.log" 2>&1 ||
            { cat "$work/configure.log"; exit 1; }
    else
        PATH="$build/bin:$PATH" cmake -S "$src/packaging/example-plugin" -B "$work/in-tree-$how" \
            -G Ninja >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
    fi
    cmake --build "$work/in-tree-$how" >/dev/null
    SWITCHYARD_PLUGIN_PATH="$work/in-tree-$how/plugins" "$build/bin/switchyard-cli" show oot --json |
        python3 -c 'import json, sys; info = json.load(sys.stdin); assert info["state"] == "loaded", info'
    echo "out-of-tree plugin against the build folder ($how): built, loaded"
done
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

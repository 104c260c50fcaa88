#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The Debian packages, unpacked as a user would get them: builds them from this build folder
# (cpack into a scratch folder), unpacks each with dpkg-deb -x into one scratch root, and checks
# - that root's switchyard-cli, run with an empty environment (env -i), finds the shipped
#   plugins there and nothing from the build tree;
# - that root's GUI answers --help and --version with no display, and under Xvfb takes its
#   screenshots (--screenshot);
# - the desktop file (desktop-file-validate), the AppStream metainfo (appstreamcli validate,
#   no error, no warning), the icons, and the man pages and bash completion: every subcommand
#   and each of its options is in them.
# Usage: tst_packages.sh <build-dir> <source-dir>. Exit 77 (skip) where a tool is missing.
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
for tool in cpack dpkg-deb dpkg-shlibdeps fakeroot python3 xvfb-run desktop-file-validate appstreamcli help2man; do
    command -v "$tool" >/dev/null 2>&1 || { echo "SKIP: $tool is not installed (packaging/dev.sh deps installs it)"; exit 77; }
done
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The packages: switchyard and switchyard-dev always, switchyard-cuda where the build has the
# cuda plugins.
cpack -G DEB -B "$work/debs" --config "$build/CPackConfig.cmake" >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log"; fail "cpack could not build the packages"; }
expected=(switchyard switchyard-dev)
[ -e "$build/lib/switchyard/plugins/libswitchyard-cuda.so" ] && expected+=(switchyard-cuda)
root="$work/root"
for p in "${expected[@]}"; do
    deb=$(ls "$work/debs/${p}_"*.deb 2>/dev/null) || fail "no $p package in $(ls "$work/debs")"
    echo "$(basename "$deb"): $(du -k "$deb" | cut -f1) KiB; Depends: $(dpkg-deb -f "$deb" Depends)"
    dpkg-deb -x "$deb" "$root"
done
cli="$root/usr/bin/switchyard-cli"
gui="$root/usr/bin/switchyard"

# The layout the issue names.
for f in usr/bin/switchyard-cli usr/lib/libswitchyard-core.so.0 usr/lib/switchyard/plugins/opencl.plugin.json \
    usr/include/switchyard/sdk/plugin.h usr/lib/cmake/Switchyard/SwitchyardConfig.cmake \
    usr/share/applications/switchyard.desktop usr/share/metainfo/io.github.switchyard.switchyard.metainfo.xml \
    usr/share/icons/hicolor/scalable/apps/switchyard.svg usr/share/icons/hicolor/48x48/apps/switchyard.png \
    usr/share/icons/hicolor/128x128/apps/switchyard.png usr/share/icons/hicolor/256x256/apps/switchyard.png \
    usr/share/man/man1/switchyard-cli.1.gz usr/share/bash-completion/completions/switchyard-cli \
    usr/share/doc/switchyard-dev/examples/example-plugin/CMakeLists.txt; do
    [ -e "$root/$f" ] || fail "the packages do not install /$f"
done
# Only the SDK's headers are promised (and shipped).
others=$(find "$root/usr/include/switchyard" -mindepth 1 -maxdepth 1 ! -name sdk ! -name core_export.h)
[ -z "$others" ] || fail "switchyard-dev ships headers outside switchyard/sdk/: $others"

# The CLI with an empty environment: the shipped plugins, from the unpacked root only.
env -i "$cli" list --all --include-unavailable --json >"$work/list.json" || fail "switchyard-cli list failed"
env -i "$cli" doctor --json >"$work/doctor.json" || true # exit 1 where a problem is found (no GPU)
plugins=(opencl)
# The Vulkan plugin ships in the main package where the build made it (glslc and the headers).
[ -f "$build/lib/switchyard/plugins/vulkan.plugin.json" ] && plugins+=(vulkan)
[[ " ${expected[*]} " == *" switchyard-cuda "* ]] && plugins+=(cuda cuda-cublas)
for name in "${plugins[@]}"; do
    env -i "$cli" show "$name" --json >"$work/show-$name.json" || true # unavailable: exit 1
done
python3 - "$work" "$root" "$build" "${plugins[@]}" <<'PY'
import json, os, sys
work, root, build, names = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
listed = {b["name"]: b for b in json.load(open(f"{work}/list.json"))["backends"]}
plugins = {n for n, b in listed.items() if b["source"] == "plugin"}
assert plugins == set(names), f"plugins found: {sorted(plugins)}, shipped: {sorted(names)}"
for name in names:
    info = json.load(open(f"{work}/show-{name}.json"))
    where = f"{root}/usr/lib/switchyard/plugins/"
    assert info["manifest_path"].startswith(where), (name, info["manifest_path"])
    assert info["library_path"].startswith(where), (name, info["library_path"])
    core = [d for d in info["library_dependencies"]["dependencies"] if d["soname"] == "libswitchyard-core.so.0"]
    assert core and os.path.normpath(core[0]["path"]) == f"{root}/usr/lib/libswitchyard-core.so.0", (name, core)
for f in ["list.json", "doctor.json"] + [f"show-{n}.json" for n in names]:
    text = open(f"{work}/{f}").read()
    assert build not in text, f"{f} names the build tree {build}"
print("switchyard-cli (env -i) finds", ", ".join(sorted(plugins)), "in the unpacked root only")
PY

# The GUI: --help and --version with no display at all, then a screenshot under Xvfb.
env -i "$gui" --help >"$work/gui-help.txt" 2>&1 || { cat "$work/gui-help.txt"; fail "switchyard --help without a display"; }
grep -q -- "--screenshot" "$work/gui-help.txt" || fail "switchyard --help does not list --screenshot"
gv=$(env -i "$gui" --version) || fail "switchyard --version without a display"
cv=$(env -i "$cli" --version)
[ "${gv#switchyard }" = "${cv#switchyard-cli }" ] || fail "the GUI says '$gv', the CLI '$cv'"
[[ $gv =~ ^switchyard\ [0-9]+\.[0-9]+\.[0-9]+\ \(git\ ([0-9a-f]{7,}|unknown),\ [A-Za-z]+\)$ ]] || fail "version line: '$gv'"
mkdir -p "$work/home" "$work/shots"
env -i PATH=/usr/bin:/bin HOME="$work/home" xvfb-run -a "$gui" --screenshot "$work/shots" >"$work/gui.log" 2>&1 ||
    { cat "$work/gui.log"; fail "the unpacked GUI did not take its screenshots under Xvfb"; }
n=$(find "$work/shots" -name '*.png' -size +1k | wc -l)
[ "$n" -ge 3 ] || { cat "$work/gui.log"; fail "the GUI saved $n screenshots"; }
echo "GUI: --help and --version without a display; $n screenshots under Xvfb"

# Desktop integration.
desktop-file-validate "$root/usr/share/applications/switchyard.desktop" || fail "desktop-file-validate"
out=$(appstreamcli validate --no-net --pedantic "$root/usr/share/metainfo/io.github.switchyard.switchyard.metainfo.xml" 2>&1) ||
    { echo "$out"; fail "appstreamcli validate"; }
if grep -Eq '^(E|W|I|P):' <<<"$out"; then echo "$out"; fail "appstreamcli has remarks on the metainfo"; fi

# Man pages and completion: every subcommand and every option it has, as the program says.
python3 "$src/tests/packaging/check_docs.py" "$cli" "$gui" "$root/usr/share/man/man1" \
    "$root/usr/share/bash-completion/completions/switchyard-cli"
echo "packages: built, unpacked, run and validated"

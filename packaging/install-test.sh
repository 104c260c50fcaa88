#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# CI (root, a fresh machine): the Debian packages of an existing build, for real.
#   1. cpack builds switchyard, switchyard-cuda (where the build has the cuda plugins) and
#      switchyard-dev from BUILD_DIR (no rebuild); their sizes and control fields are printed;
#   2. lintian on the three: fails on an error, prints every remaining tag;
#   3. apt-get install ./switchyard_*.deb ./switchyard-cuda_*.deb (apt resolves the
#      dependencies), then /usr/bin/switchyard-cli doctor and /usr/bin/switchyard --version;
#   4. apt-get install ./switchyard-dev_*.deb, the example plugin built out of tree from
#      /usr/share/doc/switchyard-dev/examples with find_package(Switchyard), loaded, profiled;
#   5. apt-get purge, and every file dpkg -L listed is gone.
# Usage: packaging/install-test.sh [BUILD_DIR]   (default: build)
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
step() { echo "== install-test: $1"; }
fail() { echo "install-test: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || fail "needs root: it installs and purges the packages with apt-get"
export DEBIAN_FRONTEND=noninteractive
work=$(mktemp -d)
packages=()
cleanup() {
    # A failure half-way leaves nothing installed behind.
    if [ ${#packages[@]} -gt 0 ] && dpkg-query -W "${packages[@]}" >/dev/null 2>&1; then
        apt-get purge -y -qq "${packages[@]}" >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

step "cpack (from $build)"
cpack -G DEB -B "$work/debs" --config "$build/CPackConfig.cmake" >"$work/cpack.log" 2>&1 ||
    { cat "$work/cpack.log"; fail "cpack"; }
debs=()
for p in switchyard switchyard-cuda switchyard-dev; do
    deb=$(ls "$work/debs/${p}_"*.deb 2>/dev/null || true)
    if [ -z "$deb" ]; then
        [ "$p" = switchyard-cuda ] && { echo "(no switchyard-cuda: this build has no cuda plugins)"; continue; }
        fail "cpack made no $p package"
    fi
    debs+=("$deb")
    packages+=("$p")
    echo "$(basename "$deb"): $(stat -c %s "$deb") bytes, installed size $(dpkg-deb -f "$deb" Installed-Size) KiB"
    for field in Depends Recommends Suggests; do
        value=$(dpkg-deb -f "$deb" "$field")
        [ -n "$value" ] && echo "  $field: $value"
    done
done

if command -v lintian >/dev/null 2>&1; then
    step "lintian"
    lintian --fail-on error --display-info --tag-display-limit 0 "${debs[@]}" ||
        fail "lintian found errors (above)"
else
    fail "lintian is not installed (packaging/dev.sh deps installs it)"
fi

step "apt-get install the packages"
runtime=()
for d in "${debs[@]}"; do
    case "$(basename "$d")" in switchyard-dev_*) ;; *) runtime+=("$d") ;; esac
done
[ -n "$(ls /var/lib/apt/lists/ 2>/dev/null | grep -v lock)" ] || apt-get update -qq
apt-get install -y -qq "${runtime[@]}" >"$work/apt.log" 2>&1 || { cat "$work/apt.log"; fail "apt-get install"; }

step "/usr/bin/switchyard-cli doctor"
set +e
env -i PATH=/usr/bin:/bin HOME="$work" /usr/bin/switchyard-cli doctor | tee "$work/doctor.txt"
rc=${PIPESTATUS[0]}
set -e
# 1 = a problem was found (no GPU for the cuda plugins, say): still a diagnosis.
[ "$rc" -le 1 ] || fail "switchyard-cli doctor exited $rc"
grep -q "/usr/lib/switchyard/plugins" "$work/doctor.txt" || fail "doctor does not search /usr/lib/switchyard/plugins"
env -i PATH=/usr/bin:/bin /usr/bin/switchyard-cli list --all --include-unavailable --json >"$work/list.json"
python3 - "$work/list.json" "${packages[@]}" <<'PY'
import json, sys
names = {b["name"] for b in json.load(open(sys.argv[1]))["backends"] if b["source"] == "plugin"}
want = {"opencl", "vulkan"} | ({"cuda", "cuda-cublas"} if "switchyard-cuda" in sys.argv[2:] else set())
assert names == want, f"installed plugins listed: {sorted(names)}, want {sorted(want)}"
print("listed plugins:", ", ".join(sorted(names)))
PY

step "/usr/bin/switchyard --version (no display)"
gv=$(env -i /usr/bin/switchyard --version) || fail "switchyard --version"
cv=$(env -i /usr/bin/switchyard-cli --version)
echo "$gv / $cv"
[ "${gv#switchyard }" = "${cv#switchyard-cli }" ] || fail "the GUI and the CLI disagree on the version"

step "switchyard-dev: the example plugin, out of tree, with find_package(Switchyard)"
for d in "${debs[@]}"; do
    case "$(basename "$d")" in switchyard-dev_*) dev=$d ;; esac
done
apt-get install -y -qq "$dev" >"$work/apt-dev.log" 2>&1 || { cat "$work/apt-dev.log"; fail "apt-get install switchyard-dev"; }
example=/usr/share/doc/switchyard-dev/examples/example-plugin
cmake -S "$example" -B "$work/oot" -G Ninja >"$work/oot.log" 2>&1 || { cat "$work/oot.log"; fail "configure $example"; }
cmake --build "$work/oot" >>"$work/oot.log" 2>&1 || { cat "$work/oot.log"; fail "build $example"; }
SWITCHYARD_PLUGIN_PATH="$work/oot/plugins" /usr/bin/switchyard-cli show oot --json >"$work/oot.json" || true
SWITCHYARD_PLUGIN_PATH="$work/oot/plugins" /usr/bin/switchyard-cli profile --op flow_match_step --sizes 4097 \
    --all-variants --budget 0.05 --json >"$work/report.json" || fail "profiling the example plugin"
python3 - "$work/oot.json" "$work/report.json" <<'PY'
import json, os, sys
info = json.load(open(sys.argv[1]))
assert info["state"] == "loaded" and info["diagnostics"] == [], info
core = [d for d in info["library_dependencies"]["dependencies"] if d["soname"] == "libswitchyard-core.so.0"]
assert core and os.path.realpath(core[0]["path"]) == os.path.realpath("/usr/lib/libswitchyard-core.so.0"), core
rows = [r for r in json.load(open(sys.argv[2]))["rows"] if r.get("variant") == "oot"]
assert rows and all(r["status"] == "ok" and r["parity"]["verdict"] == "PASS" for r in rows), rows
print("example plugin: built against /usr, loaded with /usr/lib/libswitchyard-core.so.0, parity PASS")
PY

step "apt-get purge"
for p in "${packages[@]}"; do
    dpkg -L "$p" >>"$work/files.txt"
done
apt-get purge -y -qq "${packages[@]}" >"$work/purge.log" 2>&1 || { cat "$work/purge.log"; fail "apt-get purge"; }
packages_left=$(dpkg-query -W -f='${Package} ${Status}\n' "${packages[@]}" 2>/dev/null | grep -v "not-installed" || true)
[ -z "$packages_left" ] || fail "still known to dpkg after the purge: $packages_left"
left=()
while read -r f; do
    [ -n "$f" ] || continue
    # Shared folders (/usr, /usr/share/man/man1) stay; the packages' own files and folders go.
    if [ -d "$f" ]; then [[ $f == *switchyard* ]] && [ -e "$f" ] && left+=("$f"); continue; fi
    [ -e "$f" ] || [ -L "$f" ] && left+=("$f")
done < <(sort -u "$work/files.txt")
[ ${#left[@]} -eq 0 ] || fail "left behind after the purge: ${left[*]}"
echo "install-test: installed, used and purged $(wc -l <"$work/files.txt") paths of ${packages[*]}"
packages=()

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The plugin SDK's ABI check (docs/plugins.md, "Compatibility"). Compares the SDK part of the
# built libswitchyard-core (the symbols the sdk module defines and the library exports, with
# the types they reach) against the baseline in packaging/abi/, with abidiff (Debian
# abigail-tools). Run by .ci/run after the build.
#   packaging/abi-check.sh [BUILD_DIR]            check (default build dir: build/)
#   packaging/abi-check.sh --update [BUILD_DIR]   re-take the baseline from this build
# A removed or changed SDK symbol fails the check unless the contract revision
# (kContractVersion in sdk/version.h) is above the baseline's: then the baseline is stale and
# the check says to re-take it. --update refuses an incompatible baseline without a bump, and
# records the commit (and its SDK header tree, for tests/packaging/tst_binary_compat.sh).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
update=0
if [ "${1:-}" = "--update" ]; then
    update=1
    shift
fi
build=$(cd "${1:-${SWITCHYARD_BUILD_DIR:-$root/build}}" && pwd)
abi_dir="$root/packaging/abi"
baseline_xml="$abi_dir/sdk.abi"
baseline_info="$abi_dir/baseline.env"

die() {
    echo "abi-check: $*" >&2
    exit 2
}
for tool in abidw abidiff readelf nm c++filt; do
    command -v "$tool" >/dev/null 2>&1 ||
        die "$tool not found (Debian: abigail-tools for abidw/abidiff, binutils for readelf/nm)"
done
lib="$build/lib/libswitchyard-core.so.0"
[ -e "$lib" ] || die "no $lib: build the core first (cmake --build $build)"
objects="$build/abi/sdk-objects.txt"
[ -s "$objects" ] || die "no $objects: configure $build with this source tree's CMakeLists"

contract=$(sed -n 's/^inline constexpr int kContractVersion = \([0-9]\+\);.*/\1/p' \
    "$root/core/include/switchyard/sdk/version.h")
[ -n "$contract" ] || die "cannot read kContractVersion from core/include/switchyard/sdk/version.h"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The SDK's symbols: defined with default visibility in the sdk module's objects and exported
# by the library (what a plugin can link to). Written as abidw's symbol list.
nm -D --defined-only "$lib" | awk '{print $3}' | sort -u >"$work/exported"
while read -r obj; do
    [ -n "$obj" ] || continue
    [ -e "$obj" ] || die "no $obj: build the core first"
    readelf -Ws --wide "$obj" |
        awk '($5 == "GLOBAL" || $5 == "WEAK") && $6 == "DEFAULT" && $7 != "UND" {print $8}'
done <"$objects" | sort -u >"$work/sdk-defined"
comm -12 "$work/exported" "$work/sdk-defined" >"$work/sdk-symbols"
[ -s "$work/sdk-symbols" ] || die "the library exports none of the sdk module's symbols"
# The SDK depends on no JSON library (revision 5, docs/plugins.md): neither its headers nor
# its symbols name nlohmann, whose release would otherwise be part of the plugin ABI.
if grep -rlE "#[[:space:]]*include[[:space:]]*[<\"]nlohmann" "$root/core/include/switchyard/sdk" >"$work/json-headers"; then
    die "SDK headers include nlohmann: $(tr '\n' ' ' <"$work/json-headers")(use switchyard::Value)"
fi
if c++filt <"$work/sdk-symbols" | grep -n "nlohmann" >"$work/json-symbols"; then
    die "$(wc -l <"$work/json-symbols") SDK symbols name nlohmann, e.g. $(head -c 300 "$work/json-symbols")"
fi
{
    echo "[abi_whitelist]"
    sed 's/^/  /' "$work/sdk-symbols"
} >"$work/sdk-symbols.list"

# Stable output: no absolute paths, no build folder names.
abidw --kmi-whitelist "$work/sdk-symbols.list" --headers-dir "$root/core/include/switchyard/sdk" \
    --drop-private-types --exported-interfaces-only --no-corpus-path --no-comp-dir-path --short-locs \
    --out-file "$work/current.abi" "$lib" ||
    die "abidw failed on $lib"

# Prints abidiff's report; returns 0 when no SDK symbol was removed or changed.
compare() {
    local rc=0
    abidiff --no-added-syms "$1" "$2" >"$work/report.txt" 2>&1 || rc=$?
    # abidiff's exit status is a bit field: 1 error, 2 usage, 4 change, 8 incompatible change.
    if [ $((rc & 3)) -ne 0 ]; then
        cat "$work/report.txt" >&2
        die "abidiff failed (exit $rc)"
    fi
    cat "$work/report.txt"
    [ "$rc" -eq 0 ]
}

if [ "$update" -eq 1 ]; then
    cd "$root"
    git rev-parse --git-dir >/dev/null 2>&1 || die "--update needs a git checkout (it records the commit)"
    if ! git diff --quiet HEAD -- core/include/switchyard/sdk core/src/sdk; then
        die "--update: commit the SDK changes first (core/include/switchyard/sdk, core/src/sdk):" \
            "the baseline records the commit whose SDK it describes"
    fi
    if [ -e "$baseline_xml" ] && [ -e "$baseline_info" ]; then
        old_contract=$(sed -n 's/^contract_version=//p' "$baseline_info")
        if ! compare "$baseline_xml" "$work/current.abi" >/dev/null; then
            if [ "$contract" -le "$old_contract" ]; then
                compare "$baseline_xml" "$work/current.abi" || true
                die "--update: the SDK changed incompatibly (above) but kContractVersion is still" \
                    "$contract: bump it (and kMinBinaryContractVersion if a layout changed) in" \
                    "core/include/switchyard/sdk/version.h, commit, then --update again"
            fi
        fi
    fi
    mkdir -p "$abi_dir"
    cp "$work/current.abi" "$baseline_xml"
    {
        echo "# packaging/abi-check.sh --update wrote this; tests/packaging/tst_binary_compat.sh"
        echo "# builds the fixture plugin against the SDK headers of sdk_tree (git archive)."
        echo "commit=$(git rev-parse HEAD)"
        echo "sdk_tree=$(git rev-parse HEAD:core/include/switchyard/sdk)"
        echo "contract_version=$contract"
        echo "symbols=$(wc -l <"$work/sdk-symbols")"
    } >"$baseline_info"
    echo "abi-check: baseline re-taken: $(wc -l <"$work/sdk-symbols") SDK symbols, contract" \
        "revision $contract, commit $(git rev-parse --short=12 HEAD)."
    echo "  Commit packaging/abi/ (sdk.abi, baseline.env) with the SDK change."
    exit 0
fi

[ -e "$baseline_xml" ] && [ -e "$baseline_info" ] ||
    die "no baseline in packaging/abi/: take one with packaging/abi-check.sh --update"
old_contract=$(sed -n 's/^contract_version=//p' "$baseline_info")
echo "abi-check: abidiff --no-added-syms packaging/abi/sdk.abi <this build's SDK>" \
    "($(wc -l <"$work/sdk-symbols") SDK symbols; baseline: contract revision $old_contract," \
    "commit $(sed -n 's/^commit=//p' "$baseline_info" | cut -c1-12))"
if [ "$contract" != "$old_contract" ]; then
    echo "abi-check: kContractVersion is $contract but the baseline was taken at revision" \
        "$old_contract: re-take it in the same change (packaging/abi-check.sh --update)." >&2
    exit 1
fi
if compare "$baseline_xml" "$work/current.abi"; then
    echo "abi-check: the SDK's ABI matches the baseline."
    exit 0
fi
echo "abi-check: the SDK's ABI changed (abidiff's report above). Plugins built against the" \
    "baseline would misread this core. Either undo the change, or bump kContractVersion (and" \
    "kMinBinaryContractVersion if a layout changed) in core/include/switchyard/sdk/version.h" \
    "and re-take the baseline (packaging/abi-check.sh --update) in the same change." >&2
exit 1

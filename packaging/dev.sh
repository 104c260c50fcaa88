#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Switchyard developer entry point. On a fresh Debian 12 machine:
#   ./packaging/dev.sh run    install what is missing, build into build/, start the GUI
#   ./packaging/dev.sh test   install what is missing, build into build/, run the whole CTest suite
#   ./packaging/dev.sh deps   only install what is missing
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build="${SWITCHYARD_BUILD_DIR:-$root/build}"
jobs=$(nproc 2>/dev/null || echo 2)

usage() {
    echo "usage: $0 run [GUI arguments...] | test [ctest arguments...] | deps" >&2
    exit 2
}

# The Debian packages the build, the tests and the GUI need (one list, kept here).
packages=(
    cmake ninja-build g++ pkg-config git clang-format
    qt6-base-dev libqcustomplot-dev libgl-dev
    qt6-svg-dev  # optional for the build: SVG icons and the plots' SVG export (SWITCHYARD_ENABLE_SVG)
    nlohmann-json3-dev libcli11-dev libcpu-features-dev libopenblas-dev libelf-dev
    libbenchmark-dev ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
    libvulkan-dev glslc mesa-vulkan-drivers vulkan-tools  # the vulkan plugin; lavapipe runs its suite
    xvfb xauth
    slurm-wlm munge  # tests/fleet: a single-node Slurm cluster (fleet/tst_fleet_slurm)
    clang libclang-rt-14-dev  # tests/fuzz/run.sh: clang 14 and its libFuzzer (libclang_rt.fuzzer)
    help2man  # the man pages, generated from --help at build time
    # the Debian packages (cpack: dpkg-shlibdeps, file) and their checks (tests/packaging,
    # packaging/install-test.sh)
    dpkg-dev file fakeroot lintian desktop-file-utils appstream
    abigail-tools  # packaging/abi-check.sh: abidw/abidiff, the SDK's ABI against packaging/abi/
)

install_missing() {
    local missing=()
    for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
    command -v python3 >/dev/null 2>&1 || missing+=(python3)
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "dev.sh: installing missing Debian packages: ${missing[*]}"
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        command -v sudo >/dev/null 2>&1 || { echo "dev.sh: need root (or sudo) to install: ${missing[*]}" >&2; exit 1; }
        sudo=(sudo)
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

configure_and_build() {
    if [ ! -f "$build/CMakeCache.txt" ]; then
        cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
    fi
    cmake --build "$build" -j "$jobs"
}

verb="${1:-}"
[ $# -gt 0 ] && shift
case "$verb" in
deps)
    install_missing
    ;;
run)
    install_missing
    configure_and_build
    if [ -z "${DISPLAY:-}" ] && [ -z "${WAYLAND_DISPLAY:-}" ] && [ "${QT_QPA_PLATFORM:-}" != "offscreen" ]; then
        cat >&2 <<MSG
dev.sh: no display (neither DISPLAY nor WAYLAND_DISPLAY is set), so the GUI cannot start.
  The same answers are available headless:
    $build/bin/switchyard-cli list --all --include-unavailable
    $build/bin/switchyard-cli matrix
    $build/bin/switchyard-cli --help
  Or run the GUI in a virtual display:  xvfb-run -a $build/bin/switchyard
MSG
        exit 1
    fi
    exec "$build/bin/switchyard" "$@"
    ;;
test)
    install_missing
    configure_and_build
    cd "$build"
    exec ctest --output-on-failure -j "$jobs" "$@"
    ;;
*)
    usage
    ;;
esac

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# switchyard-cli(1) and switchyard(1), gzipped, from the programs' own --help and --version
# (help2man); the CLI's page gets every subcommand's --help and the exit codes from
# cli-docs.sh. Usage: make-man.sh HELP2MAN OUT_DIR CLI [GUI]
set -euo pipefail
help2man=$1
out=$2
cli=$3
gui=${4:-}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"
"$here/cli-docs.sh" "$cli" man-include >"$work/cli.include"

# Run through PATH, so --help says "Usage: switchyard-cli", not the build tree's path.
page() { # program, its folder, name line, include file (optional)
    local args=(--no-info --no-discard-stderr --section 1 --name "$3" --output "$work/$1.1")
    [ -n "${4:-}" ] && args+=(--include "$4")
    PATH="$2:$PATH" "$help2man" "${args[@]}" "$1"
    gzip -9n -c "$work/$1.1" >"$out/$1.1.gz"
}
page switchyard-cli "$(dirname "$cli")" "explore compute backends, resolve and profile kernels (headless)" \
    "$work/cli.include"
if [ -n "$gui" ]; then
    cat >"$work/gui.include" <<'ROFF'
[ENVIRONMENT]
.TP
.B SWITCHYARD_PLUGIN_PATH
Colon-separated folders searched for plugins before the user's plugin folder and the
installation's lib/switchyard/plugins.
.TP
.B SWITCHYARD_MAX_ISA
Caps the detected CPU ISA level, as \-\-max\-isa does.
.TP
.B SWITCHYARD_CLI
The switchyard\-cli the profiler starts as its worker (default: the one beside switchyard).
[FILES]
.TP
.I ~/.config/Switchyard/Switchyard.conf
The GUI's settings.
.TP
.I ~/.local/share/switchyard/plugins
The user's plugins (under $XDG_DATA_HOME when it is set).
[SEE ALSO]
.BR switchyard\-cli (1)
ROFF
    page switchyard "$(dirname "$gui")" "compute backend explorer and kernel profiler (Qt GUI)" \
        "$work/gui.include"
fi

#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Writes what switchyard-cli's own --help says, walked through every subcommand (nested ones
# too), in two shapes:
#   cli-docs.sh CLI man-include   help2man --include text: one section per subcommand with its
#                                 options and exit status, then EXIT STATUS, ENVIRONMENT, FILES
#   cli-docs.sh CLI completion    the bash completion script for switchyard-cli
#   cli-docs.sh CLI subcommands   the subcommand paths, one a line ("fleet submit")
# Generated at build time, so neither can miss a subcommand the program has.
set -euo pipefail
cli=$1
mode=$2

# The lines of one section ("Options:", "Subcommands:") of a --help text, until a blank line.
section() {
    awk -v head="$1" '$0 == head { on = 1; next } on && /^$/ { exit } on { print }'
}
help_of() { "$cli" "$@" --help; }
subcommands_of() { help_of "$@" | section "Subcommands:" | awk '/^  [^ -]/ { print $1 }'; }
# Option names ("-h", "--help", "--max-isa") of one subcommand path.
options_of() {
    help_of "$@" | section "Options:" | awk '/^  -/ { n = split($1, a, ","); for (i = 1; i <= n; ++i) print a[i] }'
}

# Every subcommand path, depth first, in the order --help lists them.
paths=()
walk() {
    local sub
    for sub in $(subcommands_of "$@"); do
        paths+=("${*:+$* }$sub")
        # shellcheck disable=SC2086 # a path is words
        walk "$@" "$sub"
    done
}
walk

# roff: a backslash is \e, a line starting with . or ' is protected by \&, - is \-.
roff() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"; }

case "$mode" in
subcommands)
    printf '%s\n' "${paths[@]}"
    ;;
man-include)
    echo "[SUBCOMMANDS IN DETAIL]"
    for p in "${paths[@]}"; do
        echo ".SS \"switchyard\\-cli $(echo "$p" | roff)\""
        echo ".nf"
        # shellcheck disable=SC2086
        help_of $p | roff
        echo ".fi"
        echo "Exit status: 0 ok, 1 failure, 2 usage error or unknown name (see EXIT STATUS)."
    done
    cat <<'ROFF'
[EXIT STATUS]
.TP
.B 0
Success.
.TP
.B 1
Failure: a backend, a kernel, a check or the doctor found a problem.
.TP
.B 2
Usage error, or an unknown name (the message suggests the closest known names).
.TP
.B 3
fleet: reports are missing, or \-\-wait timed out.
[ENVIRONMENT]
.TP
.B SWITCHYARD_PLUGIN_PATH
Colon-separated folders searched for plugins before the user's plugin folder and the
installation's lib/switchyard/plugins.
.TP
.B SWITCHYARD_MAX_ISA
Caps the detected CPU ISA level, as \-\-max\-isa does.
[FILES]
.TP
.I ~/.local/share/switchyard/plugins
The user's plugins (under $XDG_DATA_HOME when it is set).
.TP
.I <prefix>/lib/switchyard/plugins
The plugins installed with Switchyard, found relative to the executable.
[SEE ALSO]
.BR switchyard (1)
ROFF
    ;;
completion)
    cat <<'BASH'
# SPDX-License-Identifier: MIT
# bash completion for switchyard-cli (generated from its --help by packaging/docs/cli-docs.sh)
_switchyard_cli_subcommands() {
    case "$1" in
BASH
    printf '    "") echo "%s" ;;\n' "$(subcommands_of | tr '\n' ' ' | sed 's/ $//')"
    for p in "${paths[@]}"; do
        # shellcheck disable=SC2086
        subs=$(subcommands_of $p | tr '\n' ' ' | sed 's/ $//')
        [ -n "$subs" ] && printf '    "%s") echo "%s" ;;\n' "$p" "$subs"
    done
    cat <<'BASH'
    esac
}
_switchyard_cli_options() {
    case "$1" in
BASH
    printf '    "") echo "%s" ;;\n' "$(options_of | tr '\n' ' ' | sed 's/ $//')"
    for p in "${paths[@]}"; do
        # shellcheck disable=SC2086
        printf '    "%s") echo "%s" ;;\n' "$p" "$(options_of $p | tr '\n' ' ' | sed 's/ $//')"
    done
    cat <<'BASH'
    esac
}
_switchyard_cli() {
    local cur=${COMP_WORDS[COMP_CWORD]} path="" i w
    # The subcommand path typed so far: the words that name a subcommand of the path before them.
    for ((i = 1; i < COMP_CWORD; ++i)); do
        w=${COMP_WORDS[i]}
        case " $(_switchyard_cli_subcommands "$path") " in
        *" $w "*) path=${path:+$path }$w ;;
        esac
    done
    if [[ $cur == -* ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$(_switchyard_cli_options "$path")" -- "$cur")
    else
        mapfile -t COMPREPLY < <(compgen -W "$(_switchyard_cli_subcommands "$path")" -- "$cur")
        # Arguments that are not subcommands (reports, folders, names): files.
        [ ${#COMPREPLY[@]} -eq 0 ] && mapfile -t COMPREPLY < <(compgen -f -- "$cur")
    fi
    return 0
}
complete -F _switchyard_cli switchyard-cli
BASH
    ;;
*)
    echo "usage: $0 CLI man-include|completion|subcommands" >&2
    exit 2
    ;;
esac

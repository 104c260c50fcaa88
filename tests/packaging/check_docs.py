#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Checks the man pages and the bash completion against what the programs themselves say:
# every subcommand switchyard-cli --help lists (nested ones too) has its section in
# switchyard-cli(1) with each of its options, the exit codes are there, every option of
# switchyard --help is in switchyard(1), and the completion offers each subcommand and option.
# Its own reading of --help (not packaging/docs/cli-docs.sh's), so a generator that drops a
# subcommand fails here.
# Usage: check_docs.py CLI GUI MAN_DIR COMPLETION
import gzip, re, subprocess, sys

cli, gui, man_dir, completion = sys.argv[1:5]
errors = []


def help_text(*args):
    return subprocess.run([cli, *args, "--help"], capture_output=True, text=True, check=True,
                          env={}).stdout


def section(text, head):
    lines, on = [], False
    for line in text.splitlines():
        if line == head:
            on = True
        elif on and not line.strip():
            break
        elif on:
            lines.append(line)
    return lines


def subcommands(*path):
    return [l.split()[0] for l in section(help_text(*path), "Subcommands:") if re.match(r"^  [^ -]", l)]


def options(*path):
    names = []
    for l in section(help_text(*path), "Options:"):
        if re.match(r"^  -", l):
            names += l.split()[0].split(",")
    return names


paths = []
def walk(*path):
    for sub in subcommands(*path):
        paths.append((*path, sub))
        walk(*path, sub)
walk()
if len(paths) < 8:
    errors.append(f"switchyard-cli --help lists only {len(paths)} subcommands")

roff = lambda s: s.replace("-", "\\-")
page = gzip.open(f"{man_dir}/switchyard-cli.1.gz", "rt").read()
# The page's subsections: .SS "switchyard\-cli fleet submit" up to the next .SS or .SH.
parts = {}
for m in re.finditer(r'^\.SS "switchyard\\-cli ([^"]+)"\n(.*?)(?=^\.S[SH] )', page, re.M | re.S):
    parts[m.group(1).replace("\\-", "-")] = m.group(2)
for path in paths:
    name = " ".join(path)
    body = parts.get(name)
    if body is None:
        errors.append(f"switchyard-cli(1) has no section for 'switchyard-cli {name}'")
        continue
    for opt in options(*path):
        if not re.search(r"(^|[\s,])" + re.escape(roff(opt)) + r"\b", body, re.M):
            errors.append(f"switchyard-cli(1): '{name}' lacks its option {opt}")
    if "Exit status" not in body:
        errors.append(f"switchyard-cli(1): '{name}' does not give its exit status")
for opt in options():
    if roff(opt) not in page:
        errors.append(f"switchyard-cli(1) lacks the global option {opt}")
exit_status = re.search(r'^\.SH "?EXIT STATUS"?\n(.*?)(?=^\.SH )', page, re.M | re.S)
if not exit_status or not all(f".B {c}\n" in exit_status.group(1) for c in "012"):
    errors.append("switchyard-cli(1) has no EXIT STATUS section with the codes 0, 1 and 2")

# The GUI's page: each of its options ("  -h, --help", "  --screenshot <DIR>").
gui_help = subprocess.run([gui, "--help"], capture_output=True, text=True, check=True, env={}).stdout
gui_opts = re.findall(r"(?:^  |, )(--?[\w-]+)", gui_help, re.M)
if "--screenshot" not in gui_opts:
    errors.append(f"switchyard --help does not list --screenshot:\n{gui_help}")
gui_page = gzip.open(f"{man_dir}/switchyard.1.gz", "rt").read()
for opt in gui_opts:
    if roff(opt) not in gui_page:
        errors.append(f"switchyard(1) lacks the option {opt}")


# The completion, as bash runs it: COMP_WORDS up to a word being typed.
def complete(words):
    script = (f'source "{completion}"\nCOMP_WORDS=(switchyard-cli {" ".join(words)})\n'
              f"COMP_CWORD={len(words)}\n_switchyard_cli\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"")
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True).stdout
    return set(out.split())


for path in [()] + paths:
    offered = complete([*path, "-"])
    missing = [o for o in options(*path) if o not in offered]
    if missing:
        errors.append(f"completion after 'switchyard-cli {' '.join(path)}' lacks {missing}")
for path in paths:
    offered = complete([*path[:-1], path[-1][:2]])
    if path[-1] not in offered:
        errors.append(f"completion of '{path[-1][:2]}' after '{' '.join(path[:-1])}' lacks {path[-1]}")

if errors:
    print("\n".join("FAIL: " + e for e in errors), file=sys.stderr)
    sys.exit(1)
print(f"man pages and completion: {len(paths)} subcommands, every option, exit codes")

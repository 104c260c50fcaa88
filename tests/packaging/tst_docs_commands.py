#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The README's and docs/'s shell blocks against the tool.

Every ```sh block is marked on the line before it:
  <!-- docs-test: run -->          each command runs here (the build's programs, small budgets,
                                   a scratch folder) and must exit 0;
  <!-- docs-test: synopsis ... --> each `switchyard-cli` line's subcommand and options must be
                                   the tool's (its --help), the profile settings after `--` too;
  <!-- docs-test: skip (why) -->   not run (packages, root, Slurm, benchmarks), but its
                                   `switchyard-cli` lines are checked as a synopsis.
An unmarked block fails. Then the words the docs quote are checked against what the commands
wrote: the JSON documents' first keys, the --jsonl event order, the report's documented keys,
the CSV columns docs/json.md names, and the verdict names of compare.

Usage: tst_docs_commands.py SWITCHYARD_CLI SOURCE_DIR
"""
import csv
import io
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

CLI, SRC = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
DOCS = ["README.md"] + sorted(
    "docs/" + f for f in os.listdir(os.path.join(SRC, "docs")) if f.endswith(".md"))
# Small budgets for a run (only the options the subcommand has are added).
SMALL = {"--budget": "0.02", "--reference-budget": "0.02", "--warmup": "0.002",
         "--min-samples": "3"}

failures = []


def fail(where, message):
    failures.append(f"{where}: {message}")
    print(f"FAIL {where}: {message}", file=sys.stderr)


def blocks():
    """(file, line, marker, [commands]) for every ```sh block; a command joins `\\` lines."""
    for doc in DOCS:
        lines = open(os.path.join(SRC, doc), encoding="utf-8").read().split("\n")
        for i, line in enumerate(lines):
            if line.strip() not in ("```sh", "```bash", "```shell", "```console"):
                continue
            marker = lines[i - 1].strip() if i > 0 else ""
            m = re.match(r"<!-- docs-test: (run|synopsis|skip)\b.*-->$", marker)
            commands, text = [], ""
            for body in lines[i + 1:]:
                if body.startswith("```"):
                    break
                text += body.rstrip()
                if text.endswith("\\"):
                    text = text[:-1] + " "
                    continue
                if text.strip() and not text.strip().startswith("#"):
                    commands.append(text.strip())
                text = ""
            yield doc, i + 1, m.group(1) if m else None, commands


_help = {}


def help_text(path):
    key = tuple(path)
    if key not in _help:
        r = subprocess.run([CLI, *path, "--help"], capture_output=True, text=True, timeout=60)
        _help[key] = r.stdout if r.returncode == 0 else None
    return _help[key]


def subcommands(path):
    text = help_text(path) or ""
    part = text.split("Subcommands:", 1)
    return set(re.findall(r"^  (\S+)", part[1], re.M)) if len(part) == 2 else set()


def options_of(tokens):
    """The --options among synopsis tokens ("[--json|--csv]", "--op", "--sbatch-arg=--mem")."""
    found = []
    for t in tokens:
        for piece in re.split(r"[\[\]|]", t):
            m = re.match(r"^(--[a-z][a-z0-9-]*|-[a-zA-Z])(=.*)?$", piece)
            if m:
                found.append(m.group(1))
    return found


def check_synopsis(where, command):
    if not command.startswith("switchyard-cli"):
        return
    # A pipe or $(...) ends the command: only its first part is this tool's line.
    command = re.split(r"\s[|;]\s|\$\(", command)[0]
    command = command.split("  #")[0].split(" # ")[0]
    tokens = command.split()[1:]
    path, i = [], 0
    while i < len(tokens):
        t = tokens[i]
        if t in ("--max-isa", "--pin-cpu"):
            i += 2
            continue
        if t.startswith("-") or t.startswith("["):
            break
        if t not in subcommands(path):
            if subcommands(path):
                fail(where, f"'{t}' is not a subcommand of switchyard-cli {' '.join(path)}")
            break
        path.append(t)
        i += 1
    rest = tokens[i:]
    mine, theirs = (rest[:rest.index("--")], rest[rest.index("--") + 1:]) if "--" in rest \
        else (rest, [])
    for owner, words in ((path, mine), (["profile"], theirs)):
        text = help_text(owner)
        if text is None:
            fail(where, f"switchyard-cli {' '.join(owner)} --help failed")
            continue
        for o in options_of(words):
            if not re.search(r"(^|[\s,])" + re.escape(o) + r"\b", text):
                fail(where, f"switchyard-cli {' '.join(owner)} has no option {o}")


def run(where, command, work, env):
    """Runs one documented command with the build's programs; returns its stdout."""
    words = shlex.split(command, comments=True)
    if words[0] != "switchyard-cli":
        fail(where, f"a run block may hold only switchyard-cli commands: {command}")
        return ""
    words[0] = CLI
    sub = next((w for w in words[1:] if not w.startswith("-")), "")
    text = help_text([sub]) or ""
    if sub in ("profile", "tune") and "--from" not in words:
        for option, value in SMALL.items():
            if option not in words and re.search(re.escape(option) + r"\b", text):
                words += [option, value]
    r = subprocess.run(words, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    # doctor exits 1 when it finds a problem on this machine, as documented.
    if r.returncode != 0 and not (sub == "doctor" and r.returncode == 1):
        fail(where, f"exit {r.returncode}: {command}\n{r.stderr[-2000:]}")
    return r.stdout


def first_keys(where, text):
    keys = [k for k, _ in json.loads(text, object_pairs_hook=lambda p: p)]
    if "format" in keys and keys[:2] != ["format", "format_version"]:
        fail(where, f"a JSON document starts with {keys[:3]}, not format, format_version "
                    "(docs/json.md)")


def main():
    work = tempfile.mkdtemp(prefix="switchyard-docs-")
    env = dict(os.environ)
    # One measurement of the CPU's ceilings for the whole test, kept in a cache of its own.
    env["SWITCHYARD_CEILINGS_CACHE"] = os.path.join(work, "ceilings")
    env["XDG_DATA_HOME"] = os.path.join(work, "xdg")
    env.pop("SWITCHYARD_TUNING", None)
    outputs = {}
    for doc, line, marker, commands in blocks():
        where = f"{doc}:{line}"
        if marker is None:
            fail(where, "a shell block without a <!-- docs-test: run|synopsis|skip --> mark")
            continue
        for c in commands:
            check_synopsis(where, c)
            if marker == "run":
                outputs[c] = run(where, c, work, env)

    # The JSON documents the runs wrote: format and format_version first.
    for name in sorted(os.listdir(work)):
        if name.endswith(".json"):
            first_keys(f"{name} (written by a docs command)", open(os.path.join(work, name)).read())
    for c, out in outputs.items():
        if "--json" in c.split() and out.strip():
            first_keys(c, out)

    # The report's documented top-level keys (docs/json.md, its first table).
    json_md = open(os.path.join(SRC, "docs/json.md"), encoding="utf-8").read()
    report_section = json_md.split("### The report", 1)[1]
    table = re.search(r"\| key \| type \| meaning \|\n\|[-|]+\|\n((?:\|.*\n)+)", report_section)
    documented = re.findall(r"^\| `(\w+)` \|", table.group(1), re.M)
    report_path = os.path.join(work, "a.json")
    if os.path.exists(report_path):
        report = json.load(open(report_path))
        for key in ["format", "format_version"] + documented:
            if key not in report:
                fail("docs/json.md", f"the report has no key '{key}'")
    else:
        fail("README.md", "the tour wrote no a.json report")

    # The --jsonl stream: heartbeats (progress, index -1), then context, plan, ..., done.
    stream = next((out for c, out in outputs.items() if "--jsonl" in c.split()), None)
    if stream is None:
        fail("README.md", "no --jsonl command in a run block")
    else:
        events = [json.loads(l) for l in stream.splitlines() if l.strip()]
        names = [e["event"] for e in events]
        first = next((i for i, n in enumerate(names) if n != "progress"), len(names))
        if any(e.get("index") != -1 for e in events[:first]):
            fail("docs/json.md", f"events before context other than preparing heartbeats: {names[:first]}")
        if names[first:first + 2] != ["context", "plan"] or names[-1:] != ["done"]:
            fail("docs/json.md", f"--jsonl order is {names[:6]} ... {names[-2:]}, not as documented")

    # The CSV columns docs/json.md names exist in profile --csv.
    named = set()
    for clause in re.findall(r"The CSV(?: has|'s)([^.]*)\.", json_md):
        named.update(re.findall(r"`(\w+)`", clause))
    r = subprocess.run([CLI, "profile", "--op", "flow_match_step", "--sizes", "4096", "--csv",
                        *sum(([k, v] for k, v in SMALL.items()), [])],
                       cwd=work, env=env, capture_output=True, text=True, timeout=600)
    header = next(csv.reader(io.StringIO(r.stdout)), [])
    if not named:
        fail("docs/json.md", "names no CSV column")
    for column in sorted(named - set(header)):
        fail("docs/json.md", f"profile --csv has no column '{column}' (it has {header})")

    # compare's verdict names, as its help gives them, against every list the docs quote.
    compare_help = help_text(["compare"]) or ""
    m = re.search(r"SAME, FASTER, SLOWER or (\w+)", compare_help)
    verdicts = {"SAME", "FASTER", "SLOWER", m.group(1)} if m else set()
    if m and re.search(r"\bMACHINE where both sides ran identical code", compare_help):
        verdicts.add("MACHINE")
    if not verdicts:
        fail("compare --help", "names no verdicts")
    for doc in DOCS:
        text = open(os.path.join(SRC, doc), encoding="utf-8").read()
        for found in re.findall(r"SAME(?:/|, )FASTER(?:/|, )SLOWER(?:/|,? or )`?\"?([A-Z]+)", text):
            if found not in verdicts:
                fail(doc, f"quotes the verdict {found}; the tool says {sorted(verdicts)}")
    compared = outputs.get("switchyard-cli compare a.json b.json")
    r = subprocess.run([CLI, "compare", "a.json", "b.json", "--json"], cwd=work, env=env,
                       capture_output=True, text=True, timeout=120)
    if r.returncode == 0:
        first_keys("compare --json", r.stdout)
        seen = set(re.findall(r'"verdict": "([A-Z]+)"', r.stdout))
        for v in sorted(seen - verdicts):
            fail("compare --json", f"verdict {v} is not among {sorted(verdicts)}")
    elif compared is not None:
        fail("compare --json", f"exit {r.returncode}: {r.stderr[-500:]}")

    if failures:
        print(f"{len(failures)} disagreement(s) between the docs and the tool", file=sys.stderr)
        return 1
    print("docs: every marked block ran or checked; quoted words agree with the tool")
    return 0


if __name__ == "__main__":
    sys.exit(main())

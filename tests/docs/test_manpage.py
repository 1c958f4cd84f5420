#!/usr/bin/env python3
"""The manual page: `man -l` renders the generated page without a warning, and the page names every
command and every option the command line has. The commands and options are read from `--help` of the
top level and of each command (CLI11's own listing, not the generator's walk), recursively.

    tests/docs/test_manpage.py --wheelcheck build/wheelcheck --page build/wheelcheck.1
"""
import argparse
import os
import re
import shutil
import subprocess
import sys


def help_of(wheelcheck, words):
    out = subprocess.run([wheelcheck, *words, "--help"], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "300"})
    if out.returncode != 0:
        sys.exit(f"FAIL: wheelcheck {' '.join(words)} --help exited {out.returncode}: {out.stderr}")
    return out.stdout


def listed(help_text):
    """(options, subcommands) of one --help: options from every option line, commands from 'Subcommands:'."""
    options, commands, section = set(), [], None
    for line in help_text.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line
            continue
        if section == "Subcommands:":
            m = re.match(r"^  (\S+)\s", line)
            if m:
                commands.append(m.group(1))
            continue
        m = re.match(r"^  (-[^\s]+)", line)
        if m:
            for name in m.group(1).split(","):
                name = name.split(":")[0]
                if name.startswith("-") and name not in ("-h", "--help"):
                    options.add(name)
    return options, commands


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--page", required=True)
    args = ap.parse_args()
    if not shutil.which("man"):
        print("SKIP: man is not installed (scripts/install-deps.sh installs man-db)")
        return 77
    if not os.path.isfile(args.page):
        sys.exit(f"FAIL: {args.page} was not made (the build's manpage target)")
    # The page the build made is the page `help --man` prints now.
    now = subprocess.run([args.wheelcheck, "help", "--man"], capture_output=True, text=True, check=True).stdout
    if open(args.page, encoding="utf-8").read() != now:
        sys.exit(f"FAIL: {args.page} differs from `wheelcheck help --man`")
    env = {**os.environ, "MANWIDTH": "200", "MANPAGER": "cat", "PAGER": "cat", "LANG": "C.UTF-8"}
    r = subprocess.run(["man", "--warnings", "-l", args.page], capture_output=True, text=True, env=env)
    if r.returncode != 0 or r.stderr.strip():
        sys.exit(f"FAIL: man -l {args.page} exited {r.returncode}: {r.stderr.strip()}")
    text = r.stdout
    # man renders hyphens and quotes as the terminal's characters; compare in plain ASCII.
    plain = text.replace("\u2010", "-").replace("\u2212", "-").replace("\u2019", "'").replace("\u2018", "'")
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "COMMANDS", "EXIT STATUS", "ENVIRONMENT"):
        if not re.search(rf"^{heading}$", plain, re.M):
            sys.exit(f"FAIL: the rendered page has no {heading} section")
    # Each command's part of the page: from its heading to the next command's (the top level's options are
    # the OPTIONS section); each option of a command's --help must be in that command's part.
    lines = plain.splitlines()
    starts = {}
    for i, line in enumerate(lines):
        if re.match(r"^ {3}wheelcheck( \S+)+\s*$", line):
            starts[line.strip()] = i
        elif line in ("OPTIONS", "COMMANDS", "EXIT STATUS"):
            starts[line] = i
    bounds = sorted(starts.values())

    def part_of(title):
        if title not in starts:
            return None
        a = starts[title]
        b = next((x for x in bounds if x > a), len(lines))
        return "\n".join(lines[a:b])

    missing, seen_commands, seen_options = [], 0, 0
    queue = [[]]
    while queue:
        words = queue.pop(0)
        options, commands = listed(help_of(args.wheelcheck, words))
        title = "wheelcheck " + " ".join(words) if words else "OPTIONS"
        part = part_of(title)
        if words:
            seen_commands += 1
        if part is None:
            missing.append(f"the command `{title}` has no heading")
            continue
        for o in sorted(options):
            seen_options += 1
            if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", part):
                missing.append(f"`{' '.join(['wheelcheck', *words])}` option {o}")
        queue += [words + [c] for c in commands]
    if seen_commands < 9 or seen_options < 40:
        sys.exit(f"FAIL: --help listed only {seen_commands} commands and {seen_options} options: the parser is wrong")
    if missing:
        sys.exit("FAIL: not in the man page:\n  " + "\n  ".join(missing))
    print(f"man page: renders without warnings ({len(text.splitlines())} lines); "
          f"names all {seen_commands} commands and {seen_options} options of --help")
    return 0


if __name__ == "__main__":
    sys.exit(main())

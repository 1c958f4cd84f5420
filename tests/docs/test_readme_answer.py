#!/usr/bin/env python3
"""The README's first answer is real: the command of the first `text` block under "The answer, first" is run
(offline, as the block says) and its output must be the block, line for line. A change to the check's
text fails here until the README shows what users will see.

    tests/docs/test_readme_answer.py --wheelcheck build/wheelcheck --samples build/samples --readme README.md
"""
import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wheelcheck", required=True)
    ap.add_argument("--samples", required=True)
    ap.add_argument("--readme", required=True)
    args = ap.parse_args()
    text = open(args.readme, encoding="utf-8").read()
    m = re.search(r"^## The answer, first\n.*?^```text\n(.*?)^```", text, re.M | re.S)
    if not m:
        sys.exit("FAIL: the README has no text block under 'The answer, first'")
    block = m.group(1).splitlines()
    if not block or not block[0].startswith("$ wheelcheck "):
        sys.exit(f"FAIL: the block does not start with a `$ wheelcheck ...` command: {block[:1]}")
    words = shlex.split(block[0][2:])[1:]
    words = [w.replace("build/samples", args.samples, 1) if w.startswith("build/samples/") else w for w in words]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WHEELCHECK_") or k == "WHEELCHECK_CACHE_DIR"}
    env.update(WHEELCHECK_OFFLINE="1", NO_COLOR="1")
    r = subprocess.run([args.wheelcheck, *words], capture_output=True, text=True, env=env)
    want_rc = re.search(r"; exit (\d+)$", block[-1])
    got = r.stdout.splitlines()
    if got != block[1:]:
        diff = difflib.unified_diff(block[1:], got, "README.md", "wheelcheck's output", lineterm="")
        sys.exit("FAIL: the README's answer is not what `" + block[0][2:] + "` prints now:\n" + "\n".join(diff))
    if want_rc and r.returncode != int(want_rc.group(1)):
        sys.exit(f"FAIL: the README says exit {want_rc.group(1)}, the command exited {r.returncode}")
    print(f"README's answer: `{block[0][2:]}` prints the block's {len(got)} lines, exit {r.returncode}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

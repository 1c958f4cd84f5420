#!/usr/bin/env python3
"""The documentation's links: every relative link of every Markdown file the repository tracks must name
a file that exists, and an anchor (`page.md#section`, `#section`) must be a heading of that page, as
GitHub makes anchors from headings. README.md must link every page of docs/ (the front door reaches the
whole manual). Prints each broken link with its file and line; exits 1 if there is one.

    tests/docs/check_links.py [REPO_ROOT]
"""
import os
import re
import subprocess
import sys

LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`", "", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading keeps its text
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks, with inline code spans blanked."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            stripped = line.lstrip()
            m = re.match(r"(```+|~~~+)", stripped)
            if m:
                if fence is None:
                    fence = m.group(1)
                elif stripped.startswith(fence):
                    fence = None
                continue
            if fence is None:
                yield n, re.sub(r"`[^`]*`", lambda s: " " * len(s.group(0)), line)


def heading_text_anchors(path):
    """Anchors computed from the raw headings (code spans kept), outside fenced code."""
    seen, found, fence = {}, set(), None
    with open(path, encoding="utf-8") as f:
        for line in f:
            stripped = line.lstrip()
            m = re.match(r"(```+|~~~+)", stripped)
            if m:
                fence = m.group(1) if fence is None else (None if stripped.startswith(fence) else fence)
                continue
            if fence is not None:
                continue
            h = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if h:
                base = slug(h.group(1))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
    return found


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
    files = subprocess.run(["git", "-C", root, "ls-files", "*.md"], capture_output=True, text=True,
                           check=True).stdout.split()
    broken, checked, linked_from_readme = [], 0, set()
    for rel in files:
        path = os.path.join(root, rel)
        if not os.path.exists(path):
            continue
        for n, line in prose_lines(path):
            for m in list(LINK.finditer(line)) + list(IMAGE.finditer(line)):
                target = m.group(1)
                if re.match(r"[a-z][a-z0-9+.-]*:", target) or target.startswith("<"):
                    continue  # https:, mailto:, ... (no test reads the internet)
                checked += 1
                file_part, _, anchor = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(path), file_part)) if file_part else path
                if not os.path.exists(dest):
                    broken.append(f"{rel}:{n}: {target}: no such file ({os.path.relpath(dest, root)})")
                    continue
                if rel == "README.md":
                    linked_from_readme.add(os.path.relpath(dest, root))
                if anchor:
                    if not dest.endswith(".md"):
                        broken.append(f"{rel}:{n}: {target}: an anchor into a file that is not Markdown")
                    elif anchor not in heading_text_anchors(dest):
                        broken.append(f"{rel}:{n}: {target}: no heading of {os.path.relpath(dest, root)} "
                                      f"has the anchor #{anchor}")
    for page in sorted(f for f in files if f.startswith("docs/") and f.endswith(".md")):
        if page not in linked_from_readme:
            broken.append(f"README.md: does not link {page} (every page of docs/ is reached from the README)")
    for b in broken:
        print(b)
    print(f"check_links: {checked} relative links in {len(files)} Markdown files, {len(broken)} broken")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())

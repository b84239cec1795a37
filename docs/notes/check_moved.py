"""Check that nothing measured was lost when a guide page was shortened (issue 56).

Every paragraph of a guide page as committed at REF (default HEAD) must still appear, after
whitespace and link normalisation, either in the guide as it is now or in a lab-notes file
docs/notes/*.md. A paragraph that is not found whole passes if each of its lines is found (a
table whose rows were split between guide and notes). Headings are compared without their
leading '#' (the notes demote them). Run from the repository root:

    python docs/notes/check_moved.py [REF]

It reads the committed pages with ``git show`` (read only) and prints every paragraph that is
in none of the files; the exit status is 1 when there is one."""

import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
OWNED_ELSEWHERE = {"architecture.md", "reproduce.md", "validation.md", "index.md"}


def _norm(text):
    text = re.sub(r"^#+ ", "", text, flags=re.M)  # headings, any level
    text = re.sub(r"\]\((?:\.\./|notes/)*([^)\s]*)\)", r"](\1)", text)  # link targets
    return re.sub(r"\s+", " ", text).strip()


def _paragraphs(text):
    blocks, cur, fence = [], [], False
    for line in text.split("\n"):
        if line.startswith("```"):
            fence = not fence
        if not fence and not line.strip():
            if cur:
                blocks.append("\n".join(cur))
            cur = []
        else:
            cur.append(line)
    if cur:
        blocks.append("\n".join(cur))
    return blocks


def _committed(ref, rel):
    r = subprocess.run(["git", "show", f"{ref}:{rel}"], cwd=ROOT, capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def main(ref="HEAD"):
    notes = " \n ".join(_norm(p.read_text()) for p in sorted((DOCS / "notes").glob("*.md")))
    missing = 0
    for page in sorted(DOCS.glob("*.md")):
        if page.name in OWNED_ELSEWHERE:
            continue
        old = _committed(ref, f"docs/{page.name}")
        if old is None or old == page.read_text():
            continue
        pool = _norm(page.read_text()) + " \n " + notes
        paras = _paragraphs(old)
        lost = []
        for p in paras:
            if _norm(p) in pool:
                continue
            if all(_norm(line) in pool for line in p.split("\n") if line.strip()):
                continue
            lost.append(p)
        print(f"{page.name}: {len(paras)} paragraphs at {ref}, {len(lost)} not found")
        for p in lost:
            print("   MISSING:", p[:200].replace("\n", " / "))
        missing += len(lost)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))

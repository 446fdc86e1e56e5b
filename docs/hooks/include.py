"""A repository file (GitHub Markdown) included in a page as Python-Markdown reads it."""

from __future__ import annotations

import os
import re
from pathlib import Path

from .errors import ResultsError

RELATIVE_LINK = re.compile(r"(?<!!)\[([^\]]*)\]\((?!https?:|mailto:|#|/)([^)\s]+)\)")
LIST_ITEM = re.compile(r"\s*([*+-]|\d+\.)\s")


def github_lines(text: str) -> list[tuple[str, bool]]:
    """GitHub-flavoured Markdown lines as Python-Markdown reads them, each with whether it is fenced: leading
    spaces are doubled (GitHub nests lists at 2, Python-Markdown at 4) and a list after text gets a blank line."""
    out: list[tuple[str, bool]] = []
    fence, extra = "", 0
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        lead = len(line) - len(stripped)
        if fence:
            if stripped.startswith(fence):
                fence = ""
            out.append((" " * extra + line, True))
            continue
        if stripped.startswith(("```", "~~~")):
            fence, extra = stripped[:3], lead
            out.append((" " * extra + line, True))
            continue
        line = " " * lead + line
        prev = out[-1][0] if out else ""
        if LIST_ITEM.match(line) and prev.strip() and not out[-1][1] and not LIST_ITEM.match(prev):
            out.append(("", False))
        out.append((line, False))
    return out


def include(root: Path, rel: str, shift: int | str, repo_url: str) -> str:
    """A repository file (GitHub Markdown) in a page: headings shifted by `shift` or made bold lines ('bold')."""
    path = Path(rel)
    if not (root / path).exists():
        raise ResultsError(f"include: {rel} does not exist")
    out = []
    for line, fenced in github_lines((root / path).read_text()):
        heading = None if fenced else re.match(r"#{1,6} (.*)", line)
        if heading and shift == "bold":
            line = f"**{heading.group(1).strip()}**"
        elif heading:
            line = "#" * int(shift) + line
        if not fenced:  # a link to a repository file: to it on the repository's site, else its path as code
            line = RELATIVE_LINK.sub(
                lambda m: f"[{m.group(1)}]({repo_url.rstrip('/')}/blob/main/{os.path.normpath(path.parent / m.group(2))})"
                if repo_url else f"{m.group(1)} (`{os.path.normpath(path.parent / m.group(2))}`)",
                line)
        out.append(line)
    return "\n".join(out)


def include_text(root: Path, rel: str) -> str:
    """A repository text file (a log) as it is, for a fenced block; a missing file is an error."""
    if not (root / rel).is_file():
        raise ResultsError(f"include_text: {rel} does not exist")
    return (root / rel).read_text(errors="replace").rstrip("\n")


def marked_block(root: Path, rel: str, name: str) -> str:
    """The part of a repository file between `<!-- name -->` and `<!-- /name -->` (the README's commands, which a
    page shows and .ci/run runs, stated once); a missing marker is an error."""
    found = re.search(rf"<!-- {re.escape(name)} -->\n(.*?)<!-- /{re.escape(name)} -->", (root / rel).read_text(), re.S)
    if not found:
        raise ResultsError(f"{rel} has no block marked <!-- {name} --> ... <!-- /{name} -->")
    return found.group(1).rstrip("\n")

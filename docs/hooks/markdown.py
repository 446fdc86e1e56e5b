"""Markdown building blocks: tables, indentation, tabs, escaping, whole sentences."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any


def md_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], numeric_from: int = 1,
             text_columns: Sequence[int] = ()) -> str:
    """A pipe table; columns from `numeric_from` on are right-aligned, except `text_columns`."""
    def cell(value: Any) -> str:
        return str(value).replace("|", "\\|").replace("\n", " ")

    align = ["---" if i < numeric_from or i in text_columns else "--:" for i in range(len(headers))]
    lines = ["| " + " | ".join(map(cell, headers)) + " |", "| " + " | ".join(align) + " |"]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def indent(text: str, by: str = "    ") -> str:
    return "\n".join(by + line if line.strip() else line for line in text.splitlines())


def tabs(blocks: Sequence[tuple[str, str]]) -> str:
    return "\n\n".join(f'=== "{title}"\n\n{indent(body)}' for title, body in blocks)


def md_escape(text: str) -> str:
    """Plain text (a commit message) as Markdown that renders as written."""
    text = re.sub(r"([\\`*_\[\]])", r"\\\1", text)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def whole_sentences(paragraph: str) -> str:
    """A paragraph up to its last full stop, so a summary never ends mid-sentence (e.g. before a code block)."""
    text = " ".join(paragraph.split())
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s|$)", text)]
    return text[: ends[-1]] if ends else text

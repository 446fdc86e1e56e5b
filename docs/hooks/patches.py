"""The patch series as page text: one entry per commit of patch/series, and the other series."""

from __future__ import annotations

import email
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .loading import RESULTS
from .markdown import indent, md_escape, md_table, whole_sentences
from .vocabulary import V

if TYPE_CHECKING:
    from .run import Run


def diffstat_lines(stat: str) -> str:
    m = re.match(r"\s*(\d+)\s*[+-]*\s*$", stat)
    if not m:
        return stat.strip()
    return f"{m.group(1)} line{'s' if m.group(1) != '1' else ''} changed"


def patch_subject(path: Path) -> str:
    if not path.exists():
        return "(missing)"
    subject = email.message_from_string(path.read_text(errors="replace"))["Subject"] or path.name
    return re.sub(r"^\[PATCH[^\]]*\]\s*", "", " ".join(str(subject).split()))


def patch_entry(patch_dir: Path, i: int, name: str) -> str:
    path = patch_dir / name
    msg = email.message_from_string(path.read_text(errors="replace"))
    body = msg.get_payload()
    message, _, rest = (body if isinstance(body, str) else "").partition("\n---\n")
    stat = [ln.strip() for ln in rest.split("\n\n")[0].splitlines() if "|" in ln]
    files = "\n".join(f"* `{ln.split('|')[0].strip()}` ({diffstat_lines(ln.split('|')[1])})" for ln in stat)
    text = message.strip()
    lead = whole_sentences(text.split("\n\n")[0]) if text else ""
    details = f'??? abstract "Full commit message"\n\n    ```text\n{indent(text)}\n    ```' if text else ""
    return "\n\n".join(part for part in (
        f"### {i}. {patch_subject(path)}", f"`patch/{name}` · diff sha256 `{V.diff_sha256_prefix(path)}`",
        md_escape(lead), files, details) if part)


def patch_series(patch_dir: Path, measured: Sequence[Run]) -> str:
    names = V.series_entries(patch_dir / "series")
    out = [f"`patch/series` (for CUTLASS `main`) holds {len(names)} commits, in `git am` order." if names else
           '!!! warning "The series is empty"\n\n    `patch/series` lists no patches yet.']
    out += [patch_entry(patch_dir, i, n) for i, n in enumerate(names, 1)]
    applied = {V.series_file(patch_dir, str(run.results["stamp"]["cutlass_version"])).name: run for run in measured}
    for other in sorted(patch_dir.glob("series-v*")):
        rows = [(f"`{n}`", patch_subject(patch_dir / n)) for n in V.series_entries(other)]
        run = applied.get(other.name)
        mark = f" (applied by the run in `{RESULTS}/{run.name}`)" if run else ""
        out.append(f"**`{other.name}`**{mark}:\n\n" + (md_table(["patch", "subject"], rows, numeric_from=2)
                                                     if rows else "empty"))
    return "\n\n".join(out)

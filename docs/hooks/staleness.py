"""Whether a run was measured with the patches that patch/ gives its CUTLASS version now."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

# The single switch that lets a stale run through; every page then carries a banner.
ALLOW_STALE_ENV = "CO_DOCS_ALLOW_STALE"


def allow_stale() -> bool:
    return os.environ.get(ALLOW_STALE_ENV, "") == "1"


def diff_sha256_prefix(path: Path) -> str:
    """sha256 (12 hex) of a patch from its first `diff --git` line on, as CMakeLists.txt computes it."""
    text = path.read_bytes()
    at = text.find(b"\ndiff --git ")
    return hashlib.sha256(text[at:] if at >= 0 else text).hexdigest()[:12]


def series_file(patch_dir: Path, cutlass_version: str) -> Path:
    """The series the build applies to this CUTLASS version (cmake/CutlassSource.cmake's rule)."""
    versioned = patch_dir / f"series-v{cutlass_version}"
    return versioned if versioned.exists() else patch_dir / "series"


def series_entries(path: Path) -> list[str]:
    if not path.exists():
        return []
    lines = (line.strip() for line in path.read_text().splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def staleness(stamp: dict[str, Any], patch_dir: Path) -> str | None:
    """None when the run was measured with the patches its series names now, else why not.

    Stale = the run's stamp lists patch diff hashes that differ from those of the patch files its series names now
    (sha256 of the text from the first "\\ndiff --git " on, 12 hex; CMakeLists.txt hashes the same bytes).
    """
    series = series_file(patch_dir, str(stamp["cutlass_version"]))
    names = series_entries(series)
    now = [diff_sha256_prefix(patch_dir / n) if (patch_dir / n).exists() else "missing" for n in names]
    then = list(stamp.get("patch_sha256_prefixes") or [])
    if list(stamp.get("patches") or []) == names and then == now:
        return None
    was = ", ".join(f"{n} {p}" for n, p in zip(stamp.get("patches") or [], then)) or "none"
    return f"measured with [{was}], but {series.name} now gives [" + (
        ", ".join(f"{n} {p}" for n, p in zip(names, now)) or "none") + "]"

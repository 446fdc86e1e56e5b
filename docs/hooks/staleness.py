"""Whether a run was measured with the patches that patch/ gives its CUTLASS version now."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .vocabulary import V

# The single switch that lets a stale run through; every page then carries a banner.
ALLOW_STALE_ENV = "CO_DOCS_ALLOW_STALE"


def staleness(stamp: dict[str, Any], patch_dir: Path) -> str | None:
    """None when the run was measured with the patches its series names now, else why not.

    Stale = the run's stamp lists patch diff hashes that differ from those of the patch files its series names now
    (vocabulary.diff_sha256_prefix, the hash CMakeLists.txt stamps the build with).
    """
    series = V.series_file(patch_dir, str(stamp["cutlass_version"]))
    names = V.series_entries(series)
    now = [V.diff_sha256_prefix(patch_dir / n) if (patch_dir / n).exists() else "missing" for n in names]
    then = list(stamp.get("patch_sha256_prefixes") or [])
    if list(stamp.get("patches") or []) == names and then == now:
        return None
    was = ", ".join(f"{n} {p}" for n, p in zip(stamp.get("patches") or [], then)) or "none"
    return f"measured with [{was}], but {series.name} now gives [" + (
        ", ".join(f"{n} {p}" for n, p in zip(names, now)) or "none") + "]"

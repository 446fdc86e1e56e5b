"""Loading and validating the committed runs, docs/results/*/results.json."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from .errors import ResultsError
from .staleness import ALLOW_STALE_ENV, staleness
from .vocabulary import R
RESULTS = "docs/results"  # under the project root
# Page variable -> committed run directory under docs/results/; each is required, and its derived values
# (derived.derive) are the variable with d for r (`d435` for `r435`). `rmain` is CUTLASS main, the PR target: its
# per-commit ablation is what scripts/fill-pr-results.py puts on the PR pages.
RUNS = {"r": "h200", "r435": "h200-cutlass-v4.3.5", "rmain": "h200-cutlass-main",
        "ro0": "h200-o0-without-asserts"}
PLOTS = ("counts_by_phase.png", "host_time.png", "sweep.png", "timeline.png", "attribution.png")
STAMP_KEYS = ("gpu", "compute_capability", "driver_version", "cuda_runtime", "cuda_driver_api", "nvcc",
              "cutlass_version", "cutlass_origin", "patch_series", "patches", "patch_sha256_prefixes",
              "build_type", "git_commit", "git_dirty", "host_cpu", "timestamp_utc", "quick", "command")


def read_json(path: Path, how: str) -> Any:
    """The JSON in `path`; missing (`how`: what makes it) or invalid, a ResultsError."""
    if not path.is_file():
        raise ResultsError(f"{path} does not exist: {how}")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path} is not valid JSON: {error}") from error


def load_run(results_dir: Path, patch_dir: Path) -> tuple[dict[str, Any], str | None]:
    """(results with their references resolved, why it is stale or None). Raises ResultsError when they cannot back
    the site at all."""
    path = results_dir / "results.json"
    results = read_json(path, f"run `cutlass-overhead-report --out {results_dir}` on a GPU")
    stamp = results.get("stamp") if isinstance(results, dict) else None
    if not isinstance(stamp, dict):
        raise ResultsError(f"{path}: no stamp")
    if results.get("schema") != R.SCHEMA:
        raise ResultsError(f"{path}: schema {results.get('schema')!r} is not {R.SCHEMA}")
    lacking = [k for k in STAMP_KEYS if k not in stamp]
    if lacking:
        raise ResultsError(f"{path}: the stamp lacks {', '.join(lacking)}")
    missing = [p for p in PLOTS if not (results_dir / p).is_file()]
    if missing:
        raise ResultsError(f"{results_dir} lacks {', '.join(missing)}: commit the plots the report wrote with "
                           "results.json (the docs build never draws them)")
    return R.resolved(results), staleness(stamp, patch_dir)


def load_runs(root: Path) -> dict[str, tuple[str, dict[str, Any], str | None]]:
    """Page variable -> (run directory name, results, why stale or None); a stale run is an error unless allowed."""
    runs: dict[str, tuple[str, dict[str, Any], str | None]] = {}
    for var, name in RUNS.items():
        results, stale = load_run(root / RESULTS / name, root / "patch")
        if stale and os.environ.get(ALLOW_STALE_ENV, "") != "1":
            raise ResultsError(f"{RESULTS}/{name}/results.json is stale: {stale}. Regenerate it on the GPU with "
                               f"the current patches, or set {ALLOW_STALE_ENV}=1 to build with a banner.")
        runs[var] = (name, results, stale)
    return runs

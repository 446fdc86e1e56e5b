"""The doctor's committed readings in docs/results/h200-nvfp4-host-path/: the issue's NVFP4 host path on Hopper
(measurement only, no tensor-core math) and the SM90 stand-in, per CUTLASS version, original and patched.

This run is not a report (no results.json): its files are the doctor's own JSON (`co_doctor_* --matrix` and the
single-shape readings). Every table drawn from it carries the label the doctor wrote into it, so no page can show
these numbers as Blackwell or Thor numbers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .errors import ResultsError
from .formatting import cell_count, cell_iqr, fmt_num
from .loading import RESULTS
from .markdown import md_table
from .vocabulary import V

NAME = "h200-nvfp4-host-path"
VERSIONS = ("4.2.0", "4.3.5")
KINDS = {"nvfp4-hopper": "the issue's NVFP4 `runNvfp4Gemm`, host path on Hopper",
         "sm90": "the SM90 bf16 stand-in (kernel runs)"}
VARIANTS = ("original", "patched")
DOCTOR = {kind: f"doctor-{kind}-{V.HEADLINE_LABEL}.json" for kind in KINDS}
# The pipeline doctor's readings (cutlass-overhead-doctor: the report's schema), beside the retired C++ doctor's;
# and the version, a full run (not --quick): the reading the pages quote for the NVFP4 code.
PIPELINE = {**{kind: f"pipeline-doctor-{kind}-{V.HEADLINE_LABEL}.json" for kind in KINDS},
            "nvfp4-hopper-v4.3.5": f"pipeline-doctor-v4.3.5-nvfp4-hopper-{V.HEADLINE_LABEL}.json"}
# The API groups counted per phase (vocabulary slugs), and the one API counted beside them.
COUNTED_GROUPS = V.DESCRIPTOR_GROUPS
ATTRIBUTE_API = "cudaFuncSetAttribute"


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise ResultsError(f"{path} does not exist: run `scripts/gpu-evidence.sh OUT nvfp4` on a Hopper GPU")
    try:
        return json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path} is not valid JSON: {error}") from error


def phase_counts(counts: list[dict[str, Any]]) -> dict[str, dict[str, dict[str, float]]]:
    """combo -> phase -> {lookups, encodes, version_queries, attributes} of one steady-state call, as the calling
    code makes them (vocabulary.calls_by_group: the driver's own cuGetProcAddress inside a lookup is not counted)."""
    per_api: dict[tuple[str, str], dict[str, float]] = {}
    domains: dict[str, str] = {}
    for c in counts:
        calls = per_api.setdefault((c["combo"], c["phase"]), {})
        calls[c["api"]] = calls.get(c["api"], 0.0) + c["count"]
        domains[c["api"]] = c["domain"]
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (combo, phase), calls in per_api.items():
        groups = V.calls_by_group(calls, domains)
        out.setdefault(combo, {})[phase] = {**{g: groups[g] for g in COUNTED_GROUPS},
                                            "attributes": calls.get(ATTRIBUTE_API, 0.0)}
    return out


def load(root: Path) -> dict[str, Any]:
    """{label, matrix: {version: {kind: {variant: {combo: row}}}}, phases: (same nesting) -> combo -> phase,
    shape: (same nesting) -> the matrix run's shape, calls and rounds, doctor: {kind: the doctor's JSON},
    parts: {kind: part_sums of its verdict}, dir: the page-relative folder}."""
    where = root / RESULTS / NAME
    data: dict[str, Any] = {"matrix": {}, "phases": {}, "shape": {}, "doctor": {}, "label": None,
                            "dir": f"results/{NAME}"}
    for version in VERSIONS:
        for kind in KINDS:
            for variant in VARIANTS:
                doc = _read(where / f"matrix-v{version}-{kind}-{variant}.json")
                if doc.get("cutlass_version") != version:
                    raise ResultsError(f"{where}/matrix-v{version}-{kind}-{variant}.json says CUTLASS "
                                       f"{doc.get('cutlass_version')!r}")
                data["matrix"].setdefault(version, {}).setdefault(kind, {})[variant] = {
                    row["combo"]: row for row in doc["matrix"]}
                data["shape"].setdefault(version, {}).setdefault(kind, {})[variant] = doc["shape"]
                data["phases"].setdefault(version, {}).setdefault(kind, {})[variant] = phase_counts(
                    doc.get("counts_one_steady_call") or [])
                if kind == "nvfp4-hopper":
                    if not doc.get("label"):
                        raise ResultsError(f"{where}/matrix-v{version}-{kind}-{variant}.json carries no label")
                    data["label"] = doc["label"]
    for kind, file in DOCTOR.items():
        data["doctor"][kind] = _read(where / file)
    data["parts"] = {kind: part_sums(doc["verdict"]) for kind, doc in data["doctor"].items()}
    data["pipeline_doc"] = {kind: _read(where / file) for kind, file in PIPELINE.items()}
    data["pipeline"] = {kind: pipeline_reading(doc) for kind, doc in data["pipeline_doc"].items()}
    return data


def pipeline_reading(doc: dict[str, Any]) -> dict[str, Any]:
    """What the pages quote of a pipeline doctor reading: the issue's pattern's host time (median, q1, q3), each
    suspect's ratio and effect by its vocabulary key (V.SUSPECTS), the first and second call, how long it ran, and
    `phases_us`: {variant: {phase: measured µs per call}} of its attribution (e.g. the -O0 build's initialize)."""
    by_text = {text: key for key, text in V.SUSPECTS.items()}
    suspects = {by_text[s["suspect"]]: s for s in doc["verdict"]["suspects"] if s["suspect"] in by_text}
    first = doc["suspects"]["first_call"]
    return {"host": doc["timings"]["original/seed"]["host"], "suspects": suspects,
            "x": {key: s["ratio"]["median"] for key, s in suspects.items() if s.get("ratio")},
            "first_call_us": first["first_us"], "second_call_us": first["second_us"],
            "elapsed_s": doc["elapsed_s"], "quick": doc["stamp"]["quick"],
            "phases_us": {key.split("/")[0]: {p["phase"]: p["measured_us"] for p in phases}
                          for key, phases in (doc.get("attribution") or {}).items()}}


def part_sums(verdict: dict[str, Any]) -> dict[str, float]:
    """The doctor's verdict parts summed by what they are: attribute calls, lookups, encodes (count × unit cost,
    measured in the same process), the unexplained rest of `initialize` + `run`, everything, and `priced`: the
    attribute calls, lookups, encodes and version queries together."""
    sums = {"attributes": 0.0, "lookups": 0.0, "encodes": 0.0, "version_queries": 0.0, "rest_init_run": 0.0,
            "all": 0.0}
    for part in verdict["parts"]:
        text, us = part["part"], part["us"]
        sums["all"] += us
        if "cudaFuncSetAttribute" in text:
            sums["attributes"] += us
        elif "entry-point lookup" in text:
            sums["lookups"] += us
        elif "cuTensorMapEncodeTiled" in text:
            sums["encodes"] += us
        elif "driver-version" in text or "DriverGetVersion" in text:
            sums["version_queries"] += us
        elif text.startswith(("initialize: rest", "run: rest")):
            sums["rest_init_run"] += us
    sums["priced"] = sums["attributes"] + sums["lookups"] + sums["encodes"] + sums["version_queries"]
    return sums


def label_banner(data: dict[str, Any]) -> str:
    return f'!!! warning "{data["label"]}"\n\n    Measured on {_gpu(data)}. Not a Blackwell or Thor number.'


def _gpu(data: dict[str, Any]) -> str:
    doc = data["doctor"]["nvfp4-hopper"]
    return f"{doc['gpu']['name']} (sm_{doc['gpu']['sm']}), {doc['host']['cpu_model']}"


def table_matrix(data: dict[str, Any], version: str, kind: str = "nvfp4-hopper") -> str:
    """Per config × epilogue: calls per steady-state call and host µs per call, original against patched."""
    if version not in data["matrix"] or kind not in data["matrix"][version]:
        raise ResultsError(f"{NAME}: no matrix for CUTLASS {version}, {kind}")
    by_variant = data["matrix"][version][kind]
    rows = []
    for combo, orig in by_variant["original"].items():
        pat = by_variant["patched"].get(combo) or {}
        counts = [f"{cell_count(orig.get(k))} → {cell_count(pat.get(k))}"
                  for k in ("lookups", "encodes", "driver_version_queries", "func_set_attribute")]
        rows.append([f"`{combo}`", *counts, cell_iqr(orig["seed_drained"]["host_per_call"]),
                     cell_iqr(pat["seed_drained"]["host_per_call"]) if pat else "–",
                     cell_iqr(orig["floor_drained"]["host_per_call"]),
                     cell_iqr(pat["floor_drained"]["host_per_call"]) if pat else "–"])
    return md_table(["config", "lookups", "encodes", "version queries", "attribute calls",
                     "host µs, issue's pattern, original", "… patched", "floor µs, original", "… patched"], rows)


def table_doctor(data: dict[str, Any], kind: str) -> str:
    """The pipeline doctor's verdict for one reading: the parts of one call's host time, then the suspects."""
    doc = data["pipeline_doc"].get(kind)
    if doc is None:
        raise ResultsError(f"{NAME}: no doctor reading '{kind}' (known: {', '.join(PIPELINE)})")
    verdict = doc["verdict"]
    parts = sorted(verdict["parts"], key=lambda p: -p["us"])
    rows = [[p["part"], fmt_num(p["us"])] for p in parts]
    rows.append(["**sum (= the measured host time per call)**", f"**{fmt_num(verdict['parts_sum_us'])}**"])
    suspects = [[s["suspect"], "–" if s.get("effect_us") is None else f"{s['effect_us']:+.2f}".replace("-", "−"),
                 s["reading"]] for s in verdict["suspects"]]
    return (md_table(["part of one call's host time", "µs"], rows) + "\n\n"
            + md_table(["suspect", "µs added per call", "reading"], suspects, text_columns=(2,)))

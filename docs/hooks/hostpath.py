"""The doctor's committed readings in docs/results/h200-nvfp4-host-path/: `cutlass-overhead-doctor --every-config`
(the report's schema) on the issue's NVFP4 host path on Hopper (measurement only, no tensor-core math) and on the
SM90 stand-in, per CUTLASS version, original and patched in one reading.

Every table drawn from the NVFP4 readings carries the label the doctor wrote into them, so no page can show these
numbers as Blackwell or Thor numbers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .derived import derive
from .errors import ResultsError
from .formatting import cell_count, cell_iqr, fmt_num
from .loading import RESULTS, read_json
from .markdown import md_table
from .vocabulary import R, V

NAME = "h200-nvfp4-host-path"
VERSIONS = ("4.2.0", "4.3.5")
KINDS = {"nvfp4-hopper": "the issue's NVFP4 `runNvfp4Gemm`, host path on Hopper",
         "sm90": "the SM90 bf16 stand-in (kernel runs)"}
VARIANTS = ("original", "patched")
# The readings, by key "v<version>-<kind>": doctor-<key>-<shape>.json and its log doctor-<key>.log.
READINGS = {f"v{version}-{kind}": f"doctor-v{version}-{kind}-{V.HEADLINE_LABEL}.json"
            for version in VERSIONS for kind in KINDS}


def groups(per_api: dict[str, float], domains: dict[str, str]) -> dict[str, float]:
    """Calls per V.CONFIG_COUNT_GROUPS group, as the calling code makes them (vocabulary.calls_by_group)."""
    by_group = V.calls_by_group(per_api, domains)
    return {g: by_group[g] for g in V.CONFIG_COUNT_GROUPS}


def config_rows(doc: dict[str, Any], where: str) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """({variant: {config x epilogue: {groups..., workspace_bytes, host_us: {mode: spread}}}},
    {variant: {config x epilogue: {phase: groups}}})
    of one --every-config reading."""
    if not (doc.get("configs") or {}).get("rows"):
        raise ResultsError(f"{where} has no configs rows: it was not run with --every-config")
    matrix: dict[str, dict[str, Any]] = {v: {} for v in VARIANTS}
    phases: dict[str, dict[str, Any]] = {v: {} for v in VARIANTS}
    for row in doc["configs"]["rows"]:
        for variant in VARIANTS:
            counted = row["counts"].get(variant)
            if counted is None:
                raise ResultsError(f"{where}: {row['config_epilogue']} has no {variant} counts (see its errors)")
            host = {mode.split("/")[1]: s for mode, s in row["host_us"].items() if mode.startswith(variant + "/")}
            matrix[variant][row["config_epilogue"]] = {**groups(counted["totals"], counted["domains"]),
                                             "workspace_bytes": row["workspace_bytes"], "host_us": host}
            phases[variant][row["config_epilogue"]] = {phase: groups(calls, counted["domains"])
                                             for phase, calls in counted["per_call"].items()}
    return matrix, phases


def load(root: Path) -> dict[str, Any]:
    """{label, readings: {key: the doctor's JSON}, matrix: {version: {kind: {variant: {config x epilogue: row}}}},
    phases: (same nesting) -> config x epilogue -> phase -> groups, shape: {version: {kind: {rounds, calls}}},
    pipeline: {key: pipeline_reading}, parts: {key: priced_by_group of its reading}, dir: the page-relative folder}."""
    where = root / RESULTS / NAME
    data: dict[str, Any] = {"matrix": {}, "phases": {}, "shape": {}, "readings": {}, "label": None,
                            "dir": f"results/{NAME}"}
    for version in VERSIONS:
        for kind in KINDS:
            key = f"v{version}-{kind}"
            path = where / READINGS[key]
            doc = read_json(path, "run `scripts/gpu-evidence.sh OUT nvfp4` on a Hopper GPU")
            if doc.get("schema") != R.SCHEMA:
                raise ResultsError(f"{path}: schema {doc.get('schema')!r} is not {R.SCHEMA}")
            doc = R.resolved(doc)
            if doc["stamp"].get("cutlass_version") != version:
                raise ResultsError(f"{path} says CUTLASS {doc['stamp'].get('cutlass_version')!r}")
            data["readings"][key] = doc
            matrix, phases = config_rows(doc, str(path))
            data["matrix"].setdefault(version, {})[kind] = matrix
            data["phases"].setdefault(version, {})[kind] = phases
            data["shape"].setdefault(version, {})[kind] = {k: doc["configs"][k] for k in ("rounds", "calls")}
            if kind == "nvfp4-hopper":
                if not doc.get("label"):
                    raise ResultsError(f"{path} carries no label")
                data["label"] = doc["label"]
    data["pipeline"] = {key: pipeline_reading(doc) for key, doc in data["readings"].items()}
    data["parts"] = {key: priced_by_group(doc) for key, doc in data["readings"].items()}
    return data


def pipeline_reading(doc: dict[str, Any]) -> dict[str, Any]:
    """What the pages quote of a doctor reading: the issue's pattern's host time (median, q1, q3), each suspect's
    ratio and effect by its vocabulary key (V.SUSPECTS), the first and second call, how long it ran, `phases_us`:
    {variant: {phase: measured µs per call}} of its attribution (e.g. the -O0 build's initialize), `attribute`:
    cudaFuncSetAttribute on the GEMM's kernel and on an empty one (in-situ), idle and under each load, and `o0`:
    host µs per call of the pristine and the patched -O0 builds, the series' per-round speedup there and the -O0
    build's kept `Gemm` and `update()` + `run(stream)` (None in a reading without the patched -O0 build)."""
    by_text = {text: key for key, text in V.SUSPECTS.items()}
    suspects = {by_text[s["suspect"]]: s for s in doc["verdict"]["suspects"] if s["suspect"] in by_text}
    first = doc["suspects"]["first_call"]
    in_situ, spread = doc.get("in_situ_ns") or {}, doc.get("in_situ_spread_ns") or {}

    def us(key: str) -> dict[str, float]:
        return {"median": in_situ[key] / 1e3, "q1": spread[key]["q1"] / 1e3, "q3": spread[key]["q3"] / 1e3}

    beside = {load: doc["suspects"][load]["attribute_call_us"] for load in ("copy_load", "kernel_load")}
    attribute = {"gemm_kernel": us("cudaFuncSetAttribute(GEMM kernel)"),
                 "empty_kernel": us("cudaFuncSetAttribute(empty kernel)"),
                 **{f"under_{load}": call["loaded"] for load, call in beside.items()},
                 **{f"idle_beside_{load}": call["idle"] for load, call in beside.items()}}
    timings = doc["timings"]
    o0 = None if "O0_patched/issue_pattern" not in timings else {
        "pristine": timings["O0/issue_pattern"]["host"], "series": timings["O0_patched/issue_pattern"]["host"],
        "series_at_O3": timings["patched/issue_pattern"]["host"], "speedup": timings["O0_patched/issue_pattern"]["speedup_vs_O0_seed"],
        # the caller's fix at -O0 (None in a reading from before the timings step had them)
        "kept_gemm": (timings.get("O0/kept_gemm") or {}).get("host"),
        "update_run": (timings.get("O0/update_run") or {}).get("host")}
    return {"host": timings["original/issue_pattern"]["host"], "kept_gemm": timings["original/kept_gemm"]["host"],
            "suspects": suspects, "o0": o0,
            "first_call_us": first["first_us"], "second_call_us": first["second_us"],
            "elapsed_s": doc["elapsed_s"], "quick": doc["stamp"]["quick"], "attribute": attribute,
            "phases_us": {key.split("/")[0]: {p["phase"]: p["measured_us"] for p in phases}
                          for key, phases in (doc.get("attribution") or {}).items()}}


def priced_by_group(doc: dict[str, Any]) -> dict[str, float]:
    """µs per call of the issue's pattern priced to each API group (count x unit cost, by vocabulary group: lookups,
    encodes, func_attributes, ...): the attribution of original/issue_pattern, as derived.derive sums it for every run."""
    return derive(doc)["attribution"]["original/issue_pattern"]["by_group_us"]


def label_banner(data: dict[str, Any]) -> str:
    stamp = data["readings"]["v4.3.5-nvfp4-hopper"]["stamp"]
    return (f'!!! warning "{data["label"]}"\n\n    Measured on {stamp["gpu"]}, {stamp["host_cpu"]}. '
            "Not a Blackwell or Thor number.")


def table_matrix(data: dict[str, Any], version: str, kind: str = "nvfp4-hopper") -> str:
    """Per config × epilogue: calls per steady-state call and host µs per call, original against patched."""
    if version not in data["matrix"] or kind not in data["matrix"][version]:
        raise ResultsError(f"{NAME}: no matrix for CUTLASS {version}, {kind}")
    by_variant = data["matrix"][version][kind]
    rows = []
    for name, orig in by_variant["original"].items():
        pat = by_variant["patched"][name]
        counts = [f"{cell_count(orig[g])} → {cell_count(pat[g])}" for g in V.CONFIG_COUNT_GROUPS]
        rows.append([f"`{name}`", *counts, cell_iqr(orig["host_us"]["issue_pattern"]), cell_iqr(pat["host_us"]["issue_pattern"]),
                     cell_iqr(orig["host_us"]["kept_gemm"]), cell_iqr(pat["host_us"]["kept_gemm"])])
    return md_table(["config", *(V.group(g).title for g in V.CONFIG_COUNT_GROUPS),
                     "host µs, issue's pattern, original", "… patched", "kept `Gemm` µs, original", "… patched"], rows)


def table_doctor(data: dict[str, Any], key: str) -> str:
    """The doctor's verdict for one reading: the parts of one call's host time, then the suspects."""
    doc = data["readings"].get(key)
    if doc is None:
        raise ResultsError(f"{NAME}: no doctor reading '{key}' (known: {', '.join(READINGS)})")
    verdict = doc["verdict"]
    parts = sorted(verdict["parts"], key=lambda p: -p["us"])
    rows = [[p["part"], fmt_num(p["us"])] for p in parts]
    rows.append(["**sum (= the measured host time per call)**", f"**{fmt_num(verdict['parts_sum_us'])}**"])
    suspects = [[s["suspect"], "–" if s.get("effect_us") is None else f"{s['effect_us']:+.2f}".replace("-", "−"),
                 s["reading"]] for s in verdict["suspects"]]
    return (md_table(["part of one call's host time", "µs"], rows) + "\n\n"
            + md_table(["suspect", "µs added (the reading says per what)", "reading"], suspects, text_columns=(2,)))

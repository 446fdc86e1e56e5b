"""The write-up: `mkdocs build --strict` from the committed results, and the results hook's refusals.

Every number made here is SYNTHETIC (the fakes below feed report.measure_all so the JSON has the
report's exact schema); none of it is a measurement, and none of it is written under docs/results/.

    python tests/test_docs.py OUT_DIR     writes a synthetic results.json (+ PNGs, logs) for previewing:
    CO_RESULTS_DIR=OUT_DIR mkdocs serve
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
COMMITTED = REPO / "docs" / "results" / "h200" / "results.json"
MKDOCS_MISSING = importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None
needs_mkdocs = pytest.mark.skipif(MKDOCS_MISSING, reason="mkdocs/mkdocs-material not installed (pip install '.[docs]')")


def load_hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("co_docs_results_hook", REPO / "docs" / "hooks" / "results.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hook = load_hook()

# ---- SYNTHETIC measurements: fakes for report.measure_all ----------------------------------------------

PHASES = ["outside", "args", "get_workspace_size", "workspace_alloc", "can_implement", "initialize", "run",
          "workspace_free"]
Row = tuple[str, str, str, int]  # (phase, domain, api, calls per GEMM call)

_INIT: list[Row] = [("initialize", "runtime", "cudaGetDriverEntryPointByVersion", 4),
                    ("initialize", "driver", "cuGetProcAddress", 4),
                    ("initialize", "driver", "cuTensorMapEncodeTiled", 4),
                    ("initialize", "runtime", "cudaFuncSetAttribute", 1),
                    ("initialize", "runtime", "cudaGetDevice", 1),
                    ("initialize", "runtime", "cudaDeviceGetAttribute", 1)]
_LAUNCH: list[Row] = [("run", "runtime", "cudaFuncSetAttribute", 1), ("run", "runtime", "cudaLaunchKernelExC", 1),
                      ("run", "runtime", "cudaGetLastError", 1)]
_ALLOC: list[Row] = [("workspace_alloc", "runtime", "cudaMalloc", 1)]


def _as_run(rows: list[Row]) -> list[Row]:
    return [("run", d, a, n) for _, d, a, n in rows]


def _no_lookups(rows: list[Row]) -> list[Row]:
    return [r for r in rows if r[2] not in ("cudaGetDriverEntryPointByVersion", "cuGetProcAddress")]


SEED = _ALLOC + _INIT + _as_run(_INIT) + _LAUNCH
# SYNTHETIC patched pattern: no lookups, encodes or 0-byte cudaMalloc; run(args) reuses initialize's Params.
PATCHED: list[Row] = [r for r in _INIT if r[1] == "runtime" and "EntryPoint" not in r[2]] + _LAUNCH
CALLS: dict[tuple[str, str], list[Row]] = {
    ("original", "seed"): SEED, ("O0", "seed"): SEED,
    ("patched", "seed"): PATCHED, ("direct", "seed"): _no_lookups(SEED),
    ("original", "initialize_run"): _ALLOC + _INIT + _LAUNCH,
    ("original", "floor"): _LAUNCH, ("patched", "floor"): _LAUNCH,
    ("original", "graph"): [("run", "runtime", "cudaGraphLaunch", 1)],
    ("original", "bare_launch"): [("run", "runtime", "cudaLaunchKernel", 1)],
}
HARNESS: list[Row] = [("outside", "runtime", "cudaEventCreate", 2), ("outside", "runtime", "cudaStreamSynchronize", 1)]
# SYNTHETIC host ns per call, and how the seed modes split it over the phases.
HOST_NS = {("original", "seed"): 38_000.0, ("patched", "seed"): 15_000.0, ("direct", "seed"): 16_000.0,
           ("O0", "seed"): 240_000.0, ("original", "initialize_run"): 21_000.0, ("original", "floor"): 4_600.0,
           ("patched", "floor"): 4_500.0, ("original", "graph"): 2_600.0, ("original", "bare_launch"): 2_300.0}
SPLIT = {"outside": 0.01, "args": 0.005, "get_workspace_size": 0.002, "workspace_alloc": 0.03,
         "can_implement": 0.003, "initialize": 0.44, "run": 0.50, "workspace_free": 0.002}
UNIT_NS = {"cudaGetDriverEntryPointByVersion": 1_150.0, "cudaGetDriverEntryPoint": 1_080.0,
           "cudaDriverGetVersion": 35.0, "cuDriverGetVersion": 22.0, "cudaGetDevice": 18.0, "cudaGetLastError": 12.0,
           "cudaFuncSetAttribute(MaxDynamicSharedMemorySize)": 640.0,
           "cudaFuncSetAttribute(NonPortableClusterSizeAllowed)": 590.0, "cudaMalloc(0)": 420.0,
           "cudaMalloc(4KiB)+cudaFree": 9_500.0, "kernel launch (<<<>>>, empty kernel)": 2_150.0}
RECORD_NS = {"cudaGetDriverEntryPointByVersion": 1_150, "cuGetProcAddress": 900, "cuTensorMapEncodeTiled": 2_100,
             "cudaFuncSetAttribute": 620, "cudaLaunchKernelExC": 2_600, "cudaMalloc": 420}


def kernel_ns(m: int, n: int, k: int) -> float:
    return 2.0 * m * n * k / 600e12 * 1e9 + 5_000.0  # SYNTHETIC: 600 TFLOP/s plus 5 us


class FakeWorkload:
    def __init__(self, shape: Any, log: list[tuple[str, str, int, float]]) -> None:
        self.shape, self.log = shape, log

    def kernel(self) -> float:
        return kernel_ns(self.shape.m, self.shape.n, self.shape.k)

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, sync: bool = False) -> dict[str, Any]:
        self.log.append((variant, mode, iterations, self.kernel()))
        host = HOST_NS[(variant, mode)]
        phases = {p: 0.0 for p in PHASES}
        if mode == "seed":
            phases.update({p: host * f for p, f in SPLIT.items()})
        else:
            phases["run"] = host * 0.97
        loop = host + self.kernel() + 3_000.0 if sync else max(host, self.kernel()) * 1.02
        return {"iterations": iterations, "host_ns_per_call": host + (self.kernel() if sync else 0.0),
                "loop_ns_per_iter": loop, "gpu_ns_per_iter": loop * 0.99, "phase_ns_per_call": phases}

    def run(self, variant: str) -> None:
        self.log.append((variant, "seed", 1, self.kernel()))

    def sync(self) -> None:
        pass

    def params_bytes(self, variant: str) -> int:
        return 1_152


class FakeKernel:
    kind = "sm90"
    variants = ("original", "patched", "direct", "O0")

    def __init__(self, log: list[tuple[str, str, int, float]]) -> None:
        self.log = log

    def unsupported(self, shape: Any) -> str | None:
        return None

    def make(self, shape: Any) -> FakeWorkload:
        return FakeWorkload(shape, self.log)


class FakeBackend:
    def __init__(self, log: list[tuple[str, str, int, float]]) -> None:
        self.log = log

    def _during(self, fn: Callable[[], object]) -> list[tuple[str, str, int, float]]:
        before = len(self.log)
        fn()
        return self.log[before:]

    def count(self, fn: Callable[[], object]) -> list[Row]:
        totals: dict[tuple[str, str, str], int] = {}
        for variant, mode, n, _ in self._during(fn):
            for phase, domain, api, k in CALLS[(variant, mode)]:
                totals[(phase, domain, api)] = totals.get((phase, domain, api), 0) + k * n
            for phase, domain, api, k in HARNESS:
                totals[(phase, domain, api)] = totals.get((phase, domain, api), 0) + k
        return [(p, d, a, n) for (p, d, a), n in totals.items()]

    def timeline(self, fn: Callable[[], object]) -> list[tuple[str, str, int, int, int, int]]:
        records: list[tuple[str, str, int, int, int, int]] = []
        t, corr = 1_000, 0
        for variant, mode, n, kernel in self._during(fn):
            for _ in range(n):
                launch_end = t
                for _, domain, api, k in CALLS[(variant, mode)]:
                    if api == "cuGetProcAddress":
                        continue  # drawn inside its runtime call below
                    for _ in range(k):
                        dt = RECORD_NS.get(api, 40)
                        corr += 1
                        records.append((domain, api, t, t + dt, corr, 7))
                        if api.startswith("cudaGetDriverEntryPoint"):
                            records.append(("driver", "cuGetProcAddress", t + 100, t + dt - 100, corr, 7))
                        t += dt + 150
                        if "Launch" in api:
                            launch_end = t
                start = launch_end + 4_000
                records.append(("kernel", "synthetic_gemm", start, start + int(kernel), corr, 0))
                t += 2_000
        return records

    def phase_names(self) -> list[str]:
        return list(PHASES)

    def unit_cost_names(self) -> list[str]:
        return list(UNIT_NS)

    def unit_cost_ns(self, name: str, iterations: int) -> float:
        return UNIT_NS[name]

    def captured_encodes(self) -> list[dict[str, Any]]:
        return [{"phase": "initialize", "dims": dims, "box": box, "data_type": 10}
                for dims, box in (([4096, 128], [64, 128]), ([4096, 4096], [64, 128]), ([4096, 128], [64, 32]),
                                  ([4096, 128], [64, 32]))]

    def encode_cost_ns(self, inputs: dict[str, Any], iterations: int) -> float:
        return 1_900.0 + 100.0 * inputs["box"][1] / 32


def synthetic_stamp(patch_dir: Path = REPO / "patch", cutlass_version: str = "4.2.0") -> dict[str, Any]:
    """A stamp that is current for the patches in `patch_dir` now."""
    series, names, prefixes = hook.current_prefixes(patch_dir, cutlass_version)
    return {"gpu": "SYNTHETIC H200 (not a measurement)", "compute_capability": "9.0", "driver_version": "000.00",
            "cuda_runtime": "0.0 (libcudart.so.0)", "cuda_driver_api": "0.0", "nvcc": "0.0.0",
            "cutlass_version": cutlass_version, "cutlass_origin": "synthetic", "patch_series": series.name,
            "patches": names, "patch_sha256_prefixes": prefixes, "build_type": "Release", "cuda_archs": ["90a"],
            "git_commit": "0" * 40, "git_dirty": False, "host_cpu": "SYNTHETIC CPU", "python": "3.x",
            "torch": "0.0", "timestamp_utc": "2000-01-01T00:00:00+00:00", "quick": False,
            "command": "tests/test_docs.py (synthetic)"}


def synthetic_results() -> dict[str, Any]:
    """A results dict in the report's own schema, from report.measure_all on the fakes above. SYNTHETIC."""
    from cutlass_overhead import report

    log: list[tuple[str, str, int, float]] = []
    kernel = FakeKernel(log)
    headline = kernel.make(report.Shape(128, 4096, 4096))
    timer = lambda shape, plan: {"host_us": 9.5, "loop_us": kernel_ns(shape.m, shape.n, shape.k) / 1e3,  # noqa: E731
                                 "gpu_us": kernel_ns(shape.m, shape.n, shape.k) / 1e3, "iterations": plan.calls}
    ctx = report.Context(report.make_plan(quick=True), kernel, FakeBackend(log), headline, "SYNTHETIC", timer)
    results = {"schema": 1, "stamp": synthetic_stamp(), "kernel": "sm90",
               "nvfp4_status": "not measured (SYNTHETIC)", "variants": {v: None for v in kernel.variants},
               "shape": headline.shape.as_dict(), "params_bytes": headline.params_bytes("original"), "errors": []}
    report.measure_all(ctx, results)
    assert results["errors"] == [], results["errors"]
    return report.jsonable(results)


def write_synthetic(out: Path, results: dict[str, Any] | None = None, plots: bool = True) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    results = synthetic_results() if results is None else results
    (out / "results.json").write_text(json.dumps(results, indent=1))
    if plots:
        from cutlass_overhead.plots import make_plots

        make_plots(results, out)
    (out / "pytest.log").write_text("SYNTHETIC\n===== 1 passed, 2 skipped in 0.01s =====\n")
    (out / "memcheck.log").write_text("SYNTHETIC\n========= ERROR SUMMARY: 0 errors\n")
    return out / "results.json"


def mkdocs_build(site: Path, results_dir: Path | None = None, plots: str = "regenerate") -> subprocess.CompletedProcess:
    env = {**os.environ, "CO_DOCS_PLOTS": plots}
    env.pop("CO_RESULTS_DIR", None)
    if results_dir is not None:
        env["CO_RESULTS_DIR"] = str(results_dir)
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=REPO,
                          env=env, capture_output=True, text=True, timeout=600, check=False)


@pytest.fixture(scope="module")
def synthetic_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("matplotlib", reason="matplotlib draws the plots (pip install '.[docs]')")
    out = tmp_path_factory.mktemp("synthetic-results")
    write_synthetic(out)
    return out


# ---- The site ----------------------------------------------------------------------------------------


@needs_mkdocs
@pytest.mark.skipif(not COMMITTED.exists(), reason=f"{COMMITTED.relative_to(REPO)} not committed yet (run the "
                                                     "report on the H200)")
def test_site_builds_strict_from_committed_results(tmp_path: Path) -> None:
    done = mkdocs_build(tmp_path / "site")
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "findings" / "index.html").exists()


@needs_mkdocs
def test_site_builds_strict_from_synthetic_results(tmp_path: Path, synthetic_dir: Path) -> None:
    done = mkdocs_build(tmp_path / "site", synthetic_dir)
    assert done.returncode == 0, done.stderr[-4000:]
    for page in ("index", "reproduce", "method", "findings", "patch", "workarounds", "upstreaming"):
        html = (tmp_path / "site" / ("" if page == "index" else page) / "index.html").read_text()
        assert "{{" not in html, f"{page}: a placeholder was left unreplaced"
    findings = (tmp_path / "site" / "findings" / "index.html").read_text()
    assert "SYNTHETIC H200" in findings  # the stamp
    for png in hook.PLOTS:
        assert (tmp_path / "site" / "data" / png).read_bytes().startswith(b"\x89PNG")


@needs_mkdocs
def test_build_fails_on_a_missing_key(tmp_path: Path, synthetic_dir: Path) -> None:
    results = json.loads((synthetic_dir / "results.json").read_text())
    del results["timings"]["patched/seed"]
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "results.json").write_text(json.dumps(results))
    for png in hook.PLOTS:
        (broken / png).write_bytes((synthetic_dir / png).read_bytes())
    done = mkdocs_build(tmp_path / "site", broken, plots="committed")
    assert done.returncode != 0
    assert "no key 'patched/seed'" in done.stderr


@needs_mkdocs
def test_build_fails_on_a_stale_stamp(tmp_path: Path, synthetic_dir: Path) -> None:
    results = json.loads((synthetic_dir / "results.json").read_text())
    results["stamp"]["patch_sha256_prefixes"] = ["0123456789ab"] * (len(results["stamp"]["patches"]) or 1)
    stale = tmp_path / "stale"
    stale.mkdir()
    (stale / "results.json").write_text(json.dumps(results))
    done = mkdocs_build(tmp_path / "site", stale, plots="committed")
    assert done.returncode != 0
    assert "is stale" in done.stderr


@needs_mkdocs
def test_build_fails_without_results(tmp_path: Path) -> None:
    done = mkdocs_build(tmp_path / "site", tmp_path / "nowhere")
    assert done.returncode != 0
    assert "results.json does not exist" in done.stderr


# ---- The hook, without mkdocs ------------------------------------------------------------------------

PATCH = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A Developer <dev@example.com>
Subject: [PATCH 1/1] cute: resolve the cuTensorMapEncodeTiled entry point
 once

Body text.
---
 include/cutlass/cuda_host_adapter.hpp | 10 +++++++---
 1 file changed, 7 insertions(+), 3 deletions(-)
"""


def tiny_results(patch_dir: Path) -> dict[str, Any]:
    """The smallest results the hook accepts. SYNTHETIC."""
    return {"schema": 1, "stamp": synthetic_stamp(patch_dir),
            "timings": {"original/seed": {"host_us": 40.0, "loop_us": 41.0, "gpu_us": 41.0, "phase_us": {}}}}


@pytest.fixture
def patch_dir(tmp_path: Path) -> Path:
    d = tmp_path / "patch"
    d.mkdir()
    (d / "0001-cache.patch").write_text(PATCH)
    (d / "series").write_text("# comment\n0001-cache.patch\n")
    return d


def make_site(tmp_path: Path, patch_dir: Path, results: dict[str, Any]) -> Any:
    out = tmp_path / "results"
    out.mkdir(exist_ok=True)
    (out / "results.json").write_text(json.dumps(results))
    for png in hook.PLOTS:
        (out / png).write_bytes(b"\x89PNG\r\n\x1a\n")
    return hook.Site(REPO, out, patch_dir, regenerate_plots=False)


def test_hook_replaces_values_and_adds_the_stamp(tmp_path: Path, patch_dir: Path) -> None:
    site = make_site(tmp_path, patch_dir, tiny_results(patch_dir))
    out = site.render('# Title\n\nHost {{ timings."original/seed".host_us | us }} per call.\n', "page.md")
    assert "Host 40.0\u00a0µs per call." in out
    assert out.index("# Title") < out.index("SYNTHETIC H200") < out.index("Host 40.0")


def test_hook_fails_on_a_missing_key(tmp_path: Path, patch_dir: Path) -> None:
    site = make_site(tmp_path, patch_dir, tiny_results(patch_dir))
    with pytest.raises(hook.ResultsError, match=r"page\.md: .*no key 'patched/seed' at timings"):
        site.render("{{ timings.patched/seed.host_us | us }}", "page.md")
    with pytest.raises(hook.ResultsError, match=r"no key 'sweep'"):
        site.render("{{ table: sweep }}", "page.md")


def test_hook_fails_on_a_null_value_and_a_bad_format(tmp_path: Path, patch_dir: Path) -> None:
    results = tiny_results(patch_dir)
    results["timings"]["original/seed"]["gpu_us"] = None
    site = make_site(tmp_path, patch_dir, results)
    with pytest.raises(hook.ResultsError, match="null"):
        site.render("{{ timings.original/seed.gpu_us | us }}", "page.md")
    with pytest.raises(hook.ResultsError, match="unknown format"):
        site.render("{{ timings.original/seed.host_us | furlongs }}", "page.md")


def test_hook_fails_on_a_stale_stamp(tmp_path: Path, patch_dir: Path) -> None:
    results = tiny_results(patch_dir)
    (patch_dir / "0001-cache.patch").write_text(PATCH + "\n# edited after the measurement\n")
    with pytest.raises(hook.ResultsError, match=r"is stale: it was measured with patches \[0001-cache.patch "):
        make_site(tmp_path, patch_dir, results)


def test_hook_uses_the_series_of_the_measured_cutlass_version(tmp_path: Path, patch_dir: Path) -> None:
    (patch_dir / "series-v4.3.5").write_text("")
    results = tiny_results(patch_dir)  # current for `series` (CUTLASS 4.2.0)
    make_site(tmp_path, patch_dir, results)
    results["stamp"]["cutlass_version"] = "4.3.5"  # whose series is empty
    with pytest.raises(hook.ResultsError, match="series-v4.3.5 now gives"):
        make_site(tmp_path, patch_dir, results)


def test_hook_fails_on_schema_and_missing_file(tmp_path: Path, patch_dir: Path) -> None:
    results = tiny_results(patch_dir)
    results["schema"] = 2
    with pytest.raises(hook.ResultsError, match="schema"):
        make_site(tmp_path, patch_dir, results)
    with pytest.raises(hook.ResultsError, match="does not exist"):
        hook.Site(REPO, tmp_path / "nowhere", patch_dir, regenerate_plots=False)


def test_hook_lists_the_patch_series(tmp_path: Path, patch_dir: Path) -> None:
    site = make_site(tmp_path, patch_dir, tiny_results(patch_dir))
    out = site.render("{{ patch_series }}", "patch.md")
    assert "### 1. cute: resolve the cuTensorMapEncodeTiled entry point once" in out
    assert "`include/cutlass/cuda_host_adapter.hpp` (10 lines changed)" in out
    assert "Body text." in out


def test_block_placeholders_stand_alone(tmp_path: Path, patch_dir: Path) -> None:
    site = make_site(tmp_path, patch_dir, tiny_results(patch_dir))
    with pytest.raises(hook.ResultsError, match="alone on its line"):
        site.render("see {{ table: timings }}", "page.md")


def test_pages_type_no_numbers_of_their_own() -> None:
    """Numbers come from placeholders; a page may type only the issue's 91 and 625 us, versions and the like."""
    allowed = re.compile(r"^(91|625|0|1)$")  # the numbers; "returns 0"; the "loop 1"
    for page in sorted((REPO / "docs").glob("*.md")):
        text = re.sub(r"\{\{.*?\}\}", "", page.read_text())
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # commands and code
        text = re.sub(r"`[^`]*`", "", text)  # inline code: flags, file names, versions
        text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
        for number in re.findall(r"(?<![\w.#/-])\d+(?:\.\d+)?(?![\w.])", text):
            assert allowed.match(number), f"{page.name} types the number {number}"


def test_reproduce_page_matches_the_readme() -> None:
    readme, page = (REPO / "README.md").read_text(), (REPO / "docs" / "reproduce.md").read_text()
    for command in ('pip install ".[report]" && cutlass-overhead-report --out report/',
                    'pip install ".[test]" && python -m pytest tests/ --cov=cutlass_overhead'):
        assert command in readme and command in page, command


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tests/test_docs.py OUT_DIR   (writes SYNTHETIC results for previewing the site)")
    print(write_synthetic(Path(sys.argv[1])))

"""The vocabulary (python/cutlass_overhead/vocabulary.py): how calls are counted per API group, and that each of its
facts is stated there only, not again in the package, the docs hooks or the scripts."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from cutlass_overhead import vocabulary as V

REPO = Path(__file__).resolve().parents[1]
# Where the project's non-test Python lives; vocabulary.py is the one place for the facts below.
SOURCES = sorted([*(REPO / "python").rglob("*.py"), *(REPO / "docs" / "hooks").glob("*.py"),
                  *(REPO / "scripts").glob("*.py")])
HOME = REPO / "python" / "cutlass_overhead" / "vocabulary.py"


def string_literals(path: Path) -> set[str]:
    return {node.value for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def test_a_lookup_counts_once_though_cupti_sees_the_driver_call_inside_it() -> None:
    calls = V.calls_by_group({"cudaGetDriverEntryPointByVersion": 8, "cuGetProcAddress": 8},
                             {"cudaGetDriverEntryPointByVersion": "runtime", "cuGetProcAddress": "driver"})
    assert calls["lookups"] == 8
    assert calls["runtime"] == 8 and calls["driver"] == 8


def test_a_group_the_code_calls_the_driver_for_counts_the_driver_calls() -> None:
    # CUTLASS v4.3.5 calls cuDriverGetVersion directly; main calls cudaDriverGetVersion.
    assert V.calls_by_group({"cuDriverGetVersion": 8})["version_queries"] == 8
    assert V.calls_by_group({"cudaDriverGetVersion": 8})["version_queries"] == 8
    assert V.calls_by_group({"cuTensorMapEncodeTiled": 9}, {"cuTensorMapEncodeTiled": "driver"})["encodes"] == 9


def test_an_api_of_no_group_counts_as_other_calls_of_its_domain() -> None:
    calls = V.calls_by_group({"cuCtxGetId": 1, "cudaStreamQuery": 2})
    assert calls["other_driver"] == 1 and calls["other_runtime"] == 2
    assert set(V.GROUP_SLUGS) <= set(calls)


def test_no_other_file_lists_the_apis_of_a_group() -> None:
    for group in V.API_GROUPS:
        if len(group.apis) < 2:
            continue
        for path in SOURCES:
            if path == HOME:
                continue
            named = string_literals(path) & set(group.apis)
            assert len(named) < 2, f"{path.relative_to(REPO)} lists the {group.slug} APIs {sorted(named)} again"


def test_the_issues_numbers_the_series_rule_and_the_diff_hash_live_in_the_vocabulary_only() -> None:
    facts = {
        "the issue's numbers": re.compile(r"^\s*ISSUE_(KERNEL|LOOP)_US\s*=\s*\d", re.M),
        "the series rule": re.compile(r"series-v\{"),
        "the diff hash": re.compile(r"diff --git"),
    }
    for what, pattern in facts.items():
        where = [str(p.relative_to(REPO)) for p in SOURCES if pattern.search(p.read_text())]
        assert where == [str(HOME.relative_to(REPO))], f"{what} stated in {where}"

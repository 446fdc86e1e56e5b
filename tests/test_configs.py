"""cutlass-overhead-doctor --every-config (configs.py): every built config × epilogue, timed in the doctor's own
process and counted in its CUPTI child, in the one results schema. On the fake GPU: which configs x epilogues exist, that each row
carries the child's counts, and that the table prints; on a GPU: the host path on Hopper, every config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cutlass_overhead import configs, doctor, present, report
from cutlass_overhead.results import resolved
from cutlass_overhead.workloads import PROFILES

from fakes import FAKE_CAPTURE_NS, FAKE_ISSUE_PATTERN_CALLS, FAKE_WORKSPACE_BYTES_PER_M, FakeNvfp4Kernel, measured_fake


@pytest.fixture(scope="module")
def sm90_reading() -> dict[str, Any]:
    return measured_fake(profile="every-config")


@pytest.fixture(scope="module")
def nvfp4_reading() -> dict[str, Any]:
    return measured_fake(profile="every-config", kernel_type=FakeNvfp4Kernel)


def test_every_config_is_the_doctors_profile_plus_the_configs_step() -> None:
    assert PROFILES["every-config"] == PROFILES["doctor"] | {"configs"}
    assert "configs" not in measured_fake(profile="doctor")
    args = doctor.parse_args(["--every-config"])
    command = report.child.child_command(args, Path("in.json"), Path("out.json"))
    assert command[command.index("--profile") + 1] == "every-config"  # the child counts the same configs x epilogues


def test_the_sm90_stand_in_has_one_config_and_the_capture_cost(sm90_reading: dict[str, Any]) -> None:
    assert sm90_reading["errors"] == []
    rows = sm90_reading["configs"]["rows"]
    assert [r["config_epilogue"] for r in rows] == ["M128"]
    # The stand-in's one config is the headline GEMM: its times and counts are the timings and counts sections'.
    assert rows[0]["headline"] and not {"host_us", "counts", "params_bytes"} & set(rows[0])
    timings, row = sm90_reading["timings"], resolved(sm90_reading)["configs"]["rows"][0]
    assert set(row["host_us"]) == set(sm90_reading["configs"]["modes"]) == {
        f"{v}/{m}" for v in ("original", "patched") for m in ("issue_pattern", "initialize_run", "kept_gemm")}
    assert all(row["host_us"][key] == timings[key]["host"] for key in row["host_us"])
    assert row["params_bytes"] == sm90_reading["params_bytes"] and set(row["counts"]) == set(configs.COUNTED)
    cost = sm90_reading["configs"]["capture_cost"]
    # The fakes add FAKE_CAPTURE_NS to a captured call, so the capture cost is that, exactly.
    assert cost["issue_pattern_captured"]["median"] - cost["issue_pattern"]["median"] == pytest.approx(FAKE_CAPTURE_NS / 1e3)


def test_the_modes_a_build_does_not_run_are_not_timed_and_are_no_error(nvfp4_reading: dict[str, Any]) -> None:
    assert nvfp4_reading["errors"] == []  # the fake host-path kernel lacks graph and kernel_launch, as the real one
    assert not {"original/graph", "original/kernel_launch"} & set(nvfp4_reading["timings"])
    assert "original/kept_gemm" in nvfp4_reading["timings"]


def test_only_the_built_configs_and_epilogues_are_measured(nvfp4_reading: dict[str, Any]) -> None:
    assert nvfp4_reading["errors"] == []
    names = [r["config_epilogue"] for r in nvfp4_reading["configs"]["rows"]]
    assert names == [f"M{m}{e}" for m in (128, 256) for e in ("", "+silu", "+bias", "+silu+bias")]
    assert {r["config"] for r in nvfp4_reading["configs"]["rows"]} == {"KernelConfigM128", "KernelConfigM256"}
    by_m = nvfp4_reading["configs"]["workspace_by_m"]
    assert [r["m"] for r in by_m] == [m for m in configs.WORKSPACE_MS if m <= FakeNvfp4Kernel.BUILT_UP_TO_M]
    assert all(r["workspace_bytes"] == FAKE_WORKSPACE_BYTES_PER_M * r["m"] for r in by_m)
    assert "capture_cost" not in nvfp4_reading["configs"]  # the host-path build captures every call anyway


def test_each_row_carries_the_childs_counts_of_its_own_config_epilogue(nvfp4_reading: dict[str, Any]) -> None:
    lookups = {v: sum(n for _, _, api, n in calls if api == "cudaGetDriverEntryPoint")
               for v, calls in FAKE_ISSUE_PATTERN_CALLS.items()}
    for row in resolved(nvfp4_reading)["configs"]["rows"]:
        counted = {v: present.config_counts(row["counts"].get(v)) for v in configs.COUNTED}
        assert counted["original"]["lookups"] == lookups["original"] and counted["patched"]["lookups"] == 0, row["config_epilogue"]
        assert counted["original"]["encodes"] == counted["patched"]["encodes"] == 3


def test_the_table_names_every_config_epilogue_and_survives_json(nvfp4_reading: dict[str, Any]) -> None:
    again = resolved(json.loads(json.dumps(present.jsonable(nvfp4_reading))))["configs"]
    text = present.configs_text(again)
    assert all(row["config_epilogue"] in text for row in again["rows"])
    assert "get_workspace_size over M" in text and "3 -> 0" in text  # lookups, original -> patched


# ---- On a GPU: the issue's NVFP4 code, host path on Hopper, every config -------------------------------------


@pytest.mark.gpu
def test_on_the_host_path_every_config_counts_what_the_nvfp4_tests_expect(torch_sm90: Any, tmp_path: Path) -> None:
    import subprocess
    import sys

    import cutlass_overhead as co
    from nvfp4_counts import per_call

    missing = {v: r for v, r in co.available("nvfp4_hopper").items() if v in configs.COUNTED and r}
    if missing:
        pytest.skip(f"nvfp4_hopper variants unavailable (build with CO_NVFP4_HOST_PATH_ON_HOPPER=ON): {missing}")
    out = tmp_path / "reading.json"
    done = subprocess.run([sys.executable, "-m", "cutlass_overhead.doctor", "128", "4096", "4096", "--quick",
                           "--host-path-on-hopper", "--every-config", "--json", str(out)],
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    reading = json.loads(out.read_text())
    rows = {r["config_epilogue"]: r for r in resolved(reading)["configs"]["rows"]}  # the headline row names the timings
    assert "M128" in rows and "M128" in done.stdout
    version = reading["stamp"]["cutlass_version"]
    for variant in configs.COUNTED:
        counted = present.config_counts(rows["M128"]["counts"][variant])
        expected = per_call(variant, version)
        assert {g: counted[g] for g in expected} == expected, variant

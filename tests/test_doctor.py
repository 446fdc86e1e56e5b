"""cutlass-overhead-doctor: the report's pipeline with the doctor's profile. Its arguments are checked before any GPU
is looked for; on the fake GPU it runs the doctor's steps only, writes the report's schema, and its verdict adds up
and never shows a suspect within the noise floor as a cost; on a GPU the same holds for a real reading."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cutlass_overhead import analysis, doctor, report, vocabulary
from cutlass_overhead.workloads import PROFILES
from cutlass_overhead.results import from_json

from fakes import measured_fake

PROG = "cutlass-overhead-doctor"


def run_doctor(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cutlass_overhead.doctor", *args], capture_output=True, text=True,
                          timeout=900, check=False, env={**os.environ, **(env or {})}, cwd=cwd)


# ---- Arguments: checked before any GPU is looked for -------------------------------------------------------


@pytest.fixture
def no_gpu_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(args: Any) -> Any:
        raise AssertionError("the doctor looked for a GPU before its arguments were checked")
    monkeypatch.setattr(doctor, "make_context", refuse)


@pytest.mark.parametrize("argv, message", [
    (["abc", "4096", "4096"], "M must be an integer in [1, 2147483647], got 'abc'"),
    (["-5", "1", "1"], "M must be an integer in [1, 2147483647], got '-5'"),
    (["128", "0", "4096"], "N must be an integer in [1, 2147483647], got '0'"),
    (["128", "4096", "4096", "0"], "CALLS must be an integer in [1, 100000], got '0'"),
    (["128", "4096"], "takes M N K [CALLS] (three or four numbers), got 2"),
    (["1", "2", "3", "4", "5"], "takes M N K [CALLS] (three or four numbers), got 5"),
    (["--nope"], "unrecognized arguments: --nope"),
])
def test_bad_arguments_get_one_line_before_any_gpu(argv: list[str], message: str, no_gpu_lookup: None,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        doctor.main(argv)
    err = capsys.readouterr().err.splitlines()
    assert done.value.code == 2 and err == [f"{PROG}: error: {message} (see --help)"], err


def test_help_needs_no_gpu_and_names_every_argument(no_gpu_lookup: None, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        doctor.main(["--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert "[M N K [CALLS]]" in out and "--inspect PATH" in out and "--compare READING.json" in out, out


def test_without_a_gpu_the_doctor_says_so_in_one_line(tmp_path: Path) -> None:
    r = run_doctor(env={"CUDA_VISIBLE_DEVICES": ""}, cwd=tmp_path)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"{PROG}: "), r.stderr
    assert "co-doctor" not in r.stderr and not (tmp_path / "co-doctor.json").exists()


# ---- One pipeline: the doctor's profile on the fake GPU ---------------------------------------------------------


@pytest.fixture(scope="module")
def reading() -> dict[str, Any]:
    return measured_fake(profile="doctor")


def test_the_doctor_profile_runs_its_steps_and_no_others(reading: dict[str, Any]) -> None:
    assert reading["errors"] == []
    assert set(reading["suspects"]) == {"allocation", "copy_load", "kernel_load", "first_call"}
    assert "sweep" not in reading and "ablation" not in reading and "layer" not in reading
    assert "candidates" not in reading  # the suspects are stated once, in the verdict
    assert not {"timeline", "kernel_search", "torch_matmul"} & set(reading)  # a section not measured is not written
    assert PROFILES["doctor"].isdisjoint({"sweep", "search", "timelines", "experiments", "torch", "candidates"})


def test_the_doctor_and_the_report_write_one_schema(reading: dict[str, Any]) -> None:
    full = measured_fake(profile="report")
    common = {"timings", "headline_samples", "noise_floor", "unit_costs_ns", "counts", "encode_costs", "kernel_us",
              "tracing_cost", "attribution", "attribution_prices", "verdict"}
    assert common <= set(reading) and common <= set(full)
    for key in ("timings", "counts", "verdict"):  # the same shape of value under each key
        assert type(reading[key]) is type(full[key]) and set(reading[key]) <= set(full[key]) | {"suspects"}, key


def test_the_verdicts_parts_add_up_to_the_measured_host_time(reading: dict[str, Any]) -> None:
    v = reading["verdict"]
    assert v["bound"] in ("host-bound", "GPU-bound", "sync-bound")
    assert v["parts_sum_us"] == pytest.approx(reading["timings"]["original/issue_pattern"]["host_us"], rel=1e-9)
    assert "host_us" not in v  # the verdict weighs the timings step's host time, which is stored there only


def test_the_time_outside_the_phases_is_a_part_of_its_own() -> None:
    rows = [{"phase": "run", "measured_us": 3.0, "terms": [{"api": "cudaLaunchKernelExC", "count": 1.0, "us": 1.0}],
             "remainder_us": 2.0}]
    parts = analysis.host_parts({"original/issue_pattern": rows}, 10.0)
    assert [p["us"] for p in parts] == [1.0, 2.0, 7.0] and sum(p["us"] for p in parts) == 10.0


def test_a_suspect_within_the_noise_floor_reads_no_measurable_effect_never_a_cost(reading: dict[str, Any]) -> None:
    by_name = {s["suspect"]: s for s in reading["verdict"]["suspects"]}
    quiet = [s for s in by_name.values() if "no measurable effect" in s["reading"]]
    assert quiet and all(s["effect_us"] is None for s in quiet)
    o0 = next(s for name, s in by_name.items() if "-O0" in name)
    assert o0["effect_us"] == pytest.approx(360.0) and o0["reading"].startswith("adds")  # the fakes' 400 vs 40 us


def test_the_allocation_suspect_is_priced_in_loop_time_per_iteration_not_host_time_per_call(
        reading: dict[str, Any]) -> None:
    allocation = next(s for s in reading["verdict"]["suspects"] if s["suspect"] == vocabulary.SUSPECTS["allocation"])
    o0 = next(s for s in reading["verdict"]["suspects"] if s["suspect"] == vocabulary.SUSPECTS["O0"])
    assert allocation["effect_us"] is not None  # the fakes' allocation is far outside the noise floor
    assert "loop us per iteration" in allocation["reading"] and "per call" in o0["reading"]


def test_the_profiler_suspect_is_a_ratio_within_the_cupti_childs_own_process(reading: dict[str, Any]) -> None:
    """Traced over the CUPTI child's own untraced time before any CUPTI use, never over the parent's: two processes'
    medians can differ by more than tracing costs."""
    r = json.loads(json.dumps(reading))
    spread = lambda us: {"median": us, "q1": us, "q3": us, "n": 3}  # noqa: E731
    r["tracing_cost"]["on_host"] = spread(30.0)
    r["tracing_cost"]["residue_check"]["before_any_cupti_host"] = spread(20.0)
    r["timings"]["original/issue_pattern"]["host"] = spread(10.0)
    rows = analysis.suspect_rows(from_json(r), 0.0)
    profiler = next(s for s in rows if s["suspect"] == vocabulary.SUSPECTS["profiler"])
    assert profiler["ratio"]["median"] == pytest.approx(1.5) and profiler["effect_us"] == pytest.approx(10.0)


@pytest.mark.parametrize("ratio, half, effect, reading", [
    (1.02, 0.03, None, "no measurable effect"),
    (0.98, 0.03, None, "no measurable effect"),
    (1.20, 0.03, 2.0, "adds 2.00 us per call"),
    (0.90, 0.03, -1.0, "saves 1.00 us per call"),
])
def test_a_suspect_counts_only_outside_the_noise_floor(ratio: float, half: float, effect: float | None,
                                                       reading: str) -> None:
    row = analysis.suspect_row("x", {"median": ratio, "q1": ratio, "q3": ratio}, 10.0, half, "how")
    assert row["reading"].startswith(reading)
    assert row["effect_us"] == (None if effect is None else pytest.approx(effect))


def test_the_doctors_child_runs_with_the_doctors_profile() -> None:
    args = doctor.parse_args(["128", "1024", "1024", "64", "--quick"])
    command = report.child.child_command(args, Path("in.json"), Path("out.json"))
    assert command[command.index("--profile") + 1] == "doctor" and "--calls=64" in command and "--quick" in command
    assert report.parse_args(command[3:]).profile == "doctor"


# ---- On a GPU: a real reading -------------------------------------------------------------------------------------


@pytest.mark.gpu
def test_a_real_reading_adds_up_and_is_the_reports_schema(torch_sm90: Any, tmp_path: Path) -> None:
    out = tmp_path / "reading.json"
    r = run_doctor("128", "1024", "1024", "--quick", "--json", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    real = json.loads(out.read_text())
    v = real["verdict"]
    assert v["parts_sum_us"] == pytest.approx(real["timings"]["original/issue_pattern"]["host_us"], rel=1e-9)
    assert set(real["suspects"]) == {"allocation", "copy_load", "kernel_load", "first_call"}
    assert all(s["effect_us"] is None or "no measurable effect" not in s["reading"] for s in v["suspects"])
    assert real["stamp"] and real["counts"]["original/issue_pattern"]["totals"]
    assert real["stamp"]["command"].startswith("cutlass-overhead-doctor 128 1024 1024")  # the command the user ran


def test_the_host_path_on_hopper_runs_only_on_sm90_and_says_what_it_is(monkeypatch: pytest.MonkeyPatch,
                                                                         reading: dict[str, Any]) -> None:
    from cutlass_overhead import device, vocabulary

    monkeypatch.setattr(device, "available", lambda kind: {"original": None, "patched": None, "O0": "not built",
                                                              "O0_patched": "not built"})
    kind, variants, status = device.choose_kernel({"major": 9, "minor": 0, "name": "H"}, host_path_on_hopper=True)
    assert (kind, variants) == ("nvfp4_hopper", ("original", "patched"))
    assert "never a Blackwell" in status["label"]
    with pytest.raises(device.NoGpu, match="not sm_90"):
        device.choose_kernel({"major": 10, "minor": 0, "name": "B"}, host_path_on_hopper=True)
    assert analysis.verdict(from_json({**reading, "kernel": "nvfp4_hopper"}))["bound"] == vocabulary.BOUNDS[3]
    args = doctor.parse_args(["--host-path-on-hopper"])
    assert "--host-path-on-hopper" in report.child.child_command(args, Path("i"), Path("o"))


def test_each_load_also_times_the_attribute_call_alone_with_and_without_it(reading: dict[str, Any]) -> None:
    for name in ("copy_load", "kernel_load"):
        call = reading["suspects"][name]["attribute_call_us"]
        assert set(call) == {"idle", "loaded"} and call["idle"]["n"] == call["loaded"]["n"] == reading[
            "headline_samples"]["rounds"], name
        assert call["idle"]["median"] == pytest.approx(2.0)  # the fakes' 4 x 500 ns on the GEMM kernel

"""The standalone doctor (measure/doctor/): clear failures everywhere, a verdict that adds up on a GPU,
and agreement with the report's own measurement for the modes both run."""

from __future__ import annotations

import json
import os
import subprocess
from statistics import median
from typing import Any

import pytest

import cutlass_overhead as co
from cutlass_overhead.doctor import BIN
DOCTOR = BIN / "co_doctor_sm90_original"


def doctor(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if not DOCTOR.exists():
        pytest.skip(f"{DOCTOR.name} is not built (needs 90a in CO_CUDA_ARCHS)")
    return subprocess.run([str(DOCTOR), *args], capture_output=True, text=True, timeout=600, check=False,
                           env={**os.environ, **(env or {})})


def test_doctor_without_gpu_says_so_in_one_line() -> None:
    # No visible device (or no driver at all, in CI): one line, exit 3, never "driver version is insufficient".
    r = doctor(env={"CUDA_VISIBLE_DEVICES": ""})
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 3, r.stderr
    assert len(lines) == 1 and lines[0].startswith("co-doctor: no "), r.stderr
    assert "insufficient" not in r.stderr and r.stdout == ""


@pytest.mark.parametrize("args, message", [
    (("abc",), "M must be an integer"),
    (("128", "4096", "4095"), "multiples of 8"),
    (("--m", "99999999999"), "--m must be an integer"),
    (("--calls", "0"), "--calls must be an integer"),
    (("--nope",), "unknown option"),
])
def test_doctor_rejects_bad_arguments(args: tuple[str, ...], message: str) -> None:
    r = doctor(*args)
    assert r.returncode == 64 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_doctor_console_script_without_gpu() -> None:
    from cutlass_overhead import doctor as wrapper

    if not DOCTOR.exists():
        pytest.skip(f"{DOCTOR.name} is not built")
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    try:
        path, why = wrapper.pick(wrapper.doctors(), "original", False)
    finally:
        del os.environ["CUDA_VISIBLE_DEVICES"]
    assert path is None and why.startswith("co-doctor: no ")


@pytest.fixture(scope="module")
def reading(torch_sm90: Any, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("doctor") / "doctor.json"
    r = doctor("128", "1024", "1024", "--quick", "--json", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(out.read_text())


@pytest.mark.gpu
def test_doctor_verdict_parts_add_up(reading: dict[str, Any]) -> None:
    v = reading["verdict"]
    assert v["bound"] in ("host-bound", "GPU-bound", "sync-bound")
    assert abs(sum(p["us"] for p in v["parts"]) - v["host_us"]) < 1e-3 * max(1.0, v["host_us"])
    assert reading["reference_check"].startswith("ok")


@pytest.mark.gpu
def test_doctor_agrees_with_report_measurement(reading: dict[str, Any], torch_sm90: Any) -> None:
    # The report's measurement: the module's bench(), median over repeats (report.median_bench).
    torch = torch_sm90
    m, n, k = 128, 1024, 1024
    a = torch.randn(m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(n, k, device="cuda").to(torch.bfloat16)
    d = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    stream = torch.cuda.Stream()
    torch.cuda.synchronize()
    module = co.load("sm90", "original")
    for mode in co.Mode:  # the doctor keys its modes by the same names (co::mode_name)
        runs = [module.bench(a, b, None, d, 1.0, 0.0, int(mode), 200, 20, False, stream.cuda_stream)["host_ns_per_call"] / 1e3
                for _ in range(5)]
        report_us = median(runs)
        doc = reading["modes_back_to_back"][mode.name]["host_per_call"]
        spread = (doc["p75_us"] - doc["p25_us"]) + (sorted(runs)[3] - sorted(runs)[1])
        tolerance = max(0.25 * report_us, 2 * spread) + 0.5
        assert abs(doc["median_us"] - report_us) <= tolerance, (mode, doc["median_us"], report_us, tolerance)

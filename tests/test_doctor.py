"""The standalone doctor (measure/doctor/): clear failures everywhere, a verdict that adds up on a GPU,
and agreement with the report's own measurement for the modes both run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
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
    (("-5", "1", "1"), "M must be an integer in [1, 2147483647], got the negative value '-5'"),
    (("--k", "-7"), "--k must be an integer in [1, 2147483647], got the negative value '-7'"),
    (("1", "2", "3", "4", "5"), "at most four positional arguments: M N K [CALLS]"),
])
def test_doctor_rejects_bad_arguments(args: tuple[str, ...], message: str) -> None:
    r = doctor(*args)
    assert r.returncode == 64 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_doctor_check_args_parses_and_stops_before_cuda() -> None:
    # What the wrapper runs before it looks for a GPU: exit 0, nothing printed, no GPU looked for (else 3 here);
    # the shape checks (4095 is no multiple of 8) wait for the run, whose GEMM decides them.
    r = doctor("128", "4096", "4095", "--check-args", env={"CUDA_VISIBLE_DEVICES": ""})
    assert (r.returncode, r.stdout, r.stderr) == (0, "", ""), r
    assert doctor("abc", "--check-args").returncode == 64


def test_doctor_usage_names_every_positional_argument() -> None:
    r = doctor("--help")
    assert r.returncode == 0 and "[M N K [CALLS]]" in r.stdout and r.stderr == "", r.stdout + r.stderr


def test_doctor_console_script_without_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    from cutlass_overhead import doctor as wrapper

    if not DOCTOR.exists():
        pytest.skip(f"{DOCTOR.name} is not built")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    path, why, status = wrapper.pick(wrapper.doctors(), "original", False)
    assert (path, status) == (None, 3) and why.startswith("no "), why  # the binary's line, less its prefix


# ---- The wrapper (cutlass-overhead-doctor): its arguments before the GPU, one prefix, what to build ----------


def wrapper_run(argv: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) \
        -> tuple[int, str, list[str]]:
    """(exit status, stdout, stderr lines) of cutlass-overhead-doctor ARGV on a machine without a visible GPU."""
    from cutlass_overhead import doctor as wrapper

    if not DOCTOR.exists():
        pytest.skip(f"{DOCTOR.name} is not built (needs 90a in CO_CUDA_ARCHS)")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    status = wrapper.main(argv)
    out = capsys.readouterr()
    return status, out.out, out.err.splitlines()


def test_wrapper_help_needs_no_gpu(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = wrapper_run(["--help"], monkeypatch, capsys)
    assert (status, err) == (0, []), err
    assert out.startswith("usage: ") and "[M N K [CALLS]]" in out and "--inspect PATH" in out, out


@pytest.mark.parametrize("argv, message", [
    (["abc", "4096", "4096"], "M must be an integer in [1, 2147483647], got 'abc'"),
    (["-5", "1", "1"], "M must be an integer in [1, 2147483647], got the negative value '-5'"),
    (["128", "0", "4096"], "N must be an integer in [1, 2147483647], got '0'"),
    (["128", "4096", "4096", "0"], "CALLS must be an integer in [1, 1000000], got '0'"),
    (["--patched", "--calls", "-3"], "--calls must be an integer in [1, 1000000], got the negative value '-3'"),
    (["--nope"], "unknown option '--nope' (see --help)"),
])
def test_wrapper_checks_arguments_before_the_gpu(argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = wrapper_run(argv, monkeypatch, capsys)
    assert (status, out, err) == (64, "", [f"cutlass-overhead-doctor: {message}"])


def test_wrapper_without_gpu_has_one_prefix(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = wrapper_run([], monkeypatch, capsys)
    assert (status, out, len(err)) == (3, "", 1), err
    assert err[0].startswith("cutlass-overhead-doctor: no ") and "co-doctor" not in err[0], err


def test_wrapper_not_built_names_the_build_option(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from cutlass_overhead import doctor as wrapper

    assert wrapper.pick({}, "patched", False) == (None, (
        "co_doctor_nvfp4_patched is not built (it needs a Blackwell arch in CO_CUDA_ARCHS (100a, 110a or 101a)); "
        "co_doctor_sm90_patched is not built (it needs 90a in CO_CUDA_ARCHS)"), 2)
    monkeypatch.setattr(wrapper, "doctors", lambda: {"sm90_original": DOCTOR})  # a build without the option
    status, out, err = wrapper_run(["--host-path-on-hopper"], monkeypatch, capsys)
    assert (status, out) == (2, "") and err == [
        "cutlass-overhead-doctor: co_doctor_nvfp4_hopper_original is not built "
        "(it needs 90a in CO_CUDA_ARCHS and CO_NVFP4_HOST_PATH_ON_HOPPER=ON)"], err


# ---- The platform block: what the wrapper adds to the reading the binary wrote (a fake binary, no GPU) ------

# Answers the wrapper's --check-args and --device-info probes, then writes a minimal reading where the doctor's
# parser would (the last --json PATH or --json=PATH, else co-doctor.json) and exits with $FAKE_STATUS.
FAKE_DOCTOR = """#!/bin/sh
for a in "$@"; do case "$a" in --check-args) exit 0;; esac; done
for a in "$@"; do case "$a" in --device-info) echo "fake GPU"; exit 0;; esac; done
out=co-doctor.json; prev=
for a in "$@"; do
  [ "$prev" = --json ] && out="$a"
  case "$a" in --json=*) out="${a#--json=}";; esac
  prev="$a"
done
printf '{"tool": "co-doctor", "variant": "sm90/original", "gpu": {"driver_api": 12080, "runtime": 12080}}' > "$out"
exit "${FAKE_STATUS:-0}"
"""


@pytest.fixture
def fake_doctor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The wrapper with the fake binary as its only doctor, run in tmp_path/run, on a fake DRIVE OS file tree."""
    from cutlass_overhead import doctor as wrapper
    from cutlass_overhead import stamp

    binary = tmp_path / "co_doctor_sm90_original"
    binary.write_text(FAKE_DOCTOR)
    binary.chmod(0o755)
    drive = tmp_path / "drive-os-root" / "etc/nvidia"
    drive.mkdir(parents=True)
    (drive / "version-ubuntu-rootfs.txt").write_text("7.0.5.0-43328940\n")
    real = stamp.platform_info
    monkeypatch.setattr(stamp, "platform_info", lambda root=tmp_path / "drive-os-root": real(root))
    monkeypatch.setattr(wrapper, "doctors", lambda: {"sm90_original": binary})
    (tmp_path / "run").mkdir()
    monkeypatch.chdir(tmp_path / "run")
    return tmp_path / "run"


@pytest.mark.parametrize("argv, written", [([], "co-doctor.json"), (["--json", "mine.json"], "mine.json"),
                                           (["--json=a.json", "--json", "b.json"], "b.json")])
def test_wrapper_adds_the_platform_block_to_the_reading(fake_doctor: Path, argv: list[str], written: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from cutlass_overhead import doctor as wrapper

    assert wrapper.main(["128", "4096", "4096", *argv]) == 0
    reading = json.loads((fake_doctor / written).read_text())
    assert reading["tool"] == "co-doctor" and reading["gpu"] == {"driver_api": 12080, "runtime": 12080}  # kept
    platform = reading["platform"]
    assert platform["platform"] == "DRIVE OS" and platform["driveos_rootfs_version"] == "7.0.5.0-43328940"
    assert platform["doctor_build_type"] == co.build_info()["build_type"] != ""
    assert platform["doctor_nvcc"] == co.build_info()["nvcc_version"]
    assert f"platform: DRIVE OS (DRIVE OS: driveos_rootfs_version); added to {written}" in capsys.readouterr().out


def test_wrapper_leaves_a_failed_run_and_an_old_reading_alone(fake_doctor: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from cutlass_overhead import doctor as wrapper

    monkeypatch.setenv("FAKE_STATUS", "1")
    assert wrapper.main(["128", "4096", "4096"]) == 1
    assert "platform" not in json.loads((fake_doctor / "co-doctor.json").read_text())
    old = fake_doctor / "old.json"
    old.write_text('{"tool": "co-doctor"}')
    monkeypatch.delenv("FAKE_STATUS")
    assert wrapper.main(["--device-info", "--json", str(old)]) == 0  # writes no reading: the old one stays as it was
    assert old.read_text() == '{"tool": "co-doctor"}' and "platform:" not in capsys.readouterr().out


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
def test_doctor_times_every_mode_with_ordered_quartiles(reading: dict[str, Any]) -> None:
    """The doctor times every co::Mode the report's harness knows, each with a positive median inside its quartiles.
    How close its times come to the report's is a measurement, not a pass/fail property: the two are separate
    processes (issue 17's one engine removes the question)."""
    shared = [mode.name for mode in co.Mode if mode.name in reading["modes_back_to_back"]]
    assert len(shared) == len(co.Mode), f"the doctor skipped modes: {sorted(set(m.name for m in co.Mode) - set(shared))}"
    for mode in shared:
        doc = reading["modes_back_to_back"][mode]["host_per_call"]
        assert 0 < doc["p25_us"] <= doc["median_us"] <= doc["p75_us"], (mode, doc)

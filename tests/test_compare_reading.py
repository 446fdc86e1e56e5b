"""cutlass-overhead-doctor --compare: a reading beside the committed reference (one schema: a doctor reading and a
report's results.json), row by row with the ratio, and one-line errors for what is not a reading. No GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutlass_overhead import compare_reading, doctor, stamp

from fakes import measured_fake

REFERENCE = compare_reading.REFERENCE


def row(text: str, label: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"| {label} |"))


SEED = "the issue's pattern, host us per call"


def test_a_reading_twice_as_slow_reads_two_in_the_ratio_column(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    reading = json.loads(REFERENCE.read_text())
    reading["timings"]["original/issue_pattern"]["host_us"] *= 2
    mine = tmp_path / "co-doctor.json"
    mine.write_text(json.dumps(reading))
    assert doctor.main(["--compare", str(mine)]) == 0
    out = capsys.readouterr().out
    assert row(out, SEED).endswith("| 2.00 |")
    assert "JetPack" in out and "CUTLASS 4.3.5" in out and "| build type; archs | Release; 90a |" in out


def test_the_reference_against_itself_reads_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert doctor.main(["--compare", str(REFERENCE), "--reference", str(REFERENCE)]) == 0
    assert row(capsys.readouterr().out, SEED).endswith("| 1.00 |")


def test_a_doctor_reading_compares_with_the_reports_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = tmp_path / "co-doctor.json"
    mine.write_text(json.dumps(measured_fake(profile="doctor")))
    assert doctor.main(["--compare", str(mine)]) == 0
    out = capsys.readouterr().out
    reference = json.loads(REFERENCE.read_text())["timings"]["original/issue_pattern"]["host_us"]
    assert row(out, SEED).endswith(f"| {40.0 / reference:.2f} |")  # the fake GPU's 40 us over the H200's
    assert row(out, "the first call of a process").split("|")[3].strip() == "—"  # the reference has no suspects step


@pytest.mark.parametrize("content, says", [("not json", "not JSON"), ('{"tool": "co-doctor"}', "not a reading")])
def test_what_is_not_a_reading_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                      content: str, says: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    assert doctor.main(["--compare", str(bad)]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1


def test_reference_needs_a_path(capsys: pytest.CaptureFixture[str]) -> None:
    assert doctor.main(["--compare", str(REFERENCE), "--reference"]) == 2
    assert "--reference takes a PATH" in capsys.readouterr().err


def platform_row(text: str, label: str) -> list[str]:
    """The cells of the platform table's row `label`: [label, yours, reference]."""
    row = next(line for line in text.splitlines() if line.startswith(f"| {label} |"))
    return [cell.strip() for cell in row.strip("|").split("|")]


def test_the_platform_lines_stand_beside_the_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A DRIVE OS reading as the stamp writes it, beside the committed H200 one, which records its own platform
    # (neither: an x86 server).
    root = tmp_path / "root" / "etc/nvidia"
    root.mkdir(parents=True)
    (root / "version-ubuntu-rootfs.txt").write_text("7.0.5.0-43328940\n")
    reading = json.loads(REFERENCE.read_text())
    assert json.loads(REFERENCE.read_text())["stamp"]["platform"]["platform"] == "neither"
    reading["stamp"].update(gpu="NVIDIA Thor", compute_capability="10.1", cuda_driver_api="12.8", build_type="Debug",
                            cuda_archs=["101a"], platform=stamp.platform_info(tmp_path / "root"))
    mine = tmp_path / "co-doctor.json"
    mine.write_text(json.dumps(reading))
    assert doctor.main(["--compare", str(mine)]) == 0
    out = capsys.readouterr().out
    assert platform_row(out, "JetPack or DRIVE OS")[:2] == [
        "JetPack or DRIVE OS", "DRIVE OS (DRIVE OS: driveos_rootfs_version)"]
    assert platform_row(out, "JetPack or DRIVE OS")[2].startswith("neither")
    assert platform_row(out, "DRIVE OS release; rootfs version; rootfs manifest")[1] == \
        "not present, 7.0.5.0-43328940, not present"
    assert platform_row(out, "build type; archs")[1:] == ["Debug; 101a", "Release; 90a"]
    assert platform_row(out, "GPU")[1] == "NVIDIA Thor (compute capability 10.1)"
    assert "does not record" not in out  # the reading records its platform: nothing to ask for


def test_a_reading_without_the_platform_block_asks_for_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A reading from before the stamp had a platform block: every line of it reads "not recorded", never a guess.
    reading = json.loads(REFERENCE.read_text())
    del reading["stamp"]["platform"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(reading))
    assert doctor.main(["--compare", str(old), "--reference", str(old)]) == 0
    out = capsys.readouterr().out
    assert platform_row(out, "JetPack or DRIVE OS")[1:] == ["not recorded", "not recorded"]
    assert "`cat /etc/nv_tegra_release`) or DRIVE OS (its release), which your reading does not record" in out


def test_an_nvfp4_reading_compares_with_the_nvfp4_host_path_reading(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """A Thor reading is NVFP4: by default it stands beside the H200 reading of the same NVFP4 code (host path on
    Hopper, labelled as such), not beside the SM90 stand-in. Seen failing with the stand-in as the only default."""
    reading = json.loads(REFERENCE.read_text())
    reading["kernel"] = "nvfp4"
    mine = tmp_path / "co-doctor.json"
    mine.write_text(json.dumps(reading))
    assert doctor.main(["--compare", str(mine)]) == 0
    out = capsys.readouterr().out
    assert f"reference: {compare_reading.NVFP4_REFERENCE}" in out
    assert "The reference is the host path on Hopper" in out
    assert row(out, "the kernel (CUPTI)").split("|")[3].strip() == "—"  # the host path launches no kernel

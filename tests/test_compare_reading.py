"""cutlass-overhead-doctor --compare: a reading beside the committed reference, row by row with the ratio, and
one-line errors for what is not a reading. No GPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cutlass_overhead import compare_reading, doctor

REFERENCE = compare_reading.REFERENCE_DIR / compare_reading.REFERENCE_BY_KIND["nvfp4"]


def seed_row(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith("| the issue's pattern, per call"))


def test_a_reading_twice_as_slow_reads_two_in_the_ratio_column(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    reading = json.loads(REFERENCE.read_text())
    reading["modes_drained"]["seed"]["host_per_call"]["median_us"] *= 2
    mine = tmp_path / "co-doctor.json"
    mine.write_text(json.dumps(reading))
    assert doctor.main(["--compare", str(mine)]) == 0
    out = capsys.readouterr().out
    assert seed_row(out).endswith("| 2.00 |")
    assert "JetPack" in out and "CUTLASS 4.2.0" in out


def test_the_reference_against_itself_reads_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert doctor.main(["--compare", str(REFERENCE), "--reference", str(REFERENCE)]) == 0
    assert seed_row(capsys.readouterr().out).endswith("| 1.00 |")


@pytest.mark.parametrize("content, says", [("not json", "not JSON"), ('{"tool": "other"}', "not a doctor reading")])
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

"""cutlass-overhead-doctor --inspect: real -O0 and -O3 builds of a CuTe host file (tests/cute_host.cpp, g++,
no nvcc, no GPU), with DWARF, without it, hidden-visibility and stripped, each read as the doctor reads it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import cutlass_overhead as co
from cutlass_overhead import doctor
from cutlass_overhead.inspect_binary import BAD_INPUT, UNOPTIMISED_FROM, InspectError, Unit, Verdict, inspect

SOURCE = Path(__file__).with_name("cute_host.cpp")


def include_flags() -> list[str]:
    """-I for the CUTLASS headers the build used and for the CUDA toolkit's (CuTe includes cuda_runtime_api.h)."""
    cutlass = Path(co.build_info()["cutlass_root"]) / "include"
    nvcc = os.environ.get("CUDACXX") or shutil.which("nvcc")
    if shutil.which("g++") is None or nvcc is None or not cutlass.is_dir():
        pytest.skip(f"needs g++, nvcc (for the CUDA headers) and the CUTLASS headers at {cutlass}")
    dry = subprocess.run([nvcc, "--dryrun", "-E", "-x", "c++", os.devnull], capture_output=True, text=True, check=False)
    cuda = Path(re.search(r'INCLUDES="-I([^"]+)"', dry.stderr + dry.stdout).group(1))  # type: ignore[union-attr]
    return ["-I", str(cutlass), "-I", str(cuda), "-isystem", str(cuda / "cccl")]


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """-O0 and -O3 executables with -g; the same without debug info (strip --strip-debug) and stripped;
    an -O0 shared object linked with -fvisibility=hidden (its CuTe functions become local symbols)."""
    out = tmp_path_factory.mktemp("inspect")
    base = ["g++", "-std=c++17", "-w", *include_flags(), str(SOURCE)]
    jobs = {"O0": [*base, "-O0", "-g"], "O3": [*base, "-O3", "-g"],
            "O0_hidden.so": [*base, "-O0", "-shared", "-fPIC", "-fvisibility=hidden", "-DCUTE_HOST_SHARED"]}
    running = [(name, subprocess.Popen([*cmd, "-o", str(out / name)], stderr=subprocess.PIPE, text=True))
               for name, cmd in jobs.items()]
    for name, job in running:
        assert job.wait(timeout=300) == 0, f"{name}: {job.stderr.read() if job.stderr else ''}"
    for level in ("O0", "O3"):
        subprocess.run(["strip", "--strip-debug", "-o", str(out / f"{level}_nodebug"), str(out / level)], check=True)
        subprocess.run(["strip", "-o", str(out / f"{level}_stripped"), str(out / level)], check=True)
    return {p.name: p for p in out.iterdir()}


def test_debug_info_producer_says_O0(builds: dict[str, Path]) -> None:
    found = inspect(builds["O0"])
    assert found.verdict is Verdict.UNOPTIMISED, found
    assert found.evidence.startswith("DW_AT_producer of ") and "cute_host.cpp" in found.evidence
    assert " -O0 " in found.evidence and "1 of 1 compile units" in found.evidence


def test_debug_info_producer_says_O3(builds: dict[str, Path]) -> None:
    found = inspect(builds["O3"])
    assert found.verdict is Verdict.OPTIMISED, found
    assert found.evidence.startswith("DW_AT_producer of ") and " -O3 " in found.evidence


def cute_count(evidence: str) -> int:
    return int(re.search(r"(\d+) out-of-line cute::", evidence).group(1))  # type: ignore[union-attr]


@pytest.mark.parametrize("name, verdict, table", [
    ("O0_nodebug", Verdict.UNOPTIMISED, ".symtab"),
    ("O3_nodebug", Verdict.OPTIMISED, ".symtab"),
    ("O0_hidden.so", Verdict.UNOPTIMISED, ".symtab"),  # hidden weak functions are locals after the link
])
def test_without_debug_info_the_symbol_table_decides(builds: dict[str, Path], name: str, verdict: Verdict,
                                                     table: str) -> None:
    found = inspect(builds[name])
    assert (found.verdict, found.evidence.split(":")[0]) == (verdict, table), found
    count = cute_count(found.evidence)
    assert count >= 4 * UNOPTIMISED_FROM if verdict is Verdict.UNOPTIMISED else count == 0, found


@pytest.mark.parametrize("level", ["O0", "O3"])
def test_stripped_cannot_tell_and_asks_for_the_compile_line(builds: dict[str, Path], level: str) -> None:
    found = inspect(builds[f"{level}_stripped"])
    assert found.verdict is Verdict.CANNOT_TELL, found
    assert found.summary.startswith("cannot tell: stripped") and "compile line" in found.summary


@pytest.mark.parametrize("name, status", [("O0", Verdict.UNOPTIMISED), ("O3_nodebug", Verdict.OPTIMISED),
                                          ("O0_stripped", Verdict.CANNOT_TELL)])
def test_cli_prints_verdict_and_evidence_and_exits_with_the_verdict(builds: dict[str, Path], name: str, status: int,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert doctor.main(["--inspect", str(builds[name])]) == status
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"cutlass-overhead-doctor: {builds[name]}: ")
    assert lines[1].startswith("evidence: ") and out.err == ""


def test_cli_bad_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not an ELF file\n")
    for argv, message in ([["--inspect", str(tmp_path / "missing")], "cannot read"],
                          [[f"--inspect={text}"], "is not a readable ELF"],
                          [["--inspect", str(tmp_path)], "cannot read"],
                          [["--inspect"], "--inspect takes one PATH"],
                          [["--inspect", str(text), "128"], "--inspect takes one PATH"]):
        assert doctor.main(argv) == BAD_INPUT, argv
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith("cutlass-overhead-doctor: ") and message in err[0], (argv, err)
    with pytest.raises(InspectError):
        inspect(text)


@pytest.mark.parametrize("producer, level", [
    ("GNU C++17 12.2.0 -mtune=generic -march=x86-64 -g -O0 -std=c++17", "0"),
    ("GNU C++17 12.2.0 -m64 -g -fasynchronous-unwind-tables", "0"),  # no -O: gcc's default (nvcc -g)
    ("GNU C++17 12.2.0 -O3 -g -O0", "0"),                              # the last -O wins
    ("GNU C++17 12.2.0 -O2 -Os", "s"),
    ("GNU C++17 12.2.0 -g -O", "1"),
    ("GNU C++17 12.2.0", None),                                        # -gno-record-gcc-switches
    ("clang version 17.0.6", None),
])
def test_producer_level(producer: str, level: str | None) -> None:
    assert Unit("x.cpp", producer).level() == level


# ---- From a plain clone: `python3 python/cutlass_overhead/inspect_binary.py PATH`, no build, no package ------

SCRIPT = Path(__file__).resolve().parents[1] / "python/cutlass_overhead/inspect_binary.py"


def standalone(args: list[str], cwd: Path, with_elftools: bool = True) -> subprocess.CompletedProcess[str]:
    """The script run by a Python that has no site-packages (-S: neither this package nor anything pip installed),
    only pyelftools on PYTHONPATH when `with_elftools`, a bare environment and a working directory outside the
    repository."""
    import elftools

    path = cwd / "only-elftools"
    if with_elftools and not path.exists():
        path.mkdir()
        (path / "elftools").symlink_to(Path(elftools.__file__).resolve().parent)
    env = {"PATH": "/usr/bin:/bin", **({"PYTHONPATH": str(path)} if with_elftools else {})}
    return subprocess.run([sys.executable, "-S", str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120, check=False)


def test_standalone_script_needs_no_package(builds: dict[str, Path], tmp_path: Path) -> None:
    nothing = subprocess.run([sys.executable, "-S", "-c", "import cutlass_overhead"], cwd=tmp_path, capture_output=True,
                             env={"PATH": "/usr/bin:/bin"}, check=False)
    assert nothing.returncode != 0  # the package really is out of reach of the script's Python
    for name, verdict in (("O0", Verdict.UNOPTIMISED), ("O3_nodebug", Verdict.OPTIMISED),
                          ("O0_stripped", Verdict.CANNOT_TELL)):
        r = standalone([str(builds[name])], tmp_path)
        assert r.returncode == verdict, r.stderr
        lines = r.stdout.splitlines()
        assert len(lines) == 2 and lines[0].startswith(f"inspect_binary.py: {builds[name]}: "), r.stdout
        assert lines[1] == f"evidence: {inspect(builds[name]).evidence}" and r.stderr == ""


@pytest.mark.parametrize("args, with_elftools, status, says", [
    ([], True, BAD_INPUT, "inspect_binary.py: takes one PATH; usage: python3 inspect_binary.py PATH"),
    (["a", "b"], True, BAD_INPUT, "inspect_binary.py: takes one PATH"),
    (["missing"], True, BAD_INPUT, "inspect_binary.py: cannot read missing: No such file or directory"),
    (["/bin/sh"], False, BAD_INPUT, "inspect_binary.py: needs pyelftools: pip install pyelftools"),
])
def test_standalone_bad_input_is_one_line(tmp_path: Path, args: list[str], with_elftools: bool, status: int,
                                          says: str) -> None:
    r = standalone(args, tmp_path, with_elftools)
    assert (r.returncode, r.stdout) == (status, ""), r
    assert len(r.stderr.splitlines()) == 1 and r.stderr.startswith(says), r.stderr


def test_standalone_help(tmp_path: Path) -> None:
    r = standalone(["--help"], tmp_path)
    assert (r.returncode, r.stderr) == (0, "") and r.stdout.startswith("usage: python3 inspect_binary.py PATH"), r

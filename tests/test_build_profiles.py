"""One build door: the named build profiles of pyproject.toml, scripts that build through pip (never a hand-written
CMake configure of this project), and one stamp writer whose patch hash is the package's (CPU only, no build)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from docs_hooks import hook

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

REPO = Path(__file__).resolve().parents[1]
PYPROJECT = REPO / "pyproject.toml"
STAMP_PY = REPO / "python/cutlass_overhead/stamp.py"
PROFILE_KEY = re.compile(r"^\^([a-z0-9-]+)\$$")


def skbuild() -> dict[str, Any]:
    return tomllib.loads(PYPROJECT.read_text())["tool"]["scikit-build"]


def options() -> dict[str, Any]:
    """The build options: the cmake.define table every profile starts from."""
    return skbuild()["cmake"]["define"]


def profile_overrides() -> list[dict[str, Any]]:
    """The overrides keyed on CO_PROFILE that set options (not the one that stops an unknown name)."""
    return [o for o in skbuild().get("overrides", []) if "CO_PROFILE" in o.get("if", {}).get("env", {})
            and not o.get("fail")]


def profiles() -> dict[str, dict[str, str]]:
    """name -> the cmake.define values its override fixes (overrides keyed on a pattern, not ^name$, are left out:
    test_every_profile_fixes_each_known_option_but_the_cutlass_tree names them)."""
    found: dict[str, dict[str, str]] = {}
    for override in profile_overrides():
        match = PROFILE_KEY.match(override["if"]["env"]["CO_PROFILE"])
        if match:
            found.setdefault(match.group(1), {}).update(override.get("cmake", {}).get("define", {}))
    return found


def resolved(env: dict[str, str], config: dict[str, str] | None = None) -> Any:
    """The settings scikit-build-core builds with, for this environment (what pip install would use)."""
    reader = pytest.importorskip("scikit_build_core.settings.skbuild_read_settings")
    return reader.SettingsReader.from_file(PYPROJECT, config or {}, env=env, state="wheel").settings


def test_the_profiles_are_the_readmes_and_the_scripts_use_only_those() -> None:
    names = set(profiles())
    assert {"ci", "evidence", "thor"} <= names, names
    table = hook("include").marked_block(REPO, "README.md", "build-profiles")
    assert set(re.findall(r"^\| `([a-z0-9-]+)` \|", table, re.M)) == names, table
    used = set()
    for script in [*sorted((REPO / "scripts").glob("*.sh")), REPO / ".ci/run"]:
        used |= set(re.findall(r"CO_PROFILE=([a-z0-9-]+)", script.read_text()))
    assert used <= names, f"the scripts name profiles pyproject.toml lacks: {sorted(used - names)}"
    assert used == names, f"profiles no script or CI uses: {sorted(names - used)}"


def test_every_profile_fixes_each_known_option_but_the_cutlass_tree() -> None:
    known = set(options()) - {"CUTLASS_DIR"}
    keys = [o["if"]["env"]["CO_PROFILE"] for o in profile_overrides()]
    assert keys and all(PROFILE_KEY.match(k) for k in keys), f"a profile is keyed on its whole name, ^name$: {keys}"
    assert len(set(keys)) == len(keys), f"a profile is stated twice: {keys}"
    for override in profile_overrides():
        assert override.get("inherit", {}).get("cmake", {}).get("define") == "append", \
            f"{override['if']}: without inherit.cmake.define = 'append' the profile drops the other options"
    for name, define in profiles().items():
        assert set(define) <= known, f"{name} sets options the build does not have: {sorted(set(define) - known)}"
        assert set(define) == known, f"{name} leaves {sorted(known - set(define))} to the environment"
        for option, value in define.items():
            assert isinstance(value, str), f"{name}: {option} must be a fixed value, not {value!r}"
            if option != "CO_CUDA_ARCHS":
                assert value in ("ON", "OFF"), f"{name}: {option}={value!r}"
    # The options are those CMakeLists.txt declares (an option or the architectures' cache variable).
    cmake = (REPO / "CMakeLists.txt").read_text()
    declared = set(re.findall(r"^option\((\w+)", cmake, re.M)) | set(re.findall(r"^set\((\w+) .* CACHE", cmake, re.M))
    assert set(options()) <= declared, sorted(set(options()) - declared)


@pytest.mark.parametrize("name", sorted(profiles()))
def test_a_profile_resolves_to_what_it_states_whatever_the_environment_says(name: str,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    stated = profiles()[name]
    for option in options():  # an environment that sets every option otherwise
        monkeypatch.setenv(option, "stray")
    monkeypatch.setenv("CO_PROFILE", name)
    settings = resolved(dict(os.environ))
    assert not settings.fail
    got = {option: str(value) for option, value in settings.cmake.define.items()}
    assert set(got) == set(options())
    assert {option: got[option] for option in stated} == stated
    # The CUTLASS tree still comes from the environment.
    assert got["CUTLASS_DIR"] == "stray"


def test_no_profile_is_the_default_and_an_unknown_name_stops_the_build() -> None:
    default = resolved({})
    assert not default.fail
    assert resolved({"CO_PROFILE": ""}).fail is not True
    for wrong in ("nope", "ci2", "CI", "xci", "thor "):
        settings = resolved({"CO_PROFILE": wrong})
        assert settings.fail is True, wrong
        assert "not the name of a build profile" in settings.messages.after_failure
    for name in profiles():
        assert resolved({"CO_PROFILE": name}).fail is not True, name


def cmake_command_lines(text: str) -> list[str]:
    """Shell command lines (backslash continuations joined, comments dropped) that run cmake."""
    joined = re.sub(r"\\\n", " ", text)
    found = []
    for line in joined.splitlines():
        code = line.split(" #")[0].strip()
        if code.startswith("#"):
            continue
        for part in re.split(r"\|\||&&|[;|(`]|\$\(", code):
            words = part.split()
            if words and Path(words[0].strip("\"'")).name == "cmake":
                found.append(part.strip())
    return found


def configures(command: str) -> bool:
    """A cmake configure: -S, -B, -D or -G on its command line (cmake --build/--install/--version are not)."""
    try:
        words = shlex.split(command, posix=True)
    except ValueError:
        words = command.split()
    return any(re.match(r"-[SBDG]", w) for w in words[1:])


# CUTLASS's own CMake, configured on a CUTLASS clone with the series applied (its unit tests): not this project.
CUTLASS_CMAKE = {"scripts/cutlass-suites.sh": 1}


def test_no_script_configures_this_projects_cmake_by_hand() -> None:
    scripts = sorted(p for p in (REPO / "scripts").iterdir() if p.is_file()) + [REPO / ".ci/run"]
    assert len(scripts) > 3
    for script in scripts:
        name = script.relative_to(REPO).as_posix()
        text = script.read_text()
        assert "SKBUILD_PROJECT_NAME" not in text, f"{name} configures this project's CMake outside pip"
        if script.suffix == ".py":
            assert not re.search(r"""["']cmake["']\s*,\s*["']-[SBDG]""", text), f"{name} runs a cmake configure"
            continue
        configured = [c for c in cmake_command_lines(text) if configures(c)]
        assert len(configured) == CUTLASS_CMAKE.get(name, 0), f"{name} configures CMake by hand: {configured}"
        for command in configured:
            assert not re.search(r"\$\{?(root|ROOT|repo)\b", command), f"{name}: {command}"


def test_the_cmake_check_sees_a_hand_written_configure() -> None:
    script = 'x=1\ncmake -S "$root" -B "$dir" -G Ninja \\\n  -DCO_CUDA_ARCHS=110a 2>&1 | grep x\ncmake --build "$dir"\n'
    assert [configures(c) for c in cmake_command_lines(script)] == [True, False]
    assert not cmake_command_lines("# cmake -S . -B b\necho cmake -S\n")


def stamp_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The stamp CLI as the scripts run it: the file from the checkout, so it needs nothing built."""
    return subprocess.run([sys.executable, str(STAMP_PY), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def test_the_stamp_cli_hashes_each_patch_as_the_package_and_the_docs_do(tmp_path: Path) -> None:
    staleness = hook("staleness")
    series_files = sorted((REPO / "patch").glob("series*"))
    assert len(series_files) >= 3
    args = [a for s in series_files for a in ("--series", str(s))]
    done = stamp_cli(*args, "--cutlass", "a label", "--note", "label: x", "--repo", str(REPO), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    keys = [line.split(":")[0] for line in lines if not line.startswith(" ")]
    assert keys[:6] == ["date", "commit", "host", "gpu, driver", "nvcc", "python"]
    assert "cutlass: a label" in lines and lines[-1] == "label: x"
    hashes = {}
    series = None
    for line in lines:
        if line.startswith("series: "):
            series = line.split()[1]
            hashes[series] = []
        elif line.startswith("  ") and series:
            name, _, digest = line.strip().rpartition(": ")
            hashes[series].append((name, digest))
    assert sorted(hashes) == sorted(f"patch/{s.name}" for s in series_files)
    for path in series_files:
        expected = [(n, staleness.V.diff_sha256_prefix(REPO / "patch" / n)) for n in staleness.V.series_entries(path)]
        assert expected and hashes[f"patch/{path.name}"] == expected, path.name
    # A missing series is an error, not a stamp that says "missing".
    assert stamp_cli("--series", str(tmp_path / "series-none"), cwd=tmp_path).returncode == 1


def test_the_stamp_hash_is_the_one_the_build_records() -> None:
    """CMakeLists.txt computes build_info()'s patch_sha256_prefixes; the stamp's hash must be that one."""
    co = pytest.importorskip("cutlass_overhead")
    from cutlass_overhead import stamp

    info = co.build_info()
    series = REPO / "patch" / info["patch_series"]
    assert stamp.series_entries(series) == info["patches"]
    assert [stamp.diff_sha256_prefix(REPO / "patch" / p) for p in info["patches"]] == info["patch_sha256_prefixes"]
    # The installed package's CLI (python -m cutlass_overhead.stamp) writes the same lines for that series.
    done = subprocess.run([sys.executable, "-m", "cutlass_overhead.stamp", "--series", str(series)], capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    assert [f"  {p}: {h}" for p, h in zip(info["patches"], info["patch_sha256_prefixes"])] == \
        [line for line in done.stdout.splitlines() if line.startswith("  ")]


def test_the_scripts_stamp_through_the_stamp_cli_and_hash_no_series_themselves() -> None:
    for name in ("gpu-evidence.sh", "cutlass-suites.sh", "thor-build.sh"):
        text = (REPO / "scripts" / name).read_text()
        assert "python/cutlass_overhead/stamp.py" in text or "cutlass_overhead.stamp" in text, name
        assert "sha256sum" not in text, f"{name} computes a hash of its own"
        assert "nvidia-smi" not in text, f"{name} asks for the GPU and driver itself"


def test_gpu_evidence_names_every_output_folder_for_the_gpu_that_ran_it() -> None:
    # A lent machine may be an H100 or an H200: no stage writes under a fixed GPU's name (stamp.py --gpu-tag).
    text = (REPO / "scripts/gpu-evidence.sh").read_text()
    assert "--gpu-tag" in text
    assert not re.findall(r"\$out/h[0-9]", text), "a stage writes under a fixed GPU's folder name"

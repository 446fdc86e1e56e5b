"""What was built: versions, the applied patch series, SASS per architecture. Runs without a GPU."""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import cutlass_overhead as co
from cutlass_overhead import _build_info, vocabulary
from cutlass_overhead._variants import NVFP4_VARIANTS, SM90_VARIANTS

REPO = Path(__file__).resolve().parents[1]
PATCH_DIR = REPO / "patch"


def series_for(version: str) -> list[str]:
    """The series vocabulary.py's rule gives `version`: CMake (cmake/CutlassSource.cmake) must have applied it."""
    return vocabulary.series_entries(vocabulary.series_file(PATCH_DIR, version))


def test_build_info_names_cutlass_and_series() -> None:
    info = co.build_info()
    assert re.fullmatch(r"\d+\.\d+\.\d+", info["cutlass_version"])
    assert info["patches"] == series_for(info["cutlass_version"])
    assert len(info["patch_sha256_prefixes"]) == len(info["patches"])
    assert info["build_type"] == "Release"


def test_patched_build_used_exactly_the_series_files() -> None:
    """CMakeLists.txt stamps each patch with the diff hash vocabulary.py defines (the diff, not the mail header)."""
    for name, prefix in zip(_build_info.PATCHES, _build_info.PATCH_SHA256_PREFIXES):
        digest = vocabulary.diff_sha256_prefix(PATCH_DIR / name)
        assert digest == prefix, f"{name} changed since the build; rebuild (pip install) to re-apply it"


def _pristine_cutlass_root() -> Path:
    """The headers the build used; a wheel build's isolated environment is gone, so use the installed wheel."""
    import importlib.util

    root = Path(_build_info.CUTLASS_ROOT)
    if not root.exists():
        spec = importlib.util.find_spec("cutlass_library")
        if spec is None or not spec.submodule_search_locations:
            pytest.skip(f"{root} is gone and nvidia-cutlass is not installed (it is in the test extra)")
        root = Path(spec.submodule_search_locations[0]) / "source"
    version_h = (root / "include/cutlass/version.h").read_text()
    found = ".".join(re.search(rf"#define CUTLASS_{part} (\d+)", version_h).group(1)
                     for part in ("MAJOR", "MINOR", "PATCH"))
    if found != _build_info.CUTLASS_VERSION:
        pytest.skip(f"headers at {root} are CUTLASS {found}, the build used {_build_info.CUTLASS_VERSION}")
    return root


def patched_copy(dest: Path) -> Path:
    """A copy of the headers the build used with the series for their version applied (as CutlassSource.cmake
    applies it: the header subtrees only), in dest. Fails naming the first patch that does not apply."""
    root = _pristine_cutlass_root()
    for sub in ("include", "tools/util/include"):
        shutil.copytree(root / sub, dest / sub)
    subprocess.run(["git", "init", "-q"], cwd=dest, check=True)
    for name in series_for(_build_info.CUTLASS_VERSION):
        args = ["git", "apply", "--include=include/*", "--include=tools/util/include/*", str(PATCH_DIR / name)]
        check = subprocess.run([*args[:2], "--check", *args[2:]], cwd=dest, capture_output=True, text=True)
        assert check.returncode == 0, f"{name} does not apply: {check.stderr}"
        subprocess.run(args, cwd=dest, check=True)
    return dest


def test_patch_series_applies_to_the_headers_built_against(tmp_path: Path) -> None:
    patched_copy(tmp_path)


def _cuobjdump() -> str:
    found = shutil.which("cuobjdump")
    if found:
        return found
    try:
        import nvidia

        for base in nvidia.__path__:
            for candidate in Path(base).glob("*/bin/cuobjdump"):
                return str(candidate)
    except ImportError:
        pass
    pytest.skip("cuobjdump not found (pip install nvidia-cuda-cuobjdump, part of the test extra)")


def _module_file(name: str) -> Path:
    import importlib.util

    spec = importlib.util.find_spec(f"cutlass_overhead.{name}")
    assert spec and spec.origin, f"{name} is listed as built but cannot be found"
    return Path(spec.origin)


@pytest.mark.parametrize("module", _build_info.MODULES)
def test_module_holds_sass_for_each_requested_arch(module: str) -> None:
    # The SM90 stand-in variants and the NVFP4 host path on Hopper are built for 90a only; the NVFP4 kernels for the rest.
    on_hopper = module.startswith(("_sm90", "_nvfp4_hopper"))
    wanted = [a for a in _build_info.CUDA_ARCHS if (a == "90a") == on_hopper]
    listing = subprocess.run([_cuobjdump(), "--list-elf", str(_module_file(module))],
                             capture_output=True, text=True, check=True).stdout
    found = set(re.findall(r"\.(sm_\d+a?)\.cubin", listing))
    assert {f"sm_{a}" for a in wanted} <= found, f"{module}: SASS for {sorted(found)}, wanted {wanted}"


def _libcuda_missing() -> str | None:
    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError as error:
        return str(error)
    return None


@pytest.mark.parametrize("kind, variant", [("sm90", v) for v in SM90_VARIANTS] + [("nvfp4", v) for v in NVFP4_VARIANTS])
def test_each_variant_loads_if_built_else_says_how_to_build_it(kind: str, variant: str) -> None:
    reason = co.available(kind)[variant]
    if f"_{kind}_{variant}" not in _build_info.MODULES:
        assert reason is not None and f"{kind}/{variant} was not built" in reason, reason
        if kind == "nvfp4" and not set(_build_info.CUDA_ARCHS) - {"90a"}:
            how = "needs a Blackwell arch in CO_CUDA_ARCHS"
        elif "90a" not in _build_info.CUDA_ARCHS:
            how = "needs 90a in CO_CUDA_ARCHS"
        else:
            how = "and CO_BUILD_EXPERIMENTS=ON"  # only the experiments can be missing from a 90a build
        assert how in reason, reason
    elif reason is not None:
        # A built module may fail to load only if it calls the driver by name (the direct-call build, and
        # CUTLASS 4.3.x's unpatched cuDriverGetVersion) and this machine has no driver.
        calls_driver = variant == "direct" or (_build_info.CUTLASS_VERSION.startswith("4.3.") and variant != "patched")
        assert calls_driver and _libcuda_missing() and "libcuda.so.1 could not be loaded" in reason, reason
    else:
        module = co.load(kind, variant)
        assert (module.variant, module.built_archs.split(",")) == (variant, [a for a in _build_info.CUDA_ARCHS
                                                                            if (a == "90a") == (kind == "sm90")])


def test_build_info_points_at_the_headers_it_compiled_against() -> None:
    info = co.build_info()
    root = Path(info["cutlass_root"])
    version_h = (root / "include/cutlass/version.h").read_text()  # exists: not pip's deleted temporary directory
    found = ".".join(re.search(rf"#define CUTLASS_{part} (\d+)", version_h).group(1)
                     for part in ("MAJOR", "MINOR", "PATCH"))
    assert found == info["cutlass_version"]
    assert info["cutlass_describe"], "cutlass_describe is empty"
    if info["cutlass_origin"] == "nvidia-cutlass wheel":
        assert info["cutlass_describe"].startswith("nvidia-cutlass ")


def test_build_options_are_recorded_and_match_the_modules() -> None:
    options = co.build_info()["build_options"]
    assert set(options.values()) <= {"ON", "OFF"}, options
    experiments = {"_sm90_direct", "_sm90_O0", "_nvfp4_O0", "_nvfp4_hopper_O0"} & set(_build_info.MODULES)
    assert bool(experiments) == (options["CO_BUILD_EXPERIMENTS"] == "ON")
    hopper = {"_nvfp4_hopper_original", "_nvfp4_hopper_patched"} & set(_build_info.MODULES)
    assert bool(hopper) == (options["CO_NVFP4_HOST_PATH_ON_HOPPER"] == "ON")

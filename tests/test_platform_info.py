"""stamp.platform_info: JetPack, DRIVE OS or neither, read from the files alone, on fake file trees. No GPU."""

from __future__ import annotations

from pathlib import Path

import pytest

from cutlass_overhead import stamp
from cutlass_overhead.stamp import NOT_PRESENT, UNKNOWN, platform_info

L4T_RELEASE = "# R38 (release), REVISION: 2.0, GCID: 41844464, BOARD: generic, EABI: aarch64, DATE: Sat Aug 23 2025\n"
DPKG_STATUS = """Package: libc6
Status: install ok installed
Version: 2.39-0ubuntu8

Package: nvidia-l4t-core
Status: install ok installed
Architecture: arm64
Version: 38.2.0-20250821174705

"""
TEGRA264 = "nvidia,p3971-0080+p3834-0008\0nvidia,tegra264\0"


def tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith("/"):
            path.mkdir(exist_ok=True)
        else:
            path.write_text(text)
    return root


JETPACK = {"etc/nv_tegra_release": L4T_RELEASE, "var/lib/dpkg/status": DPKG_STATUS,
           "proc/device-tree/compatible": TEGRA264, "proc/sys/kernel/osrelease": "6.8.12-tegra\n"}
DRIVE_OS = {"etc/nvidia/version-ubuntu-rootfs.txt": "7.0.5.0-43328940\n",
            "etc/nvidia/rootfilesystem-manifest/dev_nsr_desktop_ubuntu-24.04_rfs.MANIFEST.json": "{}",
            "var/lib/dpkg/status": DPKG_STATUS.split("\n\n")[0] + "\n\n",
            "proc/device-tree/compatible": TEGRA264}
X86_SERVER = {"etc/os-release": 'ID=debian\nVERSION_ID="12"\n', "var/lib/dpkg/status": DPKG_STATUS.split("\n\n")[0],
              "proc/driver/nvidia/version": "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.65.06\n"}


def test_jetpack_reads_its_l4t_release_and_package(tmp_path: Path) -> None:
    info = platform_info(tree(tmp_path, JETPACK))
    assert info["platform"] == "JetPack", info
    assert info["l4t_release"].startswith("# R38 (release), REVISION: 2.0")
    assert info["nvidia_l4t_core"] == "38.2.0-20250821174705"
    assert info["driveos_rootfs_version"] == NOT_PRESENT and info["driveos_rootfs_manifest"] == NOT_PRESENT
    assert "nvidia,tegra264" in info["soc"] and info["kernel"] == "6.8.12-tegra"


def test_drive_os_reads_its_rootfs_version_and_manifest(tmp_path: Path) -> None:
    info = platform_info(tree(tmp_path, DRIVE_OS))
    assert info["platform"] == "DRIVE OS", info
    assert info["driveos_rootfs_version"] == "7.0.5.0-43328940"
    assert info["driveos_rootfs_manifest"] == "dev_nsr_desktop_ubuntu-24.04_rfs.MANIFEST.json"
    assert info["l4t_release"] == NOT_PRESENT and info["nvidia_l4t_core"] == NOT_PRESENT


@pytest.mark.parametrize("files, key, value, platform", [
    ({"etc/driveos-release": 'VERSION_ID="7.0.5.0"\n'}, "driveos_release", 'VERSION_ID="7.0.5.0"', "DRIVE OS"),
    ({"etc/nvidia/version-ubuntu-rootfs.txt": "7.0.5.0-43328940\n"}, "driveos_rootfs_version", "7.0.5.0-43328940",
     "DRIVE OS"),
    ({"etc/nvidia/rootfilesystem-manifest/driveos-core-rfs.manifest": ""}, "driveos_rootfs_manifest",
     "driveos-core-rfs.manifest", "DRIVE OS"),
    ({"etc/nv_tegra_release": L4T_RELEASE}, "l4t_release", L4T_RELEASE[:-1], "JetPack"),
    ({"var/lib/dpkg/status": DPKG_STATUS}, "nvidia_l4t_core", "38.2.0-20250821174705", "JetPack"),
])
def test_each_marker_alone_decides(tmp_path: Path, files: dict[str, str], key: str, value: str,
                                   platform: str) -> None:
    info = platform_info(tree(tmp_path, files))
    assert (info["platform"], info[key]) == (platform, value), info


def test_a_removed_l4t_package_is_not_present(tmp_path: Path) -> None:
    # dpkg keeps a removed package's stanza (its configuration files) with another Status: not installed.
    removed = DPKG_STATUS.replace("Package: nvidia-l4t-core\nStatus: install ok installed",
                                  "Package: nvidia-l4t-core\nStatus: deinstall ok config-files")
    info = platform_info(tree(tmp_path, {"var/lib/dpkg/status": removed}))
    assert (info["platform"], info["nvidia_l4t_core"]) == ("neither", NOT_PRESENT), info


def test_an_x86_server_is_neither(tmp_path: Path) -> None:
    info = platform_info(tree(tmp_path, X86_SERVER))
    assert info["platform"] == "neither", info
    assert info["kernel_driver"].startswith("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64 580.65.06")
    assert all(info[k] == NOT_PRESENT for k in ("l4t_release", "nvidia_l4t_core", "driveos_release",
                                                "driveos_rootfs_version", "driveos_rootfs_manifest", "soc"))


def test_an_empty_tree_is_neither_and_every_file_not_present(tmp_path: Path) -> None:
    info = platform_info(tmp_path)
    assert info["platform"] == "neither"
    assert {v for k, v in info.items() if not k.startswith("platform")} == {NOT_PRESENT}


@pytest.mark.parametrize("files, says", [
    ({**JETPACK, **DRIVE_OS}, "both JetPack (L4T) and DRIVE OS markers"),              # never pick one
    ({"proc/device-tree/compatible": TEGRA264}, "a Tegra SoC without L4T or DRIVE OS markers"),  # never guess
])
def test_what_cannot_be_told_apart_reads_unknown(tmp_path: Path, files: dict[str, str], says: str) -> None:
    info = platform_info(tree(tmp_path, files))
    assert info["platform"] == UNKNOWN and says in info["platform_evidence"], info


def test_every_value_is_a_string(tmp_path: Path) -> None:
    for files in (JETPACK, DRIVE_OS, X86_SERVER):
        assert all(isinstance(v, str) for v in platform_info(tree(tmp_path / str(id(files)), files)).values())


def test_every_reading_is_stamped_with_its_platform() -> None:
    """The one stamp writer (stamp.stamp) carries the platform block, so the report's results.json and the doctor's
    co-doctor.json both say JetPack or DRIVE OS, and --compare reads it from there."""
    gpu = {"name": "SYNTHETIC GPU", "major": 9, "minor": 0}
    stamped = stamp.stamp(gpu, None, True, [])
    assert stamped["platform"] == stamp.platform_info()


@pytest.mark.parametrize("smi, tag", [("NVIDIA H100 80GB HBM3\n", "h100"), ("NVIDIA H200\nNVIDIA H200\n", "h200"),
                                      (None, "gpu")])
def test_a_suites_folder_is_named_for_the_gpu_that_ran_it(monkeypatch: pytest.MonkeyPatch, smi: str | None,
                                                         tag: str) -> None:
    # gpu-evidence.sh's suites stage writes OUT/<tag>-cutlass-suites/: a lent H100 is never filed as an H200.
    monkeypatch.setattr(stamp, "_run_text", lambda cmd: smi if cmd[0] == "nvidia-smi" else None)
    assert stamp.gpu_tag() == tag

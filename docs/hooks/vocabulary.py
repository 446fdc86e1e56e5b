"""The project's vocabulary (python/cutlass_overhead/vocabulary.py: API groups, the issue's numbers, the series rule
and diff hash) and its results schema (results.py: the version, resolving a reference), loaded by their paths: they
are pure Python, and the docs build needs no built package."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "cutlass_overhead"


def _load(stem: str) -> ModuleType:
    name = f"{__package__}._project_{stem}"
    spec = importlib.util.spec_from_file_location(name, PACKAGE / f"{stem}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


V = _load("vocabulary")
R = _load("results")

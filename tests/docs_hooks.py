"""docs/hooks/ as the docs build loads it (one package, its modules importing each other relatively), for tests that
call a hook's functions directly."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

HOOKS = Path(__file__).resolve().parents[1] / "docs" / "hooks"
PACKAGE = "co_test_docs_hooks"


def hook(module: str) -> ModuleType:
    """docs/hooks/<module>.py, imported once per test session."""
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(PACKAGE, HOOKS / "__init__.py", submodule_search_locations=[str(HOOKS)])
        assert spec and spec.loader
        sys.modules[PACKAGE] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[PACKAGE])
    return importlib.import_module(f"{PACKAGE}.{module}")

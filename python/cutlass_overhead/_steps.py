"""How the report runs its steps: each one may fail without stopping the rest, and says why.

A failure is recorded in results["errors"] (and printed), never raised past the step; a step that needs
an earlier step's result says which one is missing. Shared by timing, the CUPTI child and the CLI.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def key_of(variant: str, mode: str) -> str:
    return f"{variant}/{mode}"


def one_line(text: str) -> str:
    return " ".join(str(text).split())


def note(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def record_error(results: dict[str, Any], label: str, message: str, **extra: Any) -> None:
    results.setdefault("errors", []).append({"step": label, "error": message, **extra})
    note(f"  {label} failed: {message}")


def attempt(results: dict[str, Any], label: str, fn: Callable[[], T]) -> T | None:
    """Runs one measurement; a failure is recorded in results["errors"] and the report goes on."""
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 -- every failure is reported, none is fatal to the rest
        record_error(results, label, one_line(f"{type(error).__name__}: {error}"))
        return None


def run_step(results: dict[str, Any], name: str, fn: Callable[[], T]) -> T | None:
    note(f"[{name}]")
    return attempt(results, name, fn)


def require(results: dict[str, Any], *paths: str) -> None:
    """Raises if an earlier step whose result this one needs did not produce it."""
    for path in paths:
        node: Any = results
        for part in path.split(":"):
            node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            raise RuntimeError(f"needs {path.replace(':', ' ')}, which was not measured (see the earlier error)")


class Progress:
    """A tqdm bar when tqdm is installed, else one line on stderr per step."""

    def __init__(self, total: int, desc: str) -> None:
        self.desc, self.total, self.done = desc, total, 0
        try:
            from tqdm import tqdm

            self.bar: Any = tqdm(total=total, desc=desc, file=sys.stderr, leave=True)
        except ImportError:
            self.bar = None

    def step(self, label: str) -> None:
        self.done += 1
        if self.bar is not None:
            self.bar.set_postfix_str(label)
            self.bar.update(1)
        else:
            note(f"  {self.desc} [{self.done}/{self.total}] {label}")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

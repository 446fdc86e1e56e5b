"""How the report runs its steps: each one may fail without stopping the rest, and says why.

A failure is appended to the run's error list (results.Results.errors, or the CUPTI child's) and printed, never
raised past the step; a step that needs an earlier step's result says which one is missing.
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


Errors = list[dict[str, Any]]  # the run's failures, in order: {"step", "error", ...}


def record_error(errors: Errors, label: str, message: str, **extra: Any) -> None:
    errors.append({"step": label, "error": message, **extra})
    note(f"  {label} failed: {message}")


def attempt(errors: Errors, label: str, fn: Callable[[], T]) -> T | None:
    """Runs one measurement; a failure is appended to `errors` and the report goes on."""
    try:
        return fn()
    except Exception as error:  # noqa: BLE001 -- every failure is reported, none is fatal to the rest
        record_error(errors, label, one_line(f"{type(error).__name__}: {error}"))
        return None


def run_step(errors: Errors, name: str, fn: Callable[[], T]) -> T | None:
    note(f"[{name}]")
    return attempt(errors, name, fn)


def require(results: Any, *paths: str) -> None:
    """Raises if an earlier step whose result this one needs did not produce it ("section:key:...")."""
    for path in paths:
        section, *keys = path.split(":")
        node: Any = getattr(results, section)
        for part in keys:
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

"""Number formatting: the pages' unit filters and the table cells."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .errors import ResultsError

NBSP = "\u00a0"


def _number(x: Any, what: str) -> float:
    from jinja2 import Undefined

    if isinstance(x, Undefined):
        x._fail_with_undefined_error()  # the strict-undefined message: which key is missing
    if x is None:
        raise ResultsError(f"a page formats a null value as {what} (the step that measures it failed or was skipped)")
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ResultsError(f"a page formats {x!r} as {what}, which needs a number")
    return float(x)


def fmt_num(x: Any) -> str:
    x = _number(x, "a number")
    if not math.isfinite(x):
        return "n/a"
    a = abs(x)
    if a >= 100:
        return f"{x:,.0f}"
    if a >= 10:
        return f"{x:.1f}"
    if a >= 1:
        return f"{x:.2f}"
    return f"{x:.2g}" if a else "0"


def fmt_count(x: Any) -> str:
    x = _number(x, "a count")
    return str(int(round(x))) if abs(x - round(x)) < 1e-6 else f"{x:.2f}"


def fmt_ratio(x: Any) -> str:
    x = _number(x, "a ratio")
    return f"{x:.0f}×" if abs(x) >= 10 else f"{x:.1f}×"


FILTERS: dict[str, Callable[[Any], str]] = {
    "num": fmt_num,
    "us": lambda x: f"{fmt_num(x)}{NBSP}µs",
    "ns": lambda x: f"{fmt_num(x)}{NBSP}ns",
    "x": fmt_ratio,
    "count": fmt_count,
    "int": lambda x: str(int(round(_number(x, "an integer")))),
    "pct": lambda x: f"{_number(x, 'a percentage'):.0f}{NBSP}%",
}


def cell_us(x: Any) -> str:
    return "–" if x is None else fmt_num(x)


def cell_count(x: Any) -> str:
    return "–" if not x else fmt_count(x)

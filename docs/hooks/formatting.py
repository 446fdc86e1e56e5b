"""Number formatting: the pages' unit filters and the table cells."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from .errors import ResultsError

NBSP = "\u00a0"


def number(x: Any, what: str) -> float:
    """x as a float, or the build fails saying why (undefined, null, not a number)."""
    from jinja2 import Undefined

    if isinstance(x, Undefined):
        x._fail_with_undefined_error()  # the strict-undefined message: which key is missing
    if x is None:
        raise ResultsError(f"a page formats a null value as {what} (the step that measures it failed or was skipped)")
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ResultsError(f"a page formats {x!r} as {what}, which needs a number")
    return float(x)


def fmt_num(x: Any) -> str:
    x = number(x, "a number")
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
    x = number(x, "a count")
    return str(int(round(x))) if abs(x - round(x)) < 1e-6 else f"{x:.2f}"


def fmt_ratio(x: Any) -> str:
    x = number(x, "a ratio")
    return f"{x:.0f}×" if abs(x) >= 10 else f"{x:.1f}×"


def _stat(stat: Any, what: str) -> tuple[float, float, float]:
    """(median, q1, q3) of a spread ({median, q1, q3}: harness.Spread as written)."""
    from jinja2 import Undefined

    if isinstance(stat, Undefined):
        stat._fail_with_undefined_error()
    if not isinstance(stat, dict):
        raise ResultsError(f"a page formats {stat!r} as {what}, which needs a median and quartiles")
    keys = ("median", "q1", "q3")
    lacking = [k for k in keys if k not in stat]
    if lacking:
        raise ResultsError(f"a page formats a spread without {', '.join(lacking)} as {what}")
    return tuple(number(stat[k], what) for k in keys)  # type: ignore[return-value]


def fmt_iqr(stat: Any, unit: str = "") -> str:
    """median [IQR q1–q3]; the unit after the median."""
    med, q1, q3 = _stat(stat, "a median with its IQR")
    return f"{fmt_num(med)}{NBSP + unit if unit else ''} [IQR {fmt_num(q1)}–{fmt_num(q3)}]"


def fmt_ratio_iqr(stat: Any) -> str:
    med, q1, q3 = _stat(stat, "a ratio with its IQR")
    return f"{med:.2f} [IQR {q1:.2f}–{q3:.2f}]"


FILTERS: dict[str, Callable[[Any], str]] = {
    "num": fmt_num,
    "us": lambda x: f"{fmt_num(x)}{NBSP}µs",
    "ns": lambda x: f"{fmt_num(x)}{NBSP}ns",
    "x": fmt_ratio,
    "count": fmt_count,
    "int": lambda x: str(int(round(number(x, "an integer")))),
    "pct": lambda x: f"{number(x, 'a percentage'):.0f}{NBSP}%",
    "iqr_us": lambda s: fmt_iqr(s, "µs"),
    "iqr_x": fmt_ratio_iqr,
}


def cell_us(x: Any) -> str:
    return "–" if x is None else fmt_num(x)


def cell_count(x: Any) -> str:
    return "–" if not x else fmt_count(x)


def cell_iqr(stat: Any, fmt: Callable[[float], str] = fmt_num) -> str:
    """A table cell: median, and the IQR under it in small type."""
    if not stat:
        return "–"
    med, q1, q3 = _stat(stat, "a table cell")
    return f"{fmt(med)}<br><small>{fmt(q1)}–{fmt(q3)}</small>"


def cell_ratio_iqr(stat: Any) -> str:
    return cell_iqr(stat, "{:.2f}".format)

"""`python -m cutlass_overhead` runs the measurement report (cutlass-overhead-report)."""

from __future__ import annotations

from .report import main

if __name__ == "__main__":
    raise SystemExit(main())

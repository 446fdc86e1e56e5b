"""Every config the build holds, with every epilogue, at the user's N and K (`cutlass-overhead-doctor --every-config`).

Per config and epilogue: host µs per call of the issue's pattern, of one initialize per call (`run(stream)` after
it) and of CUTLASS's floor, original and patched, in interleaved rounds (harness); the calls one steady-state call
makes per phase, counted in the CUPTI child (count); the workspace and Params bytes. Then get_workspace_size over M,
and on the SM90 stand-in what recording each call into a never-launched graph adds (the host-path-on-Hopper build
records every call so, which is why its times are compared only with each other).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import harness
from ._steps import attempt, key_of
from .timing import bench_blocks, run_interleaved
from .workloads import Context, Shape, Workload

# One M per config of the M-based dispatch (M <= 128, M <= 256, larger); the module names the config.
CONFIG_MS = (128, 256, 512)
EPILOGUES = ((False, False), (True, False), (False, True), (True, True))  # (silu, bias) of runNvfp4Gemm<T, silu, bias>
WORKSPACE_MS = (1, 64, 128, 129, 256, 257, 512, 1024, 4096)
TIMED = tuple((variant, mode) for mode in ("seed", "initialize_run", "floor") for variant in ("original", "patched"))
COUNTED = ("original", "patched")  # counted in the pattern (seed)


@dataclass(frozen=True)
class Combo:
    """One config with one epilogue at one shape, named as the tables name it: "M128", "M256+silu+bias"."""

    shape: Shape
    silu: bool = False
    bias: bool = False

    @property
    def name(self) -> str:
        return f"M{self.shape.m}" + ("+silu" if self.silu else "") + ("+bias" if self.bias else "")

    def as_dict(self) -> dict[str, Any]:
        return {"combo": self.name, **self.shape.as_dict(), "silu": self.silu, "bias": self.bias}


def combos(ctx: Context) -> list[Combo]:
    """The built configs × epilogues at the headline's N and K; the SM90 stand-in: its one kernel at the headline."""
    s = ctx.headline.shape
    if ctx.kernel.kind == "sm90":
        return [Combo(s)]
    return [Combo(Shape(m, s.n, s.k), silu, bias) for m in CONFIG_MS for silu, bias in EPILOGUES
            if ctx.kernel.config_built(m, silu, bias)]


def _host_us(r: dict[str, Any]) -> float:
    return float(r["host_ns_per_call"]) / 1e3


def time_combo(ctx: Context, results: dict[str, Any], combo: Combo) -> dict[str, Any]:
    """Host µs per call of each TIMED (variant, mode), through the timings step's harness (timing.run_interleaved:
    a block that fails is an error and left out): {key: Spread as dict}."""
    w = ctx.kernel.make(combo.shape, silu=combo.silu, bias=combo.bias)
    blocks = bench_blocks(ctx, w, [(v, m, False) for v, m in TIMED])
    samples, _ = run_interleaved(ctx, results, blocks, f"configs {combo.name}")
    return {"config": ctx.kernel.config_name(combo.shape.m),
            "workspace_bytes": ctx.kernel.workspace_bytes(combo.shape, combo.silu, combo.bias),
            "params_bytes": w.params_bytes("original"),
            "host_us": {key: harness.spread(values).as_dict() for key, values in samples.items()}}


def capture_cost(ctx: Context) -> dict[str, Any]:
    """SM90 stand-in: host µs per call of the issue's pattern and of the floor, plain and with every call recorded
    into a graph that is never launched, interleaved."""
    w, p = ctx.headline, ctx.plan
    blocks = {f"{mode}{'_captured' if captured else ''}":
              (lambda mode=mode, captured=captured: _host_us(w.bench("original", mode, p.calls, p.warmup,
                                                                      capture=captured)))
              for mode in ("seed", "floor") for captured in (False, True)}
    return {key: harness.spread(values).as_dict() for key, values in harness.interleaved(blocks, p.rounds).items()}


def measure(ctx: Context, results: dict[str, Any]) -> dict[str, Any]:
    """The clean times of every combo (this process, no CUPTI); the child adds their counts (merge_counts)."""
    rows = []
    for combo in combos(ctx):
        row = attempt(results, f"configs {combo.name}", lambda combo=combo: time_combo(ctx, results, combo))
        if row is not None:
            rows.append({**combo.as_dict(), **row})
    s = ctx.headline.shape
    by_m = [{"m": m, "n": s.n, "k": s.k, "config": ctx.kernel.config_name(m),
             "workspace_bytes": ctx.kernel.workspace_bytes(Shape(m, s.n, s.k))}
            for m in WORKSPACE_MS if ctx.kernel.config_built(m, False, False)]
    out = {"rows": rows, "workspace_by_m": by_m, "rounds": ctx.plan.rounds, "calls": ctx.plan.calls,
           "modes": [key_of(v, m) for v, m in TIMED]}
    if ctx.kernel.kind == "sm90":
        out["capture_cost"] = attempt(results, "configs capture cost", lambda: capture_cost(ctx))
    return out


def count(ctx: Context, out: dict[str, Any],
          per_call_counts: Callable[[Workload, str, str], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """CUPTI child: {combo: {variant: counts of one steady-state call of the issue's pattern}}, each counted by the
    child's per_call_counts(workload, variant, mode)."""
    counted: dict[str, dict[str, Any]] = {}
    for combo in combos(ctx):
        w = ctx.kernel.make(combo.shape, silu=combo.silu, bias=combo.bias)
        for variant in COUNTED:
            if variant in ctx.kernel.variants:
                entry = attempt(out, f"config counts {combo.name} {variant}",
                                lambda variant=variant: per_call_counts(w, variant, "seed"))
                if entry is not None:
                    counted.setdefault(combo.name, {})[variant] = entry
    return counted


def merge_counts(results: dict[str, Any], child: dict[str, Any]) -> None:
    """Each combo's counts from the child, into its row of results["configs"]."""
    counted = child.get("config_counts") or {}
    for row in (results.get("configs") or {}).get("rows", []):
        row["counts"] = counted.get(row["combo"], {})

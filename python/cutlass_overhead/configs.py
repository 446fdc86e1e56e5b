"""Every config the build holds, with every epilogue, at the user's N and K (`cutlass-overhead-doctor --every-config`).

Per config and epilogue: host µs per call of the issue's pattern, of one initialize per call (`run(stream)` after
it) and of the kept `Gemm` (`run(stream)` only), original and patched, in interleaved rounds (harness); the calls one steady-state call
makes per phase, counted in the CUPTI child (count); the workspace and Params bytes. Then get_workspace_size over M,
and on the SM90 stand-in what recording each call into a never-launched graph adds (the host-path-on-Hopper build
records every call so, which is why its times are compared only with each other).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import harness
from ._steps import Errors, attempt, key_of
from .timing import bench_blocks, run_interleaved
from .workloads import Context, Shape, Workload

# One M per config of the M-based dispatch (M <= 128, M <= 256, larger); the module names the config.
CONFIG_MS = (128, 256, 512)
EPILOGUES = ((False, False), (True, False), (False, True), (True, True))  # (silu, bias) of runNvfp4Gemm<T, silu, bias>
WORKSPACE_MS = (1, 64, 128, 129, 256, 257, 512, 1024, 4096)
TIMED = tuple((variant, mode) for mode in ("issue_pattern", "initialize_run", "kept_gemm") for variant in ("original", "patched"))
COUNTED = ("original", "patched")  # counted in the pattern


@dataclass(frozen=True)
class ConfigEpilogue:
    """One config with one epilogue at one shape, named as the tables name it: "M128", "M256+silu+bias"."""

    shape: Shape
    silu: bool = False
    bias: bool = False

    @property
    def name(self) -> str:
        return f"M{self.shape.m}" + ("+silu" if self.silu else "") + ("+bias" if self.bias else "")

    def as_dict(self) -> dict[str, Any]:
        return {"config_epilogue": self.name, **self.shape.as_dict(), "silu": self.silu, "bias": self.bias}


def config_epilogues(ctx: Context) -> list[ConfigEpilogue]:
    """The built configs × epilogues at the headline's N and K; the SM90 stand-in: its one kernel at the headline."""
    s = ctx.headline.shape
    if ctx.kernel.kind == "sm90":
        return [ConfigEpilogue(s)]
    return [ConfigEpilogue(Shape(m, s.n, s.k), silu, bias) for m in CONFIG_MS for silu, bias in EPILOGUES
            if ctx.kernel.config_built(m, silu, bias)]


def time_config_epilogue(ctx: Context, errors: Errors, cfg: ConfigEpilogue) -> dict[str, Any]:
    """Host µs per call of each TIMED (variant, mode), through the timings step's harness (timing.run_interleaved:
    a block that fails is an error and left out): {key: Spread as dict}."""
    w = ctx.kernel.make(cfg.shape, silu=cfg.silu, bias=cfg.bias)
    blocks = bench_blocks(ctx, w, [(v, m, False) for v, m in TIMED])
    samples, _ = run_interleaved(ctx, errors, blocks, f"configs {cfg.name}")
    return {"config": ctx.kernel.config_name(cfg.shape.m),
            "workspace_bytes": ctx.kernel.workspace_bytes(cfg.shape, cfg.silu, cfg.bias),
            "params_bytes": w.params_bytes("original"),
            "host_us": {key: harness.spread(values).as_dict() for key, values in samples.items()}}


def capture_cost(ctx: Context) -> dict[str, Any]:
    """SM90 stand-in: host µs per call of the issue's pattern and of the kept Gemm, plain and with every call recorded
    into a graph that is never launched, interleaved."""
    w, p = ctx.headline, ctx.plan
    blocks = {f"{mode}{'_captured' if captured else ''}": (lambda mode=mode, captured=captured: float(
              w.bench("original", mode, p.calls, p.warmup, capture=captured)["host_ns_per_call"]) / 1e3)
              for mode in ("issue_pattern", "kept_gemm") for captured in (False, True)}
    return {key: harness.spread(values).as_dict() for key, values in harness.interleaved(blocks, p.rounds).items()}


def is_headline(ctx: Context, cfg: ConfigEpilogue) -> bool:
    """The user's own GEMM: its times are the timings step's, its counts the CUPTI child's counts (one value each)."""
    return cfg.shape == ctx.headline.shape and not (cfg.silu or cfg.bias)


def measure(ctx: Context, errors: Errors, timings: dict[str, Any] | None) -> dict[str, Any]:
    """The clean times of every config × epilogue (this process, no CUPTI); with_counts adds the child's counts. The
    headline's are the timings step's when it timed every mode (`timings`)."""
    timed = all(key_of(v, m) in (timings or {}) for v, m in TIMED if v in ctx.kernel.variants)
    rows = []
    for cfg in config_epilogues(ctx):
        if timed and is_headline(ctx, cfg):  # what only this step says of it; "headline" names the timings and
            # counts entries and the top-level params_bytes that hold the rest (results.resolved)
            rows.append({**cfg.as_dict(), "config": ctx.kernel.config_name(cfg.shape.m), "headline": True,
                         "workspace_bytes": ctx.kernel.workspace_bytes(cfg.shape, cfg.silu, cfg.bias)})
            continue
        row = attempt(errors, f"configs {cfg.name}", lambda cfg=cfg: time_config_epilogue(ctx, errors, cfg))
        if row is not None:
            rows.append({**cfg.as_dict(), **row})
    s = ctx.headline.shape
    by_m = [{"m": m, "n": s.n, "k": s.k, "config": ctx.kernel.config_name(m),
             "workspace_bytes": ctx.kernel.workspace_bytes(Shape(m, s.n, s.k))}
            for m in WORKSPACE_MS if ctx.kernel.config_built(m, False, False)]
    out = {"rows": rows, "workspace_by_m": by_m, "rounds": ctx.plan.rounds, "calls": ctx.plan.calls,
           "modes": [key_of(v, m) for v, m in TIMED], "counted": list(COUNTED)}
    if ctx.kernel.kind == "sm90":
        out["capture_cost"] = attempt(errors, "configs capture cost", lambda: capture_cost(ctx))
    return out


def count(ctx: Context, errors: Errors,
          per_call_counts: Callable[[Workload, str, str], dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """CUPTI child: {"M128+silu": {variant: counts of one steady-state call of the issue's pattern}}, each counted by
    the child's per_call_counts(workload, variant, mode) (passed in: configs never imports the child)."""
    counted: dict[str, dict[str, Any]] = {}
    for cfg in config_epilogues(ctx):
        if is_headline(ctx, cfg):
            continue  # the child's counts of the headline (child.measure_counts)
        w = ctx.kernel.make(cfg.shape, silu=cfg.silu, bias=cfg.bias)
        for variant in COUNTED:
            if variant in ctx.kernel.variants:
                entry = attempt(errors, f"config counts {cfg.name} {variant}",
                                lambda variant=variant: per_call_counts(w, variant, "issue_pattern"))
                if entry is not None:
                    counted.setdefault(cfg.name, {})[variant] = entry
    return counted


def with_counts(table: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """The configs section: measure()'s table with each row's counts from the child."""
    counted = child.get("config_counts") or {}
    rows = [row if row.get("headline") else {**row, "counts": counted.get(row["config_epilogue"], {})}
            for row in table.get("rows", [])]
    return {**table, "rows": rows}

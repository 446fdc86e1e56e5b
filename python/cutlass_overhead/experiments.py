"""The experiments the harness runs on the SM90 stand-in: what each commit buys, with operands that change.

Every number here comes from harness.interleaved(): the blocks of one experiment run once per round, in a
seeded random order, in this one process; each is summarized as median + IQR, compared with pristine CUTLASS
per round, and published beside the run's A/A noise floor (the same block timed twice per round).

* ablation   host us per call of the issue's pattern for pristine CUTLASS, each prefix of the patch series
             (CO_BUILD_ABLATION), the full series and the caller-side fixes, with operands unchanged and with
             A and D changing every call (`ROTATION` buffers each); plus API counts per call, counted by the
             report's CUPTI child (child.py; this process never loads CUPTI). In the report these blocks run
             inside the timings step's rounds (timing.measure_headline, via headline_blocks()), so a
             configuration both name is timed once; measure_with without them gives them rounds of their own.
* layer      one transformer layer's GEMMs (layer_gemms() in C++) at a decode and a prefill M, A and D
             rotating: host us per layer with the launch queue never filling (the stream is drained before
             each layer, outside the timed span), and loop and GPU us per layer (host- or GPU-bound).
* in_situ_ns cudaFuncSetAttribute with the adapter's own arguments on the GEMM's own kernel vs an empty one.

Only the SM90 stand-in has these entry points; on NVFP4 nothing is measured.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

from . import harness
from ._steps import key_of
from ._variants import ablation_variants, ablation_without
from .device import DeviceWorkload, mode_value
from .workloads import Plan

# Distinct A and D buffers cycled through when operands change (a caching allocator's working set).
ROTATION = 4
# The layer's decode and prefill M.
LAYER_MS = (16, 2048)
# What is counted per call, by its key in the JSON: an API group (vocabulary slug) or one API (trace.CallCounts.calls).
COUNTED_APIS: dict[str, str] = {
    "entry_point_lookups": "lookups",
    "driver_version_queries": "version_queries",
    "tma_encodes": "encodes",
    "cudaFuncSetAttribute": "cudaFuncSetAttribute",
    "cudaMalloc": "cudaMalloc",
    "launches": "launches",
}
# The caller-side fixes: unchanged operands -> initialize once, run(stream) per call ("kept_gemm"); changing
# operands -> one Gemm, update(args) + run(stream) per call ("update_run").
CALLER_FIXES: dict[str, str] = {"unchanged": "kept_gemm", "changing": "update_run"}
# The layer's configurations: (variant, mode), all with A and D changing every layer call.
LAYER_CONFIGS: tuple[tuple[str, str], ...] = (
    ("original", "issue_pattern"), ("patched", "issue_pattern"), ("original", "update_run"), ("patched", "update_run"))
PRISTINE = "original"
IN_SITU_ATTRIBUTES = ("MaxDynamicSharedMemorySize", "NonPortableClusterSizeAllowed")


def in_situ_key(attribute: str, gemm_kernel: bool) -> str:
    """The smem attribute (what the adapter sets in initialize) keeps the plain key the docs render."""
    kernel = "GEMM kernel" if gemm_kernel else "empty kernel"
    return f"cudaFuncSetAttribute({kernel})" if attribute == IN_SITU_ATTRIBUTES[0] \
        else f"cudaFuncSetAttribute({kernel}, {attribute})"


class Runner(Protocol):
    """What the experiments need from the GPU side (real: DeviceRunner; tests: a fake)."""

    def ablation_variants(self) -> list[dict[str, Any]]: ...

    def ablation_without(self) -> list[dict[str, Any]]: ...

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, rotation: int) -> dict[str, Any]: ...

    def bench_layer(self, variant: str, mode: str, m: int, iterations: int, warmup: int, rotation: int,
                    drain: bool) -> dict[str, Any]: ...

    def func_attribute_ns(self, attribute: str, gemm_kernel: bool, iterations: int) -> float: ...

    def initialize_parts(self) -> tuple[str, ...]: ...

    def initialize_part_ns(self, variant: str, part: str, iterations: int) -> float: ...

    def counts(self, configs: Sequence[tuple[str, str, int]], calls: int) -> dict[str, dict[str, float]]:
        """COUNTED_APIS per call, keyed "variant/mode@rotation": CUPTI, so only the report's CUPTI child calls it."""
        ...


def ablation_configs(runner: Runner) -> dict[str, list[tuple[str, str]]]:
    """(variant, mode) for unchanged and for changing operands: pristine, each prefix, the full series (all in the
    issue's pattern), then the caller-side fix on pristine and on patched CUTLASS."""
    builds = runner.ablation_variants() + runner.ablation_without()
    patterns = [(PRISTINE, "issue_pattern")] + [(e["variant"], "issue_pattern") for e in builds]
    if (("patched", "issue_pattern")) not in patterns:  # a build without CO_BUILD_ABLATION: pristine vs the full series
        patterns.append(("patched", "issue_pattern"))
    return {operands: patterns + [(PRISTINE, fix), ("patched", fix)] for operands, fix in CALLER_FIXES.items()}


def ablation_count_configs(runner: Runner) -> list[tuple[str, str, int]]:
    """(variant, mode, rotation) of every ablation config: what the CUPTI child counts (Runner.counts)."""
    return [(v, m, ROTATION if operands == "changing" else 1) for operands, pairs in ablation_configs(runner).items()
            for v, m in pairs]


def summarize(samples: dict[str, list[float]], names: dict[str, str], baseline: str,
              timed: frozenset[str] = frozenset()) -> dict[str, Any]:
    """Per config: median + IQR of its host times ("host"), or the timings key whose times they are (a name
    in `timed`: "timings_key"), and its per-round ratio to `baseline` (sample names -> keys)."""
    out: dict[str, Any] = {}
    for name, key in names.items():
        times = {"timings_key": name} if name in timed else {"host": harness.spread(samples[name]).as_dict()}
        out[key] = {**times, "ratio_to_pristine": harness.ratio(samples, name, baseline).as_dict()}
    return out


def sample_name(operands: str, key: str) -> str:
    """A block's name in the interleaved rounds: unchanged operands keep the timings step's key ("variant/mode"),
    so the report times each of those once, in its timings step (timing.measure_headline)."""
    return key if operands == "unchanged" else f"{operands}:{key}"


def ablation_blocks(runner: Runner, calls: int, warmup: int) -> dict[str, Callable[[], dict[str, Any]]]:
    """Every ablation config as a block returning one bench() result, named by sample_name()."""
    blocks: dict[str, Callable[[], dict[str, Any]]] = {}
    for operands, pairs in ablation_configs(runner).items():
        rotation = ROTATION if operands == "changing" else 1
        for variant, mode in pairs:
            blocks[sample_name(operands, key_of(variant, mode))] = (
                lambda v=variant, m=mode, r=rotation: runner.bench(v, m, calls, warmup, r))
    return blocks


def measure_ablation(runner: Runner, plan: Plan, seed: int = 0, headline: dict[str, Any] | None = None,
                     counted: dict[str, dict[str, float]] | None = None, timed: frozenset[str] = frozenset()
                     ) -> tuple[dict[str, Any], harness.Spread | None]:
    """The ablation's host times. In the report they come from `headline` (the headline_samples section: the
    timings step ran these blocks in its rounds; `timed`, the blocks it reports in its timings section) and the
    noise floor is the timings step's; alone, they are measured here, with their own noise floor. `counted`: the
    CUPTI child's Runner.counts of ablation_count_configs (None: asked of the runner here, which only a fake may
    do)."""
    configs = ablation_configs(runner)
    noise_name = sample_name("unchanged", key_of(PRISTINE, "issue_pattern"))
    if headline is None:
        blocks = {name: (lambda b=block: b()["host_ns_per_call"] / 1e3)
                  for name, block in ablation_blocks(runner, plan.calls, plan.warmup).items()}
        samples = harness.interleaved(blocks, plan.rounds, seed=seed, noise_block=noise_name)
        noise: harness.Spread | None = harness.noise_floor(samples, noise_name)
        rounds, calls = plan.rounds, plan.calls
    else:
        samples, noise = headline["host_us"], None
        rounds, calls = headline["rounds"], headline["calls_per_sample"]
    names = {operands: {sample_name(operands, key_of(v, m)): key_of(v, m) for v, m in pairs}
             for operands, pairs in configs.items()}
    missing = [name for by_name in names.values() for name in by_name if name not in samples]
    if missing:
        raise RuntimeError(f"no host times for {', '.join(missing)} (see the timings step's errors)")
    host = {operands: summarize(samples, names[operands], sample_name(operands, key_of(PRISTINE, "issue_pattern")), timed)
            for operands in configs}
    if counted is None:
        counted = runner.counts(ablation_count_configs(runner), plan.count_calls)
    counts = {operands: {key_of(v, m): counted[f"{v}/{m}@{ROTATION if operands == 'changing' else 1}"]
                         for v, m in pairs} for operands, pairs in configs.items()}
    result = {"variants": runner.ablation_variants(), "without": runner.ablation_without(), "rotation": ROTATION, "rounds": rounds,
              "calls_per_sample": calls, "host": host, "counts_per_call": counts,
              "caller_fixes": CALLER_FIXES,
              "measured_in": "the timings step's rounds" if headline is not None else "its own rounds",
              "note": "host us per call of the issue's pattern per build; ratios per round vs pristine CUTLASS"}
    return result, noise


def measure_layer(runner: Runner, plan: Plan, seed: int = 0) -> tuple[dict[str, Any], harness.Spread]:
    blocks: dict[str, Callable[[], float]] = {}
    gpu_samples: dict[str, list[float]] = {}
    for m in LAYER_MS:
        for variant, mode in LAYER_CONFIGS:
            base = f"M={m}:{key_of(variant, mode)}"
            blocks[f"{base}:host"] = (lambda v=variant, md=mode, mm=m: runner.bench_layer(
                v, md, mm, plan.layer_calls, plan.warmup, ROTATION, True)["host_ns_per_call"] / 1e3)
            blocks[f"{base}:loop"] = (lambda v=variant, md=mode, mm=m, b=base: record_loop(
                runner.bench_layer(v, md, mm, plan.layer_calls, plan.warmup, ROTATION, False), gpu_samples, b))
    noise = f"M={LAYER_MS[0]}:{key_of(PRISTINE, 'issue_pattern')}:host"
    samples = harness.interleaved(blocks, plan.rounds, seed=seed, noise_block=noise)
    by_m: dict[str, Any] = {}
    for m in LAYER_MS:
        rows: dict[str, Any] = {}
        for variant, mode in LAYER_CONFIGS:
            base, key = f"M={m}:{key_of(variant, mode)}", key_of(variant, mode)
            pristine = f"M={m}:{key_of(PRISTINE, 'issue_pattern')}"
            host, loop = (harness.spread(samples[f"{base}:{what}"]).as_dict() for what in ("host", "loop"))
            gpu = harness.spread(gpu_samples[base]).as_dict()
            rows[key] = {"host_us_per_layer": host, "loop_us_per_layer": loop, "gpu_us_per_layer": gpu,
                         "host_ratio_to_pristine": harness.ratio(samples, f"{base}:host", f"{pristine}:host").as_dict(),
                         "loop_ratio_to_pristine": harness.ratio(samples, f"{base}:loop", f"{pristine}:loop").as_dict(),
                         "bound": "host" if host["median"] > gpu["median"] else "GPU"}
        by_m[f"M={m}"] = rows
    gemms = runner.layer_gemms() if hasattr(runner, "layer_gemms") else []
    result = {"gemms": [{"name": n, "n": nn, "k": k} for n, nn, k in gemms], "ms": list(LAYER_MS),
              "rotation": ROTATION, "rounds": plan.rounds, "calls_per_sample": plan.layer_calls, "by_m": by_m,
              "note": "host us per layer: stream drained before each layer, outside the timed span (the launch "
                      "queue never fills); loop us per layer: no drain, loop start to stream drained"}
    return result, harness.noise_floor(samples, noise)


def record_loop(r: dict[str, Any], gpu_samples: dict[str, list[float]], base: str) -> float:
    """The loop sample; the GPU span of the same run is recorded beside it."""
    gpu_samples.setdefault(base, []).append(r["gpu_ns_per_iter"] / 1e3)
    return r["loop_ns_per_iter"] / 1e3


def medians_with_quartiles(samples: dict[str, list[float]],
                           extra: Callable[[str], dict[str, Any]] = lambda key: {}
                           ) -> tuple[dict[str, float], dict[str, Any]]:
    """Per block of interleaved samples: the median (the number the docs render) and, beside it without repeating
    it, its quartiles, the round count and `extra(key)`."""
    spreads = {k: harness.spread(v) for k, v in samples.items()}
    return ({k: s.median for k, s in spreads.items()},
            {k: {"q1": s.q1, "q3": s.q3, "n": s.n, **extra(k)} for k, s in spreads.items()})


def measure_in_situ(runner: Runner, plan: Plan, seed: int = 0) -> tuple[dict[str, float], dict[str, Any]]:
    blocks = {in_situ_key(a, g): (lambda a=a, g=g: runner.func_attribute_ns(a, g, plan.attribute_calls))
              for a in IN_SITU_ATTRIBUTES for g in (True, False)}
    samples = harness.interleaved(blocks, plan.rounds, seed=seed)
    return medians_with_quartiles(samples, lambda k: {
        "ratio_to_empty_kernel": harness.ratio(samples, k, k.replace("GEMM kernel", "empty kernel")).as_dict()
        if "GEMM kernel" in k else None})


def measure_initialize_parts(runner: Runner, plan: Plan,
                             seed: int = 0) -> tuple[dict[str, float], dict[str, Any]]:
    """Where the host time of one initialize() goes: each piece (the module's initialize_parts) timed alone,
    pristine and patched, interleaved round by round. Keys "variant/part"."""
    blocks = {f"{v}/{part}": (lambda v=v, part=part: runner.initialize_part_ns(v, part, plan.attribute_calls))
              for part in runner.initialize_parts() for v in (PRISTINE, "patched")}
    return medians_with_quartiles(harness.interleaved(blocks, plan.rounds, seed=seed))


def measure_with(runner: Runner, plan: Plan, seed: int = 0, headline: dict[str, Any] | None = None,
                 counted: dict[str, dict[str, float]] | None = None, timed: frozenset[str] = frozenset()
                 ) -> dict[str, Any]:
    """Every experiment's result sections; `headline`, `counted` and `timed` as measure_ablation takes them."""
    ablation, ablation_noise = measure_ablation(runner, plan, seed, headline, counted, timed)
    layer, layer_noise = measure_layer(runner, plan, seed)
    in_situ, in_situ_spread = measure_in_situ(runner, plan, seed)
    parts, parts_spread = measure_initialize_parts(runner, plan, seed)
    return {"ablation": ablation, "layer": layer, "in_situ_ns": in_situ, "in_situ_spread_ns": in_situ_spread,
            "initialize_parts_ns": parts, "initialize_parts_spread_ns": parts_spread,
            "noise_floor": {**({"headline": {**ablation_noise.as_dict(),
                                             "block": harness.noise_block_note(key_of(PRISTINE, "issue_pattern"))}}
                               if ablation_noise is not None else {}),
                            "layer": {**layer_noise.as_dict(), "block": f"{PRISTINE}/issue_pattern, M={LAYER_MS[0]}, host"}}}


class DeviceRunner:
    """The SM90 variant modules on the report's headline operands and stream (a device.DeviceWorkload)."""

    def __init__(self, workload: Any) -> None:
        self.w = workload

    def _module(self, variant: str) -> Any:
        from ._variants import load

        return load("sm90", variant)

    def ablation_variants(self) -> list[dict[str, Any]]:
        return ablation_variants()

    def ablation_without(self) -> list[dict[str, Any]]:
        return ablation_without()

    def layer_gemms(self) -> list[tuple[str, int, int]]:
        return [tuple(g) for g in self._module(PRISTINE).layer_gemms()]

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, rotation: int) -> dict[str, Any]:
        w = self.w
        return self._module(variant).bench(a=w.a, b=w.b, c=None, d=w.d, alpha=1.0, beta=0.0, mode=mode_value(mode),
                                           iterations=iterations, warmup=warmup, sync_each_call=False,
                                           stream=w.handle, rotation=rotation, drain_between_calls=False)

    def bench_layer(self, variant: str, mode: str, m: int, iterations: int, warmup: int, rotation: int,
                    drain: bool) -> dict[str, Any]:
        return self._module(variant).bench_layer(m=m, mode=mode_value(mode), iterations=iterations, warmup=warmup,
                                                 stream=self.w.handle, rotation=rotation, drain_between_calls=drain)

    def func_attribute_ns(self, attribute: str, gemm_kernel: bool, iterations: int) -> float:
        return self.w.func_attribute_ns(attribute, gemm_kernel, iterations)

    def initialize_parts(self) -> tuple[str, ...]:
        return tuple(self._module(PRISTINE).initialize_parts)

    def initialize_part_ns(self, variant: str, part: str, iterations: int) -> float:
        w = self.w
        return float(self._module(variant).initialize_part_ns(a=w.a, b=w.b, d=w.d, part=part, iterations=iterations))

    def counts(self, configs: Sequence[tuple[str, str, int]], calls: int) -> dict[str, dict[str, float]]:
        """CUPTI, in this process: the report's CUPTI child calls it (child.child_measure), never the report."""
        from .trace import count_calls

        out: dict[str, dict[str, float]] = {}
        for variant, mode, rotation in configs:
            def count(n: int, v: str = variant, m: str = mode, r: int = rotation) -> dict[str, float]:
                with count_calls() as c:
                    self.bench(v, m, n, 0, r)
                return {key: c.calls(what) for key, what in COUNTED_APIS.items()}

            self.bench(variant, mode, 2, 1, rotation)  # first calls resolve, load and encode once
            out[f"{variant}/{mode}@{rotation}"] = count_per_call(count, calls)
        return out


def count_per_call(count: Callable[[int], dict[str, float]], calls: int) -> dict[str, float]:
    """Per-call counts from count(2N) - count(N): what a benchmark does once (setup, warm-up) cancels."""
    fewer, more = count(calls), count(2 * calls)
    return {group: (more[group] - fewer[group]) / calls for group in COUNTED_APIS}


def runner_for(workload: Any) -> Runner | None:
    """The workload's own runner (a fake's `experiment_runner()`), DeviceRunner on the SM90 stand-in's device
    operands, else None (NVFP4: no rotation, layer or kernel-handle entry points)."""
    make = getattr(workload, "experiment_runner", None)
    if make is not None:
        return make()
    if isinstance(workload, DeviceWorkload) and workload.kind == "sm90":
        return DeviceRunner(workload)
    return None


def count_in_child(ctx: Any) -> dict[str, dict[str, float]] | None:
    """The CUPTI child's share: the ablation's counts on the headline operands (None where nothing is measured)."""
    runner = runner_for(ctx.headline)
    if runner is None:
        return None
    return runner.counts(ablation_count_configs(runner), ctx.plan.count_calls)


def measure(ctx: Any, results: Any, counted: dict[str, dict[str, float]] | None = None) -> dict[str, Any]:
    """The report's step: every experiment on the context's headline operands (SM90 stand-in only); `counted`: the
    CUPTI child's count_in_child (a real runner cannot count in the report's process)."""
    runner = runner_for(ctx.headline)
    if runner is None:
        return {"experiments_status": "not measured: the ablation, layer and in-situ experiments exist for the "
                                      f"SM90 stand-in's device operands only; this run measures "
                                      f"{getattr(ctx.kernel, 'kind', '?')} ({type(ctx.headline).__name__})"}
    if counted is None and isinstance(runner, DeviceRunner):
        raise RuntimeError("needs the ablation counts of the CUPTI child, which it did not return (see its error)")
    return measure_with(runner, ctx.plan, headline=results.headline_samples,
                        counted=counted, timed=frozenset(results.timings or {}))


def measure_in_situ_only(ctx: Any) -> dict[str, Any]:
    """The doctor's share of the experiments: cudaFuncSetAttribute on the GEMM's own kernel (either family: the
    workload calls it), which prices the attribute calls in the attribution."""
    in_situ, spread = measure_in_situ(ctx.headline, ctx.plan, 0)
    return {"in_situ_ns": in_situ, "in_situ_spread_ns": spread}


def headline_blocks(ctx: Any) -> dict[str, Callable[[], dict[str, Any]]]:
    """The ablation's blocks for the report's timings step (timing.measure_headline); none on NVFP4."""
    runner = runner_for(ctx.headline)
    return {} if runner is None else ablation_blocks(runner, ctx.plan.calls, ctx.plan.warmup)

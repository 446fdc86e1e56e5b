"""Analysis of measured numbers: pure functions, no device, no CUPTI.

* counts    per-call API counts from two counting sessions (the harness's fixed calls cancel)
* attribute per phase: counts x unit costs against the measured phase time, with the remainder shown;
            driver calls made inside a runtime call are priced once, through the runtime call
* model     loop time = max(kernel, host) without sync, kernel + host with sync per call
* verdicts  candidates for the issue's 625 us loop, the issue-like shape's loop/kernel, the targets
"""

from __future__ import annotations

import bisect
import math
from collections import Counter, defaultdict
from collections.abc import Sequence
from statistics import fmean, median
from typing import Any

from . import harness
from ._steps import key_of, require
from .vocabulary import BOUNDS, ISSUE, ISSUE_KERNEL_US, ISSUE_LOOP_US, KERNEL_LAUNCH_APIS, SUSPECTS
from .present import fmt
from .results import Results, resolve, row_kernel_us
from .workloads import CountRow, Record

ATTRIBUTION_VARIANTS: tuple[str, ...] = ("original", "patched", "direct", "O0")
ISSUE_PATTERN_KEY = key_of("original", "issue_pattern")
# A timing key with a cudaStreamSynchronize after every call ends in this suffix.
SYNC_SUFFIX = "/sync_each_call"
SYNC_KEY = ISSUE_PATTERN_KEY + SYNC_SUFFIX
ENCODE_API = "cuTensorMapEncodeTiled"

# The K step of the search for a kernel as long as the issue's.
SEARCH_K_STEP = 256


def count_difference(more: list[CountRow], fewer: list[CountRow]) -> dict[tuple[str, str, str], int]:
    """Per (phase, domain, api): calls in the longer session minus calls in the shorter one."""
    table: Counter[tuple[str, str, str]] = Counter()
    for sign, rows in ((1, more), (-1, fewer)):
        for phase, domain, api, n in rows:
            table[(phase, domain, api)] += sign * n
    return {key: n for key, n in table.items() if n != 0}


def counts_entry(difference: dict[tuple[str, str, str], int], calls: int) -> dict[str, Any]:
    per_call: dict[str, dict[str, float]] = defaultdict(dict)
    totals: dict[str, float] = defaultdict(float)
    domains: dict[str, str] = {}
    for (phase, domain, api), n in sorted(difference.items()):
        per_call[phase][api] = per_call[phase].get(api, 0.0) + n / calls
        totals[api] += n / calls
        domains[api] = domain
    return {"calls": calls, "per_call": dict(per_call), "totals": dict(totals), "domains": domains,
            "method": f"calls counted over {2 * calls} GEMM calls minus those over {calls}, divided by {calls}: "
                      "the benchmark harness's own fixed calls cancel"}


# The experiments' in-situ keys (experiments.in_situ_key) for cudaFuncSetAttribute on the GEMM's own kernel.
IN_SITU_GEMM_ATTRIBUTE = ("cudaFuncSetAttribute(GEMM kernel)",
                          "cudaFuncSetAttribute(GEMM kernel, NonPortableClusterSizeAllowed)")


def price_table(unit_costs: dict[str, float], encode_costs: list[dict[str, Any]],
                in_situ_ns: dict[str, float] | None = None) -> dict[str, dict[str, Any]]:
    """API name -> {"probe": the unit-cost measurement that prices it, "ns": its cost}. cudaFuncSetAttribute is
    priced where it is paid, on the GEMM's own kernel (in_situ_ns), when the experiments measured that; the
    empty-kernel probe costs several times less and would leave most of those calls' time unexplained."""
    # A unit-cost probe (measure/trace/unit_costs.cu) named by a bare API name times one call of that API.
    prices = {api: {"probe": api, "ns": ns} for api, ns in unit_costs.items() if api.isidentifier()}
    if encode_costs:
        prices[ENCODE_API] = {"probe": f"mean of the {len(encode_costs)} measured encodes",
                              "ns": fmean([e["ns"] for e in encode_costs])}
    attribute = [ns for name, ns in unit_costs.items() if name.startswith("cudaFuncSetAttribute(")]
    in_situ = [in_situ_ns[k] for k in IN_SITU_GEMM_ATTRIBUTE if k in (in_situ_ns or {})]
    if in_situ:
        prices["cudaFuncSetAttribute"] = {"probe": "cudaFuncSetAttribute on the GEMM's own kernel (in situ, "
                                                   "mean of the two attributes)", "ns": fmean(in_situ)}
    elif attribute:
        prices["cudaFuncSetAttribute"] = {"probe": "mean of the cudaFuncSetAttribute(...) probes",
                                          "ns": fmean(attribute)}
    if "cudaMalloc(0)" in unit_costs:
        prices["cudaMalloc"] = {"probe": "cudaMalloc(0)", "ns": unit_costs["cudaMalloc(0)"]}
    launch = min((name for name in unit_costs if name.startswith("kernel launch")), default=None)
    for api in KERNEL_LAUNCH_APIS if launch else ():
        prices[api] = {"probe": launch, "ns": unit_costs[launch]}
    return prices


def nested_fractions(records: Sequence[Record]) -> dict[str, float]:
    """Per driver API in a timeline: the fraction of its calls made inside a runtime call (same thread)."""
    spans: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for kind, _, start, end, _, thread in records:
        if kind == "runtime":
            spans[thread].append((start, end))
    for s in spans.values():
        s.sort()
    inside, total = Counter[str](), Counter[str]()
    for kind, name, start, end, _, thread in records:
        if kind == "driver":
            total[name] += 1
            s = spans.get(thread, [])
            i = bisect.bisect_right(s, (start, math.inf)) - 1  # the last span that starts at or before this call
            inside[name] += i >= 0 and s[i][1] >= end
    return {name: inside[name] / n for name, n in total.items()}


def attribute_phase(phase: str, per_call: dict[str, float], domains: dict[str, str], measured_us: float,
                    prices: dict[str, dict[str, Any]], nested: dict[str, float] | None) -> dict[str, Any]:
    terms: list[dict[str, Any]] = []
    inside: list[dict[str, Any]] = []
    unpriced: list[dict[str, Any]] = []
    for api, count in sorted(per_call.items()):
        domain = domains.get(api, "runtime")
        # Driver calls made inside runtime calls are priced through the runtime call: the share the variant's
        # timeline saw, else by rule: a driver call with a unit cost of its own (cuTensorMapEncodeTiled,
        # cuDriverGetVersion) is the library's, any other one is the runtime's.
        if domain != "driver":
            within = 0.0
        elif nested is not None and api in nested:
            within = count * nested[api]
        else:
            within = 0.0 if api in prices else count
        own = count - within
        if within > 0:
            inside.append({"api": api, "count": within})
        if own > 0 and api in prices:
            price = prices[api]
            terms.append({"api": api, "count": own, "unit": price["probe"], "unit_ns": price["ns"],
                          "us": own * price["ns"] / 1e3})
        elif own > 0:
            unpriced.append({"api": api, "domain": domain, "count": own})
    explained = sum(t["us"] for t in terms)
    return {"phase": phase, "measured_us": measured_us, "explained_us": explained,
            "remainder_us": measured_us - explained, "terms": terms, "nested": inside, "unpriced": unpriced}


def attribution(results: Results, timelines: dict[str, list[Record]],
                phase_order: Sequence[str]) -> tuple[dict[str, list[dict[str, Any]]], dict[str, dict[str, Any]]]:
    """(the attribution of every variant in the issue's pattern with both counts and timings, the price table it used)."""
    require(results, "unit_costs_ns", "encode_costs")
    prices = price_table(results.unit_costs_ns or {}, results.encode_costs or [], results.in_situ_ns)
    counts, timings = results.counts or {}, results.timings or {}
    out = {}
    for variant in ATTRIBUTION_VARIANTS:
        key = key_of(variant, "issue_pattern")
        if key in counts and key in timings:
            nested = nested_fractions(timelines[variant]) if variant in timelines else None
            per_call, phase_us = counts[key]["per_call"], timings[key]["phase_us"]
            phases = [p for p in phase_order if per_call.get(p) or phase_us.get(p, 0.0) > 0]
            phases += [p for p in per_call if p not in phases]
            out[key] = [attribute_phase(p, per_call.get(p, {}), counts[key]["domains"], phase_us.get(p, 0.0),
                                        prices, nested) for p in phases]
    return out, prices


def median_kernel_us(records: Sequence[Record]) -> float:
    """Median duration of the most frequent kernel in a timeline."""
    kernels = [r for r in records if r[0] == "kernel"]
    if not kernels:
        raise RuntimeError("the CUPTI timeline holds no kernel records")
    name = Counter(r[1] for r in kernels).most_common(1)[0][0]
    return median([(r[3] - r[2]) / 1e3 for r in kernels if r[1] == name])


def next_k(k: int, measured_us: float, target_us: float) -> int:
    """K scaled so the kernel time (about linear in K) hits the target, on the search's K step."""
    if measured_us <= 0:
        raise RuntimeError(f"kernel time {measured_us} us cannot be scaled")
    return max(SEARCH_K_STEP, round(k * target_us / measured_us / SEARCH_K_STEP) * SEARCH_K_STEP)


def model_loop(kernel: float, host: float, sync: bool) -> tuple[float, str]:
    if sync:
        return kernel + host, "kernel + host (host: the same variant and mode without sync)"
    return max(kernel, host), "max(kernel, host)"


def sweep_rows(shape: dict[str, int], kernel: float, timed: Sequence[dict[str, Any]],
               kernel_stored: bool = False) -> list[dict[str, Any]]:
    """Sweep rows at one shape: the report's host and loop times beside the child's kernel time. At the headline
    shape the times are the timings step's and the kernel time the top-level kernel_us: the rows name their timings
    entry ("timings_key") instead of repeating them; `kernel_stored`: the shape's kernel time is stored elsewhere
    (the kernel search's), so the rows leave it out (results.row_kernel_us finds it)."""
    unsynced = {(t["variant"], t["mode"]): t["host_us"] for t in timed if not t["sync_each_call"]}
    rows: list[dict[str, Any]] = []
    for t in timed:
        host = unsynced.get((t["variant"], t["mode"]), t["host_us"])
        model, how = model_loop(kernel, host, t["sync_each_call"])
        times = {"timings_key": t["timings_key"]} if "timings_key" in t else {
            **({} if kernel_stored else {"kernel_us": kernel}), "host_us": t["host_us"], "loop_us": t["loop_us"]}
        rows.append({**shape, "variant": t["variant"], "mode": t["mode"], "sync_each_call": t["sync_each_call"],
                     **times, "model_us": model, "model": how})
    return rows


def relative_records(records: Sequence[Record]) -> list[dict[str, Any]]:
    """A timeline for the JSON: times in us from its first record, in start order."""
    t0 = min((r[2] for r in records), default=0)
    return [{"kind": kind, "name": name, "start_us": (start - t0) / 1e3, "end_us": (end - t0) / 1e3,
             "thread": thread} for kind, name, start, end, _, thread in sorted(records, key=lambda r: r[2])]


def candidate(cause: str, source: Sequence[str | int] | None, gpu: str, missing: str = "") -> dict[str, Any]:
    """A measured candidate names where its host time is stored ("from": a path into the results), never
    repeating it; without one it says why it was not measured."""
    if source is None:
        return {"cause": cause, "measured_on": gpu, "note": f"not measured: {missing or 'see errors'}"}
    return {"cause": cause, "measured_on": gpu, "from": list(source)}


def issue_shape_rows(results: Results) -> list[tuple[int, dict[str, Any]]]:
    """The sweep's rows (index, row) at the shape whose kernel takes about as long as the issue's."""
    chosen = (results.kernel_search or {}).get("chosen")
    return [(i, r) for i, r in enumerate(results.sweep or []) if chosen and all(r[x] == chosen[x] for x in "mnk")]


def issue_shape_ratios(results: Results) -> list[dict[str, Any]]:
    """loop / kernel at the issue-like shape, to set beside the issue's 625 / 91, by the sweep row it is of."""
    return [{"sweep_row": i, "loop_over_kernel": resolve(results.timings or {}, r, "loop_us")
             / row_kernel_us(r, results.kernel_us, results.kernel_search)} for i, r in issue_shape_rows(results)]


def candidates(results: Results, gpu: str) -> list[dict[str, Any]]:
    """The candidates for the issue's 625 us loop around a 91 us kernel, each by where it is measured; readers
    divide by the first (the baseline) for the factor."""
    require(results, "timings:original/issue_pattern")
    no_o0 = (results.variants or {}).get("O0") or "O0/issue_pattern was not timed"
    chosen = (results.kernel_search or {}).get("chosen") or {}
    issue_shape = (f"M={chosen.get('m')} N={chosen.get('n')} K={chosen.get('k')}, "
                   f"kernel {fmt(chosen.get('kernel_us'))} us")
    synced = [["timings", r["timings_key"], "host_us"] if "timings_key" in r else ["sweep", i, "host_us"]
              for i, r in issue_shape_rows(results)
              if (r["variant"], r["mode"], r["sync_each_call"]) == ("original", "issue_pattern", True)]

    def stored(section: str, *path: str) -> list[str] | None:
        return [section, *path] if path[0] in (getattr(results, section) or {}) else None

    rows = [
        candidate("original CUTLASS, host code -O3 (baseline)", stored("timings", ISSUE_PATTERN_KEY, "host_us"), gpu),
        candidate("host code built -O0 (a CMake Debug build)", stored("timings", "O0/issue_pattern", "host_us"), gpu, no_o0),
        candidate("CUPTI API tracing on (a profiler attached)", stored("tracing_cost", "on_host_us"), gpu),
        candidate("-O0 host build and CUPTI tracing together", stored("tracing_cost", "o0_on_host_us"), gpu, no_o0),
        candidate("cudaStreamSynchronize after every call (host waits for each kernel; headline shape)",
                  stored("timings", SYNC_KEY, "host_us"), gpu),
        candidate(f"cudaStreamSynchronize after every call at the issue-like shape ({issue_shape}; includes the wait)",
                  synced[0] if synced else None, gpu,
                  "no shape with an issue-like kernel time was measured"),
    ]
    # What the issue reports, and the host cost per call it implies under either loop model.
    implied = {"without sync (loop = max(kernel, host))": ISSUE_LOOP_US,
               "with sync per call (loop = kernel + host)": ISSUE_LOOP_US - ISSUE_KERNEL_US}
    return rows + [{"cause": "the issue's report (reported there, not measured here)", "source": ISSUE,
                    "measured_on": None, "reported_kernel_us": ISSUE_KERNEL_US, "reported_loop_us": ISSUE_LOOP_US,
                    "reported_ratio": ISSUE_LOOP_US / ISSUE_KERNEL_US, "implied_host_us": implied,
                    "note": "Blackwell/Thor numbers from the issue; this program measured nothing on that machine"}]


# The series' target ratios: (numerator, denominator) blocks of the timings step's rounds.
TARGET_RATIOS: dict[str, tuple[str, str]] = {
    "patched_vs_kept_gemm": ("patched/issue_pattern", "original/kept_gemm"),
    "run_stream_vs_bare_launch": ("patched/kept_gemm", "original/bare_launch"),
    "run_stream_vs_bare_cluster_launch": ("patched/kept_gemm", "original/bare_cluster_launch"),
    # The floor run(stream) is held to: the driver's own launch of the same kernel with the same Params.
    "run_stream_vs_kernel_launch": ("patched/kept_gemm", "original/kernel_launch"),
}


def targets(results: Results) -> dict[str, Any]:
    """Each target ratio, taken round by round over the timings step's rounds (median and IQR)."""
    require(results, "headline_samples:host_us:original/issue_pattern", "headline_samples:host_us:patched/issue_pattern",
            "headline_samples:host_us:original/kept_gemm")
    samples = (results.headline_samples or {})["host_us"]
    return {name: harness.ratio(samples, num, den).as_dict() for name, (num, den) in TARGET_RATIOS.items()
            if num in samples and den in samples}


# Calls in one steady-state call that make the host wait for the GPU.
SYNCHRONIZING_APIS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaMemcpy")


def noise_half_width(results: Results) -> float:
    """The smallest relative effect this run resolves: the A/A ratio's farthest quartile from 1 (0 if unknown)."""
    noise = (results.noise_floor or {}).get("headline") or {}
    return max(abs(noise["q1"] - 1.0), abs(noise["q3"] - 1.0)) if "q1" in noise else 0.0


def suspect_row(what: str, ratio: dict[str, float] | None, base_us: float | None, half: float, how: str,
                missing: str = "", unit: str = "us per call") -> dict[str, Any]:
    """One suspect: its effect in `unit` (host us per call, or what its own baseline measures) when it lies outside
    the noise floor, else "no measurable effect" (never a negative cost)."""
    if ratio is None or base_us is None:
        return {"suspect": what, "effect_us": None, "reading": f"not measured: {missing or 'see errors'}", "how": how}
    change = ratio["median"] - 1.0
    row = {"suspect": what, "ratio": ratio, "how": how}
    if abs(change) <= half:
        return {**row, "effect_us": None,
                "reading": f"no measurable effect (x{ratio['median']:.3f}, within the run's noise floor of "
                           f"+/-{100 * half:.1f}%)"}
    sign = "adds" if change > 0 else "saves"
    return {**row, "effect_us": change * base_us,
            "reading": f"{sign} {abs(change) * base_us:.2f} {unit} (x{ratio['median']:.3f})"}


def suspect_rows(results: Results, half: float) -> list[dict[str, Any]]:
    """The suspects the common steps measured: -O0 host code and a sync per call (per-round ratios in the
    timings step's rounds), a profiler attached (the CUPTI child's traced time over this process's); then the
    suspects step's readings (suspects.py), each against its own baseline."""
    samples = (results.headline_samples or {}).get("host_us") or {}
    base = (results.timings or {}).get(ISSUE_PATTERN_KEY, {}).get("host_us")

    def per_round(key: str) -> dict[str, float] | None:
        return harness.ratio(samples, key, ISSUE_PATTERN_KEY).as_dict() if key in samples and ISSUE_PATTERN_KEY in samples else None

    rows = [suspect_row(SUSPECTS["O0"], per_round("O0/issue_pattern"), base, half,
                        "the O0 build of the same source, in the same rounds",
                        (results.variants or {}).get("O0") or "the O0 variant was not timed"),
            suspect_row(SUSPECTS["sync"], per_round(SYNC_KEY), base, half,
                        "the same pattern with a sync after each call, in the same rounds (includes the kernel wait)")]
    tracing = results.tracing_cost or {}
    on, untraced = tracing.get("on_host"), (tracing.get("residue_check") or {}).get("before_any_cupti_host")
    ratio = None
    if on and untraced:  # one process, separate loops, no rounds to pair: the quartiles bound the ratio
        ratio = {"median": on["median"] / untraced["median"], "q1": on["q1"] / untraced["q3"],
                 "q3": on["q3"] / untraced["q1"]}
    rows.append(suspect_row(SUSPECTS["profiler"], ratio, untraced["median"] if untraced else None, half,
                            "the CUPTI child's host time with tracing on over its own before any CUPTI use "
                            "(one process, a ratio of medians)"))
    found = results.suspects or {}
    for name in ("allocation", "copy_load", "kernel_load"):
        s = found.get(name)
        if s:
            # Each is priced in its baseline's own unit ("loop us per iteration" for the allocation, timed as a loop).
            rows.append(suspect_row(s["suspect"], s["ratio"], s["baseline"]["median"], half,
                                    f"{s['unit']}, with and without it, in interleaved rounds",
                                    unit=s["unit"].split(" (")[0]))
    first = found.get("first_call")
    if first:
        once = first["first_us"] - first["second_us"]
        rows.append({"suspect": first["suspect"], "effect_us": None, "once_us": once,
                     "reading": f"{once:.0f} us once per process (first call {first['first_us']:.0f} us, second "
                                f"{first['second_us']:.0f} us; context creation {first['context_creation_us']:.0f} us): "
                                "a per-iteration number over N iterations carries once_us / N of it",
                     "how": "a fresh process"})
    return rows


def host_parts(attribution: dict[str, Any], host: float) -> list[dict[str, Any]]:
    """The host time of one call, phase by phase (the attribution of original/issue_pattern): counts x unit costs where
    priced, the rest of each phase, and what lies outside the phases; the parts add up to `host`."""
    parts: list[dict[str, Any]] = []
    inside = 0.0
    for row in attribution.get(ISSUE_PATTERN_KEY) or []:
        inside += row["measured_us"]
        for t in row["terms"]:
            parts.append({"part": f"{row['phase']}: {fmt(t['count'])} x {t['api']} (count x unit cost)", "us": t["us"]})
        parts.append({"part": f"{row['phase']}: rest of the phase", "us": row["remainder_us"]})
    parts.append({"part": "outside the phases (the loop, and the phase medians' difference from the total's)",
                  "us": host - inside})
    return parts


def verdict(results: Results) -> dict[str, Any]:
    """What bounds the issue's pattern at this shape, where its host time (timings original/issue_pattern) goes, and each
    suspect's effect, largest first; the report and the doctor print it from the same results (present.verdict_text)."""
    require(results, "timings:original/issue_pattern")
    pattern = (results.timings or {})[ISSUE_PATTERN_KEY]
    host, loop, kernel = pattern["host_us"], pattern["loop_us"], results.kernel_us
    totals = ((results.counts or {}).get(ISSUE_PATTERN_KEY) or {}).get("totals") or {}
    syncs = sum(totals.get(api, 0.0) for api in SYNCHRONIZING_APIS)
    host_bound, gpu_bound, sync_bound, host_path_only, unknown = BOUNDS
    if results.kernel == "nvfp4_hopper":
        bound = host_path_only
    elif kernel is None:
        bound = unknown
    elif syncs > 0 and loop >= 0.8 * (host + kernel):
        bound = sync_bound
    else:
        bound = host_bound if host >= kernel else gpu_bound
    half = noise_half_width(results)
    suspects = suspect_rows(results, half)
    suspects.sort(key=lambda r: -(r["effect_us"] if r.get("effect_us") is not None else -math.inf))
    parts = host_parts(results.attribution or {}, host)
    return {"bound": bound, "synchronizing_calls": syncs, "noise_half_width": half, "parts": parts,
            "parts_sum_us": sum(p["us"] for p in parts), "suspects": suspects}

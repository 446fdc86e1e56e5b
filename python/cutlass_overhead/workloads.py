"""What the report and the doctor measure, as protocols: the plan (how long), the shape, a GEMM problem with its
operands (Workload), the GEMM family (Kernel), CUPTI and the probes (Backend), and the Context that holds them.

The real implementations are in device.py (the package's own device buffers, no torch); tests/fakes.py implements
the same protocols without a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

Record = tuple[str, str, int, int, int, int]  # (kind, name, start_ns, end_ns, correlation, thread)
CountRow = tuple[str, str, str, int]  # (phase, domain, api, count)
ChildRunner = Callable[[dict[str, Any]], dict[str, Any]]  # the CUPTI child's request -> its JSON output


@dataclass(frozen=True)
class Plan:
    """Iteration counts. `calls` stays well below the CUDA launch queue's depth (about a thousand
    pending launches), so a loop whose kernels outlast its host code still measures the host code."""

    quick: bool
    rounds: int  # interleaved rounds per timing (harness.interleaved): its median and IQR
    calls: int  # timed calls per loop
    warmup: int  # untimed calls before each loop
    count_calls: int  # N in the counting difference (2N calls minus N calls)
    unit_iterations: int  # calls per unit-cost probe
    attribute_calls: int  # calls per cudaFuncSetAttribute or initialize()-part probe (experiments)
    layer_calls: int  # layer calls per layer sample, 4 launches each (experiments)
    kernel_calls: int  # kept-Gemm calls in the CUPTI timeline that gives the kernel time
    timeline_calls: int  # calls of the pattern in the timeline plot
    sweep_nk: tuple[int, ...]  # N = K values of the sweep
    search_steps: int  # kernel measurements spent finding a kernel as long as the issue's
    profile: str = "report"  # which steps run: PROFILES

    def runs(self, step: str) -> bool:
        return step in PROFILES[self.profile]


# One pipeline, two front ends: the steps beyond the common ones (timings at one shape, unit costs, the CUPTI
# child's counts, kernel time, encodes and tracing cost, encode costs, the attribution) that each profile runs.
# The report: the full profile. The doctor: the user's shape and the suspects (suspects.py), in under a minute.
PROFILES: dict[str, frozenset[str]] = {
    "report": frozenset({"torch", "sweep", "search", "timelines", "experiments", "candidates"}),
    "doctor": frozenset({"in_situ", "suspects"}),
    # The doctor with --every-config: also every built config × epilogue at the user's N and K (configs.py).
    "every-config": frozenset({"in_situ", "suspects", "configs"}),
}


def make_plan(quick: bool, profile: str = "report") -> Plan:
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
    if quick:
        return Plan(True, rounds=5, calls=128, warmup=10, count_calls=10, unit_iterations=128, attribute_calls=256,
                    layer_calls=16, kernel_calls=20, timeline_calls=3, sweep_nk=(1024, 4096), search_steps=2,
                    profile=profile)
    return Plan(False, rounds=15, calls=256, warmup=20, count_calls=25, unit_iterations=256, attribute_calls=1024,
                layer_calls=48, kernel_calls=20, timeline_calls=3, sweep_nk=(1024, 2048, 4096, 8192), search_steps=4,
                profile=profile)


@dataclass(frozen=True)
class Shape:
    m: int
    n: int
    k: int

    def as_dict(self) -> dict[str, int]:
        return {"m": self.m, "n": self.n, "k": self.k}

    def label(self) -> str:
        return f"M={self.m} N={self.n} K={self.k}"


class Workload(Protocol):
    """One GEMM problem with its operands on the device, callable through any variant."""

    shape: Shape

    def bench(self, variant: str, mode: str, iterations: int, warmup: int, sync: bool = False,
              capture: bool = False) -> dict[str, Any]:
        """`iterations` calls in `mode`; `capture` records each into a graph that is never launched (SM90 only)."""
        ...

    def run(self, variant: str) -> None: ...

    def sync(self) -> None: ...

    def params_bytes(self, variant: str) -> int: ...

    def func_attribute_ns(self, attribute: str, gemm_kernel: bool, iterations: int) -> float:
        """Mean host ns of cudaFuncSetAttribute as the adapter calls it, on this GEMM's kernel or an empty one."""
        ...

    def allocate(self, nbytes: int) -> object:
        """A device buffer of `nbytes`, freed when the last reference to it goes (cudaMalloc, cudaFree)."""
        ...


class Kernel(Protocol):
    """The GEMM family measured (SM90 stand-in or the issue's NVFP4 code) and the workloads it makes."""

    kind: str
    variants: tuple[str, ...]

    @property
    def modes(self) -> frozenset[str]:
        """The benchmark modes its builds run (the module's `modes`, stated in C++ where bench refuses the others)."""
        ...

    def unsupported(self, shape: Shape) -> str | None: ...

    def make(self, shape: Shape, silu: bool = False, bias: bool = False) -> Workload: ...

    def config_built(self, m: int, silu: bool, bias: bool) -> bool:
        """Whether this build holds the kernel for M with this epilogue (the SM90 stand-in: plain epilogue only)."""
        ...

    def config_name(self, m: int) -> str:
        """The config the issue's M-based dispatch picks for M ("M<m>" on the SM90 stand-in, which has one)."""
        ...

    def workspace_bytes(self, shape: Shape, silu: bool = False, bias: bool = False) -> int: ...


class Backend(Protocol):
    """CUPTI and the unit-cost probes (cutlass_overhead._trace). The report's own process calls only
    phase_names, unit_cost_names, unit_cost_ns and encode_cost_ns, none of which touches CUPTI; count,
    timeline and captured_encodes run in the CUPTI child."""

    def count(self, fn: Callable[[], object]) -> list[CountRow]: ...

    def timeline(self, fn: Callable[[], object]) -> list[Record]: ...

    def phase_names(self) -> list[str]: ...

    def unit_cost_names(self) -> list[str]: ...

    def unit_cost_ns(self, name: str, iterations: int) -> float: ...

    def captured_encodes(self) -> list[dict[str, Any]]: ...

    def encode_cost_ns(self, inputs: dict[str, Any], iterations: int) -> float: ...

    def load(self, copies: bool, nbytes: int, ms: float) -> Any:
        """Work in flight on another stream (pinned copies of `nbytes`, or a spinning kernel) for about `ms`;
        the object has in_flight() and copy_ms, and waits for the load when it is dropped."""
        ...


@dataclass
class Context:
    plan: Plan
    kernel: Kernel
    backend: Backend
    headline: Workload
    gpu: str
    torch_timer: Callable[[Shape, Plan], dict[str, Any]] | None = None
    # Runs the CUPTI measurements (child.child_measure) and returns their JSON. The CLI passes
    # child.subprocess_child; None runs them in this process (child.in_process_child), which only fakes may do.
    cupti_child: ChildRunner | None = None
    # Runs the first-call probe (suspects.first_call_child) in a fresh process and returns its JSON; the CLI
    # passes suspects.subprocess_first_call. None: the suspect is not measured.
    fresh_process: ChildRunner | None = None

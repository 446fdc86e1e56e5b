"""Break checks for CPU tests that were rewritten to test what their names say: each is run once against a
deliberately broken input or code (one text substitution in a file of this checkout, undone afterwards) and
must fail there. Runs on any machine with the package installed in editable mode (no GPU needed).

    python scripts/cpu_break_checks.py OUT_LOG
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

# (file, text to replace, replacement, test that must fail, what is broken)
CHECKS: list[tuple[str, str, str, str, str]] = [
    ("tests/test_validation.py", "ops = sm90_ops(c=stub((128, 256), device_type=DLPACK_CPU))",
     "ops = sm90_ops(c=stub((128, 256)))",
     "tests/test_validation.py::test_sm90_rejects_host_arrays",
     "input: the array the test calls host memory is a device array"),
    ("python/cutlass_overhead/_variants.py", 'reason = f"; libcuda.so.1 could not be loaded: {libcuda_error}"',
     'reason = f"; {libcuda_error}"',
     "tests/test_build.py::test_each_variant_loads_if_built_else_says_how_to_build_it",
     "code: an import failure no longer says that libcuda.so.1 could not be loaded"),
    ("python/cutlass_overhead/analysis.py", "    if in_situ:\n",
     "    if False:\n",
     "tests/test_report_cpu.py::test_attribute_calls_are_priced_on_the_gemm_kernel_when_measured_there",
     "code: the attribution prices attribute calls on the empty kernel although the in-situ cost is there"),
    ("python/cutlass_overhead/experiments.py",
     "    parts, parts_spread = measure_initialize_parts(runner, plan, seed)\n",
     "    parts, parts_spread = {}, {}\n",
     "tests/test_experiments.py::test_initialize_parts_are_timed_per_variant_with_their_spread",
     "code: the experiments step no longer times the pieces of initialize()"),
]


def main() -> int:
    out = Path(sys.argv[1])
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO, capture_output=True,
                            text=True).stdout.strip() or "?"
    log, status = [f"# cpu_break_checks.py at commit {commit}, Python {sys.version.split()[0]}", ""], 0
    for rel, old, new, test, what in CHECKS:
        path = REPO / rel
        original = path.read_text()
        if original.count(old) != 1:
            log.append(f"## {test}\n=> NOT RUN: the text to break is not in {rel} exactly once")
            status = 1
            continue
        try:
            path.write_text(original.replace(old, new))
            done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
                                  cwd=REPO, capture_output=True, text=True)
        finally:
            path.write_text(original)
        failed = bool(re.search(r"^FAILED ", done.stdout, re.M)) or " failed" in done.stdout.splitlines()[-1]
        log.append(f"## {test}\nbroken: {what} ({rel})\n" + done.stdout[-1500:]
                   + f"\n=> {'as expected, it failed' if failed else 'NOT AS EXPECTED: it passed'}\n")
        status |= not failed
    log.append(f"## result: {'PASS' if status == 0 else 'FAIL'}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(log) + "\n")
    print("\n".join(line for line in "\n".join(log).splitlines() if line.startswith(("##", "=>"))))
    return status


if __name__ == "__main__":
    raise SystemExit(main())

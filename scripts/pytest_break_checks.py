"""Break checks for the GPU tests that name a behaviour of the patch series: each test must fail on a build
without that behaviour. The "broken builds" are the per-commit ablation variants the package builds with
CO_BUILD_ABLATION=ON (the series up to an earlier commit): tests/conftest.py loads one of them wherever a test
asks for the SM90 "patched" module (CO_TEST_VARIANT_MAP), or the patched module where a test asks for the
pristine one. Needs an SM90 GPU and the package installed with the ablation variants.

    python scripts/pytest_break_checks.py OUT_LOG

Writes the log (stamped: GPU, commit, series) and exits 1 unless every check failed where expected.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
OVERHEAD = "tests/test_overhead.py"

# (variant map: broken module in place of a variant, by the number of the last patch it has, or "patched";
#  tests that must fail; what is missing)
CHECKS: list[tuple[dict[str, str], list[str], str]] = [
    ({"patched": "pr4-kernel-attributes-once"}, [f"{OVERHEAD}::test_overhead_patched_steady_state_counts"],
     "the opt-in Params reuse (PR 5): run(args) encodes the 4 descriptors again"),
    ({"patched": "pr3-entry-points-once"}, [f"{OVERHEAD}::test_overhead_patched_steady_state_counts",
                           "tests/test_experiments_gpu.py::test_initialize_parts_time_the_piece_they_name[patched-0]"],
     "the kernel attributes set once (PR 4) and the Params reuse (PR 5)"),
    ({"patched": "pr1-portable-clusters"}, [f"{OVERHEAD}::test_overhead_patched_steady_state_counts"],
     "the entry points looked up once (PR 3) and everything after it"),
    ({"original": "patched"}, [f"{OVERHEAD}::test_overhead_original_counts_match_the_source_reading",
                               f"{OVERHEAD}::test_overhead_floor_calls_only_the_launch_and_its_attribute"],
     "pristine CUTLASS (the tests' counts of the source reading and of the kept Gemm's attribute call)"),
]


# Observed, no failure expected: whether a build captures the pattern in the default (global) capture mode.
OBSERVE: list[tuple[dict[str, str], list[str], str]] = [
    ({"patched": "original"}, [f"{OVERHEAD}::test_overhead_graph_capture_and_replay[patched-global]"],
     "pristine CUTLASS captured in global mode"),
    ({"patched": "pr1-portable-clusters"}, [f"{OVERHEAD}::test_overhead_graph_capture_and_replay[patched-global]"],
     "PR 1 alone (attribute calls still made) captured in global mode"),
]


def run(variant_map: dict[str, str], tests: list[str], log: list[str]) -> set[str]:
    """Runs the tests with the map; returns the ids that failed."""
    env = dict(os.environ, CO_TEST_VARIANT_MAP=",".join(f"{k}={v}" for k, v in variant_map.items()))
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *tests],
                          cwd=REPO, env=env, capture_output=True, text=True)
    log.append(done.stdout[-6000:] + done.stderr[-2000:])
    return set(re.findall(r"^FAILED (\S+)", done.stdout, re.M))


def main() -> int:
    out = Path(sys.argv[1])
    from cutlass_overhead._variants import ablation_variants

    # Keyed by the PR folder of the prefix's last patch: each PR's last header-changing commit ends one prefix.
    by_patch = {str(v["last"]).split("/", 1)[0]: str(v["variant"]) for v in ablation_variants()}
    stamp = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True).stdout.strip()
    log = [f"# pytest_break_checks.py on {os.uname().nodename}: {datetime.now(timezone.utc):%Y-%m-%dT%H:%M:%SZ}",
           f"# GPU, driver: {stamp}", f"# commit: {os.environ.get('CO_GIT_COMMIT', '?')}",
           f"# ablation variants (last patch -> variant): {by_patch}", ""]
    status = 0
    for mapping, tests, what in CHECKS:
        resolved = {k: (v if v in ("patched", "original") else by_patch.get(v, "")) for k, v in mapping.items()}
        log.append(f"## {', '.join(f'{k} -> {v} (up to {mapping[k]})' for k, v in resolved.items())}: without {what}")
        if not all(resolved.values()):
            log.append(f"=> NOT RUN: no ablation variant ends at {mapping} in this build")
            status = 1
            continue
        failed = run(resolved, tests, log)
        missing = [t for t in tests if t not in failed]
        log.append(f"=> {'as expected, failed: ' + ' '.join(sorted(failed)) if not missing else 'NOT AS EXPECTED: did not fail: ' + ' '.join(missing)}")
        log.append("")
        status |= bool(missing)
    for mapping, tests, what in OBSERVE:
        resolved = {k: (v if v in ("patched", "original") else by_patch.get(v, "")) for k, v in mapping.items()}
        log.append(f"## observed only: {what}")
        if all(resolved.values()):
            failed = run(resolved, tests, log)
            log.append(f"=> observed: {'failed: ' + ' '.join(sorted(failed)) if failed else 'passed'}")
        log.append("")
    log.append(f"## result: {'PASS' if status == 0 else 'FAIL'}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(log) + "\n")
    print("\n".join(line for line in log if line.startswith(("#", "=>"))))
    return status


if __name__ == "__main__":
    raise SystemExit(main())

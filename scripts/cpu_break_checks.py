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
    # cutlass-overhead-doctor --inspect (python/cutlass_overhead/inspect_binary.py)
    ("tests/test_inspect_binary.py", '    found = inspect(builds["O0"])\n', '    found = inspect(builds["O3"])\n',
     "tests/test_inspect_binary.py::test_debug_info_producer_says_O0",
     "input: the test that names the -O0 build is pointed at the -O3 one"),
    ("python/cutlass_overhead/inspect_binary.py", "return _from_producers(elf) or _from_symbols(elf)",
     "return _from_symbols(elf)",
     "tests/test_inspect_binary.py::test_debug_info_producer_says_O3",
     "code: the DWARF producer lines are not read"),
    ("python/cutlass_overhead/inspect_binary.py", 'return (levels[-1] or "1") if levels else "0"',
     'return (levels[-1] or "1") if levels else "2"',
     "tests/test_inspect_binary.py::test_producer_level",
     "code: a gcc producer without -O (gcc's default, -O0) is taken as optimised"),
    ("python/cutlass_overhead/inspect_binary.py", 'if match and s["st_info"]["type"] == "STT_FUNC"',
     'if match and s["st_info"]["bind"] == "STB_WEAK" and s["st_info"]["type"] == "STT_FUNC"',
     "tests/test_inspect_binary.py::test_without_debug_info_the_symbol_table_decides",
     "code: only weak symbols count, so a -fvisibility=hidden shared object's local ones are missed"),
    ("python/cutlass_overhead/inspect_binary.py", '    if table == ".symtab":\n', '    if True:\n',
     "tests/test_inspect_binary.py::test_stripped_cannot_tell_and_asks_for_the_compile_line",
     "code: a stripped file (no .symtab) is called optimised"),
    ("python/cutlass_overhead/doctor.py", "        return inspect_binary.main(rest[0], PROG)\n",
     "        inspect_binary.main(rest[0], PROG)\n        return 0\n",
     "tests/test_inspect_binary.py::test_cli_prints_verdict_and_evidence_and_exits_with_the_verdict",
     "code: --inspect exits 0 whatever it found"),
    ("python/cutlass_overhead/inspect_binary.py", "    except (ELFError, DWARFError) as error:\n",
     "    except DWARFError as error:\n",
     "tests/test_inspect_binary.py::test_cli_bad_file_is_one_line",
     "code: a file that is not ELF ends in pyelftools' traceback"),
    # the doctor: the report's pipeline with the doctor's profile (python/cutlass_overhead/doctor.py)
    ("python/cutlass_overhead/doctor.py",
     '        parsed = [extent(name, text) for name, text in zip(("M", "N", "K", "CALLS"), args.shape)]\n',
     "        parsed = [int(text) for text in args.shape]\n",
     "tests/test_doctor.py::test_bad_arguments_get_one_line_before_any_gpu",
     "code: the doctor's sizes are not checked before it looks for a GPU"),
    ("python/cutlass_overhead/workloads.py", '    "doctor": frozenset({"in_situ", "suspects"}),\n',
     '    "doctor": frozenset({"in_situ", "suspects", "sweep"}),\n',
     "tests/test_doctor.py::test_the_doctor_profile_runs_its_steps_and_no_others",
     "code: the doctor's profile also runs the report's sweep"),
    ("python/cutlass_overhead/child.py", ', "--profile", args.profile]', "]",
     "tests/test_doctor.py::test_the_doctors_child_runs_with_the_doctors_profile",
     "code: the doctor's CUPTI child runs the report's profile"),
    ("python/cutlass_overhead/analysis.py", "    if abs(change) <= half:\n", "    if False:\n",
     "tests/test_doctor.py::test_a_suspect_within_the_noise_floor_reads_no_measurable_effect_never_a_cost",
     "code: a suspect inside the noise floor is shown as a cost"),
    ("python/cutlass_overhead/analysis.py", '                  "us": host - inside})', '                  "us": 0.0})',
     "tests/test_doctor.py::test_the_time_outside_the_phases_is_a_part_of_its_own",
     "code: the time outside the phases is left out of the parts"),
    # the report's sizes (python/cutlass_overhead/report.py)
    ("python/cutlass_overhead/report.py", "    if value < 1:\n", "    if value < 0:\n",
     "tests/test_report_cpu.py::test_report_rejects_a_non_positive_size_in_one_line",
     "code: a size of 0 is accepted"),
    # the GEMM wrappers' argument types (python/cutlass_overhead/__init__.py)
    ("python/cutlass_overhead/__init__.py", 'if not hasattr(value, "__dlpack__") and not',
     'if False and not',
     "tests/test_validation.py::test_sm90_rejects_what_is_no_argument_of_its_kind_in_one_line",
     "code: lists, None and strings reach nanobind"),
    ("python/cutlass_overhead/__init__.py", "    if not 0 <= handle < 1 << 64:\n", "    if False:\n",
     "tests/test_validation.py::test_nvfp4_rejects_what_is_no_argument_of_its_kind_in_one_line",
     "code: stream=-1 reaches nanobind"),
    # the stamp's CPU model (python/cutlass_overhead/stamp.py)
    ("python/cutlass_overhead/stamp.py", '    if listed.get("Model name", "-") != "-":\n', "    if False:\n",
     "tests/test_report_cpu.py::test_stamp_reads_the_cpu_model_on_x86_and_aarch64",
     "code: lscpu's model name is not read on aarch64"),
    ("python/cutlass_overhead/stamp.py", '    if "CPU implementer" in info and "CPU part" in info:\n', "    if False:\n",
     "tests/test_report_cpu.py::test_stamp_reads_the_cpu_model_on_x86_and_aarch64",
     "code: without lscpu, aarch64's implementer and part ids are not read"),
    # the NVFP4 counts, stated once (tests/nvfp4_counts.py)
    ("tests/test_nvfp4.py", "from nvfp4_counts import COUNTERS, per_call\n",
     "from nvfp4_counts import per_call\nCOUNTERS = ('encodes', 'lookups')\n",
     "tests/test_nvfp4_counts.py::test_blackwell_and_host_path_tests_take_their_counts_from_one_place",
     "input: the Blackwell test states its own counters again"),
    ("tests/nvfp4_counts.py", '"encodes": {"initialize": d, "run": 0}', '"encodes": {"initialize": 0, "run": 0}',
     "tests/test_nvfp4_counts.py::test_the_patch_series_leaves_the_encodes_of_initialize",
     "code: the expectation says the patched build encodes nothing (what test_nvfp4.py asserted)"),
    ("docs/hooks/derived.py", 'out[pr] = (out[pr][0] if pr in out else previous, str(v["variant"]))',
     'out[pr] = (previous, str(v["variant"]))',
     "tests/test_docs.py::test_ablation_steps_per_pr_span_all_its_commits",
     "code: a PR's step is its last commit's alone"),
    # the results schema: each quantity stored once (python/cutlass_overhead/results.py)
    ("python/cutlass_overhead/analysis.py",
     '        times = {"timings_key": t["timings_key"]} if "timings_key" in t else {',
     '        times = {} if False else {',
     "tests/test_report_cpu.py::test_a_quantity_is_stored_once_and_named_where_it_is_needed_again",
     "code: the sweep repeats the timings step's host and loop times at the headline shape"),
    ("python/cutlass_overhead/analysis.py",
     '    synced = [["timings", r["timings_key"], "host_us"] if "timings_key" in r else ["sweep", i, "host_us"]',
     '    synced = [["sweep", i, "host_us"]',
     "tests/test_report_cpu.py::test_an_issue_like_shape_that_is_the_headline_is_read_from_the_timings",
     "code: the synced candidate names a sweep row that holds no host time (the headline's names the timings)"),
    ("python/cutlass_overhead/results.py", "            if name in self.set_by_steps:\n",
     "            if False:\n",
     "tests/test_report_cpu.py::test_a_section_is_set_once",
     "code: a second value for a section replaces the first"),
    ("python/cutlass_overhead/compare_reading.py",
     'return NVFP4_REFERENCE if str(reading.get("kernel", "")).startswith("nvfp4") else REFERENCE',
     'return REFERENCE',
     "tests/test_compare_reading.py::test_an_nvfp4_reading_compares_with_the_nvfp4_host_path_reading",
     "code: every reading compared with the SM90 stand-in"),
    ("python/cutlass_overhead/analysis.py",
     'on, untraced = tracing.get("on_host"), (tracing.get("residue_check") or {}).get("before_any_cupti_host")',
     'on, untraced = tracing.get("on_host"), (results.timings or {}).get(ISSUE_PATTERN_KEY, {}).get("host")',
     "tests/test_doctor.py::test_the_profiler_suspect_is_a_ratio_within_the_cupti_childs_own_process",
     "code: the profiler suspect divides the child's traced time by the parent's untraced time"),
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

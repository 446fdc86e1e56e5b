"""Derived values: the arithmetic the pages quote on a run's results (never typed in a page)."""

from __future__ import annotations

from typing import Any

from .vocabulary import V

# The series' targets (issue 8 of this repository), set before any measurement: the patched run(stream) at most
# this many times a bare launch with a Params-sized argument block.
TARGETS = {"run_stream_vs_bare_launch": 1.2}


def group_of(api: str, domain: str | None = None) -> str:
    return V.group_of(api, domain).slug


def derive(results: dict[str, Any]) -> dict[str, Any]:
    d: dict[str, Any] = {"calls": {}}
    for key, entry in (results.get("counts") or {}).items():
        domains = entry.get("domains") or {}
        d["calls"][key] = {"total": V.calls_by_group(entry.get("totals") or {}, domains)}
        for phase, per_api in (entry.get("per_call") or {}).items():
            d["calls"][key][phase] = V.calls_by_group(per_api, domains)
    for row in results.get("candidates") or []:
        if "reported_loop_us" in row:
            implied = list((row.get("implied_host_us") or {}).values())
            base = (results.get("timings") or {}).get("original/issue_pattern", {}).get("host_us")
            factors = [host / base for host in implied] if base else []  # the issue's implied host time over ours
            d["issue"] = {"kernel_us": row["reported_kernel_us"], "loop_us": row["reported_loop_us"],
                          "implied_host_max_us": max(implied, default=None),
                          "implied_host_min_us": min(implied, default=None),
                          "factor_min": min(factors, default=None)}
    timings = results.get("timings") or {}
    if "O0/issue_pattern" in timings and "original/issue_pattern" in timings:  # -O0 against -O3 host code, the same source
        o3, o0 = timings["original/issue_pattern"]["host_us"], timings["O0/issue_pattern"]["host_us"]
        d["o0"] = {"o3_host_us": o3, "o0_host_us": o0, "factor": o0 / o3}
    # Each variant's kernel duration in the CUPTI timelines (median of the calls recorded).
    d["timeline_kernel_us"] = {}
    for entry in results.get("timeline") or []:
        kernels = sorted(r["end_us"] - r["start_us"] for r in entry.get("records") or []
                         if r.get("kind") == "kernel")
        if kernels:
            d["timeline_kernel_us"][entry["variant"]] = kernels[len(kernels) // 2]
    sweep = results.get("sweep") or []
    errors = [abs(r["loop_us"] - r["model_us"]) / r["loop_us"] * 100.0 for r in sweep if r.get("loop_us")]
    if errors:
        d["sweep"] = {"max_model_error_pct": max(errors), "rows": len(sweep),
                      "shapes": len({(r["m"], r["n"], r["k"]) for r in sweep})}
    encodes = [e["ns"] for e in results.get("encode_costs") or []]
    if encodes:
        d["encodes"] = {"count": len(encodes), "min_ns": min(encodes),
                        "max_ns": max(encodes)}
    d["price_ns"] = {api: p["ns"] for api, p in (results.get("attribution_prices") or {}).items()}
    # The unit price of the API each group is counted by in the original pattern (runtime APIs first).
    pattern = (results.get("counts") or {}).get("original/issue_pattern") or {}
    pattern_domains = pattern.get("domains") or {}
    d["unit_for"] = {}
    for api in sorted(pattern.get("totals") or {}, key=lambda a: pattern_domains.get(a) != "runtime"):
        slug = group_of(api, pattern_domains.get(api))
        if slug not in d["unit_for"] and api in d["price_ns"]:
            d["unit_for"][slug] = d["price_ns"][api]
    d["attribution"] = {}
    for key, rows in (results.get("attribution") or {}).items():
        measured = sum(r["measured_us"] for r in rows)
        explained = sum(r["explained_us"] for r in rows)
        by_group = dict.fromkeys(V.GROUP_SLUGS, 0.0)
        for r in rows:
            for t in r["terms"]:
                by_group[group_of(t["api"])] += t["us"]
        descriptors = sum(by_group[g] for g in V.DESCRIPTOR_GROUPS)
        d["attribution"][key] = {"measured_us": measured, "explained_us": explained,
                                 "remainder_us": measured - explained,
                                 "explained_pct": 100.0 * explained / measured if measured else None,
                                 "by_group_us": by_group, "descriptors_us": descriptors,
                                 "blamed_us": descriptors + by_group["func_attributes"],
                                 "rest_init_run_us": sum(r["remainder_us"] for r in rows
                                                         if r["phase"] in ("initialize", "run"))}
    # The bound: what the calls the issue blames (and the attribute calls beside them) cost per call here,
    # and how much slower each would have to be on the issue's machine to make its implied host time.
    pattern_attr = d["attribution"].get("original/issue_pattern")
    issue = d.get("issue")
    if pattern_attr and issue and pattern_attr["blamed_us"]:
        d["bound"] = {"descriptors_us": pattern_attr["descriptors_us"], "blamed_us": pattern_attr["blamed_us"],
                      "func_attributes_us": pattern_attr["by_group_us"]["func_attributes"],
                      "slowdown_min": issue["implied_host_min_us"] / pattern_attr["blamed_us"],
                      "descriptors_per_call": d["calls"]["original/issue_pattern"]["total"]["encodes"],
                      "per_descriptor_ns": 1e3 * pattern_attr["descriptors_us"]
                      / max(d["calls"]["original/issue_pattern"]["total"]["encodes"], 1.0)}
    d["ablation_steps"] = ablation_steps(results)
    d["ablation_variant"] = ablation_variant_by_patch(results)
    d["targets"] = TARGETS
    return d


def ablation_steps(results: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per operand mode, each build's change against the build before it, in points of the pristine host time:
    100 × (median ratio to pristine of this build − that of the previous one). The series order is the report's."""
    ab = results.get("ablation") or {}
    order = ["original", *(v["variant"] for v in ab.get("variants") or [])]
    if "patched" not in order:
        order.append("patched")
    out: dict[str, dict[str, float]] = {}
    for mode, by_key in (ab.get("host") or {}).items():
        ratios = [(name, by_key[f"{name}/issue_pattern"]["ratio_to_pristine"]["median"]) for name in order
                  if f"{name}/issue_pattern" in by_key]
        steps = {name: 100.0 * (r - prev) for (_, prev), (name, r) in zip(ratios, ratios[1:])}
        # Also under the number of the build's last patch ("0005"), so pages name commits, not prefixes.
        steps.update({patch: steps[name] for patch, name in ablation_variant_by_patch(results).items()
                      if name in steps})
        # And under each PR ("pr1"): from the build before its first commit to the build after its last.
        ratio = dict(ratios)
        for pr, (before, after) in ablation_span_by_pr(results).items():
            if before in ratio and after in ratio:
                steps[pr] = 100.0 * (ratio[after] - ratio[before])
        out[mode] = steps
    return out


def _pr_of(folder: str) -> str:
    """"pr1" for patch/pr1-portable-clusters/; a per-release folder ("v4.3.5", "backports") as it is."""
    return folder.split("-", 1)[0] if folder.startswith("pr") else folder


def ablation_span_by_pr(results: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Each PR's (build before its first commit, build after its last), by PR: {"pr1": ("original", "prefix3")}.
    A release backport (patch/backports/) belongs to the PR before it in the series."""
    out: dict[str, tuple[str, str]] = {}
    previous, pr = "original", ""
    for v in (results.get("ablation") or {}).get("variants") or []:
        folder = str(v["last"]).rpartition("/")[0]
        pr = pr if folder == "backports" else _pr_of(folder)
        out[pr] = (out[pr][0] if pr in out else previous, str(v["variant"]))
        previous = str(v["variant"])
    return out


def ablation_variant_by_patch(results: dict[str, Any]) -> dict[str, str]:
    """The ablation build that ends at each patch, by its PR and number: {"pr1/0001": "prefix1", "pr5/0001": "patched"}
    (patch/pr1-portable-clusters/0001-... is "pr1/0001"). Per-release patches keep their folder: {"v4.3.5/0001": ...}."""
    out: dict[str, str] = {}
    for v in (results.get("ablation") or {}).get("variants") or []:
        folder, _, name = str(v["last"]).rpartition("/")
        pr = _pr_of(folder)
        out[f"{pr}/{name[:4]}" if pr else name[:4]] = v["variant"]
    # And the build after each PR's last commit, by PR ("pr1").
    out.update({pr: after for pr, (_, after) in ablation_span_by_pr(results).items()})
    return out

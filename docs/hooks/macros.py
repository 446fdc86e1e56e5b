"""mkdocs-macros entry point (mkdocs.yml `module_name`): the pages' variables, filters and macros from docs/hooks/.

Pages are Jinja2 (mkdocs-macros-plugin). They see, for each committed run in loading.RUNS, its results.json as a
variable (`r`, `r435`) and the arithmetic the pages quote on it (`d`, `d435`, see derived.derive), e.g.

    {{ r.timings["original/issue_pattern"].host_us | us }}     a measured value, with its unit
    {{ d.calls["original/issue_pattern"].total.encodes | count }}
    {{ table("timings") }}   {{ table("counts_by_phase", run="r435") }}   {{ figure("sweep.png", "caption") }}
    {{ pending("in_situ_ns", "cudaFuncSetAttribute(GEMM kernel)", "ns") }}   "not yet measured" while absent
    {{ r.ablation.host.unchanged["patched/issue_pattern"].host | iqr_us }}   a median with its IQR (iqr_x: ratios)
    {{ r.timings["original/issue_pattern"].host | iqr_us }}   a report timing with its IQR over the rounds
    {{ table("ablation") }} {{ table("layer") }} {{ table("in_situ") }}   the experiments step (experiments.py)
    {% set hp = host_path() %} {{ host_path_table("4.3.5") }} {{ doctor_reading("sm90") }}   the doctor's JSON in
        docs/results/h200-nvfp4-host-path/ (hostpath.py; every table carries its "host path on Hopper" label)
    {{ include_log("results/h200-nvfp4-host-path/doctor-v4.2.0-sm90.log") }}   a committed log, verbatim

A value a page names that the JSON lacks is a build error (`on_undefined: strict`, `on_error_fail`), and so
is a null value given to a unit filter, a missing plot and a stale run (staleness.py; CO_DOCS_ALLOW_STALE=1
lets a stale run through, and every page then carries a banner). docs/hooks/ imports nothing compiled; from python/
it reads only vocabulary.py, by its path (docs/hooks/vocabulary.py): the docs build needs only the `docs` group.

mkdocs-macros 1.5 executes this file by its path (mkdocs_macros.util.import_local_module: spec_from_file_location,
no package, nothing added to the import path), so the modules beside it are loaded here as the package PACKAGE
from this file's own folder: a copy of the project built elsewhere uses its own copy of them.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

PACKAGE = "co_docs_hooks"


# docs/hooks/ as the package PACKAGE, freshly (a rebuild in the same process sees edited modules).
for _name in [n for n in sys.modules if n == PACKAGE or n.startswith(PACKAGE + ".")]:
    del sys.modules[_name]
_spec = importlib.util.spec_from_file_location(PACKAGE, Path(__file__).resolve().with_name("__init__.py"))
assert _spec and _spec.loader
sys.modules[PACKAGE] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sys.modules[PACKAGE])
errors, formatting, loading, page_macros, run = (importlib.import_module(f"{PACKAGE}.{m}") for m in (
    "errors", "formatting", "loading", "page_macros", "run"))


def define_env(env: Any) -> None:
    from mkdocs.exceptions import PluginError

    root = Path(env.project_dir)
    try:
        runs = {var: run.Run(root, *loaded) for var, loaded in loading.load_runs(root).items()}
    except errors.ResultsError as error:
        raise PluginError(f"docs/hooks/macros.py: {error}") from None
    repo_url = str(env.conf.get("repo_url") or "")
    env.variables.update(page_macros.variables(runs, repo_url))
    env.filters.update(formatting.FILTERS)
    for macro in page_macros.macros(root, runs, repo_url):
        env.macro(macro)


def on_post_page_macros(env: Any) -> None:
    """With CO_DOCS_ALLOW_STALE=1 and a stale run, every page says so under its title."""
    stale = env.variables.get("co_stale") or {}
    if stale:
        env.markdown = page_macros.with_stale_banner(env.markdown, stale)

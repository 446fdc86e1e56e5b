"""The write-up: `mkdocs build --strict` from the committed results, and its refusals.

Needs only the `docs` dependency group (`pip install --group docs`): no GPU, no compiled package. The
refusal tests build a copy of the site (mkdocs.yml, docs/, patch/) with one thing broken and check the
build fails saying why; none of them writes under the repository's docs/results/.
"""

from __future__ import annotations

import ast
import html as htmllib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from cutlass_overhead import vocabulary

from docs_hooks import hook

REPO = Path(__file__).resolve().parents[1]
HOOKS = REPO / "docs" / "hooks"
PAGES = sorted((REPO / "docs").glob("*.md"))
MKDOCS_MISSING = any(importlib.util.find_spec(m) is None for m in ("mkdocs", "material", "mkdocs_macros"))
needs_mkdocs = pytest.mark.skipif(MKDOCS_MISSING, reason="the docs group is not installed (pip install --group docs)")
STALE_ENV = "CO_DOCS_ALLOW_STALE"
GLOSSARY = "python/cutlass_overhead/VERDICTS.md"  # what each name the doctor, --inspect and --compare print means


def load_macros() -> ModuleType:
    """The entry point as mkdocs-macros loads it: by its path, outside any package."""
    spec = importlib.util.spec_from_file_location("co_docs_macros", HOOKS / "macros.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


macros = load_macros()
# The modules beside it, as the entry point loaded them.
derived, formatting, loading, markdown, page_macros, patches, run, staleness = (
    importlib.import_module(f"{macros.PACKAGE}.{name}")
    for name in ("derived", "formatting", "loading", "markdown", "page_macros", "patches", "run", "staleness"))


def mkdocs_build(root: Path, site: Path, allow_stale: bool | None = None) -> subprocess.CompletedProcess[str]:
    """`mkdocs build --strict` in `root`; allow_stale None keeps the caller's CO_DOCS_ALLOW_STALE."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    if allow_stale is not None:
        env.pop(STALE_ENV, None)
        if allow_stale:
            env[STALE_ENV] = "1"
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)], cwd=root,
                          env=env, capture_output=True, text=True, timeout=300, check=False)


def committed_is_stale() -> bool:
    return any(loading.load_run(REPO / loading.RESULTS / name, REPO / "patch")[1] for name in loading.RUNS.values())


def make_copy(root: Path) -> Path:
    """A buildable copy of the site whose committed runs are current for its patch/ (re-stamped if needed)."""
    root.mkdir()
    shutil.copy(REPO / "mkdocs.yml", root)
    shutil.copytree(REPO / "docs", root / "docs", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "patch", root / "patch")
    (root / "python" / "cutlass_overhead").mkdir(parents=True)  # the vocabulary docs/hooks loads by its path
    shutil.copy(REPO / "python" / "cutlass_overhead" / "vocabulary.py", root / "python" / "cutlass_overhead")
    shutil.copy(REPO / "python" / "cutlass_overhead" / "results.py", root / "python" / "cutlass_overhead")
    shutil.copy(REPO / GLOSSARY, root / GLOSSARY)  # docs/reproduce.md includes it
    (root / "repro").mkdir()  # docs/workarounds.md includes the kept Gemm's code
    shutil.copy(REPO / "repro" / "kept_nvfp4_gemm.h", root / "repro")
    shutil.copy(REPO / "README.md", root)  # and the README's commands
    for name in loading.RUNS.values():
        path = root / loading.RESULTS / name / "results.json"
        results = json.loads(path.read_text())
        stamp = results["stamp"]
        series = vocabulary.series_file(root / "patch", stamp["cutlass_version"])
        stamp["patches"] = vocabulary.series_entries(series)
        stamp["patch_sha256_prefixes"] = [vocabulary.diff_sha256_prefix(root / "patch" / n) for n in stamp["patches"]]
        path.write_text(json.dumps(results))
    return root


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    return make_copy(tmp_path / "project")


@pytest.fixture(scope="module")
def copy_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """The build of an unchanged copy, shared by the tests that read it: (the build, its site)."""
    tmp = tmp_path_factory.mktemp("unchanged")
    done = mkdocs_build(make_copy(tmp / "project"), tmp / "site", allow_stale=False)
    return done, tmp / "site"


def edit_results(root: Path, run: str, change: Any) -> None:
    path = root / loading.RESULTS / loading.RUNS[run] / "results.json"
    results = json.loads(path.read_text())
    change(results)
    path.write_text(json.dumps(results))


def html(site: Path, page: str) -> str:
    return (site / ("" if page == "index" else page) / "index.html").read_text()


# ---- The site as committed -------------------------------------------------------------------------------


@needs_mkdocs
def test_site_builds_strict_from_committed_results(tmp_path: Path) -> None:
    """Fails while the committed results are stale, unless CO_DOCS_ALLOW_STALE=1 (then with the banner)."""
    done = mkdocs_build(REPO, tmp_path / "site")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for page in PAGES:
        text = html(tmp_path / "site", page.stem)
        assert "Macro Rendering Error" not in text and "{{" not in text, page.name
    assert "NVIDIA H200" in html(tmp_path / "site", "index")  # the stamp


def test_committed_results_are_current() -> None:
    if os.environ.get(STALE_ENV) == "1" and committed_is_stale():
        pytest.skip(f"{STALE_ENV}=1: the committed results are stale until they are regenerated on the GPU")
    for name in loading.RUNS.values():
        _, stale = loading.load_run(REPO / loading.RESULTS / name, REPO / "patch")
        assert stale is None, f"docs/results/{name}: {stale}"


# ---- Refusals ------------------------------------------------------------------------------------------------


REPLY_MAX_WORDS = 250  # the draft reply must be short enough to post as it is


def reply_words(page_html: str) -> int:
    """Words of the rendered "Draft reply" admonition on the Upstreaming page (code block included)."""
    start = page_html.index('<p class="admonition-title">Draft reply</p>')
    depth, at = 1, page_html.index("</p>", start)
    while depth:  # the admonition's closing </div>, past the divs nested in it
        opening, closing = page_html.find("<div", at), page_html.find("</div>", at)
        depth, at = (depth + 1, opening + 4) if 0 <= opening < closing else (depth - 1, closing + 6)
    text = re.sub(r"<[^>]+>", " ", page_html[page_html.index("</p>", start) + 4:at])
    return len(htmllib.unescape(text).split())


@needs_mkdocs
def test_draft_reply_is_at_most_250_words(copy_site: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, site = copy_site
    assert done.returncode == 0, done.stderr[-3000:]
    words = reply_words(html(site, "upstreaming"))
    assert 50 < words <= REPLY_MAX_WORDS, f"the draft reply has {words} words"


@needs_mkdocs
def test_copy_builds_and_shows_no_banner(copy_site: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    done, site = copy_site
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "older patch series" not in html(site, "index")


@needs_mkdocs
def test_stale_results_fail_the_build_unless_allowed_and_then_every_page_says_so(copy: Path, tmp_path: Path) -> None:
    patch = copy / "patch" / vocabulary.series_entries(copy / "patch" / "series")[0]
    patch.write_text(patch.read_text() + "\n+// changed after the measurement\n")
    done = mkdocs_build(copy, tmp_path / "refused", allow_stale=False)
    assert done.returncode != 0
    assert "is stale" in done.stdout + done.stderr and STALE_ENV in done.stdout + done.stderr
    done = mkdocs_build(copy, tmp_path / "site", allow_stale=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for page in PAGES:
        assert "Results measured with an older patch series" in html(tmp_path / "site", page.stem), page.name


def edit(*path: str, delete: bool) -> Callable[[Path], None]:
    """In a copy, deletes results["r"][path...] or makes it null."""
    def change(results: dict[str, Any]) -> None:
        node = results
        for key in path[:-1]:
            node = node[key]
        if delete:
            del node[path[-1]]
        else:
            node[path[-1]] = None
    return lambda root: edit_results(root, "r", change)


def unlink(var: str, name: str) -> Callable[[Path], None]:
    return lambda root: (root / loading.RESULTS / loading.RUNS[var] / name).unlink()


# What each refused build breaks in a copy, and what its output must say.
REFUSALS: dict[str, tuple[Callable[[Path], None], str]] = {
    # A key a page uses and the JSON lacks: a value shown through a unit filter, and one shown as it is (only
    # strict undefined catches that one).
    "a_key_the_json_lacks-filtered": (edit("timings", "original/graph", delete=True), "original/graph"),
    "a_key_the_json_lacks-plain": (edit("nvfp4_status", delete=True), "nvfp4_status"),
    "a_null_value": (edit("timings", "original/graph", "host_us", delete=False), "null value"),
    "a_missing_plot": (unlink("r", "sweep.png"), "lacks sweep.png"),
    "a_missing_run": (unlink("r435", "results.json"), "results.json does not exist"),
}


@needs_mkdocs
@pytest.mark.parametrize("broken", REFUSALS)
def test_results_that_cannot_back_a_page_fail_the_build_saying_why(copy: Path, tmp_path: Path, broken: str) -> None:
    breaks, says = REFUSALS[broken]
    breaks(copy)
    done = mkdocs_build(copy, tmp_path / "site", allow_stale=False)
    assert done.returncode != 0
    assert says in done.stdout + done.stderr


@needs_mkdocs
def test_pending_values_say_not_yet_measured_until_the_json_has_them(copy: Path, tmp_path: Path) -> None:
    edit_results(copy, "r", lambda r: r.get("in_situ_ns", {}).pop("cudaFuncSetAttribute(GEMM kernel)", None))
    done = mkdocs_build(copy, tmp_path / "before", allow_stale=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "not yet measured" in html(tmp_path / "before", "upstreaming")
    edit_results(copy, "r", lambda r: r.setdefault("in_situ_ns", {}).update({"cudaFuncSetAttribute(GEMM kernel)": 4321.0}))
    done = mkdocs_build(copy, tmp_path / "after", allow_stale=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    page = html(tmp_path / "after", "upstreaming")
    assert "4,321\u00a0ns" in page and "not yet measured" not in page


# ---- The pages and the macros module, without mkdocs --------------------------------------------------------


def test_every_name_a_page_uses_is_defined() -> None:
    """Top-level names in the pages' Jinja are variables or macros the module defines (the build checks keys)."""
    jinja2 = pytest.importorskip("jinja2")
    from jinja2 import meta

    runs = {var: run.Run(REPO, name, *loading.load_run(REPO / loading.RESULTS / name, REPO / "patch"))
            for var, name in loading.RUNS.items()}
    defined = {*page_macros.variables(runs), *(fn.__name__ for fn in page_macros.macros(REPO, runs, ""))}
    env = jinja2.Environment()
    env.filters.update({name: str for name in formatting.FILTERS})
    for page in PAGES:
        names = meta.find_undeclared_variables(env.parse(page.read_text()))
        assert names <= defined, f"{page.name} uses {sorted(names - defined)}"
        for table in re.findall(r'table\("(\w+)"', page.read_text()):
            assert hasattr(run.Run, "table_" + table), f"{page.name}: no table {table}"


def test_the_repository_address_is_one_setting() -> None:
    """The clone lines read REPO_URL, which only mkdocs.yml's repo_url (CO_REPO_URL) sets; no page sets it."""
    assert page_macros.variables({}, "https://example.org/cutlass-overhead")["REPO_URL"] == \
        "https://example.org/cutlass-overhead"
    assert page_macros.variables({})["REPO_URL"] == "<repository URL>"
    for page in PAGES:
        assert not re.search(r"\{%-?\s*set\s+REPO_URL\b", page.read_text()), f"{page.name} sets REPO_URL itself"
    assert "repo_url: !ENV CO_REPO_URL" in (REPO / "mkdocs.yml").read_text()


def test_pages_type_no_numbers_of_their_own() -> None:
    """Numbers come from the results; a page may type only the issue's 91 and 625 us (and 0/1)."""
    allowed = re.compile(r"^(91|625|0|1)$")
    for page in PAGES:
        text = re.sub(r"\{\{.*?\}\}|\{%.*?%\}", "", page.read_text(), flags=re.S)
        text = re.sub(r"```.*?```", "", text, flags=re.S)  # commands and code
        text = re.sub(r"`[^`]*`", "", text)  # inline code: flags, file names, versions
        text = re.sub(r"\]\([^)]*\)", "]", text)  # link targets
        text = re.sub(r"#\d{4}\b", "", text)  # the number (NVIDIA/cutlass#3003)
        for number in re.findall(r"(?<![\w.#/-])\d+(?:\.\d+)?(?![\w.])", text):
            assert allowed.match(number), f"{page.name} types the number {number}"


def test_the_macros_module_imports_nothing_compiled_and_nothing_from_python() -> None:
    """Each module of docs/hooks/ imports the standard library, jinja2, mkdocs and its siblings (relative) only."""
    for path in sorted(HOOKS.glob("*.py")):
        tree = ast.parse(path.read_text())
        imported = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
                    for alias in node.names}
        imported |= {(node.module or "").split(".")[0] for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.level == 0}
        assert imported <= {"__future__", "email", "hashlib", "importlib", "json", "math", "os", "re", "sys",
                            "collections", "pathlib", "types", "typing", "jinja2", "mkdocs"}, (path.name, imported)
        assert "sys.path" not in path.read_text(), path.name


def test_staleness_uses_the_diff_hash_of_the_build(tmp_path: Path) -> None:
    """The hash covers the diff, as CMakeLists.txt's does: a reworded message is not stale, a changed diff is."""
    patch_dir = tmp_path / "patch"
    patch_dir.mkdir()
    text = "Subject: [PATCH] x\n\nmessage\n---\n a | 1 +\n\ndiff --git a/a b/a\n+x\n"
    (patch_dir / "0001-x.patch").write_text(text)
    (patch_dir / "series").write_text("0001-x.patch\n")
    stamp = {"cutlass_version": "main", "patches": ["0001-x.patch"],
             "patch_sha256_prefixes": [vocabulary.diff_sha256_prefix(patch_dir / "0001-x.patch")]}
    assert staleness.staleness(stamp, patch_dir) is None
    (patch_dir / "0001-x.patch").write_text(text.replace("message", "reworded message"))
    assert staleness.staleness(stamp, patch_dir) is None
    (patch_dir / "0001-x.patch").write_text(text + "+y\n")
    assert "0001-x.patch" in (staleness.staleness(stamp, patch_dir) or "")


def test_commit_summaries_end_on_a_full_sentence() -> None:
    lead = markdown.whole_sentences("calls cudaMalloc() even when the count\nis 0. The common host pattern")
    assert lead == "calls cudaMalloc() even when the count is 0."
    for name in vocabulary.series_entries(REPO / "patch" / "series"):
        entry = patches.patch_entry(REPO / "patch", 1, name)
        summary = entry.split("\n\n")[2]
        if not summary.startswith("*"):
            assert summary.rstrip().endswith((".", "!", "?")), f"{name}: {summary[-80:]}"


@needs_mkdocs
def test_the_build_fails_when_the_readme_lacks_a_command_the_reproduce_page_shows(copy: Path, tmp_path: Path) -> None:
    """docs/reproduce.md shows the README's commands from the README itself (readme_command), not a copy."""
    readme = copy / "README.md"
    readme.write_text(readme.read_text().replace("<!-- report-command -->", ""))
    done = mkdocs_build(copy, tmp_path / "site", allow_stale=False)
    assert done.returncode != 0 and "README.md has no block marked <!-- report-command -->" in done.stdout + done.stderr


def test_every_name_the_doctor_prints_is_explained_where_the_author_reads_it() -> None:
    """Each bound and suspect of the verdict (vocabulary.BOUNDS, vocabulary.SUSPECTS), each --inspect exit status and
    each platform name has its entry in the glossary, which docs/reproduce.md includes."""
    glossary = (REPO / GLOSSARY).read_text()
    inspect_source = ast.parse((REPO / "python/cutlass_overhead/inspect_binary.py").read_text())
    members = next(node for node in inspect_source.body if isinstance(node, ast.ClassDef) and node.name == "Verdict")
    exits = {t.id: ast.literal_eval(a.value) for a in members.body if isinstance(a, ast.Assign) for t in a.targets
             if isinstance(t, ast.Name)}
    assert set(exits) == {"OPTIMISED", "UNOPTIMISED", "CANNOT_TELL"}, exits
    platforms = re.findall(r'name, why = ("[^"]+"|UNKNOWN), ', (REPO / "python/cutlass_overhead/stamp.py").read_text())
    assert len(platforms) == 6, platforms
    names = [*vocabulary.BOUNDS, *[f"{name}`**" for name in vocabulary.SUSPECTS.values()], *{ast.literal_eval(p) if p != "UNKNOWN" else "unknown" for p in platforms},
             "not recorded", "64", "no measurable effect", "adds"]
    for name in names:
        assert f"**`{name}" in glossary, f"{GLOSSARY} does not explain {name!r}"
    for name, status in exits.items():
        assert f"* **`{status}`, {name.lower().replace('_', ' ')}**" in glossary, f"{GLOSSARY} lacks --inspect's {name}"
    assert f'include_file("{GLOSSARY}"' in (REPO / "docs/reproduce.md").read_text()


def test_ablation_steps_per_pr_span_all_its_commits() -> None:
    """A PR of several commits (PR 1: three) is quoted as one step, from the build before its first commit to the
    build after its last; a release backport counts with the PR before it. (The pages had quoted PR 1's first
    commit alone, +1.83 points, as its saving.) Seen failing with each PR's step taken from its last commit alone."""
    derived = hook("derived")
    lasts = ["pr1-portable-clusters/0001-a.patch", "pr1-portable-clusters/0002-b.patch", "backports/0001-c.patch",
             "pr3-entry-points-once/0001-d.patch", "pr5-params-reuse-opt-in/0001-e.patch"]
    names = ["prefix1", "prefix2", "prefix3", "prefix4", "patched"]
    ratios = {"original": 1.00, "prefix1": 1.02, "prefix2": 0.85, "prefix3": 0.84, "prefix4": 0.80, "patched": 0.70}
    results = {"ablation": {"variants": [{"variant": v, "last": last} for v, last in zip(names, lasts)],
                            "host": {"unchanged": {f"{v}/issue_pattern": {"ratio_to_pristine": {"median": r}}
                                                      for v, r in ratios.items()}}}}
    assert derived.ablation_span_by_pr(results) == {"pr1": ("original", "prefix3"), "pr3": ("prefix3", "prefix4"),
                                                    "pr5": ("prefix4", "patched")}
    steps = derived.ablation_steps(results)["unchanged"]
    assert steps["pr1"] == pytest.approx(-16.0) and steps["pr1/0001"] == pytest.approx(2.0)
    assert steps["pr3"] == pytest.approx(-4.0) and steps["pr5"] == pytest.approx(-10.0)
    assert derived.ablation_variant_by_patch(results)["pr1"] == "prefix3"


def test_the_host_paths_priced_time_is_summed_by_the_group_of_each_api() -> None:
    """hostpath.priced_by_group sums a reading's attribution of the issue's pattern by the vocabulary group of each
    priced API, whatever the CUDA version calls the lookup."""
    rows = [{"phase": "initialize", "measured_us": 4.0, "explained_us": 3.5, "remainder_us": 0.5,
             "terms": [{"api": "cudaGetDriverEntryPointByVersion", "count": 9.0, "us": 1.0},
                       {"api": "cudaGetDriverEntryPoint", "count": 9.0, "us": 0.25},
                       {"api": "cuTensorMapEncodeTiled", "count": 9.0, "us": 2.0},
                       {"api": "cudaFuncSetAttribute", "count": 1.0, "us": 0.25}]}]
    sums = hook("hostpath").priced_by_group({"attribution": {"original/issue_pattern": rows}})
    assert (sums["lookups"], sums["encodes"], sums["func_attributes"]) == (1.25, 2.0, 0.25)


def test_every_committed_reading_is_what_the_package_writes() -> None:
    """Each committed JSON reading loads as the results schema and writes back the same: one schema, every reader."""
    from cutlass_overhead.results import from_json, resolved

    # The pipelines stage's old-<i>/ readings were written by an earlier commit's package, in its schema.
    readings = sorted(p for p in (REPO / "docs" / "results").rglob("*.json")
                      if not (any("-pipelines" in part for part in p.parts) and p.parent.name.startswith("old-")))
    assert len(readings) >= 8
    for path in readings:
        reading = json.loads(path.read_text())
        assert from_json(reading).to_json() == reading, path
        resolved(reading)  # every reference names a value that is there

"""What the pages see: the runs as variables, the page macros, and the stale-results banner."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import ResultsError
from .formatting import FILTERS
from . import hostpath
from .include import include, include_text, marked_block
from .loading import PLOTS, RESULTS
from .patches import patch_series
from .run import Run
from .staleness import ALLOW_STALE_ENV

NOT_MEASURED = "*not yet measured*"


def variables(runs: dict[str, Run], repo_url: str = "") -> dict[str, Any]:
    """Each run's results and derived values under its page variables, the stale runs (`co_stale`), and this
    repository's address (`REPO_URL`: mkdocs.yml's repo_url, from CO_REPO_URL; a placeholder when unset)."""
    out: dict[str, Any] = {"REPO_URL": repo_url or "<repository URL>"}
    for var, run in runs.items():
        out[var] = run.results
        out["d" + var[1:]] = run.derived
    out["co_stale"] = {f"{RESULTS}/{run.name}": run.stale for run in runs.values() if run.stale}
    return out


def macros(root: Path, runs: dict[str, Run], repo_url: str) -> list[Callable[..., str]]:
    """The page macros, each registered under its function name."""

    def run_of(run: str) -> Run:
        if run not in runs:
            raise ResultsError(f"no run '{run}' (known: {', '.join(runs)})")
        return runs[run]

    def table(name: str, run: str = "r") -> str:
        """A table drawn from one run: `table("timings")`, `table("counts_by_phase", run="r435")`."""
        method = getattr(run_of(run), "table_" + name, None)
        if method is None:
            raise ResultsError(f"no table '{name}' (known: {', '.join(sorted(n[6:] for n in dir(Run) if n.startswith('table_')))})")
        return method()

    def figure(png: str, caption: str, run: str = "r") -> str:
        """A plot the report committed next to results.json (the docs never draw one)."""
        if png not in PLOTS:
            raise ResultsError(f"figure: no plot '{png}' (known: {', '.join(PLOTS)})")
        uri = run_of(run).link(png)
        return (f'<figure class="co-figure" markdown="span">\n  [![{caption}]({uri}){{ loading=lazy }}]({uri})\n'
                f"  <figcaption>{caption}</figcaption>\n</figure>")

    def stamp(run: str = "r") -> str:
        return run_of(run).stamp()

    def logs(run: str = "r") -> str:
        return run_of(run).logs()

    def link(name: str, run: str = "r") -> str:
        if not (run_of(run).dir / name).exists():
            raise ResultsError(f"link: {run_of(run).dir / name} does not exist")
        return run_of(run).link(name)

    def pending(section: str, key: str, unit: str, run: str = "r") -> str:
        """A value another change will measure: its formatted value once results.json has it, else a visible
        'not yet measured'. Only for keys the current report does not write yet."""
        value = (run_of(run).results.get(section) or {}).get(key)
        return NOT_MEASURED if value is None else FILTERS[unit](value)

    host_path_cache: dict[str, Any] = {}

    def host_path() -> dict[str, Any]:
        """The doctor's readings in docs/results/h200-nvfp4-host-path/ (hostpath.load): host path on Hopper."""
        if not host_path_cache:
            host_path_cache.update(hostpath.load(root))
        return host_path_cache

    def host_path_table(version: str, kind: str = "nvfp4-hopper") -> str:
        """Calls and host µs per config, original → patched, under the run's label (never a Blackwell number)."""
        return hostpath.label_banner(host_path()) + "\n\n" + hostpath.table_matrix(host_path(), version, kind)

    def doctor_reading(kind: str) -> str:
        """The doctor's verdict for one committed reading (`sm90`, `nvfp4-hopper`, `nvfp4-hopper-v4.3.5`)."""
        return hostpath.table_doctor(host_path(), kind)

    def patch_list() -> str:
        return patch_series(root / "patch", list(runs.values()))

    def include_file(rel: str, shift: int | str = 0) -> str:
        return include(root, rel, shift, repo_url)

    def results_files(pattern: str) -> list[str]:
        """The committed files under docs/results/ that match a glob, as page-relative links, sorted; [] while none
        are committed (a page can then say so instead of linking a file that does not exist yet)."""
        return sorted(str(p.relative_to(root / "docs")) for p in (root / RESULTS).glob(pattern) if p.is_file())

    def readme_command(name: str) -> str:
        """A command block of README.md, as the README states it (and .ci/run runs the test command)."""
        return marked_block(root, "README.md", name)

    def include_log(rel: str) -> str:
        """A committed log, verbatim, for a ```text block (`rel` from the project root or from docs/)."""
        return include_text(root, rel if (root / rel).exists() else f"docs/{rel}")

    return [table, figure, stamp, logs, link, pending, patch_list, include_file, include_log, readme_command,
            results_files, host_path, host_path_table, doctor_reading]


def with_stale_banner(markdown: str, stale: dict[str, str]) -> str:
    """A page's Markdown with the stale-results banner under its title (CO_DOCS_ALLOW_STALE=1 let them through)."""
    items = "\n".join(f"    * `{where}`: {why}" for where, why in stale.items())
    banner = (f'!!! danger "Results measured with an older patch series"\n\n    The patches in `patch/` changed '
              f"after these results were measured ({ALLOW_STALE_ENV}=1 let the build through). Numbers below "
              f"describe the older series:\n\n{items}\n")
    lines = markdown.split("\n")
    at = next((i + 1 for i, line in enumerate(lines) if line.startswith("# ")), 0)
    return "\n".join(lines[:at] + ["", banner] + lines[at:])

"""The report's templates compiled once, in jinja2's cache, not on every run (issue 29, item 8).

Each page is written by its own process (the cache is chosen when `chatjudge.report` is
imported) with TMPDIR pointing into the test's directory: the first compiles the templates
and leaves them in the cache, the next reads them back; the pages are the same bytes, and a
cache directory that cannot be had leaves the page as it is."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

_WRITE = """
import sys
from pathlib import Path
from chatjudge.report import write_report
print(write_report(Path(sys.argv[1])))
"""


def _page(run_dir: Path, tmp: Path) -> bytes:
    done = subprocess.run(
        [sys.executable, "-c", _WRITE, str(run_dir)],
        capture_output=True,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return Path(done.stdout.strip()).read_bytes()


def test_the_page_is_the_same_compiled_cached_or_without_a_cache(
    pairwise_run: Path, tmp_path: Path
) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    cache = tmp / f"_jinja2-cache-{os.getuid()}"
    compiled = _page(pairwise_run, tmp)
    assert len(list(cache.glob("*.cache"))) >= 2  # the page and the templates it includes
    stamps = {p: p.stat().st_mtime_ns for p in cache.glob("*.cache")}
    cached = _page(pairwise_run, tmp)
    assert {p: p.stat().st_mtime_ns for p in cache.glob("*.cache")} == stamps  # read, not rewritten
    assert cached == compiled

    blocked = tmp_path / "blocked"
    blocked.mkdir()
    (blocked / cache.name).write_text("a file where the cache directory would be")
    assert _page(pairwise_run, blocked) == compiled

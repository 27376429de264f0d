"""What a small run loads: not the libraries its path does not need.

A 20-item run spent most of its CPU importing (issue 29, item 8). The rule these tests keep:
`chatjudge run` of a small dataset, summary and report included, imports neither scipy
(`scipy.special` alone costs 0.24 s and 28 MB) nor pandas nor pyarrow, nor the modules of
the other commands, nor the statistics and report parts that only they use. The modules the
process holds as it exits are the observable; time is measured in `bench/fixed_cost.py`,
not here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.runner.conftest import pointwise_rows, write_jsonl
from tests.support.stub_openai import StubServer

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NOT_ON_A_RUN = ("scipy", "pandas", "pyarrow")
# The other commands' modules, what only they use, and what a run off a terminal does not
# need: each is CPU and memory a run would pay for nothing (issue 29, item 8).
MODULES_NOT_ON_A_RUN = (
    *("chatjudge.cli.analyse", "chatjudge.cli.gate", "chatjudge.cli.merge"),
    *("chatjudge.cli.produce", "chatjudge.cli.traces"),
    *("chatjudge.analysis", "chatjudge.merge", "chatjudge.produce", "chatjudge.traces"),
    *("chatjudge.report.gate_section", "chatjudge.report.gate_text"),
    *("chatjudge.report.compare_page", "chatjudge.report.heatmap", "chatjudge.report.curve_chart"),
    *("chatjudge.stats.ratings", "chatjudge.stats.reliability", "chatjudge.stats.sequential"),
    *("chatjudge.stats.label_agreement", "chatjudge.stats.rank_correlation"),
    *("chatjudge.trajectories", "chatjudge.chat.toolcalls.expected", "chatjudge.stats.passk"),
    "chatjudge.formats.produced",  # generate's, simulate's and import's records
    *("chatjudge.calls.estimate", "chatjudge.models.tokens"),  # the dry run's
    # The other providers' classes, which only the help that names them needs
    *("chatjudge.models.local", "chatjudge.models.anthropic", "chatjudge.models.google"),
    *("chatjudge.models.optional_sdk", "chatjudge.models.tool_wire"),
    "chatjudge.otel",
    "krippendorff",
    "tomllib",  # a --prices file's or a custom protocol's, which a plain run has none of
    "numpy.ma",  # np.percentile's, in the bootstrap's intervals
    "rich.progress",  # the bar, drawn on a terminal only
    "rich._emoji_codes",  # 0.9 MB of `:name:` codes, which the consoles do not replace
)

# `python -m chatjudge.cli ARGS` that writes, as it exits, the modules it loaded, its
# garbage collector's statistics, whether pydantic looked for plugins and how many patterns
# the tokenizer compiled to the file $PROBE_OUT (`-X importtime` misses modules imported
# with `importlib.import_module`).
_PROBE = """
import atexit, gc, json, os, runpy, sys
def write():
    loader = sys.modules.get("pydantic.plugin._loader")
    tokenize = sys.modules.get("tokenize")
    seen = {
        "modules": list(sys.modules),
        "gc": gc.get_stats(),
        "plugins_sought": loader is not None and loader._plugins is not None,
        "tokenizer_patterns": tokenize._compile.cache_info().currsize if tokenize else 0,
    }
    open(os.environ["PROBE_OUT"], "w").write(json.dumps(seen))
atexit.register(write)
sys.argv[0] = "chatjudge"
runpy.run_module("chatjudge.cli", run_name="__main__", alter_sys=True)
"""


def _probed_run(protocol: str, stub: StubServer, tmp_path: Path) -> dict[str, Any]:
    """A small run of `protocol` through `_PROBE`: what it loaded, how it collected."""
    if protocol == "interactivity-accuracy":
        data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(20))
    else:  # the bundled pairwise example: style control's fits in its summary
        data = EXAMPLES / "pairwise_chat_quality.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env |= {"OPENAI_API_KEY": "dummy", "PROBE_OUT": str(tmp_path / "probe.json")}
    args = ["--judge", "openai/stub", "--base-url", stub.base_url, "--out", str(tmp_path / "run")]
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, "run", str(data), "--protocol", protocol, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["n_ok"] == len(data.read_text().splitlines())
    assert (tmp_path / "run" / "report.html").exists()
    probed: dict[str, Any] = json.loads((tmp_path / "probe.json").read_text())
    return probed


@pytest.mark.parametrize("protocol", ["pairwise-chat-quality", "interactivity-accuracy"])
def test_a_small_run_loads_only_what_a_run_needs(
    protocol: str, stub: StubServer, tmp_path: Path
) -> None:
    modules = set(_probed_run(protocol, stub, tmp_path)["modules"])
    assert {"chatjudge.cli.run", "chatjudge.stats.bootstrap", "numpy", "aiohttp"} <= modules
    packages = {name.split(".")[0] for name in modules}
    assert packages.isdisjoint(NOT_ON_A_RUN), packages & set(NOT_ON_A_RUN)
    assert modules.isdisjoint(MODULES_NOT_ON_A_RUN), modules & set(MODULES_NOT_ON_A_RUN)


def test_a_small_run_never_walks_every_object(stub: StubServer, tmp_path: Path) -> None:
    """The CLI raises the collector's threshold as its process starts, before typer loads
    pydantic and the command's modules load, so that the hundreds of thousands of start-up
    objects (never garbage) are not walked by a full collection (0.02 s) nor by the young
    ones' default 700-allocation rhythm (0.04 s in all, about 135 collections, at the
    default threshold; about 70 when raised only as the command is looked up)."""
    stats = _probed_run("interactivity-accuracy", stub, tmp_path)["gc"]
    assert stats[2]["collections"] == 0
    assert stats[0]["collections"] < 60


def test_a_small_run_seeks_no_pydantic_plugins_nor_compiles_the_tokenizer(
    stub: StubServer, tmp_path: Path
) -> None:
    """pydantic's plugin search reads every installed distribution's entry points (0.005 s
    here, more in larger environments), and a summary model with a `default_factory` of a
    builtin had pydantic read its signature with the tokenizer, whose patterns take 0.003 s
    to compile: a run does neither."""
    probed = _probed_run("pairwise-chat-quality", stub, tmp_path)
    assert probed["plugins_sought"] is False
    assert probed["tokenizer_patterns"] == 0


_PLUGINS_PROBE = """
import os, sys
from chatjudge.cli import main
sys.argv = ["chatjudge", "protocols"]
try:
    main()
except SystemExit:
    pass
loader = sys.modules["pydantic.plugin._loader"]
print(os.environ["PYDANTIC_DISABLE_PLUGINS"], loader._plugins is not None)
"""


@pytest.mark.parametrize(("given", "seen"), [(None, ["__all__", "False"]), ("x", ["x", "True"])])
def test_the_cli_turns_pydantic_plugins_off_unless_told(given: str | None, seen: list[str]) -> None:
    """The `chatjudge` process turns pydantic's plugins off before its first model; a value
    the user set (pydantic's list of plugins to leave out, here one no plugin has) is kept,
    and pydantic then looks for them."""
    env = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    if given is not None:
        env["PYDANTIC_DISABLE_PLUGINS"] = given
    done = subprocess.run(
        [sys.executable, "-c", _PLUGINS_PROBE],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-2:] == seen


_BLAS_PROBE = """
import os, sys
from chatjudge.cli import app
loaded = "numpy" in sys.modules
try:
    app(["protocols"])
except SystemExit:
    pass
print(loaded, os.environ.get("OPENBLAS_NUM_THREADS"))
"""


@pytest.mark.parametrize(("given", "seen"), [(None, "1"), ("3", "3")])
def test_the_cli_asks_one_openblas_thread_before_numpy_loads(given: str | None, seen: str) -> None:
    """A run's numpy starts one OpenBLAS thread, not one per core (0.02 s of CPU on 2 cores):
    the CLI sets OPENBLAS_NUM_THREADS before any command, which only works while importing
    the CLI loads no numpy; a value the user set is kept."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run(
        [sys.executable, "-c", _BLAS_PROBE], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-2:] == ["False", seen]


def test_the_installed_command_is_the_process_entry_that_sets_them() -> None:
    """The `chatjudge` script runs `main` (plugins off, the collector's threshold), not the
    bare typer app, which `python -m chatjudge.cli` alone would otherwise have set up."""
    from importlib.metadata import entry_points

    from chatjudge.cli import main

    (script,) = entry_points(group="console_scripts", name="chatjudge")
    assert script.load() is main

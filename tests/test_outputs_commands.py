"""Every command that writes goes through the one output rule (`chatjudge.outputs`, issue 40,
item 6): none writes through a symbolic link (a dangling one too, or one inside its --out
directory), into its own input or into a run's own files, whatever --overwrite says; an
earlier output of the same command is replaced, any other file only with --overwrite; and
`gate --markdown` appends to GitHub's step summary. Through the CLI, each refusal exit 2
with nothing sent and the link's target as it was."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

import chatjudge
from chatjudge.formats.analyses import Gate
from chatjudge.formats.io import read_model
from chatjudge.report.gate_text import markdown
from tests.runner.conftest import pointwise_rows, write_jsonl
from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PAIRWISE = EXAMPLES / "pairwise_chat_quality.jsonl"  # 16 rows, with history and prompt
QUESTIONS = EXAMPLES / "questions.jsonl"  # 8 rows, for simulate
TRACES = EXAMPLES / "traces" / "otel-genai.jsonl"
KEPT = "someone else's file\n"
LINKED = "is a symbolic link: chatjudge never writes through one"
T = TypeVar("T")


def refused(done: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert "Traceback" not in done.stderr
    said = " ".join(done.stderr.split())
    for needle in needles:
        assert needle in said, said


def victim(tmp_path: Path, name: str = "victim.txt") -> Path:
    """A file that is no command's output: what a link points at."""
    path = tmp_path / name
    path.write_text(KEPT)
    return path


def link(at: Path, to: Path) -> Path:
    at.symlink_to(to)
    return at


def untouched(path: Path, target: Path | None) -> None:
    """`path` is still a link (to `target`, which holds what it held)."""
    assert path.is_symlink()
    if target is not None:
        assert target.read_text() == KEPT


def pairwise_run(stub: StubServer, tmp_path: Path, name: str = "run") -> Path:
    """A finished pairwise run of `tmp_path/data.jsonl` (a copy of the example), judged by
    the stand-in in this process."""
    data = Path(shutil.copy(PAIRWISE, tmp_path / "data.jsonl"))
    run_dir = tmp_path / name
    with_key(chatjudge.evaluate, data, "pairwise-chat-quality", "openai/judge", run_dir,
             base_url=stub.base_url)  # fmt: skip
    stub.stats.reset()
    return run_dir


def with_key(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`call` in this process, with the stand-in's key."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "dummy")
        return call(*args, **kwargs)


def judge(stub: StubServer, data: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli("run", str(data), "-p", "interactivity-accuracy", "-j", "openai/judge",
                   "--base-url", stub.base_url, "--out", str(out), "--quiet", *extra,
                   key="dummy")  # fmt: skip


def test_run_never_writes_through_a_link_in_its_directory(stub: StubServer, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    out = tmp_path / "judged"
    out.mkdir()
    target = victim(tmp_path)
    results = link(out / "results.jsonl", target)
    refused(judge(stub, data, out, "--overwrite"), f"{results} {LINKED}")
    store = link(out / "calls.sqlite", tmp_path / "nowhere.sqlite")  # dangling
    results.unlink()
    refused(judge(stub, data, out), f"{store} {LINKED}")
    assert stub.stats.requests == 0 and not (tmp_path / "nowhere.sqlite").exists()
    untouched(store, None)
    assert target.read_text() == KEPT


def test_generate_and_simulate_never_write_through_a_link_beside_their_rows(
    stub: StubServer, tmp_path: Path
) -> None:
    """A dangling link where generate writes its summary, and `simulate --overwrite` over
    rows that are a link: both refused before anything is sent."""
    out = tmp_path / "answers.jsonl"
    summary = link(tmp_path / "answers.summary.json", tmp_path / "made-by-the-link.json")
    done = run_cli("generate", str(PAIRWISE), "--model", "openai/a", "--base-url",
                   stub.base_url, "--out", str(out), "--quiet", key="dummy")  # fmt: skip
    refused(done, f"{summary} {LINKED}")
    assert not (tmp_path / "made-by-the-link.json").exists() and not out.exists()
    target = victim(tmp_path)
    rows = link(tmp_path / "talks.jsonl", target)
    done = run_cli("simulate", str(QUESTIONS), "--assistant", "openai/a",
                   "--assistant-base-url", stub.base_url, "--max-turns", "2", "--out",
                   str(rows), "--quiet", "--overwrite", key="dummy")  # fmt: skip
    refused(done, f"{rows} {LINKED}")
    untouched(rows, target)
    assert stub.stats.requests == 0


def test_import_overwrite_never_writes_through_a_linked_record(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    out.write_text('{"id": "mine"}\n')
    target = victim(tmp_path)
    record = link(tmp_path / "rows.run.json", target)
    done = run_cli("import", str(TRACES), "--out", str(out), "--overwrite")
    refused(done, f"{record} {LINKED}")
    untouched(record, target)
    assert out.read_text() == '{"id": "mine"}\n'


def test_merge_never_replaces_a_link_in_its_out_directory(stub: StubServer, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(4))
    shards = [tmp_path / f"shard{i}" for i in range(2)]
    for i, shard in enumerate(shards):
        assert judge(stub, data, shard, "--shard", f"{i}/2").returncode == 0
    out = tmp_path / "merged"
    out.mkdir()
    target = victim(tmp_path)
    page = link(out / "report.html", target)
    refused(run_cli("merge", *map(str, shards), "--out", str(out), "--overwrite"),
            f"{page} {LINKED}")  # fmt: skip
    untouched(page, target)
    assert sorted(p.name for p in out.iterdir()) == ["report.html"]


def test_report_never_writes_through_a_link(stub: StubServer, tmp_path: Path) -> None:
    """Not through report.html, nor through the file it used to write first."""
    run_dir = pairwise_run(stub, tmp_path)
    target = victim(tmp_path)
    (run_dir / "report.html").unlink()
    page = link(run_dir / "report.html", target)
    refused(run_cli("report", str(run_dir)), f"{page} {LINKED}")
    untouched(page, target)
    page.unlink()
    aside = link(run_dir / "report.html.tmp", target)
    assert run_cli("report", str(run_dir)).returncode == 0
    untouched(aside, target)
    assert "<html" in (run_dir / "report.html").read_text()


def test_export_replaces_its_own_file_and_never_the_runs_data_or_a_link(
    stub: StubServer, tmp_path: Path
) -> None:
    run_dir = pairwise_run(stub, tmp_path)
    out = tmp_path / "evaluations.jsonl"
    for _ in range(2):  # the same export again replaces its own file
        done = run_cli("export", str(run_dir), "--otlp", str(out))
        assert done.returncode == 0, done.stderr
        lines = out.read_text().splitlines()
        assert len(lines) == 1 and json.loads(lines[0])["resourceLogs"]
    data = tmp_path / "data.jsonl"
    before = data.read_bytes()
    refused(run_cli("export", str(run_dir), "--otlp", str(data), "--overwrite"),
            f"--otlp {data} is the data that {run_dir} judged")  # fmt: skip
    refused(run_cli("export", str(run_dir), "--otlp", str(data)), "--overwrite")
    assert data.read_bytes() == before
    target = victim(tmp_path)
    linked = link(tmp_path / "linked.jsonl", target)
    refused(run_cli("export", str(run_dir), "--otlp", str(linked), "--overwrite"),
            f"{linked} {LINKED}")  # fmt: skip
    untouched(linked, target)


def test_gate_out_never_writes_through_a_link(stub: StubServer, tmp_path: Path) -> None:
    """A link to a gate.json (which --out replaces), and a dangling one: both refused."""
    run_dir = pairwise_run(stub, tmp_path)
    earlier = tmp_path / "earlier" / "gate.json"
    earlier.parent.mkdir()
    with_key(chatjudge.gate, run_dir, out=earlier)
    before = earlier.read_bytes()
    for target in (earlier, tmp_path / "nowhere.json"):
        linked = tmp_path / "gate.json"
        linked.unlink(missing_ok=True)
        link(linked, target)
        for extra in ((), ("--overwrite",)):
            refused(run_cli("gate", str(run_dir), "--out", str(linked), *extra),
                    f"{linked} {LINKED}")  # fmt: skip
    assert earlier.read_bytes() == before and not (tmp_path / "nowhere.json").exists()


def test_gate_markdown_replaces_its_own_summary_and_another_file_only_with_overwrite(
    stub: StubServer, tmp_path: Path
) -> None:
    run_dir = pairwise_run(stub, tmp_path)
    md = tmp_path / "gate.md"
    for _ in range(2):  # its own summary: replaced, not added to
        done = run_cli("gate", str(run_dir), "--markdown", str(md))
        assert done.returncode in (0, 1, 3), done.stderr
    assert md.read_text() == markdown(read_model(run_dir / "gate.json", Gate))
    notes = victim(tmp_path, "notes.md")
    refused(run_cli("gate", str(run_dir), "--markdown", str(notes)),
            f"{notes} exists and is not a gate's Markdown summary", "--overwrite")  # fmt: skip
    assert notes.read_text() == KEPT
    linked = link(tmp_path / "linked.md", md)
    refused(run_cli("gate", str(run_dir), "--markdown", str(linked), "--overwrite"),
            f"{linked} {LINKED}")  # fmt: skip
    assert run_cli("gate", str(run_dir), "--markdown", str(notes), "--overwrite").returncode != 2
    assert notes.read_text() == md.read_text()


def test_gate_markdown_appends_to_githubs_step_summary(stub: StubServer, tmp_path: Path) -> None:
    """GitHub's convention: each step appends to $GITHUB_STEP_SUMMARY; the file is known by
    its resolved path, whatever spelling --markdown gives."""
    run_dir = pairwise_run(stub, tmp_path)
    summary = tmp_path / "step_summary"
    summary.write_text("## Tests\n\nall passed\n")
    (tmp_path / "sub").mkdir()
    spellings = (summary, tmp_path / "sub" / ".." / "step_summary")
    for given in spellings:
        done = run_cli("gate", str(run_dir), "--markdown", str(given),
                       GITHUB_STEP_SUMMARY=str(summary))  # fmt: skip
        assert done.returncode in (0, 1, 3), done.stderr
    one = markdown(read_model(run_dir / "gate.json", Gate))
    assert summary.read_text() == "## Tests\n\nall passed\n" + one + one


def test_align_writes_only_a_directory_of_its_own(stub: StubServer, tmp_path: Path) -> None:
    """Not over its own -p, not through a link in DIR, not into a run directory, and DIR
    an existing file is a usage error: each refused before anything is read or sent."""
    run_dir = pairwise_run(stub, tmp_path)
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"id": "x", "label": "A"}])
    out = tmp_path / "aligned"
    out.mkdir()
    protocol = out / "protocol.toml"
    protocol.write_text(KEPT)

    def align(target: Path, *extra: str) -> subprocess.CompletedProcess[str]:
        return run_cli("align", str(run_dir), "--human", str(labels), "--optimizer",
                       "openai/judge", "--out", str(target), "--base-url", stub.base_url,
                       *extra, key="dummy")  # fmt: skip

    refused(align(out, "-p", str(protocol)), "this command's input")
    assert protocol.read_text() == KEPT
    protocol.unlink()
    target = victim(tmp_path)
    linked = link(out / "protocol.toml", target)
    refused(align(out), f"{linked} {LINKED}")
    untouched(linked, target)
    refused(align(run_dir), f"--out {run_dir} is the directory of a chatjudge run")
    refused(align(target), f"--out {target} is a file, not a directory")
    assert target.read_text() == KEPT and stub.stats.requests == 0
    assert sorted(p.name for p in out.iterdir()) == ["protocol.toml"]


def test_agree_and_compare_never_write_through_a_link(stub: StubServer, tmp_path: Path) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(4))
    runs = [tmp_path / "a", tmp_path / "b"]
    for run_dir in runs:
        assert judge(stub, data, run_dir).returncode == 0
    target = victim(tmp_path)
    labels = write_jsonl(tmp_path / "labels.jsonl",
                         [{"id": f"item-{i:04d}", "score": 3} for i in range(4)])  # fmt: skip
    linked = link(runs[0] / "agreement.json", target)
    refused(run_cli("agree", str(runs[0]), "--human", str(labels)), f"{linked} {LINKED}")
    untouched(linked, target)
    out = tmp_path / "compared"
    out.mkdir()
    page = link(out / "compare.html", target)
    refused(run_cli("compare", *map(str, runs), "--out", str(out)), f"{page} {LINKED}")
    untouched(page, target)
    assert sorted(p.name for p in out.iterdir()) == ["compare.html"]

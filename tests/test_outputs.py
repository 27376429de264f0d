"""Where the commands write (`chatjudge.outputs`), through the CLI in its own process against
the stand-in server: never over their own input nor over a run's files, over another
command's output only with --overwrite, and the same command resumes its own output. Where
a test repeats a refusal the CLI has already shown as exit 2, the repeats call the API in
this process (`api_refused`: the UsageError that the CLI turns into exit 2)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import chatjudge
from chatjudge.errors import UsageError
from chatjudge.options import ImportOptions
from chatjudge.traces import import_traces
from tests.runner.conftest import pointwise_rows, write_jsonl
from tests.support.cli import run_cli
from tests.support.stub_openai import StubServer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PAIRWISE = EXAMPLES / "pairwise_chat_quality.jsonl"  # 16 rows, with history and prompt
QUESTIONS = EXAMPLES / "questions.jsonl"  # 8 rows, for simulate
TRACES = EXAMPLES / "traces" / "otel-genai.jsonl"


def generate(stub: StubServer, data: Path, out: Path, *extra: str, model: str = "openai/a"):
    return run_cli("generate", str(data), "--model", model, "--base-url", stub.base_url,
                   "--out", str(out), "--quiet", *extra, key="dummy")  # fmt: skip


def simulate(stub: StubServer, data: Path, out: Path, *extra: str):
    return run_cli("simulate", str(data), "--assistant", "openai/a", "--assistant-base-url",
                   stub.base_url, "--max-turns", "2", "--out", str(out), "--quiet", *extra,
                   key="dummy")  # fmt: skip


def import_(trace: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli("import", str(trace), "--out", str(out), *extra)


def refused(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, done.stderr
    return " ".join(done.stderr.split())


def api_refused(
    command: str, data: Path, out: Path, overwrite: bool, stub: StubServer | None = None
) -> str:
    """`command` (generate, simulate or import) through the API, refused: its message."""
    with pytest.MonkeyPatch.context() as patch, pytest.raises(UsageError) as refusal:
        patch.setenv("OPENAI_API_KEY", "dummy")
        url = stub.base_url if stub else "http://127.0.0.1:9/v1"  # never reached
        if command == "generate":
            chatjudge.generate(data, "openai/a", out=out, base_url=url, overwrite=overwrite)
        elif command == "simulate":
            chatjudge.simulate(data, "openai/a", out=out, assistant_base_url=url, max_turns=2,
                               overwrite=overwrite)  # fmt: skip
        else:
            import_traces([data], out, ImportOptions(overwrite=overwrite))
    return " ".join(str(refusal.value).split())


def made(command: str, stub: StubServer, data: Path, out: Path) -> None:
    """An output of `command` (generate, simulate or import) to start from, made through the
    API in this process (the tests run the CLI where its exit status is the point)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "dummy")
        if command == "generate":
            chatjudge.generate(data, "openai/a", out=out, base_url=stub.base_url)
        elif command == "simulate":
            chatjudge.simulate(data, "openai/a", out=out, assistant_base_url=stub.base_url,
                               max_turns=2)  # fmt: skip
        else:
            import_traces([data], out, ImportOptions())


def record(out: Path) -> dict:
    return json.loads(out.with_name(out.stem + ".run.json").read_text())


def contents(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_import_never_writes_over_the_file_it_reads(tmp_path: Path) -> None:
    """Not by its own name, nor through a symlink, a hard link or another spelling of the
    path; --overwrite does not change it."""
    trace = Path(shutil.copy(TRACES, tmp_path / "export.jsonl"))
    before = trace.read_bytes()
    (tmp_path / "link.jsonl").symlink_to(trace)
    os.link(trace, tmp_path / "hard.jsonl")
    (tmp_path / "sub").mkdir()
    spellings = [trace, tmp_path / "link.jsonl", tmp_path / "hard.jsonl",
                 tmp_path / "sub" / ".." / "export.jsonl"]  # fmt: skip
    for out in spellings:  # through the CLI (exit 2) once, then through the API
        for overwrite in (False, True):
            if out == trace and not overwrite:
                message = refused(import_(trace, out))
            else:
                message = api_refused("import", trace, out, overwrite)
            assert "this command's input" in message and "not even --overwrite" in message
            assert trace.read_bytes() == before
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["export.jsonl", "hard.jsonl", "link.jsonl", "sub"]  # and no record


def test_generate_simulate_and_import_never_write_a_runs_files(
    stub: StubServer, tmp_path: Path
) -> None:
    """`generate --out RUN/results.jsonl` (or summary.json, ...) is refused, with --overwrite
    too, nothing is sent and the run is whole: `report RUN` still reads it. Each command is
    refused through the CLI (exit 2) once; the other files and --overwrite through the API."""
    run_dir = tmp_path / "run"
    judged = run_cli("run", str(PAIRWISE), "-p", "pairwise-chat-quality", "-j", "openai/judge",
                     "--base-url", stub.base_url, "--out", str(run_dir), "--quiet",
                     key="dummy")  # fmt: skip
    assert judged.returncode == 0, judged.stderr
    before = contents(run_dir)
    stub.stats.reset()
    target = run_dir / "results.jsonl"
    for done in (
        generate(stub, PAIRWISE, target, "--overwrite"),
        simulate(stub, QUESTIONS, target),
        import_(TRACES, target, "--overwrite"),
    ):
        message = refused(done)
        assert f"would write over results.jsonl of the chatjudge run in {run_dir}" in message
    inputs = {"generate": PAIRWISE, "simulate": QUESTIONS, "import": TRACES}
    for name in ("results.jsonl", "summary.json", "run.json"):
        for overwrite in (False, True):
            for command, data in inputs.items():
                message = api_refused(command, data, run_dir / name, overwrite, stub)
                assert f"would write over {name} of the chatjudge run in {run_dir}" in message
    assert stub.stats.requests == 0
    assert contents(run_dir) == before  # nothing replaced, nothing added
    reported = run_cli("report", str(run_dir))
    assert reported.returncode == 0, reported.stderr


def test_generate_with_another_model_over_an_output_is_refused_unless_overwrite(
    stub: StubServer, tmp_path: Path
) -> None:
    out = tmp_path / "answers.jsonl"
    made("generate", stub, PAIRWISE, out)
    other = write_jsonl(tmp_path / "other.jsonl", [{"id": "x", "prompt": "hi"}])
    before = contents(tmp_path)
    stub.stats.reset()
    message = refused(generate(stub, PAIRWISE, out, "--temperature", "0.5", model="openai/b"))
    assert f"{out} holds a different output" in message
    assert "model_under_test: openai/a vs openai/b" in message
    assert "option temperature: 0.0 vs 0.5" in message and "--overwrite" in message
    message = refused(generate(stub, PAIRWISE, out, "--field", "baseline_model_response"))
    assert "field: response vs baseline_model_response" in message
    assert "data: pairwise_chat_quality vs other" in refused(generate(stub, other, out))
    assert stub.stats.requests == 0 and contents(tmp_path) == before
    replaced = generate(stub, PAIRWISE, out, "--overwrite", model="openai/b")
    assert replaced.returncode == 0, replaced.stderr
    assert stub.stats.requests == 16  # openai/b's replies are not in the store
    assert record(out)["models"] == {"model_under_test": "openai/b"}
    assert json.loads(out.with_name("answers.summary.json").read_text())["model"] == "openai/b"


def test_simulate_over_any_other_file_is_refused_unless_overwrite(
    stub: StubServer, tmp_path: Path
) -> None:
    notes = tmp_path / "notes.jsonl"
    notes.write_text("my own notes, not chatjudge's\n")
    answers = tmp_path / "answers.jsonl"
    made("generate", stub, PAIRWISE, answers)
    made("import", stub, TRACES, tmp_path / "rows.jsonl")
    before = contents(tmp_path)
    stub.stats.reset()
    message = refused(simulate(stub, QUESTIONS, notes))
    assert f"{notes} exists, and no notes.run.json beside says that `chatjudge simulate`" in message
    assert "--overwrite to replace it" in message
    assert "command: generate vs simulate" in refused(simulate(stub, QUESTIONS, answers))
    assert "command: import vs simulate" in refused(
        simulate(stub, QUESTIONS, tmp_path / "rows.jsonl")
    )
    assert stub.stats.requests == 0 and contents(tmp_path) == before
    replaced = simulate(stub, QUESTIONS, notes, "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    conversations = [json.loads(line) for line in notes.read_text().splitlines()]
    assert len(conversations) == 8 and all("chat" in c for c in conversations)
    assert record(notes)["command"] == "simulate"


def test_import_over_another_file_is_refused_unless_overwrite(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    out.write_text('{"id": "kept"}\n')
    assert "no rows.run.json beside says that `chatjudge import`" in refused(import_(TRACES, out))
    assert out.read_text() == '{"id": "kept"}\n'
    assert import_(TRACES, out, "--overwrite").returncode == 0
    assert record(out)["command"] == "import" and "kept" not in out.read_text()
    message = refused(import_(TRACES, out, "--turns", "all"))  # another import's options
    assert "option turns: 'last' vs 'all'" in message


def test_the_same_command_again_resumes_there_sending_nothing(
    stub: StubServer, tmp_path: Path
) -> None:
    """The first time through the API, again through the CLI."""
    for command, data in ((generate, PAIRWISE), (simulate, QUESTIONS)):
        out = tmp_path / f"{command.__name__}.jsonl"
        made(command.__name__, stub, data, out)
        rows = out.read_bytes()
        stub.stats.reset()
        again = command(stub, data, out, "--concurrency", "3")  # not a result-changing option
        assert again.returncode == 0, again.stderr
        assert stub.stats.requests == 0 and out.read_bytes() == rows
    out = tmp_path / "rows.jsonl"
    made("import", stub, TRACES, out)
    rows = out.read_bytes()
    assert import_(TRACES, out).returncode == 0 and out.read_bytes() == rows


def test_an_unfinished_output_is_known_by_its_record(stub: StubServer, tmp_path: Path) -> None:
    """generate writes its record before its first call: an output a rejected key stopped
    (no summary yet) is resumed by the same command and refused to another."""
    data = write_jsonl(tmp_path / "d.jsonl", [{"id": f"r{i}", "prompt": f"Row {i}: hi"}
                                              for i in range(8)])  # fmt: skip
    out = tmp_path / "answers.jsonl"
    stub.configure(permanent={"Row 5:": "401"})
    stopped = generate(stub, data, out, "--concurrency", "1")
    assert stopped.returncode == 1, stopped.stderr  # 5 rows finished before the stop
    assert not out.with_name("answers.summary.json").exists()
    assert record(out)["models"] == {"model_under_test": "openai/a"}
    stub.configure(permanent={})
    stub.stats.reset()
    assert "model_under_test: openai/a vs openai/b" in refused(
        generate(stub, data, out, model="openai/b")
    )
    assert stub.stats.requests == 0
    resumed = generate(stub, data, out)
    assert resumed.returncode == 0, resumed.stderr
    assert stub.stats.requests == 3  # only the rows the stop left
    assert len(out.read_text().splitlines()) == 8


@pytest.mark.parametrize("extra", [(), ("--overwrite",)])
def test_run_never_judges_into_the_file_it_reads(
    stub: StubServer, tmp_path: Path, extra: tuple[str, ...]
) -> None:
    folder = tmp_path / "judged"
    folder.mkdir()
    data = write_jsonl(folder / "results.jsonl", pointwise_rows(3))
    before = data.read_bytes()
    done = run_cli("run", str(data), "-p", "interactivity-accuracy", "-j", "openai/judge",
                   "--base-url", stub.base_url, "--out", str(folder), *extra,
                   key="dummy")  # fmt: skip
    assert "which is this command's input" in refused(done)
    assert data.read_bytes() == before and stub.stats.requests == 0
    assert [p.name for p in folder.iterdir()] == ["results.jsonl"]


def test_gate_writes_over_a_gate_json_only_and_never_over_an_input(
    stub: StubServer, tmp_path: Path
) -> None:
    """--markdown (the CLI's alone) through the CLI; --out through the CLI without
    --overwrite (exit 2) and through the API (`chatjudge.gate`, a UsageError) with it."""
    run_dir = tmp_path / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "dummy")
        chatjudge.evaluate(PAIRWISE, "pairwise-chat-quality", "openai/judge", run_dir,
                           base_url=stub.base_url)  # fmt: skip
    data = Path(shutil.copy(PAIRWISE, tmp_path / "rows.jsonl"))
    notes = tmp_path / "notes.md"
    notes.write_text("# my notes\n")
    before = {**contents(run_dir), **contents(tmp_path)}
    for extra in ((), ("--overwrite",)):
        for args in (["--out", str(run_dir / "results.jsonl")],
                     ["--markdown", str(run_dir / "summary.json")]):  # fmt: skip
            if extra and args[0] == "--out":
                with pytest.raises(UsageError, match="of the chatjudge run in"):
                    chatjudge.gate(run_dir, out=run_dir / "results.jsonl", overwrite=True)
                continue
            message = refused(run_cli("gate", str(run_dir), *args, *extra))
            assert "of the chatjudge run in" in message
        for flag in ("--out", "--markdown"):
            if extra and flag == "--out":
                with pytest.raises(UsageError, match="this command's input"):
                    chatjudge.gate(run_dir, data=data, out=data, overwrite=True)
                continue
            args = ["--data", str(data), flag, str(data)]
            assert "this command's input" in refused(run_cli("gate", str(run_dir), *args, *extra))
    message = refused(run_cli("gate", str(run_dir), "--out", str(notes)))
    assert f"{notes} exists and is not a gate.json" in message and "--overwrite" in message
    assert {**contents(run_dir), **contents(tmp_path)} == before
    gated = tmp_path / "gate.json"
    for _ in range(2):  # a gate.json is gated over: worked out again from the runs, which stay
        outcome = chatjudge.gate(run_dir, out=gated).outcome
        assert json.loads(gated.read_text())["outcome"] == outcome
    replaced = run_cli("gate", str(run_dir), "--out", str(notes), "--overwrite")
    assert replaced.returncode in (0, 1, 3), replaced.stderr
    assert json.loads(notes.read_text())["runs"] == {"run": str(run_dir)}


def test_run_over_files_that_no_run_wrote_is_refused_unless_overwrite(
    stub: StubServer, tmp_path: Path
) -> None:
    data = write_jsonl(tmp_path / "d.jsonl", pointwise_rows(3))
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "summary.json").write_text('{"my": "own summary"}\n')
    args = ["run", str(data), "-p", "interactivity-accuracy", "-j", "openai/judge",
            "--base-url", stub.base_url, "--out", str(folder), "--quiet"]  # fmt: skip
    message = refused(run_cli(*args, key="dummy"))
    assert f"{folder} holds summary.json but no run.json" in message and "--overwrite" in message
    assert contents(folder) == {"summary.json": b'{"my": "own summary"}\n'}
    assert stub.stats.requests == 0
    replaced = run_cli(*args, "--overwrite", key="dummy")
    assert replaced.returncode == 0, replaced.stderr
    assert json.loads((folder / "summary.json").read_text())["n_items"] == 3

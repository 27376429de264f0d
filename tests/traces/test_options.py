"""--turns, --sample/--seed, --redact and --keep, on a chat-completions log of six
conversations (each of three turns) with user tiers in the records' metadata."""

from __future__ import annotations

import json
from pathlib import Path

from chatjudge.options import ImportOptions
from chatjudge.traces import import_traces
from tests.support.cli import run_cli
from tests.traces.conftest import read_rows

EMAIL = "ana.lopez@example.com"


def write_log(path: Path, order: list[int] | None = None) -> Path:
    records = []
    for c in range(6):
        sent: list[dict] = [{"role": "system", "content": "Be brief."}]
        for t in range(3):
            text = f"c{c} t{t}: mail me at {EMAIL}" if c == 0 else f"c{c} t{t}"
            sent.append({"role": "user", "content": text})
            reply = f"reply {c}.{t} (key sk-abc123DEF)"
            records.append(
                {
                    "timestamp": 1_700_000_000 + 100 * t + c,
                    "metadata": {"user.tier": "pro" if c % 2 else "free"},
                    "request": {"model": "prod-1", "messages": list(sent)},
                    "response": {
                        "model": "prod-1",
                        "choices": [{"message": {"role": "assistant", "content": reply}}],
                    },
                }
            )
            sent.append({"role": "assistant", "content": reply})
    if order:
        records = [records[i] for i in order]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def imported(tmp_path: Path, *args: str, log: Path | None = None) -> list[dict]:
    out = tmp_path / "rows.jsonl"
    source = log or write_log(tmp_path / "log.jsonl")
    done = run_cli("import", str(source), "--out", str(out), *args, "--overwrite")  # the last
    assert done.returncode == 0, done.stderr
    return read_rows(out)


def test_turns_last_is_the_default_and_all_gives_every_turn(tmp_path: Path) -> None:
    last = imported(tmp_path)
    assert len(last) == 6 and {r["turn"] for r in last} == {3}
    assert all(len(r["history"]) == 5 for r in last)  # system + two exchanges
    every = imported(tmp_path, "--turns", "all")
    assert len(every) == 18
    assert sorted((r["conversation_id"], r["turn"]) for r in every if r["turn"] == 3) == sorted(
        (r["conversation_id"], 3) for r in last
    )


def test_a_sample_is_reproducible_whatever_the_order_of_the_records(tmp_path: Path) -> None:
    """The first import through the CLI, the others through the importer in this process."""

    def sampled(seed: int, log: Path | None = None) -> list[str]:
        out = tmp_path / "rows.jsonl"
        options = ImportOptions(sample=3, seed=seed, overwrite=True)
        import_traces([log or tmp_path / "log.jsonl"], out, options)
        return sorted(r["prompt"] for r in read_rows(out))

    first = sorted(r["prompt"] for r in imported(tmp_path, "--sample", "3", "--seed", "7"))
    assert len(first) == 3
    assert sampled(7) == first
    shuffled = write_log(tmp_path / "shuffled.jsonl", order=[*range(17, -1, -1)])
    assert sampled(7, shuffled) == first
    assert len({tuple(sampled(seed)) for seed in range(5)}) > 1


def test_redact_replaces_matches_everywhere_before_writing(tmp_path: Path) -> None:
    rows = imported(
        tmp_path, "--turns", "all", "--redact", r"[\w.]+@[\w.]+", "--redact", r"sk-[A-Za-z0-9]+"
    )
    text = (tmp_path / "rows.jsonl").read_text()
    assert EMAIL not in text and "sk-abc123DEF" not in text
    first = next(r for r in rows if r["prompt"].startswith("c0 t2"))
    assert first["prompt"] == "c0 t2: mail me at [REDACTED]"
    assert first["history"][1]["content"] == "c0 t0: mail me at [REDACTED]"
    assert first["baseline_model_response"] == "reply 0.2 (key [REDACTED])"


def test_redact_covers_tool_arguments_and_results_not_roles_ids_or_names(
    tmp_path: Path,
) -> None:
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "find_user", "arguments": json.dumps({"mail": EMAIL})},
    }
    sent = [
        {"role": "user", "content": "Who am I?"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": f"Ana, {EMAIL}"},
    ]
    record = {"messages": sent, "choices": [{"message": {"role": "assistant", "content": "Ana."}}]}
    log = tmp_path / "tools.jsonl"
    log.write_text(json.dumps(record) + "\n")
    [row] = imported(tmp_path, "--redact", r"[\w.]+@[\w.]+", log=log)
    assert EMAIL not in (tmp_path / "rows.jsonl").read_text()
    [asked, answered, _] = row["baseline_trajectory"]
    assert asked["tool_calls"][0]["id"] == answered["tool_call_id"] == "c1"
    assert asked["tool_calls"][0]["function"] == {
        "name": "find_user",
        "arguments": '{"mail": "[REDACTED]"}',
    }
    assert answered == {"role": "tool", "tool_call_id": "c1", "content": "Ana, [REDACTED]"}


def test_redact_also_covers_a_session_id_without_merging_conversations(tmp_path: Path) -> None:
    records = [
        {
            "session_id": f"user{c}@example.com",
            "messages": [{"role": "user", "content": "Hi"}],
            "choices": [{"message": {"role": "assistant", "content": "Hello"}}],
        }
        for c in range(2)
    ]
    log = tmp_path / "sessions.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    rows = imported(tmp_path, "--redact", r"\S+@\S+", log=log)
    assert "@example.com" not in (tmp_path / "rows.jsonl").read_text()
    assert len({r["conversation_id"] for r in rows}) == 2


def test_keep_copies_an_attribute_into_its_own_column(tmp_path: Path) -> None:
    rows = imported(tmp_path, "--keep", "user.tier")
    tiers = {r["prompt"].split()[0]: r["user.tier"] for r in rows}
    assert tiers == {f"c{c}": ("pro" if c % 2 else "free") for c in range(6)}

"""`protocol_sha256`: one hash per protocol, changed by any edit that changes a verdict or its
reading, unchanged by words for people, the same in every process; and `check_recorded`,
which refuses a protocol given for a run that recorded another hash."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

import chatjudge
from chatjudge.errors import UsageError
from chatjudge.formats.run_info import RunInfo
from chatjudge.protocols import (
    ChoiceSpec,
    check_recorded,
    get_protocol,
    list_protocols,
    protocol_sha256,
)
from chatjudge.rundir import RunDir
from tests.otel.conftest import read_back
from tests.support.cli import run_cli
from tests.support.protocols import POLITE

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()  # e3b0c442...: what an empty template hashed to


def polite(tmp_path: Path, text: str = POLITE) -> Path:
    path = tmp_path / "polite.toml"
    path.write_text(text)
    return path


def test_an_edit_to_the_template_a_parse_rule_or_the_scale_changes_it(tmp_path: Path) -> None:
    original = get_protocol(polite(tmp_path))
    template = original.model_copy(update={"template": original.template + " Be strict."})
    path = original.model_copy(
        update={"scores": (original.scores[0].model_copy(update={"path": "verdict.polite"}),)}
    )
    scale = original.model_copy(
        update={"scores": (original.scores[0].model_copy(update={"max": 5}),)}
    )
    pairwise = get_protocol("pairwise-chat-quality")
    assert pairwise.choice is not None
    options = {"A": "BASELINE", "TIE": "TIE", "B": "CANDIDATE"}  # "SAME" read as "TIE" now
    choices = pairwise.model_copy(update={"choice": ChoiceSpec(options=options)})
    hashes = [protocol_sha256(p) for p in (original, template, path, scale)]
    assert len(set(hashes)) == 4
    assert protocol_sha256(choices) != protocol_sha256(pairwise)


def test_words_for_people_leave_it_alone(tmp_path: Path) -> None:
    original = get_protocol(polite(tmp_path))
    renamed = original.model_copy(
        update={"name": "courteous", "description": "Is it polite?", "provenance": {"seed": 1}}
    )
    assert protocol_sha256(renamed) == protocol_sha256(original)


def test_every_protocol_has_its_own_and_a_judge_free_one_hashes_its_rules() -> None:
    hashes = {p.name: protocol_sha256(p) for p in list_protocols()}
    assert len(set(hashes.values())) == len(hashes)
    assert hashes["tool-trajectory"] != EMPTY_SHA256
    trajectory = get_protocol("tool-trajectory")
    fewer = trajectory.model_copy(update={"metrics": trajectory.metrics[:1]})
    assert protocol_sha256(fewer) != hashes["tool-trajectory"]


def test_the_same_in_another_process(tmp_path: Path) -> None:
    path = polite(tmp_path)
    script = (
        "import sys\n"
        "from chatjudge.protocols import get_protocol, protocol_sha256\n"
        "for name in sys.argv[1:]:\n"
        "    print(protocol_sha256(get_protocol(name)))\n"
    )
    names = ["interactivity-accuracy", "pairwise-chat-quality", "tool-trajectory", str(path)]
    found = set()
    for seed in ("0", "1"):  # another string hash order: a set or dict order would show
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", script, *names], env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr
        found.add(tuple(done.stdout.split()))
    assert found == {tuple(protocol_sha256(get_protocol(n)) for n in names)}


def run_info(protocol: str, sha256: str | None) -> RunInfo:
    return RunInfo(
        protocol=protocol, protocol_sha256=sha256, judges=[], config={}, data="d", n_rows=1
    )


def test_a_protocol_given_for_a_run_must_have_its_recorded_hash(tmp_path: Path) -> None:
    original = get_protocol(polite(tmp_path))
    edited = get_protocol(polite(tmp_path, POLITE.replace("polite?", "rude?")))
    recorded = protocol_sha256(original)
    assert check_recorded(original, run_info("polite", recorded)) is original
    with pytest.raises(UsageError) as refused:
        check_recorded(edited, run_info("polite", recorded))
    assert protocol_sha256(edited) in str(refused.value) and recorded in str(refused.value)
    with pytest.raises(UsageError, match="judged with 'other'"):
        check_recorded(original, run_info("other", recorded))


def test_a_run_of_an_older_chatjudge_recorded_no_hash_and_is_not_refused(tmp_path: Path) -> None:
    old = RunInfo.model_validate(
        {"format": 1, "protocol": "polite", "judges": [], "config": {}, "data": "d", "n_rows": 1}
    )
    assert old.protocol_sha256 is None
    edited = get_protocol(polite(tmp_path, POLITE.replace("polite?", "rude?")))
    assert check_recorded(edited, old) is edited


# --- the commands given -p for a run that exists ------------------------------------------


def polite_judge(prompt: str) -> str:
    return '{"polite": 3}' if "please" in prompt else '{"polite": 1}'


def polite_run(tmp_path: Path, protocol: Path, name: str) -> Path:
    rows = [{"id": f"r{i}", "response": "please" if i % 2 else "no"} for i in range(6)]
    out = tmp_path / name
    chatjudge.evaluate(rows, protocol=str(protocol), judge=polite_judge, out=out, report=False)
    return out


def test_every_command_given_an_edited_protocol_refuses_it_naming_both_hashes(
    tmp_path: Path,
) -> None:
    path = polite(tmp_path)
    run, other = polite_run(tmp_path, path, "run"), polite_run(tmp_path, path, "other")
    recorded = protocol_sha256(get_protocol(path))
    assert RunDir(run).info.protocol_sha256 == recorded
    path.write_text(POLITE.replace("polite?", "polite? Be strict."))  # the same name, edited
    edited = protocol_sha256(get_protocol(path))
    (tmp_path / "labels.jsonl").write_text('{"id": "r0", "polite": 1}\n')
    data = tmp_path / "rows.jsonl"
    data.write_text('{"id": "r0", "response": "no"}\n')
    commands = {
        "export": ("export", str(run), "--otlp", str(tmp_path / "otlp.jsonl")),
        "align": ("align", str(run), "--human", str(tmp_path / "labels.jsonl"),
                  "--optimizer", "openai/o", "--out", str(tmp_path / "aligned")),
        "gate": ("gate", "--baseline", str(other), "--candidate", str(run)),
        "run": ("run", str(data), "--judge", "openai/j", "--base-url", "http://127.0.0.1:9",
                "--out", str(run)),
    }  # fmt: skip
    for command, args in commands.items():
        done = run_cli(*args, "-p", str(path))
        assert done.returncode == 2, (command, done.stderr)
        assert recorded in done.stderr and edited in done.stderr, (command, done.stderr)
    assert not (tmp_path / "otlp.jsonl").exists() and not (tmp_path / "aligned").exists()


def test_export_carries_the_hash_the_run_recorded(tmp_path: Path) -> None:
    path = polite(tmp_path)
    run = polite_run(tmp_path, path, "run")
    out = tmp_path / "otlp.jsonl"
    done = run_cli("export", str(run), "--otlp", str(out), "-p", str(path))
    assert done.returncode == 0, done.stderr
    hashes = {attrs["chatjudge.protocol.sha256"] for _, attrs in read_back(out)}
    assert hashes == {RunDir(run).info.protocol_sha256}

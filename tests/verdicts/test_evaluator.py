"""The evaluator fingerprint: every option that changes replies, changed alone, changes it;
what only chooses rows, paces or prices calls, or says where they go, does not."""

from __future__ import annotations

from typing import Any

import pytest

from chatjudge.formats.run_info import RunInfo
from chatjudge.options import RunConfig, option_fields
from chatjudge.options.declare import extra_of
from chatjudge.protocols import get_protocol
from chatjudge.verdicts.evaluator import (
    NOT_THE_JUDGE,
    VERDICT_PARSING,
    differences,
    evaluator,
    fingerprinted,
)

PROTOCOL = get_protocol("interactivity-accuracy")
JUDGE = {"provider": "openai", "model": "gpt-4o", "base_urls": ["https://a"]}
# A value other than the default for every option of `run` that enters the fingerprint: a
# new such option fails `test_the_table_names_every_fingerprint_option` until added here.
CHANGED: dict[str, Any] = {
    "samples": 3,
    "flip": False,
    "include_system": True,
    "judge_sees": "final",
    "tool_result_chars": 77,
    "match": "superset",
    "checked_tools": "write_*",
    "temperature": 0.7,
    "max_tokens": 99,
    "seed": 5,
}
# Fingerprint options that choose rows or name the endpoint; and options that never enter.
ROWS_OR_WHERE = {"limit": 5, "shard": "0/2", "base_url": ("http://elsewhere",)}
NEVER = {"concurrency": 3, "max_cost_usd": 1.0, "timeout": 5.0, "max_retries": 0}


def _of(**options: Any) -> str:
    config = RunConfig.from_options(options)
    return evaluator(PROTOCOL, [JUDGE], config).fingerprint


def test_the_table_names_every_fingerprint_option() -> None:
    declared = {n for n, info in option_fields("run") if extra_of(info)["fingerprint"]}
    assert declared == CHANGED.keys() | ROWS_OR_WHERE.keys()
    assert {"limit", "shard", "base_urls"} == NOT_THE_JUDGE


@pytest.mark.parametrize("name", sorted(CHANGED))
def test_each_option_that_changes_replies_changes_the_fingerprint(name: str) -> None:
    assert _of(**{name: CHANGED[name]}) != _of()


@pytest.mark.parametrize("name", sorted(ROWS_OR_WHERE | NEVER))
def test_rows_endpoints_pace_and_budget_leave_it_alone(name: str) -> None:
    assert _of(**{name: {**ROWS_OR_WHERE, **NEVER}[name]}) == _of()


def test_the_protocol_the_judges_and_the_parsing_version_change_it() -> None:
    base = fingerprinted("a" * 64, [JUDGE], {}).fingerprint
    assert fingerprinted("b" * 64, [JUDGE], {}).fingerprint != base
    other = {**JUDGE, "model": "gpt-4o-mini"}
    assert fingerprinted("a" * 64, [other], {}).fingerprint != base
    assert fingerprinted("a" * 64, [JUDGE], {}, VERDICT_PARSING + 1).fingerprint != base
    # where a judge is reached, and the order of a panel, are not who judges
    moved = {**JUDGE, "base_urls": ["http://replica"]}
    assert fingerprinted("a" * 64, [moved], {}).fingerprint == base
    panel = fingerprinted("a" * 64, [JUDGE, other], {}).fingerprint
    assert fingerprinted("a" * 64, [other, JUDGE], {}).fingerprint == panel


def _info(**options: Any) -> RunInfo:
    config = RunConfig.from_options(options)
    judges = [{"name": "openai/gpt-4o", **JUDGE}]
    return RunInfo(protocol=PROTOCOL.name, judges=judges, config=config.options(), data="d",
                   n_rows=1, evaluator=evaluator(PROTOCOL, judges, config))  # fmt: skip


def test_differences_name_the_parts_and_the_fingerprints() -> None:
    old, new = _info(), _info(temperature=0.5, samples=2)
    found = differences(old, new)
    assert found is not None
    short = [i.evaluator.short for i in (old, new) if i.evaluator is not None]
    assert found == [
        "option samples: 1 vs 2",
        "option temperature: 0.0 vs 0.5",
        f"evaluator fingerprint: {short[0]} vs {short[1]}",
    ]
    assert differences(old, _info(concurrency=2, limit=3)) == []


def test_a_run_older_than_the_fingerprint_is_unknown_never_changed() -> None:
    older = _info().model_copy(update={"evaluator": None})
    assert differences(older, _info(temperature=0.5)) is None
    assert differences(_info(), older) is None

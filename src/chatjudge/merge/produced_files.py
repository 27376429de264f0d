"""Merging the JSONL outputs of `generate --shard` and `simulate --shard` (each with its
store and summary beside it) into the file, store, summary and record one unsharded command
would have written. Each shard's summary lists where its rows stand among all input rows
(`shard.indexes`), which puts the rows back in input order."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from chatjudge import jsoncodec
from chatjudge.errors import UsageError
from chatjudge.formats.io import read_model, write_json
from chatjudge.formats.produced import (
    ASSISTANT,
    SIMULATED_USER,
    GenerationSummary,
    ProducedInfo,
    SimulationSummary,
)
from chatjudge.merge.parts import (
    ONLY_SHARD,
    check_cover,
    check_new,
    count_rows,
    data_differences,
    merge_stores,
    order_lines,
    read_lines,
    refuse,
    staged,
    sum_costs,
    sum_usage,
)
from chatjudge.rundir import Produced, option_differences
from chatjudge.summarize.generate_summary import TOOL_TOTALS, generated_tokens, generation_summary
from chatjudge.summarize.simulate_summary import (
    SIMULATION_TOOLS,
    Conversation,
    conversation_of,
    simulation_summary,
)

ProducedSummary = GenerationSummary | SimulationSummary


def merge_produced(files: Sequence[Path], out: Path, *, overwrite: bool = False) -> dict[str, Any]:
    """Join the shards' outputs `files` into `out` (with its store and summary beside it);
    returns the summary written. Refused (UsageError) before anything is written: shards of
    different commands, models or result-changing options, of different data, unfinished,
    or not covering 0..N-1 once each; an `out` that exists or is a shard."""
    shards = [Produced(Path(f)) for f in files]
    summaries = [_read(shard) for shard in shards]
    kinds = {s.kind for s in summaries}
    if len(kinds) > 1:
        kinds_of = [f"{f}: {s.kind}" for f, s in zip(files, summaries, strict=True)]
        raise refuse("outputs of generate and of simulate", kinds_of)
    check_cover(
        [
            (str(f), s.shard.shard if s.shard else None)
            for f, s in zip(files, summaries, strict=True)
        ]
    )
    first = summaries[0]
    differences = [
        f"{f}: {difference}"
        for f, s in zip(files[1:], summaries[1:], strict=True)
        for difference in _differences(first, s)
    ]
    if differences:
        raise refuse(f"the shards are outputs of different configurations (against {files[0]})",
                     differences)  # fmt: skip
    # rows per input row: simulate's samples, generate's (its options; 1 before it had any)
    samples = (
        first.samples
        if isinstance(first, SimulationSummary)
        else int(first.options.get("samples") or 1)
    )
    _check_finished(shards, summaries, samples)
    target = Produced(out)
    outputs = (out, target.store, target.summary, target.record)
    check_new(out, outputs, files, overwrite=overwrite, run_files=False)
    indexes = [s.shard.indexes if s.shard else [] for s in summaries]

    def position(number: int, row: int, line: bytes) -> int:
        try:
            parsed = jsoncodec.loads(line)
        except ValueError:
            parsed = None
        if not isinstance(parsed, dict):
            raise ValueError(
                "is cut off or not a JSON object: re-run that shard's command to finish it"
            )
        return indexes[number][row // samples] * samples + row % samples

    rows_files = [s.rows for s in shards]
    lines = order_lines(rows_files, position)  # every line read and checked before any write
    rows: list[tuple[int, Any]] = []  # (position, what the summary needs of the row)
    with staged(out, outputs, overwrite=overwrite, beside=True) as aside:
        merge_stores([shard.store for shard in shards], aside / target.store.name)
        with (aside / out.name).open("wb") as written:
            for place, (where, line) in enumerate(read_lines(rows_files, lines)):
                try:
                    rows.append((place, _needed(place, jsoncodec.loads(line), first)))
                except (AttributeError, KeyError, TypeError, ValueError) as exc:
                    raise UsageError(
                        f"{rows_files[where.file]}, line {where.number}, is not a row as "
                        f"{first.kind} writes it ({type(exc).__name__}: {exc}): re-run that "
                        "shard's command to rewrite it"
                    ) from None
                written.write(line)
        generations = [s for s in summaries if isinstance(s, GenerationSummary)]
        simulations = [s for s in summaries if isinstance(s, SimulationSummary)]
        summary = _generation(generations, rows) if generations else _simulation(simulations, rows)
        write_json(aside / target.record.name, _record(summary, first))
        return write_json(aside / target.summary.name, summary, only_set=True)


def _read(shard: Produced) -> ProducedSummary:
    path = shard.summary
    if not shard.rows.is_file() or not path.is_file():
        raise UsageError(
            f"{shard.rows} and {path} are needed: is {shard.rows} the output of a finished "
            "`chatjudge generate` or `simulate`?"
        )
    try:
        kind = jsoncodec.loads(path.read_bytes()).get("kind")
    except (AttributeError, ValueError):
        kind = None  # read_model says what is wrong with it
    model: type[ProducedSummary] = SimulationSummary if kind == "simulation" else GenerationSummary
    return read_model(path, model)


def _record(merged: ProducedSummary, first: ProducedSummary) -> ProducedInfo:
    """The merged output's record, as the unsharded command writes it: that command then
    resumes the merged output."""
    assert first.shard is not None  # every shard has its record (`check_cover`)
    if isinstance(merged, GenerationSummary):
        return ProducedInfo(
            command="generate",
            models={"model_under_test": merged.model},
            field=merged.field,
            data=first.shard.data,
            options=merged.options,
        )
    return ProducedInfo(
        command="simulate",
        models={ASSISTANT: merged.assistant, SIMULATED_USER: merged.user},
        data=first.shard.data,
        options=merged.options,
    )


def _differences(a: ProducedSummary, b: ProducedSummary) -> list[str]:
    found = []
    if a.shard and b.shard:
        if a.shard.data != b.shard.data:
            found.append(f"data: {a.shard.data} vs {b.shard.data}")
        found += data_differences(a.shard.data_sha256, b.shard.data_sha256)
    names = ("model", "field") if isinstance(a, GenerationSummary) else ("assistant", "user")
    for name in names:
        x, y = getattr(a, name), getattr(b, name)
        if x != y:
            found.append(f"{name}: {x} vs {y}")
    command = "generate" if isinstance(a, GenerationSummary) else "simulate"
    return found + option_differences(a.options, b.options, command, ignore=ONLY_SHARD)


def _check_finished(
    shards: Sequence[Produced], summaries: Sequence[ProducedSummary], samples: int
) -> None:
    """Every shard wrote all its rows (one stopped by its budget or killed has not: its
    command resumes it)."""
    problems = []
    for shard, summary in zip(shards, summaries, strict=True):
        expected = len(summary.shard.indexes) * samples if summary.shard else 0
        found = count_rows(shard.rows)
        if found != expected or expected != summary.n_rows * samples:
            problems.append(
                f"{shard.rows}: {found} of {summary.n_rows * samples} row(s) written; "
                "re-run its command to finish it"
            )
    if problems:
        raise refuse("unfinished shards", problems)


def _needed(place: int, row: dict[str, Any], first: ProducedSummary) -> Any:
    """What the summary takes from a row: generate's output tokens, simulate's figures."""
    if isinstance(first, GenerationSummary):
        return generated_tokens(row, first.field)
    return conversation_of(place, row)


def _generation(
    summaries: Sequence[GenerationSummary], rows: list[tuple[int, tuple[bool, float | None]]]
) -> GenerationSummary:
    first = summaries[0]
    return generation_summary(
        {i: float(tokens or 0) for i, (ok, tokens) in rows if ok},
        model=first.model,
        field=first.field,
        n_rows=sum(s.n_rows for s in summaries),
        n_ok=sum(s.n_ok for s in summaries),
        failures=sum_usage(s.failures for s in summaries),
        usage=sum_usage(s.usage for s in summaries),
        cost=sum_costs(s.cost for s in summaries),
        options={**first.options, "shard": None},
        extras=_skipped(first),
        tools={  # not in the rows: the shards' totals add up
            name: sum(getattr(s, name) for s in summaries) for name in TOOL_TOTALS
        },
        chatjudge_version=first.chatjudge_version,
    )


def _simulation(
    summaries: Sequence[SimulationSummary], rows: list[tuple[int, Conversation]]
) -> SimulationSummary:
    first = summaries[0]
    roles = dict.fromkeys(role for s in summaries for role in s.usage)
    return simulation_summary(
        [conversation for _, conversation in rows],
        samples=first.samples,
        assistant=first.assistant,
        user=first.user,
        n_rows=sum(s.n_rows for s in summaries),
        max_turns=first.max_turns,
        usage={role: sum_usage(s.usage.get(role, {}) for s in summaries) for role in roles},
        cost=sum_costs(s.cost for s in summaries),
        options={**first.options, "shard": None},
        extras=_skipped(first),
        # Causes, plain replies and tool totals are not in the rows: the shards' add up.
        failures=sum_usage(s.failures for s in summaries),
        plain_user_replies=sum(s.plain_user_replies for s in summaries),
        tools={name: sum(getattr(s, name) for s in summaries) for name in SIMULATION_TOOLS}
        if "tool_steps" in first.model_fields_set  # with --tools, as each shard's
        else None,
        chatjudge_version=first.chatjudge_version,
    )


def _skipped(first: ProducedSummary) -> dict[str, Any]:
    """Rows --skip-invalid left out: every shard validated every row, so the first's."""
    if not first.n_skipped:
        return {}
    return {"n_skipped": first.n_skipped, "skipped": first.skipped}

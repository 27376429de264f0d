"""`chatjudge align`: a judge's protocol with guidance learnt from a few human labels, kept
only when it agrees with people better on labels the optimiser never saw.

Reads a judged run and a labels file (`agree`'s format, checked row by row before anything
is sent), splits the labelled rows (`align.search`), has the optimiser write rules from the
select part's disagreements and picks rules, examples or both by cross-validation, then
re-judges the held-out rows with the chosen candidate and the original (`align.model_calls`).
Writes `DIR/protocol.toml` (a custom protocol, its provenance in it) and `DIR/alignment.json`;
`recommended` only when the held-out interval lies above 0.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from chatjudge.analysis.align.measure import human_ceiling
from chatjudge.analysis.align.model_calls import OPTIMIZER_STORE, AlignCalls
from chatjudge.analysis.align.search import Labelled, Search, TooFewHeldOut, search, split
from chatjudge.analysis.calibration import read_ratings
from chatjudge.calls.estimate import CostEstimate
from chatjudge.errors import UsageError
from chatjudge.formats.alignment import Alignment
from chatjudge.formats.io import write_json
from chatjudge.models import ModelSpec
from chatjudge.options import RunConfig
from chatjudge.outputs import check_dir_output
from chatjudge.protocols import Protocol, protocol_sha256
from chatjudge.protocols.kinds import PREFERENCE, kind_of
from chatjudge.protocols.toml import protocol_toml
from chatjudge.rundir import STORE, RunDir
from chatjudge.writing import open_write

ALIGNMENT, ALIGNED_PROTOCOL = "alignment.json", "protocol.toml"
NO_GAIN = "no gain shown on held-out labels"

__all__ = ["ALIGNED_PROTOCOL", "ALIGNMENT", "NO_GAIN", "TooFewHeldOut", "align_run"]


def align_run(
    run: str | Path,
    human: str | Path,
    optimizer: ModelSpec,
    out: str | Path,
    *,
    judge: ModelSpec | None = None,
    protocol: str | Path | Protocol | None = None,
    held_out: float = 0.4,
    seed: int = 0,
    column: str | None = None,
    score: str | None = None,
    dry_run: bool = False,
    config: RunConfig | None = None,
) -> Alignment | CostEstimate:
    """Align `run`'s judge to the labels in `human`; write `out`/protocol.toml and
    `out`/alignment.json and return the alignment (a dry run: the estimate, nothing sent
    or written). Raises `TooFewHeldOut` before anything is sent when fewer than 30 rows
    would be held out."""
    run_dir, human_path, out_dir = Path(run), Path(human), Path(out)
    config = config or RunConfig.from_options({}, progress=False)
    given = Path(protocol) if isinstance(protocol, str | Path) else None
    inputs = [human_path, *([given] if given is not None and given.is_file() else [])]
    written = [out_dir / name for name in (ALIGNED_PROTOCOL, ALIGNMENT, OPTIMIZER_STORE)]
    check_dir_output(out_dir, written, inputs)  # before anything is read or sent
    opened = RunDir(run_dir)
    info = opened.info
    source = opened.protocol(protocol)
    if not kind_of(source).judged:
        raise UsageError(
            f"{run_dir} was scored by {source.name}, which calls no judge: there is no judge "
            "prompt to align (align a run of an LLM-judged protocol)"
        )
    data = _labelled(opened, human_path, source, column, score)
    select, held = split(data.ids, held_out, seed)
    judge_spec = judge if judge is not None else _run_judge(info.judges)
    rows = {i: {"id": i, **data.fields[i]} for i in data.ids}
    calls = AlignCalls(out_dir, rows, judge_spec, optimizer, _judging_config(info.config, config),
                       run_store=run_dir / STORE, dry_run=dry_run)  # fmt: skip
    found = search(data, select, held, calls.judge, calls.write_rules, seed)
    if dry_run:
        return calls.estimate(len(data.ids))
    assert found.held_out is not None
    labels_sha = _sha256(human_path.read_bytes())
    source_sha = protocol_sha256(source)
    recommended = found.held_out.difference.ci95[0] > 0
    d = found.held_out.difference
    reason = (
        f"held-out agreement {found.held_out.before.agreement:.3f} -> "
        f"{found.held_out.after.agreement:.3f}, difference {d.value:+.3f} "
        f"[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}] over {d.n} rows"
    )
    reason = reason if recommended else f"{NO_GAIN}: {reason}"
    ceiling = human_ceiling(data.labels)
    warnings = []
    if found.no_rules:
        warnings.append(
            f"the optimiser wrote no rules ({', '.join(found.no_rules)}): there, the rules "
            "candidate is the original prompt and both is the examples, each judged once"
        )
    if ceiling is not None and found.held_out.before.agreement >= ceiling.agreement:
        warnings.append(
            f"the judge already agrees with the humans ({found.held_out.before.agreement:.3f} "
            f"on held-out rows) as well as they agree with each other ({ceiling.agreement:.3f}): "
            "there is little left to align, and rules may learn the raters' noise"
        )
    result = Alignment(
        recommended=recommended,
        reason=reason,
        run=str(run_dir),
        human=str(human_path),
        protocol=source.name,
        protocol_sha256=source_sha,
        labels_sha256=labels_sha,
        judge=_name(judge_spec),
        optimizer=calls.optimizer.name,
        seed=seed,
        held_out_share=held_out,
        score=None if kind_of(source).prefers else data.deciding,
        n_labelled=len(data.ids),
        select_ids=select,
        selection=found.selection,
        chosen=found.chosen,
        rules=found.rules,
        example_ids=found.examples,
        held_out=found.held_out,
        human_ceiling=ceiling,
        warnings=warnings,
        optimizer_calls=calls.optimizer_calls,
        judge_calls=calls.judge_calls,
        cost_usd=None if calls.cost_usd is None else round(calls.cost_usd, 6),
    )
    _write(out_dir, found, result)
    return result


def _labelled(
    run: RunDir, human: Path, protocol: Protocol, column: str | None, score: str | None
) -> Labelled:
    """The labelled rows the run judged ok, with their labels (a bad labels file is
    refused here, naming its row and field)."""
    _ = run.summary  # a directory that is not a finished run is refused first
    records = list(run.results())
    columns, ratings = read_ratings(run, human, records, column=column, score=score)
    if kind_of(protocol).prefers:
        assert protocol.choice is not None
        deciding = protocol.choice.name
        ratings = {deciding: ratings[PREFERENCE]}
    else:
        rated = set(columns.values())
        deciding = (
            next(s.name for s in protocol.scores if s.name in rated)
            if any(s.name in rated for s in protocol.scores)
            else next(iter(rated))
        )
    ok = [r for r in records if r.status == "ok" and any(r.id in by for by in ratings.values())]
    ids = tuple(r.id for r in ok if r.id in ratings[deciding])
    if not ids:
        raise UsageError(f"no row of {run.path} judged ok has a label in {human}")
    return Labelled(
        protocol=protocol,
        deciding=deciding,
        ids=ids,
        verdicts={r.id: r.scores for r in ok},
        rationales={r.id: " ".join(r.rationale.values()) for r in ok},
        fields={r.id: {k: v for k, v in r.fields.items() if k != "id"} for r in ok},
        ratings=ratings,
    )


def _run_judge(judges: list[dict[str, Any]]) -> str:
    if len(judges) != 1:
        raise UsageError("align aligns one judge: this run has a panel; name one with --judge")
    name = str(judges[0]["name"])
    if name.startswith("python/"):
        raise UsageError(
            f"the run's judge is a Python function ({name}): pass it again (judge=...)"
        )
    return name


def _judging_config(recorded: dict[str, Any], given: RunConfig) -> RunConfig:
    """The run's options that change a verdict (samples, flip, what the judge sees,
    generation and parse retries), with align's own for how calls are sent and paid."""
    keep = ("samples", "flip", "include_system", "judge_sees", "tool_result_chars",
            "temperature", "max_tokens", "seed", "parse_retries")  # fmt: skip
    options = {k: recorded[k] for k in keep if k in recorded}
    options.update(given.changed())
    options["overwrite"] = True  # a judging's directory is align's own
    return RunConfig.from_options(options, progress=False)


def _write(out_dir: Path, found: Search, result: Alignment) -> None:
    held = result.held_out
    provenance = {
        "source": result.protocol,
        "source_sha256": result.protocol_sha256,
        "labels": result.human,
        "labels_sha256": result.labels_sha256,
        "run": result.run,
        "seed": result.seed,
        "held_out_share": result.held_out_share,
        "judge": result.judge,
        "optimizer": result.optimizer,
        "candidate": result.chosen,
        "recommended": result.recommended,
        "held_out_n": held.n,
        "agreement_before": round(held.before.agreement, 6),
        "agreement_after": round(held.after.agreement, 6),
        "difference": round(held.difference.value, 6),
        "difference_ci95": [round(x, 6) for x in held.difference.ci95],
    }
    protocol = found.protocol.model_copy(update={"provenance": provenance})
    header = (
        f"Aligned by `chatjudge align` from protocol {result.protocol!r} ({result.chosen}).\n"
        "The source template is kept as it is; the guidance block is appended at its end.\n"
        f"{result.reason}."
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    with open_write(out_dir / ALIGNED_PROTOCOL) as toml:  # never through a symbolic link
        toml.write(protocol_toml(protocol, header).encode())
    write_json(out_dir / ALIGNMENT, result)


def _name(spec: ModelSpec) -> str:
    return spec if isinstance(spec, str) else f"python/{getattr(spec, '__qualname__', spec)}"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()

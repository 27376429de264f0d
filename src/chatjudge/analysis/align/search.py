"""The honest part of `chatjudge align`: the split, the search on the select part, and the
held-out measurement, given a way to judge rows and a way to have rules written.

The labelled rows judged ok are split, with a recorded seed, into a select part and a
held-out part (`held_out` of them, 40% by default). Nothing below reads the held-out part
before the final measurement: every rule is written from select rows' disagreements, every
example is a select row, and candidates are compared by cross-validation within the select
part (each fold judged with guidance built from the other folds). The best candidate is
then rebuilt from the whole select part, and the judge re-judges the held-out rows with it
and with the original protocol.

`Judging` and `RuleWriter` are what the library's command passes in (its engine and the
optimiser's session: `model_calls`); `bench/align_calibration.py` passes an in-process
stand-in, so the calibration runs exactly this code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from chatjudge.analysis.align.guidance import (
    CANDIDATES,
    MAX_EXAMPLES,
    Candidate,
    Case,
    case_of,
    guided,
    optimizer_prompt,
    read_rules,
)
from chatjudge.analysis.align.measure import figures, held_out_difference, row_agreement
from chatjudge.errors import ChatJudgeError, ExitCode
from chatjudge.formats.alignment import HeldOut
from chatjudge.protocols import Protocol

MIN_HELD_OUT = 30
FOLDS = 3

# (protocol, a name for this judging, the ids) -> the judge's scores of the ids judged ok
Judging = Callable[[Protocol, str, Sequence[str]], Mapping[str, Mapping[str, Any]]]
# (the optimiser's prompt, a name for the call) -> its reply text
RuleWriter = Callable[[str, str], str]


@dataclass(frozen=True)
class Labelled:
    """The labelled rows judged ok, as align works on them: the run's verdicts (scores,
    rationale, fields) and the humans' labels in the same terms, per rated score."""

    protocol: Protocol
    deciding: str  # the score (pairwise: `pairwise_choice`) whose agreement decides
    ids: tuple[str, ...]  # in the run's order
    verdicts: Mapping[str, Mapping[str, Any]]
    rationales: Mapping[str, str]
    fields: Mapping[str, Mapping[str, Any]]
    ratings: Mapping[str, Mapping[str, Sequence[Any]]]  # score -> id -> labels

    @property
    def labels(self) -> Mapping[str, Sequence[Any]]:
        return self.ratings[self.deciding]


class TooFewHeldOut(ChatJudgeError):
    """Fewer than `MIN_HELD_OUT` held-out rows: no gain could be shown (exit 3), found
    before anything is sent."""

    exit_code = ExitCode.INCONCLUSIVE


def split(ids: Sequence[str], share: float, seed: int) -> tuple[list[str], list[str]]:
    """(select, held out): a seeded random `share` of the ids held out, both in `ids`'s
    order; refused (`TooFewHeldOut`) when fewer than 30 would be held out."""
    if not 0 < share < 1:
        raise ValueError(f"--held-out must lie between 0 and 1, got {share:g}")
    n_held = int(round(share * len(ids)))
    if n_held < MIN_HELD_OUT:
        raise TooFewHeldOut(
            f"{len(ids)} labelled rows judged ok give {n_held} held-out rows at --held-out "
            f"{share:g}: at least {MIN_HELD_OUT} are needed to check a gain on labels the "
            f"optimiser never saw (label about {int(np.ceil(MIN_HELD_OUT / share))} rows, or "
            "raise --held-out)"
        )
    order = np.random.default_rng(seed).permutation(len(ids))
    held = {ids[k] for k in order[:n_held]}
    return [i for i in ids if i not in held], [i for i in ids if i in held]


def folds(ids: Sequence[str], seed: int, k: int = FOLDS) -> list[list[str]]:
    """The select part in `k` seeded folds (each in `ids`'s order)."""
    order = np.random.default_rng([seed, 1]).permutation(len(ids))
    fold_of = {ids[j]: n % k for n, j in enumerate(order)}
    return [[i for i in ids if fold_of[i] == f] for f in range(k)]


@dataclass
class Search:
    """What the search found: the candidates' cross-validated agreement on the select part
    (and the original's, from the run), the chosen one rebuilt from the whole select part,
    and its held-out figures."""

    selection: dict[str, float]
    chosen: Candidate
    rules: list[str]
    examples: list[str]
    protocol: Protocol
    held_out: HeldOut | None = None
    prompts: list[str] = field(default_factory=list)  # every optimiser prompt, in order
    no_rules: list[str] = field(default_factory=list)  # the optimiser calls that wrote none


def search(
    data: Labelled,
    select: Sequence[str],
    held: Sequence[str],
    judging: Judging,
    write_rules: RuleWriter,
    seed: int,
) -> Search:
    """Choose a candidate on `select` by cross-validation, rebuild it from all of `select`,
    and measure it against the original on `held` (None figures when `judging` judged
    nothing: a dry run). A prompt is judged once on the same rows: with no rules written,
    `both` is `examples` and `rules` the original (`guided`)."""
    prompts: list[str] = []
    no_rules: list[str] = []
    judged_by_prompt: dict[tuple[str, tuple[str, ...]], Mapping[str, Mapping[str, Any]]] = {}

    def judge_once(protocol: Protocol, name: str, ids: Sequence[str]) -> Mapping[str, Any]:
        key = (protocol.template, tuple(ids))
        if key not in judged_by_prompt:
            judged_by_prompt[key] = judging(protocol, name, ids)
        return judged_by_prompt[key]

    scores: dict[str, list[float]] = {c: [] for c in CANDIDATES}
    for k, fold in enumerate(folds(select, seed)):
        train = [i for i in select if i not in set(fold)]
        rules, examples = _guidance(
            data, train, write_rules, f"fold-{k + 1}", seed, prompts, no_rules
        )
        for candidate in CANDIDATES:
            protocol = guided(data.protocol, candidate, rules, examples)
            judged = judge_once(protocol, f"fold-{k + 1}-{candidate}", fold)
            scores[candidate] += [
                row_agreement(judged[i], data.labels[i], data.deciding) for i in fold if i in judged
            ]
    selection = {c: float(np.mean(v)) if v else float("nan") for c, v in scores.items()}
    original = [row_agreement(data.verdicts[i], data.labels[i], data.deciding) for i in select]
    selection["original"] = float(np.mean(original))
    chosen = max(CANDIDATES, key=lambda c: -1.0 if np.isnan(selection[c]) else selection[c])
    rules, examples = _guidance(data, select, write_rules, "final", seed, prompts, no_rules)
    protocol = guided(data.protocol, chosen, rules, examples)
    found = Search(selection, chosen, rules if chosen != "examples" else [],
                   [e.id for e in examples] if chosen != "rules" else [], protocol,
                   prompts=prompts, no_rules=no_rules)  # fmt: skip
    before = judge_once(data.protocol, "held-out-original", held)
    after = judge_once(protocol, "held-out-aligned", held)
    if before or after:
        found.held_out = HeldOut(
            n=len(held),
            ids=list(held),
            before=figures(before, data.ratings, data.deciding, held),
            after=figures(after, data.ratings, data.deciding, held),
            difference=held_out_difference(before, after, data.labels, data.deciding, held),
        )
    return found


def _guidance(
    data: Labelled,
    train: Sequence[str],
    write_rules: RuleWriter,
    name: str,
    seed: int,
    prompts: list[str],
    no_rules: list[str],
) -> tuple[list[str], list[Case]]:
    """Rules written from `train`'s disagreements, and examples chosen from `train`; `name`
    joins `no_rules` when the optimiser, asked, wrote none."""
    cases = {i: _case(data, i) for i in train}
    disagree = [
        i for i in train if row_agreement(data.verdicts[i], data.labels[i], data.deciding) < 1
    ]
    rules: list[str] = []
    if disagree:
        prompt = optimizer_prompt(data.protocol, [cases[i] for i in disagree])
        prompts.append(prompt)
        rules = read_rules(write_rules(prompt, name))
        if not rules:
            no_rules.append(name)
    rng = np.random.default_rng([seed, 2, len(prompts)])
    agree = [i for i in train if i not in set(disagree)]
    picked = [*rng.permutation(disagree).tolist(), *rng.permutation(agree).tolist()]
    return rules, [cases[i] for i in picked[:MAX_EXAMPLES]]


def _case(data: Labelled, item_id: str) -> Case:
    verdict = data.verdicts[item_id]
    shown = ", ".join(f"{s}={_display(data.protocol, verdict[s])}" for s in data.ratings)
    labels = [_display(data.protocol, h) for h in data.labels[item_id]]
    if len(data.ratings) == 1:
        shown = _display(data.protocol, verdict[data.deciding])
    return case_of(data.protocol, item_id, data.fields[item_id], shown,
                   data.rationales.get(item_id, ""), labels)  # fmt: skip


def _display(protocol: Protocol, value: Any) -> str:
    """A verdict or label as the judge writes it: `B` for the candidate (unflipped), a
    score as its number."""
    if protocol.choice is not None and isinstance(value, str):
        written = {side: label for label, side in protocol.choice.options.items()}
        return written.get(value, value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)

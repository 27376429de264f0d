"""Calibration of `chatjudge align`'s held-out proof, with the stand-in of
tests/support/align_standin.py: a judge whose verdicts follow the rules (and labelled
examples) in its prompt, a hidden labelling policy, and an optimiser that writes one rule
per case from the disagreements it is shown.

(a) Power: the stand-in's unguided verdicts agree with the policy on about 60% of rows and
    its rule-following ones on about 90%; share of alignments at 100 labels whose held-out
    interval lies above 0 (the issue asks for at least 80%).
(b) Size: labels that are pure noise; share of alignments that claim a gain (at most
    2.5% + 2 Monte Carlo SE, and at most 3.5%, over at least 1,000 runs).
(c) Calls and time per alignment through the real command (`chatjudge.align`: engines,
    stores, the optimiser's session) with the stand-in as Python functions.

(a) and (b) run `analysis.align.search.search`, the command's own split, cross-validated selection
and held-out measurement, with the judge in-process (no engine, no store): the stand-in's
verdict on a row is a pure function of its case and its prompt's guidance, so judging a
protocol is parsing its guidance once.

    PYTHONPATH=src:. python bench/align_calibration.py [--power-runs 300] [--size-runs 1000]
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import chatjudge
from chatjudge.analysis.align.search import Labelled, search, split
from chatjudge.formats.alignment import Alignment
from chatjudge.protocols import Protocol, get_protocol
from tests.support import align_standin as standin

SIDE = {"A": "BASELINE", "B": "CANDIDATE", "SAME": "TIE"}
PROTOCOL = get_protocol("pairwise-chat-quality")


def judging(protocol: Protocol, name: str, ids: Sequence[str]) -> Mapping[str, Any]:
    """The stand-in's verdicts on `ids` with `protocol`'s guidance, in-process."""
    guidance = protocol.template.partition(standin.GUIDANCE)[2]
    verdict = {c: SIDE[standin.guided_verdict(c, guidance)] for c in range(standin.N_CASES)}
    return {i: {"pairwise_choice": verdict[standin.case_of(i)]} for i in ids}


def write_rules(prompt: str, name: str) -> str:
    return standin.write_rules(prompt)


def one_alignment(run: int, n_labels: int, noise: bool) -> bool:
    """Whether one alignment on fresh rows claims a gain (lower end above 0)."""
    rows = standin.rows(n_labels, prefix=f"{'n' if noise else 'p'}{run}-")
    ids = tuple(r["id"] for r in rows)
    labels = {i: [SIDE[standin.noise(i, run) if noise else standin.policy(i)]] for i in ids}
    data = Labelled(
        protocol=PROTOCOL,
        deciding="pairwise_choice",
        ids=ids,
        verdicts=judging(PROTOCOL, "run", ids),
        rationales={},
        fields={r["id"]: r for r in rows},
        ratings={"pairwise_choice": labels},
    )
    select, held = split(ids, 0.4, seed=run)
    found = search(data, select, held, judging, write_rules, seed=run)
    assert found.held_out is not None
    return found.held_out.difference.ci95[0] > 0


def share(runs: int, n_labels: int, noise: bool) -> tuple[float, float, float]:
    """(share claiming a gain, its Monte Carlo SE, seconds per run)."""
    started = time.perf_counter()
    hits = sum(one_alignment(run, n_labels, noise) for run in range(runs))
    p = hits / runs
    return p, math.sqrt(p * (1 - p) / runs), (time.perf_counter() - started) / runs


def command_costs(n_labels: int) -> tuple[Alignment, float]:
    """One alignment through `chatjudge.align` (engines, stores, the optimiser's session)."""
    rows = standin.rows(n_labels)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        chatjudge.evaluate(rows, "pairwise-chat-quality", judge=standin.judge, out=root / "run",
                           flip=False, report=False)  # fmt: skip
        labels = root / "labels.jsonl"
        labels.write_text("".join(json.dumps({"id": r["id"], "label": standin.policy(r["id"])})
                                  + "\n" for r in rows))  # fmt: skip
        started = time.perf_counter()
        a = chatjudge.align(root / "run", human=labels, optimizer=standin.write_rules,
                            judge=standin.judge, out=root / "aligned")  # fmt: skip
        assert isinstance(a, Alignment)
        return a, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--power-runs", type=int, default=300)
    parser.add_argument("--size-runs", type=int, default=1000)
    parser.add_argument("--labels", type=int, default=100)
    args = parser.parse_args()

    p, se, per = share(args.power_runs, args.labels, noise=False)
    print(f"(a) power at {args.labels} labels: gain shown in {p:.1%} ± {se:.1%} (MC SE) of "
          f"{args.power_runs} runs (target >= 80%); {per * 1000:.1f} ms a run")  # fmt: skip
    p, se, per = share(args.size_runs, args.labels, noise=True)
    bound = 0.025 + 2 * se
    verdict = "ok" if p <= min(bound, 0.035) else "TOO MANY"
    print(f"(b) noise labels: gain claimed in {p:.2%} ± {se:.2%} of {args.size_runs} runs "
          f"(allowed: <= 2.5% + 2 SE = {bound:.2%}, and <= 3.5%): "
          f"{verdict}; {per * 1000:.1f} ms a run")  # fmt: skip
    a, seconds = command_costs(args.labels)
    print(
        f"(c) one alignment through chatjudge.align at {args.labels} labels: "
        f"{a.optimizer_calls} optimiser calls, {a.judge_calls} judge calls "
        f"(3 candidates x {len(a.select_ids)} select rows + 2 x {a.held_out.n} held-out "
        f"rows; x2 with both orders), {seconds:.1f} s with in-process judges (a Python "
        "function has no price: the cost of a priced model is these calls at its price)"
    )


if __name__ == "__main__":
    main()

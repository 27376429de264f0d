"""`chatjudge realism --tune`: a simulated user's instructions tuned until a judge cannot tell
its conversations from real ones, and the gain proven on held-out real conversations.

Built as `align` is. Set up before anything is sent (`set_up_tune`): the real conversations'
goals split with the seed, 60% to tune and 40% held out (at least 50: else exit 3 with the
number needed). After the command's own measurement (every goal simulated with the original
instructions and marked), `tune_search` writes and chooses guidance on the tuning goals
only, and simulates the held-out goals with the tuned instructions; `tune_measure` compares
them with the original's on the same goals. Writes `DIR/user_prompt.txt` (the original
instructions with the guidance appended, its provenance in leading `#` lines, which
`simulate --user-prompt` skips) and realism.json's `tuning`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from chatjudge.calls.budget import Budget
from chatjudge.formats.realism import TunedHeldOut, Tuning
from chatjudge.models import ModelSpec, get_model
from chatjudge.options import RunConfig
from chatjudge.produce.user import load_instructions
from chatjudge.user_realism.command import Outcome, Realism
from chatjudge.user_realism.real import RealConversation
from chatjudge.user_realism.tune_calls import TuneCalls
from chatjudge.user_realism.tune_guidance import provenance
from chatjudge.user_realism.tune_measure import gain_shown, held_out, overshoot
from chatjudge.user_realism.tune_search import HELD_OUT, TuneSetUp, search, tuning_split
from chatjudge.writing import open_write

USER_PROMPT = "user_prompt.txt"
NO_GAIN = "no gain shown on held-out conversations"


def set_up_tune(
    reals: Sequence[RealConversation], optimizer: ModelSpec, config: RunConfig, *,
    check_key: bool,
) -> TuneSetUp:  # fmt: skip
    """The split (`--seed`, 0 without it) and the optimiser; `TooFewGoals` (exit 3) before
    anything is sent."""
    seed = config.generation.seed or 0
    tuning, held = tuning_split([r.id for r in reals], seed)
    model = get_model(optimizer, config.client, call_with="messages", check_key=check_key)
    return TuneSetUp(model, seed, tuning, held)


def tune(job: Realism, outcome: Outcome, budget: Budget | None) -> Tuning:
    """The tuning of `job`'s simulated user from its measured `outcome`, in `budget`;
    writes `DIR/user_prompt.txt` and returns realism.json's `tuning`."""
    assert job.tune is not None
    setting = job.tune
    samples = {s.goal_id: s for s in outcome.samples}
    tuning = {i: samples[i] for i in setting.tuning if i in samples}
    before = {i: samples[i] for i in setting.held if i in samples}
    calls = TuneCalls(job, outcome.goals, setting.optimizer, budget)
    instructions = load_instructions(job.config.simulation.user_prompt).text
    found = search(instructions, tuning, setting.held, calls.simulate, calls.write_rules,
                   setting.seed)  # fmt: skip
    figures = held_out(setting.held, before, found.after, seed=setting.seed)
    shown = gain_shown(figures)
    reason = _reason(figures) if shown else f"{NO_GAIN}: {_reason(figures)}"
    result = Tuning(
        gain_shown=shown,
        reason=reason,
        overshoot=overshoot(figures),
        optimizer=setting.optimizer.name,
        seed=setting.seed,
        held_out_share=HELD_OUT,
        tuning_ids=setting.tuning,
        candidates=found.selection,
        chosen=found.chosen,
        rules=found.rules,
        examples=found.examples,
        held_out=figures,
        optimizer_calls=len(found.prompts),
    )
    source = job.config.simulation.user_prompt
    header = [
        f"Tuned by `chatjudge realism --tune` ({found.chosen}) from "
        f"{'the shipped instructions' if source is None else Path(source).name}; the "
        "guidance is appended at the end. simulate --user-prompt skips these # lines.",
        f"data: {job.record.data}; judge: {job.record.models.get('judge')}; optimizer: "
        f"{setting.optimizer.name}; seed: {setting.seed}",
        f"tuning goals: {len(setting.tuning)}; held out: {len(setting.held)}",
        reason if shown else f"{reason}: use it with care",
    ]
    if result.overshoot:
        header.append("overshoot: the judge takes the tuned user for the real one")
    with open_write(job.out / USER_PROMPT) as out:  # never through a symbolic link
        out.write((provenance(header) + found.instructions).encode())
    return result


def _reason(found: TunedHeldOut) -> str:
    d, before, after = found.difference, found.before, found.after
    ci = "no interval" if d.ci95 is None else f"[{d.ci95[0]:+.3f}, {d.ci95[1]:+.3f}]"
    text = (
        f"held-out discriminator accuracy {before.value:.3f} -> {after.value:.3f}, "
        f"difference {d.value:+.3f} {ci} over {found.n_goals} goals"
    )
    widened = [name for name, w in found.behaviours.items() if w.widened]
    if widened:
        text += f"; the gap to real users widened: {', '.join(widened)}"
    return text

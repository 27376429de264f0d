"""Does `chatjudge realism --tune` claim a gain only where there is one? Issue 44's case (c),
run through the tuning's own code (`realism.tune_search.search`, `realism.tune_measure`)
with the scripted users of `bench/realism_scripts.py` (no model, no network):

- the simulated user honours the rules it is given: one fact per message, no thanks,
  lowercase, each when its instructions say so (examples it ignores);
- the optimiser writes rules from what it is shown: the disclosure gap, the judge's reasons;
- the discriminator is the stand-in judge of case (b), deciding from the text only.

(c1) gain: "real" users `terse`, the default simulator `polite`; a gain shown on held-out
     goals in >= 80% of runs;
(c2) no false claims: the simulator already writes as the real users (`mixed` on both
     sides); a gain claimed in <= 2.5% + 2 MC SE of runs.

At 125 goals, the fewest `--tune` accepts (50 held out): the issue's 100 goals hold out 40,
which the command refuses (exit 3).

    python bench/realism_tune_calibration.py         # 125 goals (50 held out), 200 runs a case
    python bench/realism_tune_calibration.py --goals 250 --runs 100
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from realism_scripts import (  # noqa: E402
    Goal,
    disclosed,
    make_goal,
    pick_real,
    pushback,
    side,
    user_messages,
)

from chatjudge.user_realism.sample import GoalSample, UserSide  # noqa: E402
from chatjudge.user_realism.tune_measure import gain_shown, held_out  # noqa: E402
from chatjudge.user_realism.tune_search import search, tuning_split  # noqa: E402

INSTRUCTIONS = "You play a user. Your goal: {question}. You know: {user_context}."
ONE_FACT, NO_THANKS, LOWERCASE = (
    "Give one fact per message.",
    "Do not thank the assistant.",
    "Write short lowercase messages.",
)
_THANK = re.compile(r"\b(thank|thanks)\b", re.IGNORECASE)


def honoured(goal: Goal, style: str, rules: str, rng: random.Random) -> UserSide:
    """The scripted user in `style`, following the rules its instructions hold."""
    messages, _ = user_messages(goal, style, rng)
    if ONE_FACT in rules:
        need = goal.short_need if LOWERCASE in rules else goal.need
        kept = [m for m in messages if _THANK.search(m)]
        messages = [f"{need} {goal.facts[0]}", *goal.facts[1:], *kept[-1:]]
    if NO_THANKS in rules:
        messages = [m for m in messages if not _THANK.search(m)] or messages[:1]
    if LOWERCASE in rules:
        messages = [m.lower() for m in messages]
    return UserSide(tuple(messages), True, disclosed(goal, messages[0]), pushback(messages))


def sample(goal_id: str, real: UserSide, sims: Sequence[UserSide]) -> GoalSample:
    verdicts, reasons = [], []
    for pair in ((real, sims[0]), (sims[0], real)):
        picked, reason = pick_real(pair[0].user_messages, pair[1].user_messages)
        verdicts.append(pair[picked] is real)
        reasons.append(reason)
    return GoalSample(goal_id, real, tuple(sims), tuple(verdicts), tuple(reasons))


def optimizer(prompt: str, _: str) -> str:
    """Rules from what the prompt shows: the disclosure gap, and the judge's reasons."""
    rules = []
    shown = re.search(r"given in the first message: real ([\d.]+), simulated ([\d.]+)", prompt)
    if shown and float(shown.group(2)) > float(shown.group(1)) + 0.1:
        rules.append(ONE_FACT)
    if "without thanks" in prompt:
        rules.append(NO_THANKS)
    if "lowercase" in prompt:
        rules.append(LOWERCASE)
    return json.dumps({"rules": rules})


def one_run(n: int, real_style: str, sim_style: str, k: int, seed: int) -> bool:
    rng = random.Random(seed)
    ids = [f"g{i}" for i in range(n)]
    goals = {g: make_goal(rng) for g in ids}
    reals = {g: side(goals[g], real_style, rng) for g in ids}
    tuning_ids, held = tuning_split(ids, seed)

    def simulated(
        text: str, name: str, chosen: Sequence[str], marked: bool
    ) -> dict[str, GoalSample]:
        count = k if marked else 1
        out = {}
        for g in chosen:
            r = random.Random(f"{seed}:{name}:{g}")
            out[g] = sample(
                g, reals[g], [honoured(goals[g], sim_style, text, r) for _ in range(count)]
            )
        return out

    original = simulated(INSTRUCTIONS, "original", ids, True)
    tuning = {g: original[g] for g in tuning_ids}
    found = search(INSTRUCTIONS, tuning, held, simulated, optimizer, seed)
    return gain_shown(held_out(held, original, found.after, seed=seed))


def share(hits: int, runs: int) -> tuple[float, float]:
    p = hits / runs
    return p, math.sqrt(p * (1 - p) / runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--goals", type=int, default=125)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--k", type=int, default=3)
    args = parser.parse_args()
    ok = True
    for case, real, sim in (("c1", "terse", "polite"), ("c2", "mixed", "mixed")):
        started = time.process_time()
        hits = sum(one_run(args.goals, real, sim, args.k, 9_000_000 * (case == "c2") + r)
                   for r in range(args.runs))  # fmt: skip
        rate, se = share(hits, args.runs)
        if case == "c1":
            met = rate >= 0.8
            target = ">= 80%"
        else:
            bound = 0.025 + 2 * math.sqrt(0.025 * 0.975 / args.runs)
            met, target = rate <= bound, f"<= {bound:.1%}"
        ok &= met
        print(
            f"({case}) real {real}, simulator {sim}, {args.goals} goals, K = {args.k}: a gain "
            f"shown in {rate:6.1%} ± {se:.1%} of {args.runs} runs (target {target}: "
            f"{'ok' if met else 'MISSED'}); "
            f"{(time.process_time() - started) / args.runs * 1000:.0f} ms CPU a run"
        )
    print("all targets met" if ok else "a target MISSED")


if __name__ == "__main__":
    main()

"""What `chatjudge realism --tune` adds to the simulated user's instructions, and what its
optimiser is asked.

The guidance is a block appended to the end of the instructions: the rules the optimiser
wrote, a few real users' first messages as examples, or both (`align`'s candidates). The
original instructions are kept byte for byte in front of it, so the tuned prompt is read by
`simulate --user-prompt` as any other; the block's braces are escaped (a real message is
data, never a placeholder).

The optimiser sees the simulated user's instructions, the behaviour gaps (real against
simulated, means over the goals it is shown) and the discriminator's reasons on those
goals, grouped and counted; never a conversation, never a goal. It answers `{"rules": [...]}`
(`align.guidance.RULES_SCHEMA`, read by `read_rules`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from chatjudge.analysis.align.guidance import MAX_RULES, Candidate
from chatjudge.chat.render import cut
from chatjudge.user_realism.behaviour import BEHAVIOURS, behaviour_matrix
from chatjudge.user_realism.discriminator import goal_accuracies, reason_counts
from chatjudge.user_realism.sample import GoalSample

MAX_EXAMPLES = 5  # real first messages in a candidate
EXAMPLE_CHARS = 400
GUIDANCE_TITLE = "Guidance from real users' conversations"
_SHOWN = {  # each behaviour as the optimiser reads it
    "user_turns": "user messages per conversation",
    "words_per_message": "words per user message",
    "question_share": "share of user messages that ask something",
    "disclosure": "share of the user's facts given in the first message",
    "ended_by_user": "share of conversations the user ended",
    "pushback_share": "share of user messages that push back on the assistant",
}


def optimizer_prompt(instructions: str, goals: Sequence[GoalSample]) -> str:
    """The optimiser's prompt from these goals (the tuning goals it may see): how their
    simulated users differ from the real ones, and what the discriminator said."""
    accuracy = goal_accuracies(goals)
    parts = [
        "You improve the instructions of a language model that plays a human user chatting "
        "with an AI assistant, so that its conversations cannot be told from real users'. "
        "Below are its instructions, how its users differ from real ones on the same needs, "
        "and why a judge comparing a real and a simulated conversation picked the real one.",
        f"Write at most {MAX_RULES} short, general rules (one sentence each) for the simulated "
        "user that would make it behave like the real users: how much to tell and when, how "
        "to write, how to react and how to end. Do not refer to any conversation or need.",
        "## The simulated user's instructions\n" + cut(instructions, 6000),
        f"## Behaviour, real users against simulated ones ({len(goals)} needs)\n" + _gaps(goals),
    ]
    if len(accuracy):
        parts.append(
            f"## The judge's reasons (it picked the real user in {accuracy.mean():.0%} of "
            "its verdicts; 50% means it cannot tell)\n"
            + "\n".join(f"- {r.reason} ({r.count}x)" for r in reason_counts(goals))
        )
    return "\n\n".join(parts)


def _gaps(goals: Sequence[GoalSample]) -> str:
    matrix = behaviour_matrix(goals)
    lines = []
    for k, name in enumerate(BEHAVIOURS):
        real = matrix[:, 0, k]
        simulated = matrix[:, 1:, k]
        if np.isnan(real).all() or np.isnan(simulated).all():
            continue
        lines.append(
            f"- {_SHOWN[name]}: real {np.nanmean(real):.2f}, simulated {np.nanmean(simulated):.2f}"
        )
    return "\n".join(lines) or "(no behaviour measured)"


def first_messages(goals: Sequence[GoalSample]) -> list[str]:
    """Each goal's real first user message, where it has one (the examples' pool)."""
    return [g.real.user_messages[0] for g in goals if g.real.user_messages]


def guidance_block(rules: Sequence[str], examples: Sequence[str]) -> str:
    """The text appended to the instructions (before escaping)."""
    parts = [
        f"\n\n{GUIDANCE_TITLE}: follow it where it applies; it takes precedence over the "
        "instructions above."
    ]
    if rules:
        parts.append("Rules:\n" + "\n".join(f"{k}. {r}" for k, r in enumerate(rules, 1)))
    if examples:
        shown = "\n".join(f"- {cut(e, EXAMPLE_CHARS)!r}" for e in examples)
        parts.append(
            "First messages real users wrote (other needs; match their style, never their "
            "content):\n" + shown
        )
    return "\n\n".join(parts) + "\n"


def tuned(
    instructions: str, candidate: Candidate, rules: Sequence[str], examples: Sequence[str]
) -> str:
    """`instructions` with the guidance block of `candidate`; themselves when there is
    nothing to add (no rules written): the simulated user is then asked what it was."""
    shown_rules = rules if candidate != "examples" else ()
    shown_examples = examples if candidate != "rules" else ()
    if not shown_rules and not shown_examples:
        return instructions
    block = guidance_block(shown_rules, shown_examples)
    return instructions.rstrip("\n") + block.replace("{", "{{").replace("}", "}}")


def provenance(lines: Sequence[str]) -> str:
    """The `#` lines at the top of `user_prompt.txt` (`simulate --user-prompt` skips them)."""
    return "".join(f"# {line}".rstrip() + "\n" for text in lines for line in text.splitlines())

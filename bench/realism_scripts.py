"""Scripted users for `chatjudge realism`'s calibration: no network, no model.

A goal is a need and a few facts. A style turns it into the user's messages:
- `terse` (issue 43's "real" user of case b): one fact a turn, short lowercase messages, leaves
  without a closing word;
- `polite` (its simulator): tells everything in the first message, then thanks politely;
- `mixed` (case a): each message's habits drawn at random (facts a turn, case, greeting,
  thanks, pushback), the same generator for the real and the simulated user.

Two uses. At the record level (`bench/realism_calibration.py`), `goal_sample` builds the
`GoalSample`s the statistics read, with stand-in judges that decide from the text only. Through
the whole pipeline (`chatjudge realism`, Python function models): `real_rows` writes "real"
conversations (rows with `chat`), `simulated_user(style)` is the simulated user (called with the
prompt text: it reads its facts from the `<context>` block, one a line or `;`-separated, and
counts its own turns in the transcript), `assistant` the assistant under test,
`discriminator_judge` the stand-in discriminator.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from chatjudge.user_realism.sample import GoalSample, UserSide

END_MARKER = "[[TERMINATE CHAT]]"  # chatjudge.produce.user.END_MARKER
STYLES = ("terse", "polite", "mixed")

_NEEDS = [
    ("my parcel has not arrived", "where is my parcel"),
    ("I would like a refund for an item", "want a refund"),
    ("I need to change my flight", "need to change flight"),
    ("I cannot log in to my account", "cant log in"),
    ("my invoice shows the wrong amount", "invoice is wrong"),
    ("I want to cancel my subscription", "cancel my sub"),
]
_FACTS: list[Callable[[random.Random], str]] = [
    lambda r: f"order number {r.randint(10000, 99999)}",
    lambda r: f"bought on {r.randint(1, 28)} {r.choice(['march', 'april', 'may', 'june'])}",
    lambda r: (
        f"it was a {r.choice(['blue', 'red', 'grey', 'green'])} "
        f"{r.choice(['kettle', 'lamp', 'jacket', 'chair', 'phone case'])}"
    ),
    lambda r: f"paid by {r.choice(['card', 'paypal', 'bank transfer', 'gift card'])}",
    lambda r: f"delivery to {r.choice(['leeds', 'york', 'bath', 'derby', 'ely'])}",
    lambda r: f"account email {r.choice(['sam', 'kim', 'alex', 'jo'])}{r.randint(1, 99)}@mail.com",
    lambda r: f"booking ref {r.choice('ABCDEFGH')}{r.randint(100, 999)}",
]
_GREETINGS = ["Hello!", "Hi there,", "Good morning.", "Hello,"]
_THANKS = [
    "Thank you so much for your help, have a wonderful day!",
    "Thanks a lot, that is very kind of you. Goodbye!",
    "Many thanks for your help!",
]
_PUSHBACK = ["no, that's not what i asked", "that is wrong, please check again"]
_PUSHBACK_WORDS = re.compile(r"^(no, that|that is wrong)", re.IGNORECASE)  # _PUSHBACK only


@dataclass(frozen=True, slots=True)
class Goal:
    need: str  # as the polite user writes it
    short_need: str  # as the terse user writes it
    facts: tuple[str, ...]


def make_goal(rng: random.Random) -> Goal:
    need, short = rng.choice(_NEEDS)
    makers = rng.sample(_FACTS, rng.randint(3, 5))
    return Goal(need, short, tuple(make(rng) for make in makers))


def user_messages(goal: Goal, style: str, rng: random.Random) -> tuple[list[str], bool]:
    """The user's messages in this style, and whether it ended the conversation itself."""
    if style == "terse":
        first = f"{goal.short_need} {goal.facts[0]}".lower()
        return [first, *(f.lower() for f in goal.facts[1:])], True
    if style == "polite":
        facts = ". ".join(f[0].upper() + f[1:] for f in goal.facts)
        first = f"{rng.choice(_GREETINGS)} {goal.need}. {facts}. Could you please help me?"
        return [first, rng.choice(_THANKS)], True
    if style != "mixed":
        raise ValueError(f"unknown style {style!r}; one of {STYLES}")
    return _mixed(goal, rng)


def _mixed(goal: Goal, rng: random.Random) -> tuple[list[str], bool]:
    lower = rng.random() < 0.5
    left = list(goal.facts)
    messages: list[str] = []
    while left:
        take = rng.choice([1, 1, 2, len(left)])
        said, left = left[:take], left[take:]
        text = ", ".join(said)
        if not messages:
            need = goal.short_need if lower else goal.need
            text = f"{rng.choice(_GREETINGS) + ' ' if rng.random() < 0.4 else ''}{need}, {text}"
            if rng.random() < 0.3:
                text += ". can you help?" if lower else ". Can you help?"
        messages.append(text.lower() if lower else text[0].upper() + text[1:])
        if rng.random() < 0.15:
            messages.append(rng.choice(_PUSHBACK))
    if rng.random() < 0.5:
        messages.append(rng.choice(_THANKS))
    return messages, rng.random() < 0.8


def disclosed(goal: Goal, first_message: str) -> tuple[bool, ...]:
    """The stand-in disclosure judge: a fact is given when its text is in the message."""
    return tuple(f.lower() in first_message.lower() for f in goal.facts)


def pushback(messages: Sequence[str]) -> tuple[bool, ...]:
    return tuple(bool(_PUSHBACK_WORDS.search(m)) for m in messages)


def side(goal: Goal, style: str, rng: random.Random) -> UserSide:
    messages, ended = user_messages(goal, style, rng)
    return UserSide(
        tuple(messages), ended, disclosed(goal, messages[0]), pushback(messages), metrics={}
    )


def looks_real(messages: Sequence[str]) -> float:
    """The stand-in discriminator's score, from the text only: people write lowercase and
    short and do not thank; the higher, the more real the user looks."""
    lowercase = sum(m == m.lower() for m in messages) / len(messages)
    polite = sum(bool(re.search(r"\b(thank|please)", m, re.I)) for m in messages) / len(messages)
    words = sum(len(m.split()) for m in messages) / len(messages)
    return lowercase - polite - words / 100


def pick_real(first: Sequence[str], second: Sequence[str]) -> tuple[int, str]:
    """Which of two users (0 or 1) the stand-in judge calls real, with its reason. It sees
    only their text: a tie goes by the text itself, never by position."""
    a, b = looks_real(first), looks_real(second)
    if a != b:
        return (0 if a > b else 1), "the real user writes shorter, lowercase, without thanks"
    return (0 if "\n".join(first) < "\n".join(second) else 1), "no telling them apart"


def goal_sample(
    goal_id: str, real_style: str, simulated_style: str, k: int, rng: random.Random
) -> GoalSample:
    """A goal as the statistics read it: its real user, K simulated ones, and the stand-in
    discriminator on (real, first simulated) in both orders."""
    goal = make_goal(rng)
    real = side(goal, real_style, rng)
    simulated = tuple(side(goal, simulated_style, rng) for _ in range(k))
    verdicts, reasons = [], []
    for order in ((real, simulated[0]), (simulated[0], real)):
        picked, reason = pick_real(order[0].user_messages, order[1].user_messages)
        verdicts.append(order[picked] is real)
        reasons.append(reason)
    return GoalSample(goal_id, real, simulated, tuple(verdicts), tuple(reasons))


# The whole pipeline: rows and function models.


def real_rows(n: int, style: str, seed: int) -> list[dict[str, Any]]:
    """`n` "real" conversations as rows with `chat`, the assistant's turns scripted."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        messages, _ = user_messages(make_goal(rng), style, rng)
        chat: list[dict[str, str]] = []
        for message in messages:
            chat.append({"role": "user", "content": message})
            chat.append({"role": "assistant", "content": assistant_reply(len(chat) // 2)})
        rows.append({"id": f"real-{i:04d}", "chat": chat})
    return rows


def assistant_reply(turn: int) -> str:
    return "Could you tell me more?" if turn < 3 else "Thanks, I have sorted that out for you."


def assistant(messages: list[dict[str, Any]]) -> str:
    """The assistant under test (a `python/` model called with messages)."""
    return assistant_reply(sum(m["role"] == "user" for m in messages))


def simulated_user(style: str, seed: int = 0) -> Callable[[str], str]:
    """The simulated user as a function of its prompt text: facts from `<context>`, its turn
    from the transcript's `**you**` lines; replies `{"thought", "response"}`."""

    def user(prompt: str) -> str:
        context = re.search(r"<context>\s*(.*?)\s*</context>", prompt, re.DOTALL)
        text = context.group(1) if context else ""
        facts = tuple(f.strip(" -.") for f in re.split(r"\n|;", text) if f.strip(" -."))
        need = re.search(r"<goal>\s*(.*?)\s*</goal>", prompt, re.DOTALL)
        goal = Goal(need.group(1) if need else "help", need.group(1) if need else "help", facts)
        rng = random.Random(f"{seed}:{prompt[:2000]}")  # the same prompt, the same reply
        messages, _ = user_messages(
            goal if facts else Goal(goal.need, goal.need, ("",)), style, rng
        )
        turn = prompt.count("**you**")
        if turn >= len(messages):  # a one-message user: the marker alone, after a reply
            return json.dumps({"thought": "done", "response": END_MARKER})
        # Its last message ends the conversation (the marker counts once the assistant has
        # replied), so that it writes what a real row of the same style holds.
        end = f" {END_MARKER}" if turn == len(messages) - 1 and turn else ""
        return json.dumps({"thought": "next", "response": messages[turn] + end})

    return user


def discriminator_judge(prompt: str) -> str:
    """The stand-in discriminator as a judge function: reads the two conversations' user
    messages (`**user**: ...` lines, the first conversation before the second's heading) and
    answers which holds the real user, from their text only."""
    parts = re.split(r"(?im)^#+ .*conversation.*$|^conversation [ab12]:?$", prompt)
    convs = [re.findall(r"\*\*user\*\*: (.*)", p) for p in parts]
    convs = [c for c in convs if c][-2:]
    if len(convs) < 2:
        return json.dumps({"real": "A", "reason": "no telling them apart"})
    picked, reason = pick_real(convs[0], convs[1])
    return json.dumps({"real": "AB"[picked], "reason": reason})

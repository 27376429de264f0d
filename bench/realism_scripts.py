"""Scripted users for `chatjudge realism`'s calibration: no network, no model.

A goal is a need and a few facts. A style turns it into the user's messages:
- `terse` (issue 43's "real" user of case b): one fact a turn, short lowercase messages, leaves
  without a closing word;
- `polite` (its simulator): tells everything in the first message, then thanks politely;
- `mixed` (case a): each message's habits drawn at random (facts a turn, case, greeting,
  thanks, pushback), the same generator for the real and the simulated user.

Two uses. At the record level (`bench/realism_calibration.py`), `goal_sample` builds the
`GoalSample`s the statistics read, with stand-in judges that decide from the text only. Through
the whole command (`bench/realism_pipeline.py`: `chatjudge.realism(...)` with Python function
models, each called with the messages the command sends): `real_rows` writes "real"
conversations (rows with `chat`), `goal_writer` re-extracts each goal from the conversation it
is shown, `SimulatedUser(style, seed)` is the simulated user (its goal and facts from its
instructions, its turn from the transcript), `assistant` the assistant under test, and `judge`
the stand-in judge for disclosure, pushback and the discriminator.
"""

from __future__ import annotations

import json
import random
import re
import threading
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
_MONTHS = ["march", "april", "may", "june"]
_COLOURS = ["blue", "red", "grey", "green"]
_ITEMS = ["kettle", "lamp", "jacket", "chair", "phone case"]
_PAYMENTS = ["card", "paypal", "bank transfer", "gift card"]
_TOWNS = ["leeds", "york", "bath", "derby", "ely"]
_NAMES = ["sam", "kim", "alex", "jo"]
_FACTS: list[Callable[[random.Random], str]] = [
    lambda r: f"order number {r.randint(10000, 99999)}",
    lambda r: f"bought on {r.randint(1, 28)} {r.choice(_MONTHS)}",
    lambda r: f"it was a {r.choice(_COLOURS)} {r.choice(_ITEMS)}",
    lambda r: f"paid by {r.choice(_PAYMENTS)}",
    lambda r: f"delivery to {r.choice(_TOWNS)}",
    lambda r: f"account email {r.choice(_NAMES)}{r.randint(1, 99)}@mail.com",
    lambda r: f"booking ref {r.choice('ABCDEFGH')}{r.randint(100, 999)}",
]


def _any(words: list[str]) -> str:
    return "(?:" + "|".join(sorted(words, key=len, reverse=True)) + ")"


# The facts `_FACTS` writes, as the stand-in goal writer finds them in what a user said.
_FACT_TEXT = re.compile(
    "|".join(
        [
            r"order number \d{5}",
            rf"bought on \d{{1,2}} {_any(_MONTHS)}",
            rf"it was a {_any(_COLOURS)} {_any(_ITEMS)}",
            rf"paid by {_any(_PAYMENTS)}",
            rf"delivery to {_any(_TOWNS)}",
            rf"account email {_any(_NAMES)}\d{{1,2}}@mail\.com",
            r"booking ref [a-h]\d{3}",
        ]
    ),
    re.IGNORECASE,
)
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


class SimulatedUser:
    """The simulated user of one run, as a Python function model called with its messages:
    its goal from `<goal>` (a need it also knows how to put tersely), its facts from
    `<context>` (`goals.goal_row`'s `- fact` lines), its own earlier messages from the
    transcript's `**you**` lines. A conversation's messages are drawn at its first turn,
    fresh for each of the K samples of a goal, and followed turn by turn; replies
    `{"thought", "response"}`."""

    def __init__(self, style: str, seed: int) -> None:
        self.style = style
        self.rng = random.Random(seed)
        # by instructions (a goal): its conversations' messages, and each turn's followers
        self.plans: dict[str, list[tuple[list[str], dict[int, int]]]] = {}
        self.lock = threading.Lock()  # sync function models run in worker threads

    def __call__(self, messages: list[dict[str, Any]]) -> str:
        instructions, shown = messages[0]["content"], messages[-1]["content"]
        said = [s.strip() for s in re.findall(r"^\*\*you\*\*: (.*)$", shown, re.M)]
        with self.lock:
            plan = self._plan(instructions, said)
        turn = len(said)
        if turn >= len(plan):  # a one-message user: the marker alone, after a reply
            return json.dumps({"thought": "done", "response": END_MARKER})
        # Its last message ends the conversation (the marker counts once the assistant has
        # replied), so that it writes what a real row of the same style holds.
        end = f" {END_MARKER}" if turn == len(plan) - 1 and turn else ""
        return json.dumps({"thought": "next", "response": plan[turn] + end})

    def _plan(self, instructions: str, said: list[str]) -> list[str]:
        """The conversation these messages continue: of the goal's whose opening they are,
        the one least followed at this turn (two samples that open alike keep their own
        draws); a new one at the first turn."""
        plans = self.plans.setdefault(instructions, [])
        if said:
            turn = len(said)
            going = [p for p in plans if p[0][:turn] == said]
            if going:
                messages, uses = min(going, key=lambda p: p[1].get(turn, 0))
                uses[turn] = uses.get(turn, 0) + 1
                return messages
        need = _between(instructions, "<goal>", "</goal>") or "help"
        context = _between(instructions, "<context>", "</context>")
        lines = [f.strip(" -") for f in context.splitlines()]
        facts = tuple(f for f in lines if f and not f.startswith("("))  # "(nothing ...)"
        goal = Goal(need, _SHORT.get(need, need), facts or ("",))
        drawn = [m.strip() for m in user_messages(goal, self.style, self.rng)[0]]
        plans.append((drawn, {0: 1}))
        return drawn


_SHORT = dict(_NEEDS)  # a need as the terse user puts it


def _between(text: str, start: str, end: str) -> str:
    found = re.search(re.escape(start) + r"\s*(.*?)\s*" + re.escape(end), text, re.DOTALL)
    return found.group(1) if found else ""


def _users(conversation: str) -> list[str]:
    """The user's messages of a rendered conversation (`**user**: ...`, one line each)."""
    return re.findall(r"^\*\*user\*\*: (.*)$", conversation, re.M)


def goal_writer(messages: list[dict[str, Any]]) -> str:
    """The stand-in goal writer (`--goal-model`): reads the conversation it is shown
    (`produce/prompts/realism_goal.txt`), names the need the user's first message states and
    lists every fact the user gave, in the user's words and order."""
    said = _users(_between(messages[-1]["content"], "<conversation>", "</conversation>"))
    first = said[0].lower() if said else ""
    question = next(
        (need for need, short in _NEEDS if need.lower() in first or short in first),
        said[0] if said else "help",
    )
    facts = [m.group(0) for text in said for m in _FACT_TEXT.finditer(text)]
    return json.dumps({"question": question, "facts": facts})


def judge(messages: list[dict[str, Any]]) -> str:
    """The stand-in judge (`--judge`) for realism's three prompts (`user_realism/prompts/`),
    told apart by the reply each asks for; it decides from the text it is shown only:
    disclosure (a fact is given when its text is in the first message), pushback (by its
    words) and the discriminator (`pick_real` on the user messages of conversation 1 and 2,
    never their position)."""
    text = messages[-1]["content"]
    if '{"disclosed"' in text:
        first = _between(text, "<message>", "</message>")
        numbered = text.split("numbered:", 1)[1]
        facts = re.findall(r"^\d+\. (.*)$", numbered, re.M)
        return json.dumps({"disclosed": [f.lower() in first.lower() for f in facts]})
    if '{"pushback"' in text:
        said = _users(_between(text, "<conversation>", "</conversation>"))
        return json.dumps({"pushback": list(pushback(said))})
    first, second = (
        _users(
            _between(text.split(f"Conversation {n}:", 1)[1], "<conversation>", "</conversation>")
        )
        for n in (1, 2)
    )
    picked, reason = pick_real(first, second)
    return json.dumps({"reason": reason, "real": picked + 1})

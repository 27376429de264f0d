"""The judge's marks on each goal's conversations, by fixed prompts (`user_realism/prompts/`):
- disclosure: per fact of the goal, whether the first user message gives it;
- pushback: per user message, whether it pushes back on or corrects the assistant;
- the discriminator: the real and the first simulated conversation of a goal, shown in
  both orders, the judge says which has the real user, and why.
Real and simulated conversations are shown alike (`real.shown`: one renderer, no tool
messages, no system prompt), so that formatting gives nothing away. A reply with no usable
answer, asked twice, leaves the mark out (None), never a guess; a failed call too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chatjudge.calls.role import Role
from chatjudge.chat.render import render_messages
from chatjudge.chat.types import Message
from chatjudge.errors import ModelError
from chatjudge.user_realism.asks import ask, prompt_text, schema
from chatjudge.user_realism.real import shown

DISCLOSURE = schema(
    "realism_disclosure",
    {"disclosed": {"type": "array", "items": {"type": "boolean"}}},
    '\n\nReply with one JSON object only: {"disclosed": [true, false]}',
)
PUSHBACK = schema(
    "realism_pushback",
    {"pushback": {"type": "array", "items": {"type": "boolean"}}},
    '\n\nReply with one JSON object only: {"pushback": [false, true]}',
)
DISCRIMINATOR = schema(
    "realism_discriminator",
    {"reason": {"type": "string"}, "real": {"type": "integer", "enum": [1, 2]}},
    '\n\nReply with one JSON object only: {"reason": "...", "real": 1}',
)
PROMPTS = ("disclosure", "pushback", "discriminator")  # shipped in user_realism/prompts/


def prompt(name: str) -> Any:
    return prompt_text("chatjudge.user_realism", name)


def disclosure_messages(first: str, facts: Sequence[str]) -> list[Message]:
    numbered = "\n".join(f"{i}. {f}" for i, f in enumerate(facts, 1))
    text = prompt("disclosure").render({"first_message": first, "facts": numbered})
    return [{"role": "user", "content": text}]


def pushback_messages(conversation: Sequence[Message]) -> list[Message]:
    said = shown(conversation)
    n_user = sum(m["role"] == "user" for m in said)
    values = {"conversation": render_messages(said), "n_user": str(n_user)}
    return [{"role": "user", "content": prompt("pushback").render(values)}]


def discriminator_messages(first: Sequence[Message], second: Sequence[Message]) -> list[Message]:
    values = {"first": render_messages(shown(first)), "second": render_messages(shown(second))}
    return [{"role": "user", "content": prompt("discriminator").render(values)}]


def _flags(key: str, n: int) -> Any:
    def read(data: dict[str, Any]) -> tuple[bool, ...] | None:
        values = data.get(key)
        if not isinstance(values, list) or len(values) != n:
            return None
        if not all(isinstance(v, bool) for v in values):
            return None
        return tuple(values)

    return read


def _choice(data: dict[str, Any]) -> tuple[int, str] | None:
    real, reason = data.get("real"), data.get("reason", "")
    if real not in (1, 2) or isinstance(real, bool):
        return None
    return int(real), str(reason).strip()


@dataclass(frozen=True, slots=True)
class ConversationMarks:
    disclosed: tuple[bool, ...] | None
    pushback: tuple[bool, ...] | None


@dataclass(frozen=True, slots=True)
class Discrimination:
    picked_real: tuple[bool, ...]  # per order answered: (real first, simulated first)
    reasons: tuple[str, ...]


class Marker:
    """The judge's three questions, each through the store and the call path."""

    def __init__(self, disclosure: Role, pushback: Role, discriminator: Role) -> None:
        self.disclosure, self.pushback, self.discriminator = disclosure, pushback, discriminator

    async def conversation(
        self, messages: Sequence[Message], facts: Sequence[str]
    ) -> ConversationMarks:
        """Disclosure (no call when the goal has no fact: nothing to give) and pushback."""
        said = shown(messages)
        users = [m["content"] for m in said if m["role"] == "user"]
        disclosed: tuple[bool, ...] | None = ()
        if facts:
            asked = disclosure_messages(users[0] if users else "", facts)
            disclosed = await _marked(self.disclosure, asked, _flags("disclosed", len(facts)))
        pushed: tuple[bool, ...] | None = ()
        if users:
            asked = pushback_messages(messages)
            pushed = await _marked(self.pushback, asked, _flags("pushback", len(users)))
        return ConversationMarks(disclosed, pushed)

    async def discriminate(
        self, real: Sequence[Message], simulated: Sequence[Message]
    ) -> Discrimination:
        """Both orders: real first, then simulated first; an order without an answer is
        left out."""
        picked: list[bool] = []
        reasons: list[str] = []
        for real_at, pair in ((1, (real, simulated)), (2, (simulated, real))):
            found = await _marked(self.discriminator, discriminator_messages(*pair), _choice)
            if found is not None:
                picked.append(found[0] == real_at)
                reasons.append(found[1])
        return Discrimination(tuple(picked), tuple(reasons))


async def _marked(role: Role, messages: list[Message], read: Any) -> Any:
    try:
        return (await ask(role, messages, read))[0]
    except ModelError as exc:
        if exc.fatal:
            raise
        return None

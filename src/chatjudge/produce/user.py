"""The simulated user: a model holding a hidden goal, talking with the assistant under test.

Its instructions are a text file shipped with the package (`prompts/simulated_user.txt`,
replaceable with `--user-prompt`, whose leading `#` lines are comments: `comment_free`),
filled with the goal (`{question}`), what the user
knows (`{user_context}`) and the end marker (`{end_marker}`). It sees the conversation so
far as a transcript (without the assistant's tool calls and their results: a user sees
only what the assistant says), never the ground-truth answer, and answers with a JSON object: a
private `thought` (never shown to anyone) and the `response` it sends. Writing the end
marker in its response ends the conversation; the marker counts only there, and only
once the assistant has replied at least once.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from chatjudge import jsoncodec
from chatjudge.calls import Usage
from chatjudge.calls.role import Role
from chatjudge.chat.render import transcript
from chatjudge.chat.types import Message, OutputSchema
from chatjudge.errors import UsageError
from chatjudge.produce.replies import visible
from chatjudge.protocols.template import Template

END_MARKER = "[[TERMINATE CHAT]]"
PLACEHOLDERS = ("question", "user_context", "end_marker")
SCHEMA = OutputSchema(
    "simulated_user_turn",
    {
        "type": "object",
        "properties": {"thought": {"type": "string"}, "response": {"type": "string"}},
        "required": ["thought", "response"],
        "additionalProperties": False,
    },
    '\n\nReply with one JSON object only: {"thought": "...", "response": "..."}',
)
NO_CONTEXT = "(nothing beyond your goal)"
FIRST_TURN = "(nothing yet: write your first message)"


class UserReplyError(Exception):
    """The simulated user's reply held no message, even when asked a second time."""


def load_instructions(path: Path | None) -> Template:
    """The shipped instructions, or the user's own file (which must use `{question}`)."""
    if path is None:
        text = (
            files("chatjudge.produce").joinpath("prompts", "simulated_user.txt").read_text("utf-8")
        )
    else:
        try:
            text = comment_free(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"--user-prompt: cannot read {path}: {exc}") from exc
    template = Template(text)
    unknown = set(template.fields) - set(PLACEHOLDERS)
    if unknown or "question" not in template.fields:
        raise UsageError(
            f"--user-prompt {path}: the instructions must use {{question}} and may use "
            f"{{user_context}} and {{end_marker}}; found {sorted(template.fields)}"
        )
    return template


def comment_free(text: str) -> str:
    """A `--user-prompt` file's instructions: the lines at its top that begin with `#` are
    comments (`realism --tune` writes the tuned prompt's provenance there), skipped; from the
    first other line on (an empty one too) the text is kept as written, so a file that must
    open with a `#` line starts with an empty line."""
    lines = text.splitlines(keepends=True)
    k = 0
    while k < len(lines) and lines[k].startswith("#"):
        k += 1
    return "".join(lines[k:])


@dataclass(frozen=True, slots=True)
class UserTurn:
    text: str  # what the user says (the end marker removed)
    ends: bool  # the user wrote the end marker
    plain: bool = False  # the reply held no JSON object: its whole text is the message


class SimulatedUser:
    def __init__(self, role: Role, instructions: Template) -> None:
        self.role = role
        self.instructions = instructions

    def messages(
        self, goal: str, context: str | None, history: list[Message], chat: list[Message]
    ) -> list[Message]:
        """What the simulated user's model sees: its instructions with the goal, and the
        conversation so far (the earlier conversation, then the follow-up) as a user sees
        it: what each side said, never the assistant's tool calls nor their results."""
        system = self.instructions.render(
            {"question": goal, "user_context": context or NO_CONTEXT, "end_marker": END_MARKER}
        )
        said = [m for m in [*history, *chat] if m["role"] != "tool" and not m.get("tool_calls")]
        shown = transcript(said) or FIRST_TURN
        prompt = (
            f"The conversation so far:\n<conversation>\n{shown}\n</conversation>\n\n"
            "Write your next message to the assistant."
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": prompt}]

    async def turn(self, messages: list[Message], *, replied: bool, tokens: Usage) -> UserTurn:
        """The user's next message; asked a second time (another seed) when a reply holds
        none. `replied`: the assistant has answered once at least (the marker counts)."""
        for attempt in (0, 1):
            reply = await self.role.call(messages, attempt)
            tokens.add(reply)
            found = parse_turn(reply.text, replied=replied)
            if found is not None:
                return found
        raise UserReplyError(
            f"the simulated user's reply held no message after one retry: {reply.text[:200]!r}"
        )


def parse_turn(text: str, *, replied: bool) -> UserTurn | None:
    """The user's message: the `response` of a `{"thought", "response"}` reply, or the whole
    text of a reply that holds no JSON object (a model or server that ignores the requested
    format: there is no private thought to leak). None when a JSON object holds no response."""
    found = _turn_object(text)
    plain = found is None
    if found is None:
        response: Any = visible(text)
    else:
        response = found.get("response")
        if not isinstance(response, str):
            return None
    at = response.find(END_MARKER)
    if at < 0:
        return UserTurn(response.strip(), False, plain) if response.strip() else None
    if replied:
        return UserTurn(response[:at].strip(), True, plain)
    rest = response.replace(END_MARKER, "").strip()  # no assistant reply yet: nothing to end
    return UserTurn(rest, False, plain) if rest else None


def _turn_object(text: str) -> dict[str, Any] | None:
    """The JSON object a reply holds, or None when it holds none: text with a stray brace
    is not an object unless it parses, or repairs into one with a `thought` or `response`."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        data = jsoncodec.loads(text[start : text.rfind("}") + 1])
    except ValueError:
        from json_repair import repair_json

        data = repair_json(text[start:], return_objects=True)
        if isinstance(data, dict) and not data.keys() & {"thought", "response"}:
            return None
    return data if isinstance(data, dict) else None

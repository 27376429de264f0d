"""Python function models for `chatjudge realism --tune`'s tests: "real" users who give one
fact a message and leave without thanks, a simulated user that tells everything at once and
thanks unless its instructions tell it otherwise, a judge that decides from the text (never
from the position), and an optimiser; every prompt is recorded."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from tests.user_realism.standins import Recorder

END = "[[TERMINATE CHAT]]"
ONE_FACT = "Give one fact per message, in lowercase, and never thank the assistant."


def real_rows(n: int) -> list[dict[str, Any]]:
    """`n` real conversations, each with words of its own (`need-<i>`, `city-<i>`)."""
    rows = []
    for i in range(n):
        said = [f"plan a trip need-{i}", f"from city-{i}", f"for {i % 5 + 2} people", "bye"]
        chat: list[dict[str, str]] = []
        for text in said:
            chat += [{"role": "user", "content": text},
                     {"role": "assistant", "content": "Could you tell me more?"}]  # fmt: skip
        rows.append({"id": f"g{i:03d}", "chat": chat})
    return rows


class TuneRecorder(Recorder):
    def __init__(self, rules: list[str] | None = None) -> None:
        super().__init__()
        self.rules = [ONE_FACT] if rules is None else rules

    def goal_writer(self, messages: list[dict[str, Any]]) -> str:
        self.log("goal", messages)
        said = re.findall(r"\*\*user\*\*: (.*)", messages[-1]["content"])
        return json.dumps({"question": f"Help with: {said[0]}", "facts": said[1:-1]})

    def user(self, messages: list[dict[str, Any]]) -> str:
        self.log("user", messages)
        system, shown = messages[0]["content"], messages[-1]["content"]
        context = system.split("<context>", 1)[1].split("</context>", 1)[0]
        facts = [f[2:] for f in context.strip().splitlines() if f.startswith("- ")]
        need = system.split("<goal>", 1)[1].split("</goal>", 1)[0].strip()
        turn = shown.count("**you**")
        if ONE_FACT in system:  # the rule is honoured: as a real user writes
            said = [need.removeprefix("Help with: "), *facts, f"bye {END}"]
            return json.dumps({"thought": "t", "response": said[min(turn, len(said) - 1)]})
        if turn == 0:
            text = f"Hello! {need}. {'; '.join(facts)}. Could you please help?"
            return json.dumps({"thought": "t", "response": text})
        return json.dumps({"thought": "t", "response": f"Thank you so much! {END}"})

    def judge(self, messages: list[dict[str, Any]] | str) -> str:
        assert not isinstance(messages, str)
        text = messages[-1]["content"]
        if "Conversation 1:" not in text:
            return super().judge(messages)
        self.log("judge", messages)
        one = text.split("Conversation 1:", 1)[1].split("Conversation 2:", 1)[0]
        two = text.split("Conversation 2:", 1)[1]
        polite = ["thank" in c.lower() or "please" in c.lower() for c in (one, two)]
        if polite[0] != polite[1]:
            real = 2 if polite[0] else 1
            said = re.findall(r"\*\*user\*\*: (.*)", two if polite[0] else one)
            why = f"the simulated user thanks politely; the real one wrote {said[0]!r}"
            return json.dumps({"reason": why, "real": real})
        # the text decides, never the position: which hashes lower, a coin a goal
        real = 1 if _hashed(one) < _hashed(two) else 2
        return json.dumps({"reason": "no telling them apart", "real": real})

    def optimizer(self, messages: list[dict[str, Any]]) -> str:
        self.log("optimizer", messages)
        return json.dumps({"rules": self.rules if "thanks" in messages[-1]["content"] else []})


def _hashed(text: str) -> str:
    return hashlib.sha256(text.strip().encode()).hexdigest()

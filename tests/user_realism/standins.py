"""Python function models for `chatjudge realism`'s tests: a goal writer, a simulated user,
an assistant and a judge that decide from what they are shown, and record every prompt."""

from __future__ import annotations

import json
import re
from typing import Any

REAL_ONLY = "pineapple"  # said only in the real conversations: never shown to a simulated user


class Recorder:
    def __init__(self) -> None:
        self.seen: dict[str, list[list[dict[str, Any]]]] = {}

    def log(self, who: str, messages: list[dict[str, Any]]) -> None:
        self.seen.setdefault(who, []).append(messages)

    def texts(self, who: str) -> list[str]:
        return [m["content"] for ms in self.seen.get(who, []) for m in ms]

    def goal_writer(self, messages: list[dict[str, Any]]) -> str:
        self.log("goal", messages)
        text = messages[-1]["content"]
        said = re.findall(r"\*\*user\*\*: (.*)", text)
        facts = [s for s in said if any(c.isdigit() for c in s)]
        return json.dumps({"question": f"Help with: {said[0]}", "facts": facts})

    def user(self, messages: list[dict[str, Any]]) -> str:
        self.log("user", messages)
        shown = messages[-1]["content"]
        if "**assistant**" not in shown:
            return json.dumps({"thought": "open", "response": "Hello, I need help with my plan."})
        return json.dumps({"thought": "done", "response": "Thank you! [[TERMINATE CHAT]]"})

    def assistant(self, messages: list[dict[str, Any]]) -> str:
        self.log("assistant", messages)
        return "Could you tell me more?"

    def judge(self, messages: list[dict[str, Any]] | str) -> str:
        if isinstance(messages, str):  # interactivity-accuracy's prompt (`--protocol`)
            return self.protocol_judge(messages)
        self.log("judge", messages)
        text = messages[-1]["content"]
        if "first message already states" in text:
            first = text.split("<message>\n", 1)[1].split("\n</message>", 1)[0]
            facts = re.findall(r"^\d+\. (.*)$", text.split("numbered:", 1)[1], re.M)
            return json.dumps({"disclosed": [f in first for f in facts]})
        if "pushes back" in text:
            said = re.findall(r"\*\*user\*\*: (.*)", text)
            return json.dumps({"pushback": ["wrong" in s for s in said]})
        first = text.split("Conversation 1:", 1)[1].split("Conversation 2:", 1)[0]
        real = 2 if "Thank you!" in first else 1  # the simulated user thanks politely
        return json.dumps({"reason": "the simulated user thanks politely", "real": real})

    def protocol_judge(self, prompt: str) -> str:
        """interactivity: the user messages of the conversation judged, at most 3; accuracy:
        1 when it holds the ground-truth answer."""
        self.log("protocol", [{"role": "user", "content": prompt}])
        chat = prompt.split("Ground Truth Answer:", 1)[0]
        answer = prompt.split("Ground Truth Answer:", 1)[1].strip().splitlines()[0].strip()
        said = re.findall(r"\*\*user\*\*: (.*)", chat)
        verdict = {
            "interactivity": {"thought": "counted", "score": min(3, len(said))},
            "accuracy": {
                "thought": "looked",
                "score": int(answer in chat.split("Target Question")[0]),
            },
        }
        return json.dumps(verdict)

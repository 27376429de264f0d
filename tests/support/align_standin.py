"""A stand-in judge that follows the rules in its prompt, a hidden labelling policy, and a
stand-in optimiser, for `chatjudge align`'s tests and `bench/align_calibration.py`.

Rows are pairwise (`pairwise-chat-quality`, judged without flipping), each about one of 20
cases (`case-C` in its prompt). The humans' policy gives each case a label (B for even cases,
A for odd). The judge, unguided, gives the policy's label on cases 0-11 and the other one on
12-19: it agrees with the humans on about 60% of rows. Guided, it follows a rule
(`... case-C ... choose X`) or a labelled example of its case where its prompt's guidance has
one, except on cases 18 and 19, which no guidance changes: with rules for every case it agrees
on about 90%, and a rule only fixes verdicts. The optimiser writes one rule per case from the
disagreements it is shown, with the majority human label.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from typing import Any

N_CASES = 20
GUIDANCE = "# Guidance from human labels"
_CASE = re.compile(r"about case-(\d+)")
_RULE = re.compile(r"case-(\d+), choose (A|B|SAME)")
_EXAMPLE = re.compile(r"about case-(\d+).*?Human verdict: \"(A|B|SAME)\"", re.S)
_OPTIMIZER_CASE = re.compile(r"about case-(\d+).*?Human label\(s\): ([A-Z, ]+)", re.S)


def _hash(text: str) -> int:
    """A hash whose bits are independent of another text's (crc32's are linear)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def case_of(row_id: str) -> int:
    return _hash(row_id) % N_CASES


def rows(n: int, prefix: str = "r") -> list[dict[str, Any]]:
    """`n` pairwise rows, each about one case."""
    out = []
    for k in range(n):
        item = f"{prefix}{k:04d}"
        case = case_of(item)
        out.append({
            "id": item,
            "history": "",
            "prompt": f"Row {item}: a question about case-{case}.",
            "baseline_model_response": f"The first answer to row {item}.",
            "response": f"The second answer to row {item}.",
        })  # fmt: skip
    return out


def policy(row_id: str) -> str:
    """The humans' label of a row (A: baseline, B: candidate)."""
    return "B" if case_of(row_id) % 2 == 0 else "A"


def noise(row_id: str, seed: int = 0) -> str:
    """A label that is pure noise: A or B by a coin flip per row and seed."""
    return "AB"[_hash(f"noise {seed} {row_id}") % 2]


UNTEACHABLE = (18, 19)


def default_verdict(case: int) -> str:
    right = "B" if case % 2 == 0 else "A"
    return right if case < 12 else {"A": "B", "B": "A"}[right]


def guided_verdict(case: int, guidance: str) -> str:
    """The verdict on a row of `case` given its prompt's guidance text."""
    if case in UNTEACHABLE:
        return default_verdict(case)
    taught = {int(c): label for c, label in _EXAMPLE.findall(guidance)}
    taught.update({int(c): label for c, label in _RULE.findall(guidance)})
    return taught.get(case, default_verdict(case))


def judge(prompt: str) -> str:
    """The stand-in judge as a chatjudge Python judge (`fn(prompt)`)."""
    body, _, guidance = prompt.partition(GUIDANCE)
    found = _CASE.search(body)
    case = int(found.group(1)) if found else 0
    choice = guided_verdict(case, guidance)
    return json.dumps({"explanation": f"case {case}", "pairwise_choice": choice})


def write_rules(prompt: str) -> str:
    """The stand-in optimiser (`fn(prompt)`): one rule per case shown, majority label."""
    votes: dict[int, Counter[str]] = {}
    for case, labels in _OPTIMIZER_CASE.findall(prompt):
        for label in labels.replace(" ", "").split(","):
            votes.setdefault(int(case), Counter())[label] += 1
    rules = [
        f"When the prompt is about case-{c}, choose {v.most_common(1)[0][0]}."
        for c, v in sorted(votes.items())
    ]
    return json.dumps({"rules": rules})


def standin_reply(prompt: str, schema: dict[str, Any] | None) -> str:
    """What an OpenAI stand-in server answers as this judge or this optimiser."""
    if schema is not None and "rules" in schema.get("properties", {}):
        return write_rules(prompt)
    return judge(prompt)

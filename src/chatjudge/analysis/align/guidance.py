"""What `chatjudge align` adds to a judge's prompt, and what its optimiser is asked.

The one place guidance goes: a block appended to the end of the protocol's template, after
its last line and before the output-format instruction (which the runner appends for judges
that cannot enforce the verdict schema). The block holds the rules the optimiser wrote, the
labelled examples, or both (`Candidate`). The source template is kept byte for byte in front
of it, so a built-in seed's text is never changed: the aligned protocol is a custom one, with
a name of its own. The block's braces are escaped: an example's text is data, never a
placeholder.

The optimiser sees, for each labelled row where the judge and the humans disagree, the row's
fields as the judge saw them, the judge's verdict and rationale, and the humans' labels; it
answers `{"rules": [...]}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chatjudge.chat.render import as_text, cut
from chatjudge.chat.types import OutputSchema
from chatjudge.protocols import Protocol

Candidate = Literal["rules", "examples", "both"]
CANDIDATES: tuple[Candidate, ...] = ("rules", "examples", "both")
MAX_CASES = 40  # disagreements shown to the optimiser in one prompt
MAX_EXAMPLES = 6  # labelled examples in a candidate
MAX_RULES = 10
FIELD_CHARS = 1500  # a field's text in a case or an example, cut beyond this

GUIDANCE_TITLE = "# Guidance from human labels"
RULES_SCHEMA = OutputSchema(
    name="rules",
    schema={
        "type": "object",
        "properties": {"rules": {"type": "array", "items": {"type": "string"}}},
        "required": ["rules"],
        "additionalProperties": False,
    },
    instruction='\n\nReply with one JSON object only, in this shape: {"rules": ["...", "..."]}',
)


@dataclass(frozen=True)
class Case:
    """A labelled row as guidance shows it: its fields' texts, the judge's verdict and
    rationale (from the run), and the humans' labels, in the protocol's own terms."""

    id: str
    texts: dict[str, str]
    verdict: str
    rationale: str
    labels: tuple[str, ...]


def case_of(
    protocol: Protocol,
    item_id: str,
    fields: Mapping[str, Any],
    verdict: str,
    rationale: str,
    labels: Sequence[str],
) -> Case:
    texts = {f.name: cut(as_text(fields.get(f.name)), FIELD_CHARS) for f in protocol.fields}
    return Case(item_id, texts, verdict, rationale, tuple(labels))


def optimizer_prompt(protocol: Protocol, cases: Sequence[Case]) -> str:
    """The optimiser's prompt: the judge's instructions, then the disagreements."""
    shown = cases[:MAX_CASES]
    parts = [
        "You improve the instructions of an LLM judge so that its verdicts match human "
        "raters. Below are the judge's instructions, then labelled cases where the judge's "
        "verdict differs from the humans' label.",
        f"Write at most {MAX_RULES} short, general rules (one sentence each) that would make "
        "the judge agree with the humans on cases like these. Say what to look for and "
        "which verdict it calls for; do not refer to the cases by number.",
        "## The judge's instructions\n" + cut(protocol.template, 6000),
        f"## Cases where the judge and the humans disagree ({len(shown)})",
    ]
    for k, case in enumerate(shown, 1):
        parts.append(
            f"### Case {k}\n{_fields(case.texts)}\n"
            f"Judge's verdict: {case.verdict}\n"
            f"Judge's rationale: {cut(case.rationale, FIELD_CHARS) or '(none)'}\n"
            f"Human label(s): {', '.join(case.labels)}"
        )
    return "\n\n".join(parts)


def read_rules(text: str) -> list[str]:
    """The rules of an optimiser's reply: `{"rules": [...]}`, read tolerantly; none from a
    reply that holds none."""
    import json_repair

    try:
        data = json_repair.loads(text)
    except ValueError:
        return []
    rules = data.get("rules") if isinstance(data, dict) else data
    if not isinstance(rules, list):
        return []
    return [str(r).strip() for r in rules if str(r).strip()][:MAX_RULES]


def guided(
    source: Protocol,
    candidate: Candidate,
    rules: Sequence[str],
    examples: Sequence[Case],
    provenance: dict[str, Any] | None = None,
) -> Protocol:
    """`source` with the guidance block of `candidate` appended to its template; none when
    it has nothing to add (no rules written, say): the judge is then asked what it was."""
    shown_rules = rules if candidate != "examples" else ()
    shown_examples = examples if candidate != "rules" else ()
    block = guidance_block(shown_rules, shown_examples) if shown_rules or shown_examples else ""
    # A new model, not `model_copy`: a copy would keep the source's parsed template.
    return Protocol.model_validate(
        {
            **source.model_dump(),
            "name": f"{source.name}-aligned",
            "description": f"{source.description} Aligned to human labels ({candidate}).".strip(),
            "template": source.template + block.replace("{", "{{").replace("}", "}}"),
            "provenance": provenance,
        }
    )


def guidance_block(rules: Sequence[str], examples: Sequence[Case]) -> str:
    """The text appended to the template (before escaping)."""
    parts = [
        "\n\n" + GUIDANCE_TITLE,
        "Human raters judged cases like this one. Follow their rules and examples where they "
        "apply; they take precedence over the instructions above.",
    ]
    if rules:
        parts.append("## Rules\n" + "\n".join(f"{k}. {r}" for k, r in enumerate(rules, 1)))
    for k, case in enumerate(examples, 1):
        parts.append(
            f"## Labelled example {k}\n{_fields(case.texts)}\n"
            f"Human verdict: {json.dumps(case.labels[0])}"
        )
    return "\n\n".join(parts)


def _fields(texts: Mapping[str, str]) -> str:
    return "\n".join(f"[{name}]\n{text or '(empty)'}" for name, text in texts.items())

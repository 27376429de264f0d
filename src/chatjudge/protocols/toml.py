"""Custom protocols from TOML files, mapped key for key onto the `Protocol` model.

The top-level keys are `Protocol`'s fields, with one addition: the template is given
either inline (`template`) or as `template_file`, a path relative to the TOML file.
`[[fields]]`, `[[scores]]`, `[choice]` (with its `[choice.options]` table) and
`[[metrics]]` take the keys of `FieldSpec`, `ScoreSpec`, `ChoiceSpec` and `MetricSpec`;
`[provenance]`, written by `chatjudge align`, says where an aligned protocol came from.

Left out, `metrics` defaults to the mean of each score and, for a choice, the
candidate / baseline / tie win rates; `output_instruction` defaults to a description
of the verdict's JSON shape. Every problem is a `UsageError` naming the file and key.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from chatjudge.errors import UsageError
from chatjudge.protocols.spec import (
    BASELINE,
    CANDIDATE,
    TIE,
    ChoiceSpec,
    FieldSpec,
    MetricSpec,
    Protocol,
    ScoreSpec,
)
from chatjudge.protocols.template import Template

_TABLES: dict[str, type[BaseModel]] = {
    "fields": FieldSpec,
    "scores": ScoreSpec,
    "choice": ChoiceSpec,
    "metrics": MetricSpec,
}
_TOP_KEYS = sorted([*Protocol.model_fields, "template_file"])
_REPLY_WITH = "\n\nReply with one JSON object only, in this shape and with no other text:\n"
_WIN_RATES = {CANDIDATE: "candidate_win_rate", BASELINE: "baseline_win_rate", TIE: "tie_rate"}


def load_toml_protocol(path: Path) -> Protocol:
    """Read a custom protocol from a TOML file; any problem is a UsageError naming the key."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise UsageError(f"cannot read protocol file {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path}: not valid TOML: {exc}") from exc

    data["template"] = _template_text(data, path)
    instruction = data.pop("output_instruction", None)
    try:
        protocol = Protocol.model_validate(data)
    except ValidationError as exc:
        problems = "\n".join(f"  {_describe(error)}" for error in exc.errors())
        raise UsageError(f"{path}: invalid protocol:\n{problems}") from exc
    if "metrics" not in data:
        protocol = protocol.model_copy(update={"metrics": default_metrics(protocol)})
    if instruction is None:
        instruction = output_instruction(protocol.verdict_schema)
    elif not isinstance(instruction, str):
        raise UsageError(f"{path}: output_instruction must be a string")
    elif instruction.strip():
        instruction = "\n\n" + instruction.strip("\n")
    return protocol.model_copy(update={"output_instruction": instruction})


def _template_text(data: dict[str, Any], path: Path) -> str:
    """The inline `template` or the text of `template_file`, checked as a format string."""
    inline, file = data.pop("template", None), data.pop("template_file", None)
    if (inline is None) == (file is None):
        raise UsageError(f"{path}: give exactly one of 'template' (inline) or 'template_file'")
    key = "template" if file is None else "template_file"
    if not isinstance(inline if file is None else file, str):
        raise UsageError(f"{path}: '{key}' must be a string")
    if file is not None:
        source = path.parent / file
        try:
            inline = source.read_text("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"{path}: template_file '{file}' cannot be read: {exc}") from exc
    try:
        Template(inline)
    except UsageError as exc:
        raise UsageError(f"{path}: '{key}': {exc}") from exc
    return inline


def _describe(error: Any) -> str:
    loc = error["loc"]
    where = ".".join(f"[{p + 1}]" if isinstance(p, int) else str(p) for p in loc)
    where = where.replace(".[", "[") or "protocol"
    if error["type"] == "extra_forbidden":
        allowed = _TOP_KEYS if len(loc) == 1 else list(_TABLES[str(loc[0])].model_fields)
        return f"{where}: unknown key (allowed: {', '.join(allowed)})"
    if error["type"] == "missing":
        return f"{where}: required key missing"
    return f"{where}: {error['msg'].removeprefix('Value error, ')}"


def default_metrics(protocol: Protocol) -> tuple[MetricSpec, ...]:
    """The mean of each score, then the share of each side the choice can map to."""
    metrics = [
        MetricSpec(name=s.name, source=s.name, description=f"mean {s.name} ({s.min:g}-{s.max:g})")
        for s in protocol.scores
    ]
    if protocol.choice is not None:
        sides = set(protocol.choice.options.values())
        metrics += [
            MetricSpec(name=name, source=protocol.choice.name, equals=side)
            for side, name in _WIN_RATES.items()
            if side in sides
        ]
    return tuple(metrics)


def output_instruction(schema: dict[str, Any]) -> str:
    """The format text appended for judges that cannot enforce the verdict schema."""
    return _REPLY_WITH + _shape(schema)


def _shape(node: dict[str, Any]) -> str:
    if node.get("type") == "object":
        inner = ", ".join(f"{json.dumps(k)}: {_shape(v)}" for k, v in node["properties"].items())
        return "{" + inner + "}"
    if "enum" in node:
        return " or ".join(json.dumps(v) for v in node["enum"])
    if node.get("type") == "string":
        return '"..."'
    return f"<{node['type']} from {node['minimum']:g} to {node['maximum']:g}>"


def protocol_toml(protocol: Protocol, header: str = "") -> str:
    """A protocol as the TOML file `load_toml_protocol` reads back into an equal protocol:
    the template inline (a multi-line literal string where it can be, so it reads as it is
    sent), `header` as comment lines first, the provenance table last."""
    data = protocol.model_dump(mode="json", exclude_none=True)
    provenance = data.pop("provenance", None)
    template = data.pop("template")
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    for key, value in data.items():
        if value in ((), [], "") and key != "output_instruction":
            continue
        if key == "output_instruction":
            value = value.strip("\n")  # read back as two newlines and the text
        lines.append(f"{key} = {_toml(value)}")
    lines.append(f"template = {_toml_text(template)}")
    if provenance:
        lines += ["", "[provenance]"]
        lines += [f"{_key(k)} = {_toml(v)}" for k, v in provenance.items()]
    return "\n".join(lines) + "\n"


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\r]")
_LITERAL = "'''"


def _toml_text(text: str) -> str:
    """A multi-line literal string where TOML allows one (no three quotes in a row, no
    control character but tab and newline), else a basic string."""
    if _LITERAL not in text and not _CONTROL.search(text) and not text.endswith("'"):
        return _LITERAL + "\n" + text + _LITERAL
    return _toml(text)


def _toml(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):  # JSON's escapes are TOML's, but for DEL
        return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        return "[\n" + "".join(f"  {_inline(v)},\n" for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_key(k)} = {_inline(v)}" for k, v in value.items()) + "}"
    raise TypeError(f"no TOML for {type(value).__name__}")


def _inline(value: Any) -> str:
    """A value inside an inline table or an array, which TOML keeps on one line."""
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_inline(v) for v in value) + "]"
    return _toml(value)


def _key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key, ensure_ascii=False)

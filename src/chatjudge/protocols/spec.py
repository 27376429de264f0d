"""What a protocol is: template, fields, verdict shape and aggregation, as plain data.

Built-in protocols and custom TOML protocols are both instances of `Protocol`, so
everything downstream (schema, parsing, per-item scores, metrics) has one code path.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, create_model, model_validator

from chatjudge.chat.fields import FieldSpec
from chatjudge.protocols.template import Template

Kind = Literal["pointwise", "pairwise"]
CANDIDATE, BASELINE, TIE = "CANDIDATE", "BASELINE", "TIE"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ScoreSpec(_Strict):
    """A numeric score read from the verdict at a dotted `path`, with its allowed range."""

    name: str
    path: str
    min: float
    max: float
    integer: bool = True
    rationale: str | None = None  # dotted path of the judge's reasoning for this score

    @model_validator(mode="after")
    def _range(self) -> ScoreSpec:
        if self.min > self.max:
            raise ValueError(f"score '{self.name}': min {self.min} > max {self.max}")
        return self


class ChoiceSpec(_Strict):
    """A categorical verdict, mapped to the candidate's side (CANDIDATE / BASELINE / TIE)."""

    name: str = "pairwise_choice"
    path: str = "pairwise_choice"
    options: dict[str, str]  # label the judge writes -> CANDIDATE | BASELINE | TIE
    flipped: dict[str, str] = Field(default_factory=lambda: {"A": "B", "B": "A"})
    rationale: str | None = "explanation"

    @model_validator(mode="after")
    def _sides(self) -> ChoiceSpec:
        bad = {v for v in self.options.values() if v not in (CANDIDATE, BASELINE, TIE)}
        if bad:
            raise ValueError(f"choice options must map to CANDIDATE, BASELINE or TIE, not {bad}")
        return self


class MetricSpec(_Strict):
    """A summary metric: the mean of `(score + offset) * scale`, or the share of a choice."""

    name: str
    source: str  # a score name, or the choice name
    equals: str | None = None  # for choices: share of items whose choice equals this
    offset: float = 0.0
    scale: float = 1.0
    description: str = ""
    # A ratio over all items (micro): the sum of `(source + offset) * scale` over the sum of
    # the `denominator` scores, with its interval from the same bootstrap over items.
    denominator: tuple[str, ...] = ()


class Protocol(_Strict):
    """A judge protocol: prompt template, data fields, verdict shape, aggregation."""

    name: str
    description: str = ""
    kind: Kind
    template: str
    fields: tuple[FieldSpec, ...]
    scores: tuple[ScoreSpec, ...] = ()
    choice: ChoiceSpec | None = None
    metrics: tuple[MetricSpec, ...] = ()
    swap: tuple[str, str] | None = None  # pairwise: the two fields exchanged to flip the order
    output_instruction: str = ""
    # A deterministic protocol: no template and no judge; its scorer gives each item's
    # scores (`chatjudge.runner.engine`).
    scorer: Literal["", "tool-trajectory"] = ""
    # Where an aligned protocol came from (`chatjudge align`: the source protocol and its
    # hash, the labels' hash, the seed, the judge, the held-out figures); its runs record
    # it in run.json and their reports show it.
    provenance: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _consistent(self) -> Protocol:
        placeholders = set(Template(self.template).fields)
        declared = {f.name for f in self.fields}
        if placeholders != declared and not self.scorer:
            raise ValueError(
                f"protocol '{self.name}': template placeholders {sorted(placeholders)} "
                f"differ from declared fields {sorted(declared)}"
            )
        if self.kind == "pairwise":
            if self.choice is None:
                raise ValueError(f"pairwise protocol '{self.name}' needs a choice")
            if self.swap is None or not set(self.swap) <= declared:
                raise ValueError(f"pairwise protocol '{self.name}' needs two fields to swap")
        elif not self.scores and self.choice is None:
            raise ValueError(f"protocol '{self.name}' defines neither scores nor a choice")
        sources = {s.name for s in self.scores} | ({self.choice.name} if self.choice else set())
        for m in self.metrics:
            for source in (m.source, *m.denominator):
                if source not in sources:
                    raise ValueError(f"metric '{m.name}' reads unknown score '{source}'")
        return self

    @cached_property
    def parsed_template(self) -> Template:
        return Template(self.template)

    def render(self, values: Mapping[str, str], *, flipped: bool = False) -> str:
        """The judge prompt for one item's field texts; `flipped` swaps the pairwise sides."""
        if flipped and self.swap is not None:
            a, b = self.swap
            values = {**values, a: values[b], b: values[a]}
        return self.parsed_template.render(values)

    @cached_property
    def required_fields(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields if f.required)

    @cached_property
    def score_names(self) -> tuple[str, ...]:
        """Per-item score names in results, in order."""
        names = [s.name for s in self.scores]
        if self.choice is not None:
            names.append(self.choice.name)
        return tuple(names)

    @cached_property
    def verdict_schema(self) -> dict[str, Any]:
        """JSON schema of the verdict, rationale before score so a judge reasons first."""
        root: dict[str, Any] = {}
        for path, leaf in self._leaves():
            node = root
            *parents, last = path.split(".")
            for p in parents:
                node = node.setdefault(p, {})
            node[last] = _Leaf(leaf)
        return _to_schema(root)

    def _leaves(self) -> list[tuple[str, dict[str, Any]]]:
        leaves: list[tuple[str, dict[str, Any]]] = []
        for s in self.scores:
            if s.rationale:
                leaves.append((s.rationale, {"type": "string"}))
            leaf: dict[str, Any]
            if s.integer and s.max - s.min <= 10:
                leaf = {"type": "integer", "enum": list(range(int(s.min), int(s.max) + 1))}
            else:
                kind = "integer" if s.integer else "number"
                leaf = {"type": kind, "minimum": s.min, "maximum": s.max}
            leaves.append((s.path, leaf))
        if self.choice is not None:
            if self.choice.rationale:
                leaves.append((self.choice.rationale, {"type": "string"}))
            leaves.append((self.choice.path, {"type": "string", "enum": list(self.choice.options)}))
        return leaves

    @cached_property
    def verdict_model(self) -> type[BaseModel]:
        """Pydantic model validating a parsed reply (lax: `"3"` is 3, `"b"` is `B`)."""
        tree: dict[str, Any] = {}
        for path, annotation in self._validators():
            node = tree
            *parents, last = path.split(".")
            for p in parents:
                node = node.setdefault(p, {})
            node[last] = annotation
        return _to_model("Verdict", tree)

    def _validators(self) -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        for s in self.scores:
            if s.rationale:
                out.append((s.rationale, (str, "")))
            number: Any = int if s.integer else float
            score = Annotated[number, BeforeValidator(_no_bool), Field(ge=s.min, le=s.max)]
            out.append((s.path, (score, ...)))
        if self.choice is not None:
            if self.choice.rationale:
                out.append((self.choice.rationale, (str, "")))
            labels = tuple(self.choice.options)
            choice_type = Annotated[Literal[labels], BeforeValidator(_normalise_label)]  # type: ignore[valid-type]
            out.append((self.choice.path, (choice_type, ...)))
        return out


def _no_bool(value: Any) -> Any:
    """`true` is not a score, though pydantic would read it as 1."""
    if isinstance(value, bool):
        raise ValueError("a score must be a number, not true/false")
    return value


def _normalise_label(value: Any) -> Any:
    if isinstance(value, str):
        return value.strip().strip("*\"'`.").strip().upper()
    return value


class _Leaf(dict[str, Any]):
    """A finished JSON-schema node, told apart from an intermediate object node."""


def _to_schema(tree: dict[str, Any]) -> dict[str, Any]:
    props = {k: (dict(v) if isinstance(v, _Leaf) else _to_schema(v)) for k, v in tree.items()}
    return {
        "type": "object",
        "properties": props,
        "required": list(props),
        "additionalProperties": False,
    }


def _to_model(name: str, tree: dict[str, Any]) -> type[BaseModel]:
    defs: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            defs[key] = (_to_model(f"{name}_{key}", value), ...)
        else:
            defs[key] = value
    return create_model(name, __config__=ConfigDict(extra="ignore"), **defs)

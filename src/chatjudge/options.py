"""Every run option, declared once: its type, default, limits, help text and CLI flag.

The CLI builds its flags from these declarations, `evaluate(**options)` takes the same
names as keywords, and the default run directory is named after the options marked
`fingerprint` (those that change results). Adding an option is one `option(...)` line
in its group, plus the code that uses it.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.fields import FieldInfo

from chatjudge.errors import UsageError
from chatjudge.types import GenerationSettings


def option(
    default: Any,
    help: str,
    *,
    flags: tuple[str, ...] = (),
    fingerprint: bool | str = False,
    when_set: bool = False,
    help_for: Mapping[str, str] | None = None,
    metavar: str | None = None,
    **limits: Any,
) -> Any:
    """Declare one option. `flags`: the CLI's (default `--name-with-dashes`; a boolean gets
    a single flag unless given `--x/--no-x`); `fingerprint`: it changes results (a string
    names it in the fingerprint); `when_set`: it enters the fingerprint only when given (an
    option added after chatjudge 0.1 keeps the default run directories that version named);
    `help_for`: the help of a command in which the option plays another role, by command;
    `metavar`: the value's name in the help; `limits`: pydantic's `ge`, `gt`, ..."""
    extra: dict[str, Any] = {"flags": list(flags), "fingerprint": fingerprint}
    if when_set:
        extra["when_set"] = True
    if help_for:
        extra["help_for"] = dict(help_for)
    if metavar:
        extra["metavar"] = metavar
    return Field(default, description=help, json_schema_extra=extra, **limits)


# Every command that writes takes --overwrite with this help (`run`, `generate`, `simulate`
# from here; `import`, `merge`, `gate` through `chatjudge.cli.common.OverwriteOpt`).
OVERWRITE_HELP = (
    "Replace what --out holds when it is not this command's output of the same data and "
    "options; without it, that is refused (exit 2), and the same command resumes there. "
    "Never over the command's own input, nor over a run's own files."
)


# Stands in a help text for the providers that take --base-url: the CLI, which may import
# the providers' classes (this module sits below them), names them (`help_of`).
BASE_URL_PROVIDERS = "{base_url_providers}"

# `--human` and `--column` of `gate`, `report` and `agree`.
HUMAN_HELP = (
    "JSONL/CSV of human ratings (id, label or score; the `agree` format): adds "
    "human-calibrated (PPI++) estimates of the metrics."
)
COLUMN_HELP = "The rating column (default: label, score or human)."


class OptionGroup(BaseModel):
    """A small group of related options; a typo is an error, not a silent default."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class RunOptions(OptionGroup):
    concurrency: int = option(
        16,
        "Calls in flight at once (simulate: conversations).",
        ge=1,
        help_for={"gate": "--sequential: calls in flight at once."},
    )
    samples: int = option(
        1,
        "Independent samples per row (run: judge calls per item; simulate: conversations).",
        ge=1,
        fingerprint=True,
        help_for={"gate": "--sequential: judge calls per row and order."},
    )
    flip: bool = option(
        True,
        "Pairwise: judge both presentation orders.",
        flags=("--flip/--no-flip",),
        fingerprint=True,
    )
    limit: int | None = option(None, "Only the first N rows.", ge=1, fingerprint=True)
    no_cache: bool = option(False, "Send every call again, ignoring the store.")
    include_system: bool = option(False, "Show system messages to the judge.", fingerprint=True)
    executor: Literal["local", "ray"] = option(
        "local",
        "Where model calls run: this process, or Ray workers (the cluster at RAY_ADDRESS, "
        "else a local one on loopback only); the store and results stay here either way.",
    )
    workers: int | None = option(
        None,
        "Ray workers per model (default: one per CPU of the cluster; local models share them).",
        ge=1,
    )
    overwrite: bool = option(False, OVERWRITE_HELP)
    skip_invalid: bool = option(
        False,
        "Go on with the valid rows and list the invalid ones (row, field) in the summary "
        "(and the report), exit 1; without it, invalid data stops everything (exit 2).",
    )
    shard: str | None = option(
        None,
        "I/N: take only shard I (0 to N-1) of the rows, those whose id's SHA-256 is I modulo "
        "N, with its own output; N drivers, one per shard, then `chatjudge merge` their outputs.",
        fingerprint=True,
        when_set=True,
    )

    @field_validator("shard")
    @classmethod
    def _shard(cls, value: str | None) -> str | None:
        if value is None:
            return None
        from chatjudge.data.shard import Shard  # the data layer, only when a shard is given

        return str(Shard.parse(value))


class GenerationOptions(OptionGroup):
    temperature: float = option(
        0.0, "Sampling temperature (simulate: the assistant's).", ge=0.0, fingerprint=True
    )
    max_tokens: int = option(
        1024, "Reply token limit (simulate: the assistant's).", ge=1, fingerprint=True
    )
    seed: int | None = option(None, "Sampling seed (sample k uses seed + k).", fingerprint=True)

    def settings(self, sample: int = 0) -> GenerationSettings:
        """Generation settings of one sample: with a seed, each sample gets its own."""
        seed = None if self.seed is None else self.seed + sample
        return GenerationSettings(self.temperature, self.max_tokens, seed)


class RetryOptions(OptionGroup):
    max_retries: int = option(
        6, "Retries of transient faults (429, 5xx, timeouts, lost connections).", ge=0
    )
    retry_wait: float = option(1.0, "First back-off in seconds (then doubling, with jitter).", gt=0)
    parse_retries: int = option(
        2, "Asks again, at once, after a reply that holds no valid verdict.", ge=0
    )


class RateOptions(OptionGroup):
    requests_per_minute: float | None = option(
        None, "Requests per minute, per model.", flags=("--rpm",), gt=0
    )
    tokens_per_minute: float | None = option(
        None, "Prompt tokens per minute, per model.", flags=("--tpm",), gt=0
    )


class PricingOptions(OptionGroup):
    price_in: float | None = option(
        None,
        "USD per million input tokens.",
        ge=0,
        allow_inf_nan=False,
        help_for={"gate": "--sequential: USD per million input tokens."},
    )
    price_out: float | None = option(
        None,
        "USD per million output tokens.",
        ge=0,
        allow_inf_nan=False,
        help_for={"gate": "--sequential: USD per million output tokens."},
    )
    prices: Path | None = option(
        None,
        "Prices per model, a TOML file whose table models.\"openai/my-model\" holds input "
        "and output in USD per million tokens; wins over --price-in/--price-out and the "
        "bundled price table.",
        help_for={"gate": "--sequential: prices per model, a TOML file."},
    )
    max_cost_usd: float | None = option(
        None,
        "Budget in USD for this command's calls: no call starts whose worst case (its input "
        "and its output cap at the model's price) could go over it; one that does not fit "
        "beside the calls in flight waits for them. Reached when nothing is in flight and the "
        "next call does not fit: everything is written and the exit status is 4. The same "
        "command with a larger budget resumes; calls the store answers cost nothing.",
        gt=0,
        allow_inf_nan=False,
        help_for={
            "gate": "--sequential: budget in USD for the judging; reached before a decision, "
            "exit 4 (the same command with a larger budget resumes)."
        },
    )


class ClientOptions(OptionGroup):
    """How models are reached: endpoints, per-attempt timeout, local worker processes."""

    @field_validator("base_url", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    base_url: tuple[str, ...] = option(
        (),
        f"The judges' endpoint ({BASE_URL_PROVIDERS}); repeat to spread calls over replicas.",
        fingerprint="base_urls",
        help_for={
            "generate": f"The endpoint of the model under test ({BASE_URL_PROVIDERS}); "
            "repeat to spread calls over replicas.",
            "gate": "--sequential: judge endpoint.",
        },
    )
    timeout: float = option(120.0, "Seconds per call attempt.", gt=0)
    local_workers: int | None = option(
        None, "Local models: llama.cpp worker processes (default: one per core, up to 4).", ge=1
    )


class SimulationOptions(OptionGroup):
    """`chatjudge simulate`: the simulated user and the length of a conversation."""

    @field_validator("assistant_base_url", "user_base_url", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return (value,) if isinstance(value, str) else value

    max_turns: int = option(
        6,
        "Assistant replies per conversation at most (the simulated user is not called after "
        "the last).",
        ge=1,
        fingerprint=True,
    )
    user_temperature: float = option(
        1.0, "The simulated user's sampling temperature (CollabLLM's).", ge=0.0, fingerprint=True
    )
    user_max_tokens: int = option(
        512, "The simulated user's reply token limit.", ge=1, fingerprint=True
    )
    user_prompt: Path | None = option(
        None,
        "A text file replacing the simulated user's instructions (placeholders {question}, "
        "{user_context}, {end_marker}).",
        fingerprint=True,
    )
    assistant_base_url: tuple[str, ...] = option(
        (),
        f"The assistant's endpoint ({BASE_URL_PROVIDERS}); repeatable.",
        fingerprint=True,
    )
    user_base_url: tuple[str, ...] = option(
        (), "The simulated user's endpoint; repeatable.", fingerprint=True
    )


class GateOptions(OptionGroup):
    """`chatjudge gate`: what is compared and how it is decided; with `--sequential`, also
    what is judged (the run options it passes on are the run's, `COMMAND_OPTIONS`)."""

    baseline: Path | None = option(None, "The baseline's run directory.")
    candidate: Path | None = option(None, "The candidate's run directory.")
    metric: str | None = option(None, "The metric (default: pairwise preference, else the first).")
    margin: float = option(0.0, "How much worse still passes not-worse (metric units).")
    require: str = option("not-worse", "not-worse (default) or better.")
    cluster: str | None = option(None, "A column grouping rows that move together.")
    by: str | None = option(
        None, "A column: the difference per slice, worst first (no value: '(missing)')."
    )
    slices_must_not_regress: bool = option(
        False, "Fail when a slice of 30+ rows lies wholly below -margin (Bonferroni)."
    )
    data: Path | None = option(
        None, "The input rows, joined by id (older runs lack columns).", flags=("--data",)
    )
    protocol: str | None = option(
        None,
        "A custom protocol's .toml (with --sequential: any protocol).",
        flags=("--protocol", "-p"),
    )
    allow_mismatch: bool = option(
        False, "Gate runs judged differently (recorded in gate.json)."
    )
    out: Path | None = option(
        None,
        "gate.json's path (default: in the candidate run directory); with --sequential, the "
        "run directory to judge into.",
        flags=("--out", "-o"),
    )
    markdown: Path | None = option(
        None, "Also write a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)."
    )
    seed: int = option(0, "Bootstrap (and --sequential order) seed.")
    sequential: bool = option(False, "Judge DATA batch by batch until decided.")
    judge: tuple[str, ...] = option((), "--sequential: the judge(s).", flags=("--judge", "-j"))
    baseline_data: Path | None = option(
        None, "--sequential, pointwise: the baseline's rows (same ids)."
    )
    batch: int = option(50, "--sequential: units (rows, or clusters) per batch.", ge=1)
    control: str | None = option(
        None,
        "length or style: one pairwise run decided on its length- (or length and markdown "
        "style-) controlled preference, the raw one shown beside it.",
    )
    human: Path | None = option(None, HUMAN_HELP)
    column: str | None = option(None, COLUMN_HELP)
    score: str | None = option(None, "--human, pointwise: the score the rating column rates.")


class ImportOptions(OptionGroup):
    """`chatjudge import` (docs/traces.md); the importer checks the values (`--turns`,
    `--sample`, `--keep`) with the files, naming the flag."""

    turns: str = option(
        "last",
        "last: one row per conversation, its last assistant turn; all: one row per "
        "assistant turn.",
    )
    sample: int | None = option(
        None, "Keep N conversations, drawn at random with --seed.", metavar="N"
    )
    seed: int = option(0, "The seed of --sample.")
    redact: tuple[str, ...] = option(
        (),
        "Replace matches with [REDACTED] in everything written (repeatable), e.g. e-mail "
        "addresses or keys.",
        metavar="REGEX",
    )
    keep: tuple[str, ...] = option(
        (),
        "Copy this span attribute (or log field) into a column of its name, to slice by "
        "with `gate --by` (repeatable).",
        metavar="ATTR",
    )
    skip_invalid: bool = option(
        False,
        "Go on with the valid calls and list the invalid ones (file, line or span id) on "
        "stderr, exit 1; without it, invalid input stops everything (exit 2).",
    )
    overwrite: bool = option(False, OVERWRITE_HELP)


class RunConfig(BaseModel):
    """All options of a command, by group; `progress` is the terminal's, not an option."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    GROUPS: ClassVar[dict[str, type[OptionGroup]]] = {
        "run": RunOptions,
        "generation": GenerationOptions,
        "retries": RetryOptions,
        "rates": RateOptions,
        "pricing": PricingOptions,
        "client": ClientOptions,
        "simulation": SimulationOptions,
    }

    run: RunOptions = RunOptions()
    generation: GenerationOptions = GenerationOptions()
    retries: RetryOptions = RetryOptions()
    rates: RateOptions = RateOptions()
    pricing: PricingOptions = PricingOptions()
    client: ClientOptions = ClientOptions()
    simulation: SimulationOptions = SimulationOptions()
    progress: bool = True

    @classmethod
    def from_options(
        cls, options: Mapping[str, Any], *, command: str = "run", progress: bool = True
    ) -> RunConfig:
        """A config from flat option names (the Python API's keywords, the CLI's parameters);
        `command` says which options are allowed (`COMMAND_OPTIONS`)."""
        allowed = COMMAND_OPTIONS[command]
        grouped: dict[str, dict[str, Any]] = {name: {} for name in cls.GROUPS}
        for name, value in options.items():
            if name not in allowed:
                close = difflib.get_close_matches(name, allowed, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                known = "not an option of" if name in OPTION_GROUPS else "unknown option for"
                raise UsageError(f"{known} {command}: {name!r}{hint}")
            grouped[OPTION_GROUPS[name]][name] = value
        parts: dict[str, OptionGroup] = {}
        problems: list[ValidationError] = []
        for group, model in cls.GROUPS.items():
            try:
                parts[group] = model(**grouped[group])
            except ValidationError as exc:  # every group's problems are told at once
                problems.append(exc)
        if problems:
            raise UsageError(describe(*problems))
        return cls(progress=progress, **parts)

    def in_process(self) -> RunConfig:
        """The same options with the executor of this process: a dry run sends nothing, so
        it starts no Ray workers."""
        run = self.run.model_copy(update={"executor": "local", "workers": None})
        return self.model_copy(update={"run": run})

    def options(self, command: str = "run") -> dict[str, Any]:
        """The value of every option of `command`, by name (as the Python API takes them)."""
        allowed = COMMAND_OPTIONS[command]
        return {name: value for name, (_, value) in self._values() if name in allowed}

    def changed(self) -> dict[str, Any]:
        """The options whose values differ from their defaults, by name."""
        return {
            name: value
            for name, (info, value) in self._values()
            if value != info.get_default(call_default_factory=True)
        }

    def fingerprint(self, command: str = "run") -> dict[str, Any]:
        """The options of `command` that change results, for naming a default output."""
        out: dict[str, Any] = {}
        for name, (info, value) in self._values():
            extra = _extra(info)
            key = extra["fingerprint"]
            if extra.get("when_set") and value == info.get_default(call_default_factory=True):
                continue
            if key and name in COMMAND_OPTIONS[command]:
                out[key if isinstance(key, str) else name] = (
                    sorted(value) if isinstance(value, tuple) else value
                )
        return out

    def _values(self) -> Iterator[tuple[str, tuple[FieldInfo, Any]]]:
        for group_name, model in self.GROUPS.items():
            group = getattr(self, group_name)
            for name, info in model.model_fields.items():
                yield name, (info, getattr(group, name))


OPTION_GROUPS: dict[str, str] = {
    name: group for group, model in RunConfig.GROUPS.items() for name in model.model_fields
}


def _names(*groups: type[OptionGroup], but: tuple[str, ...] = ()) -> tuple[str, ...]:
    return tuple(n for g in groups for n in g.model_fields if n not in but)


# Which options each command takes (its CLI flags and its Python keywords).
COMMAND_OPTIONS: dict[str, tuple[str, ...]] = {
    "run": _names(
        RunOptions, GenerationOptions, RetryOptions, RateOptions, PricingOptions, ClientOptions
    ),
    "generate": _names(
        RunOptions,
        GenerationOptions,
        RetryOptions,
        RateOptions,
        PricingOptions,
        ClientOptions,
        but=("samples", "flip", "include_system", "parse_retries"),
    ),
    "simulate": _names(
        RunOptions,
        GenerationOptions,
        RetryOptions,
        RateOptions,
        PricingOptions,
        ClientOptions,
        SimulationOptions,
        but=("flip", "include_system", "parse_retries", "base_url"),
    ),
    "import": _names(ImportOptions),
    # In the order of `gate --help`: its own options and the run options it passes on.
    "gate": (
        *_names(GateOptions, but=("control", "human", "column", "score")),
        "base_url",
        "concurrency",
        "samples",
        "max_cost_usd",
        "price_in",
        "price_out",
        "prices",
        "control",
        "human",
        "column",
        "score",
        "overwrite",
    ),
}

# The commands with a group of their own, whose names win over the run's (`gate --seed`).
OWN_OPTIONS: dict[str, type[OptionGroup]] = {"gate": GateOptions, "import": ImportOptions}


def option_fields(command: str = "run") -> Iterator[tuple[str, FieldInfo]]:
    """The options of `command`, name and declaration, group by group (its CLI flags)."""
    declared = {n: i for g in RunConfig.GROUPS.values() for n, i in g.model_fields.items()}
    if command in OWN_OPTIONS:
        declared.update(OWN_OPTIONS[command].model_fields)
    yield from ((name, declared[name]) for name in COMMAND_OPTIONS[command])


def flags_of(name: str, info: FieldInfo) -> list[str]:
    return _extra(info)["flags"] or ["--" + name.replace("_", "-")]


def metavar_of(info: FieldInfo) -> str | None:
    """The value's name in the help, where the option declares one (`--sample N`)."""
    metavar: str | None = _extra(info).get("metavar")
    return metavar


def help_of(info: FieldInfo, command: str, *, base_url_providers: str) -> str | None:
    """An option's help in `command`'s words (`--base-url`: the judges' endpoint for `run`,
    the model under test's for `generate`), naming the providers that take a base URL."""
    text = _extra(info).get("help_for", {}).get(command, info.description)
    return text and text.replace(BASE_URL_PROVIDERS, base_url_providers)


def describe(*errors: ValidationError) -> str:
    """Pydantic's errors as `option: problem` lines, naming the CLI flag too."""
    lines = []
    for error in (e for exc in errors for e in exc.errors()):
        name = str(error["loc"][0]) if error["loc"] else "?"
        groups = (*RunConfig.GROUPS.values(), *OWN_OPTIONS.values())
        info = next(
            (i for g in groups for n, i in g.model_fields.items() if n == name),
            None,
        )
        flag = flags_of(name, info)[0].split("/")[0] if info else name
        lines.append(f"{name} ({flag}): {error['msg'].lower()}, got {error.get('input')!r}")
    return "invalid option(s):\n  " + "\n  ".join(lines)


def _extra(info: FieldInfo) -> dict[str, Any]:
    extra = info.json_schema_extra
    assert isinstance(extra, dict)
    return extra

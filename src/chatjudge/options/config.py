"""A command's options as one config, by group: built from flat names (the Python API's
keywords, the CLI's parameters), checked, and read back for the run's fingerprint."""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic.fields import FieldInfo

from chatjudge.errors import UsageError
from chatjudge.options.calling import (
    ClientOptions,
    GenerationOptions,
    PricingOptions,
    RateOptions,
    RetryOptions,
    RunOptions,
    SimulationOptions,
    ToolOptions,
)
from chatjudge.options.declare import OptionGroup, extra_of, flags_of
from chatjudge.options.per_command import COMMAND_OPTIONS, OWN_OPTIONS


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
        "tools": ToolOptions,
    }

    run: RunOptions = RunOptions()
    generation: GenerationOptions = GenerationOptions()
    retries: RetryOptions = RetryOptions()
    rates: RateOptions = RateOptions()
    pricing: PricingOptions = PricingOptions()
    client: ClientOptions = ClientOptions()
    simulation: SimulationOptions = SimulationOptions()
    tools: ToolOptions = ToolOptions()
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
            extra = extra_of(info)
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


def option_fields(command: str = "run") -> Iterator[tuple[str, FieldInfo]]:
    """The options of `command`, name and declaration, group by group (its CLI flags)."""
    declared = {n: i for g in RunConfig.GROUPS.values() for n, i in g.model_fields.items()}
    if command in OWN_OPTIONS:
        declared.update(OWN_OPTIONS[command].model_fields)
    yield from ((name, declared[name]) for name in COMMAND_OPTIONS[command])


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

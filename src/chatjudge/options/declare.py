"""How an option is declared: `option(...)` puts its flags, fingerprint role and help in
the field, and the CLI reads them back (`flags_of`, `help_of`, `metavar_of`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field
from pydantic.fields import FieldInfo


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


# Stand in a help text for the providers that take --base-url, and for every way to name a
# model: the CLI names them as it shows help (`chatjudge.cli.help`), importing the providers'
# classes, which declare them, only then (this module sits below them; a run needs one).
BASE_URL_PROVIDERS = "{base_url_providers}"
PROVIDERS = "{providers}"


class OptionGroup(BaseModel):
    """A small group of related options; a typo is an error, not a silent default."""

    # Built when first used: a command validates only its own groups (issue 29, item 8).
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


def flags_of(name: str, info: FieldInfo) -> list[str]:
    return extra_of(info)["flags"] or ["--" + name.replace("_", "-")]


def metavar_of(info: FieldInfo) -> str | None:
    """The value's name in the help, where the option declares one (`--sample N`)."""
    metavar: str | None = extra_of(info).get("metavar")
    return metavar


def help_of(info: FieldInfo, command: str) -> str | None:
    """An option's help in `command`'s words (`--base-url`: the judges' endpoint for `run`,
    the model under test's for `generate`); providers still stand as `BASE_URL_PROVIDERS`."""
    text: str | None = extra_of(info).get("help_for", {}).get(command, info.description)
    return text


def extra_of(info: FieldInfo) -> dict[str, Any]:
    extra = info.json_schema_extra
    assert isinstance(extra, dict)
    return extra

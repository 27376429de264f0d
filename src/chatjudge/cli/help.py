"""Help that reads as paragraphs in any terminal width.

typer re-wraps a command's first paragraph but keeps the line breaks of the others and of
option help (so a docstring wrapped at 100 columns prints broken mid-sentence), and it
shows every flag with a `<bool>` value that a flag never takes. The command and group
classes here join each paragraph into one line, for the terminal to wrap, keep its brackets
(typer reads help as rich markup) and show flags bare: `--quiet`, `--flip / --no-flip`,
`--help`. They also name the providers where an option's help stands for them, as the help
is shown.
"""

from __future__ import annotations

import inspect
from typing import Any

from rich.markup import escape
from typer.core import TyperCommand, TyperGroup, TyperOption


def paragraphs(text: str | None) -> str | None:
    """`text` with each paragraph (separated by a blank line) on a line of its own, as it is
    written: typer reads help as rich markup, where `[cut N of M characters]` is a style
    and vanishes, so brackets are escaped."""
    if not text:
        return text
    joined = "\n\n".join(" ".join(p.split()) for p in inspect.cleandoc(text).split("\n\n"))
    return escape(joined)


def named(text: str | None) -> str | None:
    """`text` with the providers named where it stands for them (`PROVIDERS`,
    `BASE_URL_PROVIDERS`), from their classes, imported here: when help is shown, not for a
    run, which needs one provider's class, not all of them (issue 29, item 8)."""
    from chatjudge.options.declare import BASE_URL_PROVIDERS, PROVIDERS

    if not text or (PROVIDERS not in text and BASE_URL_PROVIDERS not in text):
        return text
    from chatjudge.models import registry

    text = text.replace(PROVIDERS, registry.provider_list())
    return text.replace(BASE_URL_PROVIDERS, registry.base_url_providers())


def _tidy(params: list[Any]) -> None:
    for param in params:
        param.help = paragraphs(getattr(param, "help", None))
        _bare_flag(param)


def _bare_flag(param: Any) -> None:
    if isinstance(param, TyperOption) and param.is_flag and param.metavar is None:
        param.metavar = ""  # what typer shows as the value type; a flag takes none


class Command(TyperCommand):
    """A command whose help is whole paragraphs and whose flags show no value type."""

    def __init__(self, name: str | None, **kwargs: Any) -> None:
        kwargs["help"] = paragraphs(kwargs.get("help"))
        super().__init__(name, **kwargs)
        _tidy(self.params)

    def format_help(self, ctx: Any, formatter: Any) -> None:
        for param in self.params:
            param.help = named(getattr(param, "help", None))  # type: ignore[attr-defined]
        super().format_help(ctx, formatter)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            _bare_flag(option)
        return option


class Group(TyperGroup):
    """The `chatjudge` group, with the same help conventions as its commands."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs["help"] = paragraphs(kwargs.get("help"))
        super().__init__(**kwargs)
        _tidy(self.params)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            _bare_flag(option)
        return option

"""The provider registry: every provider class in models/ has a row, every row a class whose
attributes say what the row says, and the names, help texts and errors come from it."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import pkgutil
from collections.abc import Iterable
from types import ModuleType
from typing import Any

import pytest
from typer.main import get_command

import chatjudge.models
from chatjudge.cli import app
from chatjudge.errors import UsageError
from chatjudge.models import Model, get_model
from chatjudge.models.function import FunctionModel
from chatjudge.models.openai import OpenAIModel
from chatjudge.models.registry import PROVIDERS, Provider, base_url_providers, provider_list
from chatjudge.types import ModelRequest, Reply
from tests.models.test_contract import ADAPTERS

NOT_NAMED = {FunctionModel}  # built from a Python callable, never from `provider/model`


class Unlisted(Model):
    """A provider class with no registry row, for the check below to find."""

    provider = "unlisted"

    async def generate(self, request: ModelRequest) -> Reply:
        return Reply("")


def provider_classes(modules: Iterable[ModuleType]) -> set[type[Model]]:
    """The concrete `Model` classes defined in `modules`."""
    return {
        obj
        for module in modules
        for obj in vars(module).values()
        if inspect.isclass(obj)
        and issubclass(obj, Model)
        and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)
    }


def registry_problems(
    rows: Iterable[Provider], modules: Iterable[ModuleType], not_named: set[type[Model]]
) -> list[str]:
    """A row naming a missing module or class, or a provider class without a row."""
    problems, registered = [], set()
    for row in rows:
        try:
            registered.add(row.load())
        except (ImportError, AttributeError) as exc:
            problems.append(f"row {row.name}: {row.module}.{row.cls} is missing ({exc})")
    for cls in provider_classes(modules) - registered - not_named:
        problems.append(f"{cls.__module__}.{cls.__name__} has no registry row")
    return problems


def disagreements(row: Provider) -> list[str]:
    """Where a row's capabilities differ from its class's attributes."""
    cls = row.load()
    pairs: dict[str, tuple[Any, Any]] = {
        "name/provider": (row.name, cls.provider),
        "local/runs_locally": (row.local, cls.runs_locally),
        "key_env_var": (row.key_env_var, cls.key_env_var),
        "key_env_var in secret_env_vars": (
            row.key_env_var is None or row.key_env_var in cls.secret_env_vars,
            True,
        ),
        "base_url/max_base_urls": (row.base_url, cls.max_base_urls > 0),
        "base_url/honours": (row.base_url, "base_url" in cls.honours),
        "structured/supports_schema": (row.structured, cls.supports_schema),
    }
    return [f"{row.name}: {k} {a!r} != {b!r}" for k, (a, b) in pairs.items() if a != b]


def models_modules() -> list[ModuleType]:
    package = chatjudge.models
    return [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
    ]


def test_every_provider_class_in_models_has_a_row_and_every_row_a_class() -> None:
    modules = models_modules()
    assert registry_problems(PROVIDERS.values(), modules, NOT_NAMED) == []
    # The scan finds the classes it checks: each row's, and the one that is not named.
    assert provider_classes(modules) == {row.load() for row in PROVIDERS.values()} | NOT_NAMED


def test_the_check_finds_an_unlisted_class_and_a_row_without_its_class() -> None:
    rows = [*PROVIDERS.values(), Provider("ghost", "chatjudge.models.openai", "GhostModel")]
    here = importlib.import_module(__name__)
    problems = registry_problems(rows, [*models_modules(), here], NOT_NAMED)
    assert len(problems) == 2
    assert any("row ghost: chatjudge.models.openai.GhostModel is missing" in p for p in problems)
    assert any(f"{__name__}.Unlisted has no registry row" in p for p in problems)
    gone = Provider("gone", "chatjudge.models.no_such_module", "GoneModel")
    assert registry_problems([gone], [], set()) != []


@pytest.mark.parametrize("name", list(PROVIDERS))
def test_a_rows_capabilities_agree_with_its_class(name: str) -> None:
    assert disagreements(PROVIDERS[name]) == []


@pytest.mark.parametrize(
    "change",
    [
        {"local": True},
        {"key_env_var": "OTHER_KEY"},
        {"base_url": False},
        {"structured": False},
        {"name": "openai2"},
    ],
)
def test_the_agreement_check_sees_each_capability(change: dict[str, Any]) -> None:
    wrong = dataclasses.replace(PROVIDERS["openai"], **change)
    assert len(disagreements(wrong)) >= 1


def test_every_remote_provider_is_in_the_contract_tests() -> None:
    remote = {name for name, row in PROVIDERS.items() if not row.local}
    assert remote == set(ADAPTERS)


def test_the_names_come_from_the_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    assert provider_list() == (
        "local, local/PATH.gguf, openai/MODEL, anthropic/MODEL or google/MODEL"
    )
    assert base_url_providers() == "openai/, anthropic/, google/"
    monkeypatch.setitem(PROVIDERS, "acme", Provider("acme", __name__, "Unlisted", base_url=True))
    assert provider_list().endswith("google/MODEL or acme/MODEL")
    assert base_url_providers().endswith("google/, acme/")


def test_an_unknown_provider_is_refused_naming_every_row(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(PROVIDERS, "acme", Provider("acme", __name__, "Unlisted"))
    with pytest.raises(UsageError) as caught:
        get_model("nope/x")
    message = str(caught.value)
    assert message.startswith("unknown judge provider 'nope' in 'nope/x': use local, ")
    for row in PROVIDERS.values():
        for spelling in row.spellings():
            assert spelling in message


def test_a_new_provider_is_one_row(monkeypatch: pytest.MonkeyPatch) -> None:
    """A row naming a class is enough for `get_model` to build it by name."""
    with pytest.raises(UsageError, match="unknown judge provider 'unlisted'"):
        get_model("unlisted/m")
    monkeypatch.setitem(PROVIDERS, "unlisted", Provider("unlisted", __name__, "Unlisted"))
    model = get_model("unlisted/m")
    assert type(model) is Unlisted and model.name == "unlisted/m"


def test_only_a_bare_row_takes_its_name_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="judge 'openai' needs a model: write it as openai/MODEL"):
        get_model("openai", check_key=False)
    monkeypatch.setitem(PROVIDERS, "openai", dataclasses.replace(PROVIDERS["openai"], bare=True))
    model = get_model("openai", check_key=False)
    assert type(model) is OpenAIModel and model.name == "openai"


def option_help(command: str, flag: str) -> str:
    params = get_command(app).commands[command].params  # type: ignore[attr-defined]
    (param,) = [p for p in params if flag in p.opts]
    return str(param.help)


@pytest.mark.parametrize(
    ("command", "flag"),
    [("run", "--judge"), ("generate", "--model"), ("simulate", "--assistant")],
)
def test_model_options_list_every_provider(command: str, flag: str) -> None:
    assert provider_list() in option_help(command, flag)


@pytest.mark.parametrize(
    ("command", "flag"), [("run", "--base-url"), ("simulate", "--assistant-base-url")]
)
def test_base_url_options_list_the_providers_that_take_one(command: str, flag: str) -> None:
    assert f"({base_url_providers()})" in option_help(command, flag)

"""The provider registry: every provider class in models/ is listed, the names, help texts
and errors come from the classes, and another distribution's provider is found through the
entry point group `chatjudge.providers` (a small distribution written into the test's
directory), refused clearly when it clashes or cannot be loaded."""

from __future__ import annotations

import importlib
import inspect
import json
import os
import pkgutil
import re
import sys
import textwrap
from collections.abc import Iterable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

import chatjudge.models
from chatjudge.chat.types import ModelRequest, Reply
from chatjudge.cli import app
from chatjudge.errors import UsageError
from chatjudge.models import Model, get_model, registry
from chatjudge.models.function import FunctionModel, ToolFunctionModel
from chatjudge.models.openai import OpenAIModel
from chatjudge.models.registry import BUILTIN, base_url_providers, provider_list
from tests.models.test_contract import ADAPTERS
from tests.support.cli import run_process

# Built from a Python callable, never from `provider/model`.
NOT_NAMED: set[type[Model]] = {FunctionModel, ToolFunctionModel}
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


class Unlisted(Model):
    """A provider class that is not in `BUILTIN`, for the check below to find."""

    provider = "unlisted"

    async def generate(self, request: ModelRequest) -> Reply:
        return Reply("")


class Acme(Unlisted):
    provider = "acme"
    max_base_urls = 1


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
    builtin: dict[str, str], modules: Iterable[ModuleType], not_named: set[type[Model]]
) -> list[str]:
    """An entry naming a missing class or a class of another name, or a class not listed."""
    problems, registered = [], set()
    for name, ref in builtin.items():
        module, _, attr = ref.partition(":")
        try:
            cls = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError) as exc:
            problems.append(f"{name}: {ref} is missing ({exc})")
            continue
        registered.add(cls)
        if cls.provider != name:
            problems.append(f"{name}: {ref} declares provider {cls.provider!r}")
    for cls in provider_classes(modules) - registered - not_named:
        problems.append(f"{cls.__module__}.{cls.__name__} is not in BUILTIN")
    return problems


def models_modules() -> list[ModuleType]:
    package = chatjudge.models
    return [
        importlib.import_module(f"{package.__name__}.{info.name}")
        for info in pkgutil.iter_modules(package.__path__)
    ]


def test_every_provider_class_in_models_is_listed_under_its_name() -> None:
    modules = models_modules()
    assert registry_problems(BUILTIN, modules, NOT_NAMED) == []
    # The scan finds the classes it checks: each entry's, and the ones that are not named.
    listed = {registry.load(name) for name in BUILTIN}
    assert provider_classes(modules) == listed | NOT_NAMED


def test_the_check_finds_an_unlisted_class_a_missing_one_and_a_misnamed_one() -> None:
    builtin = {
        **BUILTIN,
        "ghost": "chatjudge.models.openai:GhostModel",
        "gone": "chatjudge.models.no_such_module:GoneModel",
        "other": "chatjudge.models.openai:OpenAIModel",
    }
    here = importlib.import_module(__name__)
    problems = registry_problems(builtin, [*models_modules(), here], NOT_NAMED)
    ghost = "ghost: chatjudge.models.openai:GhostModel is missing"
    assert any(p.startswith(ghost) for p in problems)
    assert any(p.startswith("gone: ") for p in problems)
    assert "other: chatjudge.models.openai:OpenAIModel declares provider 'openai'" in problems
    assert f"{__name__}.Unlisted is not in BUILTIN" in problems
    assert f"{__name__}.Acme is not in BUILTIN" in problems
    assert len(problems) == 5


def test_every_remote_provider_is_in_the_contract_tests() -> None:
    classes = {name: registry.load(name) for name in BUILTIN}
    remote = {name for name, cls in classes.items() if cls and not cls.runs_locally}
    assert remote == set(ADAPTERS)


def test_the_names_come_from_the_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert provider_list() == (
        "local, local/PATH.gguf, openai/MODEL, anthropic/MODEL or google/MODEL"
    )
    assert base_url_providers() == "openai/, anthropic/, google/"
    monkeypatch.setitem(BUILTIN, "acme", f"{__name__}:Acme")
    assert provider_list().endswith("google/MODEL or acme/MODEL")
    assert base_url_providers().endswith("google/, acme/")
    monkeypatch.setattr(Acme, "max_base_urls", 0)
    monkeypatch.setattr(Acme, "model_hint", "FILE")
    assert provider_list().endswith("google/MODEL or acme/FILE")
    assert base_url_providers() == "openai/, anthropic/, google/"


def test_an_unknown_provider_is_refused_naming_every_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BUILTIN, "acme", f"{__name__}:Acme")
    with pytest.raises(UsageError) as caught:
        get_model("nope/x")
    message = str(caught.value)
    assert message.startswith("unknown judge provider 'nope' in 'nope/x': use local, ")
    for spelling in ["local", "local/PATH.gguf", "openai/MODEL", "google/MODEL", "acme/MODEL"]:
        assert spelling in message


def test_a_new_provider_is_one_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry naming a class is enough for `get_model` to build it by name."""
    with pytest.raises(UsageError, match="unknown judge provider 'unlisted'"):
        get_model("unlisted/m")
    monkeypatch.setitem(BUILTIN, "unlisted", f"{__name__}:Unlisted")
    model = get_model("unlisted/m")
    assert type(model) is Unlisted and model.name == "unlisted/m"


def test_only_a_bare_provider_takes_its_name_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UsageError, match="judge 'openai' needs a model: write it as openai/MODEL"):
        get_model("openai", check_key=False)
    monkeypatch.setattr(OpenAIModel, "bare", True)
    model = get_model("openai", check_key=False)
    assert type(model) is OpenAIModel and model.name == "openai"


def option_help(command: str, flag: str) -> str:
    """The line of `chatjudge COMMAND --help` that shows `flag`: the providers are named as
    the help is shown, not as the command is built."""
    done = CliRunner().invoke(app, [command, "--help"], env={"COLUMNS": "250"})
    assert done.exit_code == 0, done.output
    shown = re.compile(rf"(?<![\w-]){flag}(?![\w-])")
    return next(line for line in done.output.splitlines() if shown.search(line))


@pytest.mark.parametrize(
    ("command", "flag"),
    [("run", "--judge"), ("generate", "--model"), ("simulate", "--assistant")],
)
def test_model_options_list_every_provider(command: str, flag: str) -> None:
    assert provider_list() in option_help(command, flag)


@pytest.mark.parametrize(
    ("command", "flag"),
    [("run", "--base-url"), ("generate", "--base-url"), ("simulate", "--assistant-base-url")],
)
def test_base_url_options_list_the_providers_that_take_one(command: str, flag: str) -> None:
    assert f"({base_url_providers()})" in option_help(command, flag)


# Another distribution's provider: a package and its *.dist-info, as pip installs them.

FIXED = '''
import json

from chatjudge.models import Model
from chatjudge.chat.types import ModelRequest, Reply


class FixedModel(Model):
    """Prefers the first response, whatever it is shown; sends nothing anywhere."""

    provider = "{provider}"

    async def generate(self, request: ModelRequest) -> Reply:
        return Reply(json.dumps({{"explanation": "always A", "pairwise_choice": "A"}}))
'''


def write_dist(
    root: Path, dist: str, entry_points: str, module: str = "", package: str = "acme_judges"
) -> None:
    """Install (by writing its files) distribution `dist` 1.0 into `root`: `package` holding
    `module`, and its entry points of the group `chatjudge.providers`."""
    if module:
        (root / package).mkdir()
        (root / package / "__init__.py").write_text(textwrap.dedent(module))
    info = root / f"{dist.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[chatjudge.providers]\n{entry_points}\n")


@pytest.fixture
def installed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory on `sys.path` whose distributions this process sees (until the test ends)."""
    root = tmp_path / "site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    registry._entry_points.cache_clear()
    yield root
    registry._entry_points.cache_clear()
    for name in [m for m in sys.modules if m.split(".")[0] in {"acme_judges", "other_judges"}]:
        del sys.modules[name]


def test_a_distributions_provider_is_built_by_name(installed: Path) -> None:
    write_dist(
        installed,
        "acme-judges",
        "myprov = acme_judges:FixedModel",
        FIXED.format(provider="myprov"),
    )
    model = get_model("myprov/fixed")
    assert type(model).__module__ == "acme_judges" and model.name == "myprov/fixed"
    assert "myprov" in registry.names()
    assert provider_list().endswith("google/MODEL or myprov/MODEL")


def test_a_provider_clashing_with_a_built_in_is_refused(installed: Path) -> None:
    write_dist(
        installed, "acme-judges", "openai = acme_judges:FixedModel", FIXED.format(provider="openai")
    )
    with pytest.raises(UsageError) as caught:
        get_model("openai/gpt-x", check_key=False)
    assert str(caught.value).startswith(
        "provider 'openai' is built in, and acme-judges 1.0 "
        "(openai = 'acme_judges:FixedModel') declares it too"
    )
    assert registry.names().count("openai") == 1


def test_a_provider_declared_by_two_distributions_is_refused(installed: Path) -> None:
    write_dist(installed, "acme-judges", "myprov = acme_judges:FixedModel")
    write_dist(installed, "other-judges", "myprov = other_judges:Other", package="other_judges")
    with pytest.raises(UsageError, match="provider 'myprov' is declared twice, by ") as caught:
        get_model("myprov/x")
    assert "acme-judges 1.0" in str(caught.value) and "other-judges 1.0" in str(caught.value)
    assert registry.names().count("myprov") == 1


@pytest.mark.parametrize(
    ("entry", "module", "problem"),
    [
        ("acme_judges.nowhere:FixedModel", "", "cannot be loaded: ModuleNotFoundError: "),
        ("acme_judges:Missing", FIXED.format(provider="myprov"), "loaded: AttributeError"),
        ("acme_judges:json", FIXED.format(provider="myprov"), "is not a chatjudge.models.Model"),
        (
            "acme_judges:FixedModel",
            FIXED.format(provider="theirs"),
            "its class declares provider 'theirs', not 'myprov'",
        ),
        ("acme_judges:FixedModel", "raise RuntimeError('half installed')", "RuntimeError: half"),
    ],
)
def test_a_broken_provider_is_an_error_naming_its_distribution(
    installed: Path, entry: str, module: str, problem: str
) -> None:
    write_dist(installed, "acme-judges", f"myprov = {entry}", module)
    with pytest.raises(UsageError) as caught:
        get_model("myprov/x")
    message = str(caught.value)
    assert message.startswith(f"provider 'myprov' of acme-judges 1.0 (myprov = {entry!r})")
    assert problem in message
    get_model("openai/gpt-x", check_key=False)  # other providers are not held up by it


def cli_env(site: Path) -> dict[str, str]:
    """The CLI's environment with `site` on its path, before this checkout's sources."""
    paths = [str(site), *filter(None, [os.environ.get("PYTHONPATH")])]
    return {"PYTHONPATH": os.pathsep.join(paths)}


def test_the_cli_judges_with_a_distributions_provider(installed: Path, tmp_path: Path) -> None:
    write_dist(
        installed,
        "acme-judges",
        "myprov = acme_judges:FixedModel",
        FIXED.format(provider="myprov"),
    )
    data, out = EXAMPLES / "pairwise_chat_quality.jsonl", tmp_path / "run"
    args = ["run", str(data), "-p", "pairwise-chat-quality", "-j", "myprov/fixed"]
    result = run_process(*args, "--out", str(out), "--quiet", **cli_env(installed))
    assert result.returncode == 0, result.stderr

    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(rows) == len(data.read_text().splitlines())
    calls = [c for r in rows for c in r["calls"]]
    assert {c["judge"] for c in calls} == {"myprov/fixed"} and len(calls) == 2 * len(rows)
    assert {c["raw"] for c in calls} == {'{"explanation": "always A", "pairwise_choice": "A"}'}
    # The first response in both orders: position, not preference, so a tie every time.
    assert {(r["status"], r["scores"]["pairwise_choice"]) for r in rows} == {("ok", "TIE")}
    help = run_process("run", "--help", **cli_env(installed))
    assert "myprov/MODEL" in " ".join(help.stdout.split())


def test_the_cli_refuses_a_broken_provider_naming_its_distribution(
    installed: Path, tmp_path: Path
) -> None:
    write_dist(installed, "acme-judges", "myprov = acme_judges.gone:FixedModel")
    data = EXAMPLES / "pairwise_chat_quality.jsonl"
    args = ["run", str(data), "-p", "pairwise-chat-quality", "-j", "myprov/x"]
    result = run_process(*args, "--out", str(tmp_path / "run"), **cli_env(installed))
    assert result.returncode == 2
    assert "provider 'myprov' of acme-judges 1.0" in " ".join(result.stderr.split())
    assert not (tmp_path / "run" / "results.jsonl").exists()

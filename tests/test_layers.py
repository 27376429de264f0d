"""The import layers of pyproject's `[tool.importlinter]`: the code keeps them, and an import
that breaks them (inside a function or under TYPE_CHECKING too) fails `lint-imports`, which
`make test` runs before pytest. Cycles between modules that import-linter's
`acyclic_siblings` does not see (a package's `__init__` and one of its modules) are found
here, in the module graph grimp builds."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"


def lint_imports(cwd: Path, src: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` as `make test` runs it, on the contracts of `cwd`'s pyproject.toml and
    the package under `src`."""
    return subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache", "--no-logo"],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def cyclic_imports(graph: grimp.ImportGraph) -> list[tuple[str, str]]:
    """The imports that lie on a cycle: A imports B, and B leads back to A."""
    return sorted(
        (importer, imported)
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if graph.chain_exists(importer=imported, imported=importer)
    )


def test_the_code_keeps_its_layers() -> None:
    done = lint_imports(ROOT, SRC)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


# Each module added to a copy of the package, and what lint-imports says of it.
BREAKS = {
    # an import inside a function, up the layers
    "stats/upward.py": (
        "def page():\n    from chatjudge.report import write_report\n\n    return write_report\n",
        "chatjudge.stats.upward -> chatjudge.report",
    ),
    # a type-only import between two packages of one layer
    "data/typed.py": (
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from chatjudge.models import Model\n",
        "chatjudge.data.typed -> chatjudge.models",
    ),
    # merge reaching into a command's internals
    "merge/peek.py": (
        "from chatjudge.runner import summary\n",
        "chatjudge.merge.peek -> chatjudge.runner",
    ),
    # two modules importing each other
    "verdicts/ping.py": (
        "from chatjudge.verdicts import pong\n",
        "No cycles are allowed in chatjudge.verdicts",
    ),
    "verdicts/pong.py": (
        "from chatjudge.verdicts import ping\n",
        "No cycles are allowed in chatjudge.verdicts",
    ),
    # a module no layer names
    "unplaced.py": ("", "not listed as layers:\n\n- chatjudge.unplaced\n"),
}


@pytest.fixture(scope="module")
def broken(tmp_path_factory: pytest.TempPathFactory) -> subprocess.CompletedProcess[str]:
    """lint-imports on a copy of the package (its Python files) with BREAKS added."""
    root = tmp_path_factory.mktemp("layers")
    (root / "pyproject.toml").write_bytes((ROOT / "pyproject.toml").read_bytes())
    for path in (SRC / "chatjudge").rglob("*.py"):
        copy = root / "src" / path.relative_to(SRC)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(path.read_bytes())
    for name, (code, _) in BREAKS.items():
        (root / "src" / "chatjudge" / name).write_text(code)
    return lint_imports(root, root / "src")


@pytest.mark.parametrize("name", BREAKS)
def test_a_broken_layer_fails_the_build(
    broken: subprocess.CompletedProcess[str], name: str
) -> None:
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert BREAKS[name][1] in broken.stdout


def test_no_module_is_on_a_cycle() -> None:
    assert cyclic_imports(grimp.build_graph("chatjudge", cache_dir=None)) == []


def test_a_cycle_through_a_package_init_is_found() -> None:
    """import-linter compares siblings only; a package's `__init__` importing its module,
    which imports the package back, is a cycle all the same."""
    graph = grimp.ImportGraph()
    graph.add_import(importer="pkg", imported="pkg.child")
    graph.add_import(importer="pkg.child", imported="pkg")
    graph.add_import(importer="pkg.child", imported="pkg.leaf")
    assert cyclic_imports(graph) == [("pkg", "pkg.child"), ("pkg.child", "pkg")]

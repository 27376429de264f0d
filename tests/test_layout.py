"""The package's layout (issue 42, item 3): few top-level modules, and a name means one thing.

A feature lives in its folder, so the package's top holds at most 8 modules beside
`__init__`, `__main__` and `__about__`. No two modules or packages share a name across
folders unless they are one feature's parts, listed in SAME_NAME with the reason."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "chatjudge"
MAX_TOP_LEVEL = 8
DUNDER = {"__init__", "__main__", "__about__"}
# A name shared on purpose: where it is, and why it means one thing there.
SAME_NAME = {
    "align": ({"cli", "analysis"}, "cli/align.py is the command of the analysis/align/ feature"),
    "gate": ({"cli", "analysis"}, "cli/gate.py is the command of the analysis/gate/ feature"),
    "merge": ({"cli", ""}, "cli/merge.py is the command of the merge/ package"),
    "produce": ({"cli", ""}, "cli/produce.py holds the commands of the produce/ package"),
    "traces": ({"cli", ""}, "cli/traces.py holds the commands of the traces/ package"),
    "history": (
        {"cli", "analysis", "formats"},
        "`chatjudge history`: its command, its computation and the record they share",
    ),
    "realism": ({"cli", "formats"}, "`chatjudge realism`: its command and realism.json's model"),
    "provenance": (
        {"report", "formats", "analysis/gate"},
        "who judged: the record (evaluator, judge check), its display, and the gate's check of it",
    ),
}


def top_level_modules(package: Path) -> list[str]:
    """The modules directly in `package`, but its dunder modules."""
    return sorted(p.stem for p in package.glob("*.py") if p.stem not in DUNDER)


def names(package: Path) -> dict[str, set[str]]:
    """Each module's and subpackage's name, with the folders (relative to `package`, "" for
    its top) that hold one of that name."""
    found: dict[str, set[str]] = defaultdict(set)
    for path in package.rglob("*.py"):
        if path.stem not in DUNDER:
            found[path.stem].add(_folder(package, path.parent))
        elif path.name == "__init__.py" and path.parent != package:
            found[path.parent.name].add(_folder(package, path.parent.parent))
    return dict(found)


def _folder(package: Path, folder: Path) -> str:
    return "" if folder == package else folder.relative_to(package).as_posix()


def shared_names(package: Path, allowed: dict[str, tuple[set[str], str]]) -> list[str]:
    """The names held in more than one folder and not allowed there, as `name: folders`."""
    return [
        f"{name}: {sorted(where)}"
        for name, where in sorted(names(package).items())
        if len(where) > 1 and where != allowed.get(name, (set(), ""))[0]
    ]


def test_at_most_eight_top_level_modules() -> None:
    top = top_level_modules(PACKAGE)
    assert len(top) <= MAX_TOP_LEVEL, top


def test_no_name_means_two_things() -> None:
    assert shared_names(PACKAGE, SAME_NAME) == []


def test_every_allowed_name_is_still_shared() -> None:
    """An allowance outlives its reason no longer than the name's second use."""
    held = names(PACKAGE)
    assert {n: w for n, (w, _) in SAME_NAME.items() if held.get(n) != w} == {}


def test_a_shared_name_is_found(tmp_path: Path) -> None:
    package = tmp_path / "chatjudge"
    for path in (
        "__init__.py",
        "a/__init__.py",
        "a/run.py",
        "b/__init__.py",
        "b/run.py",
        "c/__init__.py",
        "c/a.py",
        "top.py",
    ):
        (package / path).parent.mkdir(parents=True, exist_ok=True)
        (package / path).write_text("")
    assert shared_names(package, {}) == ["a: ['', 'c']", "run: ['a', 'b']"]
    assert shared_names(package, {"run": ({"a", "b"}, "one thing")}) == ["a: ['', 'c']"]


def test_top_level_counts_no_dunder_module(tmp_path: Path) -> None:
    for name in ("__init__.py", "__about__.py", "api.py", "errors.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "x.py").write_text("")
    assert top_level_modules(tmp_path) == ["api", "errors"]

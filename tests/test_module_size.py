"""No module of chatjudge is over 400 lines (issue 29): a module that grows past it is split
by what its parts own (shared/STYLE.md: small modules named for what they own), and this
test fails, naming the module and its length, until it is."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "chatjudge"
MAX_LINES = 400


def long_modules(package: Path, limit: int = MAX_LINES) -> list[str]:
    """Each module under `package` of more than `limit` lines, as `path (n lines)`."""
    found = []
    for path in sorted(package.rglob("*.py")):
        n = len(path.read_text(encoding="utf-8").splitlines())
        if n > limit:
            found.append(f"{path.relative_to(package.parent).as_posix()} ({n} lines)")
    return found


def test_no_module_is_over_400_lines() -> None:
    long = long_modules(PACKAGE)
    assert not long, f"modules over {MAX_LINES} lines, to split by what their parts own: {long}"


def test_a_long_module_is_named_with_its_length(tmp_path: Path) -> None:
    package = tmp_path / "chatjudge"
    (package / "report").mkdir(parents=True)
    (package / "report" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (package / "at_the_limit.py").write_text("x = 1\n" * MAX_LINES)
    assert long_modules(package) == [f"chatjudge/report/long.py ({MAX_LINES + 1} lines)"]

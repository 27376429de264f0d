"""No timing figure in chatjudge's comments or docstrings (issue 42, item 5): domain code says
why a shortcut is there, in plain words; bench/README.md ("What each shortcut buys") says how
fast it is and what it buys, with the bench that measures it. A figure in a comment goes stale
unmeasured; this test fails, naming the module, the line and the words, until it moves."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "chatjudge"

_NUMBER = r"\d[\d.,]*(?:-\d[\d.,]*)?"
# What reads as a measured cost or speed, not as a behaviour (a timeout of 5 s, a bar redrawn
# 4 times a second, timestamps in milliseconds).
TIMING = re.compile(
    "|".join(
        (
            rf"\b{_NUMBER} ?(?:µs|us|ns|ms)\b",  # 0.4 µs, 30 us, 80 ns, 3-7 ms
            rf"\b{_NUMBER} ?s (?:of|a|an|per|to load|more|less|sooner|at)\b",  # 0.02 s of CPU
            r"\b\d*\.\d+ ?s\b",  # a fraction of a second: 0.003 s
            r"\ba second (?:per|a|of CPU)\b",
            r"\b(?:\d+(?:\.\d+)?|two|three|four|five|ten|twice|a hundred) ?(?:times|x) "
            r"(?:faster|slower|as fast|as slow|quicker)",
            r"\btwice as (?:fast|slow)",
            r"\ba (?:tenth|quarter|third|half|twentieth|hundredth) of (?:the time|a second|a "
            r"millisecond|the CPU|its time)",
            r"\b(?:half|a tenth of) a (?:second|millisecond|microsecond)",
            r"\bcosts? (?:about |only |a few )?(?:seconds|milliseconds|microseconds|nanoseconds)",
            r"\b(?:milliseconds|microseconds|nanoseconds) (?:of CPU|a (?:call|row|item|fit))",
            rf"\b{_NUMBER} ?% of (?:the |its |a run's |chatjudge's )?(?:CPU|time|wall|run)",
            r"\bcheaper than \d",
        )
    ),
    re.IGNORECASE,
)


def prose(source: str) -> list[tuple[int, str]]:
    """Every comment and docstring of a module's `source`, each as (line, its words on one
    line): the text a reader takes for the module's own account of itself."""
    found = [
        (token.start[0], token.string)
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            doc = node.body[0] if node.body else None
            value = doc.value if isinstance(doc, ast.Expr) else None
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                found.append((value.lineno, value.value))
    return sorted((line, " ".join(text.split())) for line, text in found)


def timing_figures(package: Path) -> list[tuple[str, str]]:
    """Each timing figure in a comment or docstring under `package`: (`path:line`, its words)."""
    found: list[tuple[str, str]] = []
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package.parent).as_posix()
        for line, text in prose(path.read_text(encoding="utf-8")):
            found.extend((f"{name}:{line}", match.group(0)) for match in TIMING.finditer(text))
    return found


def test_no_domain_comment_holds_a_timing_figure() -> None:
    found = timing_figures(PACKAGE)
    assert not found, (
        "timing figures in src comments or docstrings; say why in words there, and put the "
        f"figure in bench/README.md ('What each shortcut buys'): {found}"
    )


def test_timing_figures_are_found_in_comments_and_docstrings(tmp_path: Path) -> None:
    package = tmp_path / "chatjudge"
    package.mkdir()
    (package / "slow.py").write_text(
        '"""Module.\n\nThe SDK costs 3-7 ms of CPU per call."""\n\n'
        "x = 1  # frozen costs 0.4 µs a time\n\n\n"
        "def f() -> None:\n"
        '    """Loaded once: importing it costs 0.24 s of CPU."""\n\n\n'
        "class C:\n"
        '    """A sort of the columns, 4 times faster than numpy\'s."""\n\n'
        "    # a tenth of the time of `json`\n"
        "    y = 2\n"
    )
    found = timing_figures(package)
    assert found == [
        ("chatjudge/slow.py:1", "3-7 ms"),
        ("chatjudge/slow.py:5", "0.4 µs"),
        ("chatjudge/slow.py:9", "0.24 s of"),
        ("chatjudge/slow.py:13", "4 times faster"),
        ("chatjudge/slow.py:15", "a tenth of the time"),
    ]


def test_behaviour_in_seconds_and_plain_reasons_are_not_timing_figures(tmp_path: Path) -> None:
    package = tmp_path / "chatjudge"
    package.mkdir()
    (package / "fine.py").write_text(
        '"""Timestamps in seconds, milliseconds, microseconds or nanoseconds."""\n\n'
        "WAIT = 5.0  # seconds a worker gets to exit\n"
        "RATE = 4  # the bar redraws 4 times a second\n"
        "# decoded once per row: the hot path; looking is cheaper than copying the text\n"
        'DELAY = "7s"  # a delay as Google writes it, "7s"\n'
        "LEVEL = 95  # a 95% interval, 80% power\n"
    )
    assert timing_figures(package) == []


def test_the_moved_figures_name_modules_that_exist() -> None:
    """bench/README's table of the figures moved out of comments names each module by its
    path under src/chatjudge: a module moved (issue 42, item 3) leaves no stale row."""
    text = (ROOT / "bench" / "README.md").read_text(encoding="utf-8")
    table = text.split("### Figures moved out of comments", 1)[1].split("\n## ", 1)[0]
    named = [
        path
        for row in table.splitlines()
        if row.startswith("| `")
        for path in re.findall(r"`([\w/]+\.py)`", row.split(" | ", 1)[0])
    ]
    assert len(named) > 30
    missing = [path for path in named if not (PACKAGE / path).is_file()]
    assert not missing, f"bench/README.md names modules that are not in src/chatjudge: {missing}"

"""`chatjudge history`: runs in order, each step the gate's paired difference, judge changes
never read as regressions, Holm across steps, unpaired runs, and the command's outputs;
through real runs of the engine with Python judges."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

import pytest

import chatjudge
from chatjudge.analysis.history import ALPHA, decide, history
from chatjudge.errors import UsageError
from chatjudge.formats.analyses import Gate, GateDifference
from chatjudge.formats.history import HistoryStep
from chatjudge.formats.io import read_model
from chatjudge.formats.summary import Summary
from chatjudge.rundir import RunDir
from chatjudge.stats.intervals import clopper_pearson
from tests.analysis.gate.test_decide import pointwise_rows
from tests.analysis.gate.test_judge_check import SHIFT, _check_file, _run
from tests.summarize.test_tries import RESOLVED, resolved_judge
from tests.support.cli import run_cli

N = 40


def other_judge(prompt: str) -> str:
    """The same verdicts under another name: a judge changed, whatever it says."""
    return json.dumps({"resolved": int("OK" in prompt)})


@pytest.fixture
def protocol(tmp_path: Path) -> Path:
    path = tmp_path / "resolved.toml"
    path.write_text(RESOLVED, encoding="utf-8")
    return path


def judged(tmp_path: Path, protocol: Path, name: str, resolved: float, **kw: object) -> Path:
    """A run of N rows (`ids` from `prefix`) of which the first `resolved` share pass."""
    prefix, n = str(kw.pop("prefix", "r")), int(kw.pop("n", N))  # type: ignore[call-overload]
    rows = [
        {"id": f"{prefix}{i}", "chat": "OK" if i < resolved * n else "no", "tier": "ab"[i % 2]}
        for i in range(n)
    ]
    out = tmp_path / name
    by = kw.pop("judge", resolved_judge)
    chatjudge.evaluate(rows, protocol, judge=by, out=out, report=False, **kw)  # type: ignore[arg-type]
    return out


def test_the_latest_step_is_decided_as_the_gate_decides_it(tmp_path: Path, protocol: Path) -> None:
    runs = [judged(tmp_path, protocol, f"v{i}", share) for i, share in enumerate((0.8, 0.8, 0.4))]
    h = history([str(r) for r in runs], protocol=protocol)
    assert [r.name for r in h.runs] == ["v0", "v1", "v2"]
    first, last = h.steps
    assert (first.decided, last.decided) == (False, True)
    assert last.regression and h.regressions == [last] and not first.regression
    assert last.paired and last.n_pairs == N
    assert last.difference is not None and last.difference.value == pytest.approx(-0.4)
    done = run_cli("gate", "--baseline", str(runs[1]), "--candidate", str(runs[2]), "-p",
                   str(protocol), "--out", str(tmp_path / "gate.json"))  # fmt: skip
    assert done.returncode == 1, done.stderr  # the gate fails the same step
    gated = read_model(tmp_path / "gate.json", Gate)
    assert last.difference.ci95 == pytest.approx(gated.difference.ci95)
    assert h.runs[2].metrics["resolved"].value == pytest.approx(0.4)


def test_a_step_across_a_judge_change_is_not_a_regression(tmp_path: Path, protocol: Path) -> None:
    a = judged(tmp_path, protocol, "a", 0.9)
    b = judged(tmp_path, protocol, "b", 0.3, judge=other_judge)
    h = history([f"old={a}", f"new={b}"], protocol=protocol)
    (step,) = h.steps
    assert step.judge_changed is not None and "other_judge" in step.judge_changed
    assert not step.decided and not step.regression
    assert step.difference is not None and step.difference.value == pytest.approx(-0.6)
    done = run_cli("history", f"old={a}", f"new={b}", "-p", str(protocol))
    assert done.returncode == 0 and "judge changed" in done.stdout


def test_runs_whose_rows_do_not_pair_get_the_unpaired_difference(
    tmp_path: Path, protocol: Path
) -> None:
    a = judged(tmp_path, protocol, "a", 0.8, prefix="x")
    b = judged(tmp_path, protocol, "b", 0.5, prefix="y")
    (step,) = history([f"a={a}", f"b={b}"], protocol=protocol).steps
    assert not step.paired and step.n_pairs == 0
    ma, mb = (read_model(p / "summary.json", Summary).metrics["resolved"] for p in (a, b))
    assert ma.ci95 and mb.ci95 and ma.value is not None and mb.value is not None
    se = math.hypot((ma.ci95[1] - ma.ci95[0]) / 3.919928, (mb.ci95[1] - mb.ci95[0]) / 3.919928)
    assert step.difference is not None
    assert step.difference.value == pytest.approx(mb.value - ma.value)
    assert step.difference.ci95 == pytest.approx([-0.3 - 1.959964 * se, -0.3 + 1.959964 * se])


def test_runs_are_ordered_by_time_or_as_named(tmp_path: Path, protocol: Path) -> None:
    late = judged(tmp_path, protocol, "late", 0.5)
    early = judged(tmp_path, protocol, "early", 0.5)
    for path, when in ((early, "2026-01-01T00:00:00+00:00"), (late, "2026-02-01T00:00:00+00:00")):
        summary = json.loads((path / "summary.json").read_text())
        (path / "summary.json").write_text(json.dumps({**summary, "created": when}))
    assert [r.name for r in history([str(late), str(early)], protocol=protocol).runs] == [
        "early", "late"
    ]  # fmt: skip
    named = history([f"z={late}", f"y={early}"], protocol=protocol)
    assert [r.name for r in named.runs] == ["z", "y"]
    with pytest.raises(UsageError, match="name every run"):
        history([f"z={late}", str(early)], protocol=protocol)
    with pytest.raises(UsageError, match="named twice"):
        history([f"z={late}", f"z={early}"], protocol=protocol)
    with pytest.raises(UsageError, match="at least 2 runs"):
        history([str(late)], protocol=protocol)


def _paired_step(name: str, p: float | None) -> HistoryStep:
    return HistoryStep(before=name, after=name, metric="m", n_pairs=10, paired=True, p=p,
                       difference=GateDifference(value=-0.5, ci95=[-0.9, -0.1]),
                       judge_changed=None, decided=False, regression=False)  # fmt: skip


def test_all_steps_steps_down_by_p_each_at_holms_level_on_its_own_interval() -> None:
    steps = [_paired_step("c", 0.03), _paired_step("a", 0.001), _paired_step("b", 0.01)]
    steps.append(_paired_step("unpaired", 0.0))
    steps[-1].paired = False  # no interval of it at another level: never decided here
    asked: list[tuple[str, float]] = []
    below = {"a": True, "b": False, "c": True}  # c would regress, but b stops the stepping

    def interval_at(step: HistoryStep, level: float) -> list[float]:
        asked.append((step.before, level))
        return [-0.9, -0.1] if below[step.before] else [-0.9, 0.1]

    decide(steps, 0.0, True, interval_at)
    assert asked == [("a", pytest.approx(1 - 2 * ALPHA / 3)), ("b", pytest.approx(1 - ALPHA))]
    assert [(s.before, s.decided, s.regression) for s in steps] == [
        ("c", True, False), ("a", True, True), ("b", True, False), ("unpaired", False, False)
    ]  # fmt: skip


def test_a_small_unpaired_step_is_the_difference_of_each_runs_own_interval(
    tmp_path: Path, protocol: Path
) -> None:
    a = judged(tmp_path, protocol, "a", 0.8, prefix="x", n=10)
    b = judged(tmp_path, protocol, "b", 0.5, prefix="y", n=10)
    (step,) = history([f"a={a}", f"b={b}"], protocol=protocol).steps
    (alo, ahi), (blo, bhi) = clopper_pearson(8, 10, 0.975), clopper_pearson(5, 10, 0.975)
    assert step.difference is not None and not step.paired
    assert step.difference.value == pytest.approx(-0.3)
    assert step.difference.ci95 == pytest.approx([blo - ahi, bhi - alo])
    assert step.decided and not step.regression  # its interval holds 0


def test_all_steps_decides_every_step_with_holm(tmp_path: Path, protocol: Path) -> None:
    shares = (0.9, 0.5, 0.5, 0.1)
    runs = [f"s{i}={judged(tmp_path, protocol, f's{i}', s)}" for i, s in enumerate(shares)]
    h = history(runs, protocol=protocol, all_steps=True)
    assert all(s.decided for s in h.steps)
    assert [s.regression for s in h.steps] == [True, False, True]
    assert all(s.p is not None for s in h.steps)
    latest = history(runs, protocol=protocol)
    assert [s.decided for s in latest.steps] == [False, False, True]


def test_by_shows_each_steps_slices_as_the_gate(tmp_path: Path, protocol: Path) -> None:
    a = judged(tmp_path, protocol, "a", 0.8)
    b = judged(tmp_path, protocol, "b", 0.4)
    (step,) = history([str(a), str(b)], protocol=protocol, by="tier").steps
    done = run_cli("gate", "--baseline", str(a), "--candidate", str(b), "-p", str(protocol),
                   "--by", "tier", "--out", str(tmp_path / "gate.json"))  # fmt: skip
    assert done.returncode == 1, done.stderr
    gated = read_model(tmp_path / "gate.json", Gate)
    assert [(s.value, s.n_pairs) for s in step.slices] == [
        (s.value, s.n_pairs) for s in gated.slices
    ]
    for mine, theirs in zip(step.slices, gated.slices, strict=True):
        assert mine.difference.value == pytest.approx(theirs.difference.value)


def test_the_command_writes_its_page_and_markdown_and_exits_1_on_a_regression(
    tmp_path: Path, protocol: Path
) -> None:
    a = judged(tmp_path, protocol, "a", 0.8)
    b = judged(tmp_path, protocol, "b", 0.4)
    page, md = tmp_path / "h.html", tmp_path / "h.md"
    done = run_cli("history", str(a), str(b), "-p", str(protocol), "--out", str(page),
                   "--markdown", str(md))  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "regression" in done.stdout
    text = md.read_text(encoding="utf-8")
    assert text.startswith("### chatjudge history: ❌ regression at a → b (resolved)")
    assert "| resolved | a → b | -0.4000 |" in text
    assert "<title>Release history" in page.read_text(encoding="utf-8")
    # A file of another kind is not replaced; the page and summary are, when run again.
    other = tmp_path / "notes.md"
    other.write_text("mine", encoding="utf-8")
    refused = run_cli("history", str(a), str(b), "-p", str(protocol), "--markdown", str(other))
    assert refused.returncode == 2 and other.read_text(encoding="utf-8") == "mine"
    again = run_cli("history", str(a), str(b), "-p", str(protocol), "--out", str(page),
                    "--markdown", str(md))  # fmt: skip
    assert again.returncode == 1, again.stderr


def test_githubs_step_summary_is_appended_to(tmp_path: Path, protocol: Path) -> None:
    a = judged(tmp_path, protocol, "a", 0.5)
    b = judged(tmp_path, protocol, "b", 0.5)
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier\n", encoding="utf-8")
    os.environ["GITHUB_STEP_SUMMARY"] = str(summary)
    try:
        done = run_cli("history", str(a), str(b), "-p", str(protocol), "--markdown", str(summary),
                       GITHUB_STEP_SUMMARY=str(summary))  # fmt: skip
    finally:
        del os.environ["GITHUB_STEP_SUMMARY"]
    assert done.returncode == 0, done.stderr
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier\n### chatjudge history: ✅ no regression")


def test_bad_input_is_exit_2(tmp_path: Path, protocol: Path) -> None:
    a = judged(tmp_path, protocol, "a", 0.5)
    assert run_cli("history", str(a), "-p", str(protocol)).returncode == 2
    missing = run_cli("history", str(a), str(tmp_path / "nope"), "-p", str(protocol))
    assert missing.returncode == 2 and "not a run directory" in missing.stderr
    b = judged(tmp_path, protocol, "b", 0.5)
    unknown = run_cli("history", str(a), str(b), "-p", str(protocol), "--metric", "nope")
    assert unknown.returncode == 2 and "nope" in unknown.stderr


def test_each_run_shows_its_evaluator_and_a_changed_option_is_a_judge_change(
    tmp_path: Path, protocol: Path
) -> None:
    a = judged(tmp_path, protocol, "a", 0.8)
    b = judged(tmp_path, protocol, "b", 0.4)
    c = judged(tmp_path, protocol, "c", 0.4, samples=2)
    h = history([f"a={a}", f"b={b}", f"c={c}"], protocol=protocol)
    fingerprints = [RunDir(p).info.evaluator for p in (a, b, c)]
    assert all(f is not None for f in fingerprints)
    assert [r.evaluator for r in h.runs] == [f.short for f in fingerprints]  # type: ignore[union-attr]
    first, second = h.steps
    assert first.judge_changed is None and first.regression is False  # not the latest
    assert second.judge_changed is not None and "samples" in second.judge_changed
    assert not second.decided and not second.regression
    done = run_cli("history", f"a={a}", f"b={b}", f"c={c}", "-p", str(protocol))
    assert done.returncode == 0 and fingerprints[2].short in done.stdout  # type: ignore[union-attr]


def test_a_judge_check_that_moved_marks_the_step_and_runs_show_their_agreement(
    tmp_path: Path,
) -> None:
    check, rows = _check_file(tmp_path), pointwise_rows([(1, 2), (2, 1)] * 5)
    SHIFT["by"] = 0
    _run(rows, tmp_path / "v1", check)
    _run(rows, tmp_path / "v2", check)
    SHIFT["by"] = 1  # the provider changed the model behind the same name
    _run(rows, tmp_path / "v3", check)
    h = history([f"v{i}={tmp_path / f'v{i}'}" for i in (1, 2, 3)], metrics=["interactivity"])
    assert [r.judge_check for r in h.runs] == pytest.approx([0.92, 0.92, 0.08], abs=0.01)
    first, second = h.steps
    assert first.judge_changed is None
    assert second.judge_changed is not None
    assert "the judge changed between these runs: check agreement 0.92 → 0.08" in (
        second.judge_changed
    )
    assert not second.regression and not second.decided

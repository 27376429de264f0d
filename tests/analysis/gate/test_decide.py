"""`chatjudge gate` on run directories the real engine wrote with Python judges: pairing,
counting, refusing mismatched runs, slices, looks, the outputs and every exit code."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ConfigDict
from typer.testing import CliRunner

import chatjudge
from chatjudge.analysis.gate.units import field_value, slice_values
from chatjudge.cli import app
from chatjudge.errors import ChatJudgeWarning, UsageError
from chatjudge.formats.analyses import Gate, GateDifference, GateLook, GateSlice
from chatjudge.formats.io import read_model
from chatjudge.report.gate_text import markdown
from chatjudge.rundir import GATE, RunDir
from chatjudge.stats.paired import paired_difference
from tests.support.cli import run_cli

runner = CliRunner()
STRICT = ConfigDict(extra="forbid", strict=True)


class StrictGate(Gate):
    model_config = STRICT


# --- judges: deterministic functions of the prompt -------------------------------------


def marker_judge(prompt: str) -> str:
    """Scores written in the conversation: `ACC=a INT=i`; `BROKEN` gives no verdict."""
    if "BROKEN" in prompt:
        return "no verdict here"
    m = re.search(r"ACC=(\d) INT=(\d)", prompt)
    assert m is not None
    return json.dumps(
        {
            "interactivity": {"thought": "t", "score": int(m[2])},
            "accuracy": {"thought": "t", "score": int(m[1])},
        }
    )


def other_marker_judge(prompt: str) -> str:
    return marker_judge(prompt)


def fair_judge(prompt: str) -> str:
    """Prefers the response scoring higher (GOOD +1, POOR -1), in either order."""
    a = re.search(r"### Response A\n(.*?)\n\n### Response B", prompt, re.S)
    b = re.search(r"### Response B\n(.*?)\n", prompt, re.S)
    assert a and b
    score_a, score_b = (t.count("GOOD") - t.count("POOR") for t in (a.group(1), b.group(1)))
    choice = "A" if score_a > score_b else "B" if score_b > score_a else "SAME"
    return json.dumps({"explanation": "GOOD wins", "pairwise_choice": choice})


def first_position_judge(prompt: str) -> str:
    """Always the first shown: the two orders disagree, so every pair is a tie."""
    return '{"explanation": "A looks fine", "pairwise_choice": "A"}'


# --- data ------------------------------------------------------------------------------


def pointwise_rows(scores: list[tuple[int, int]], **columns: list[Any]) -> list[dict[str, Any]]:
    """One row per (accuracy, interactivity); extra columns by name."""
    rows = []
    for i, (acc, inter) in enumerate(scores):
        row = {
            "id": f"q{i}",
            "question": f"question {i}",
            "answer": f"answer {i}",
            "chat": f"user: hi {i}\nassistant: ACC={acc} INT={inter}",
        }
        row.update({name: values[i] for name, values in columns.items()})
        rows.append(row)
    return rows


def pairwise_rows(wins: list[str], **columns: list[Any]) -> list[dict[str, Any]]:
    """`wins`: per row C (the candidate's response is GOOD), B (it is POOR) or T (a tie);
    the baseline's response is the same whatever `wins` says."""
    word = {"C": "GOOD ", "B": "POOR ", "T": ""}
    return [
        {
            "id": f"p{i}",
            "prompt": f"prompt {i}",
            "baseline_model_response": f"base {i}",
            "response": f"{word[w]}cand {i}",
            **{name: values[i] for name, values in columns.items()},
        }
        for i, w in enumerate(wins)
    ]


def judged(rows: list[dict[str, Any]], out: Path, judge: Any = marker_judge, **opts: Any) -> Path:
    protocol = "interactivity-accuracy" if "chat" in rows[0] else "pairwise-chat-quality"
    chatjudge.evaluate(rows, protocol, judge=judge, out=out, report=False, **opts)
    return out


def cli(*args: str) -> Any:
    return runner.invoke(app, ["gate", *args])


# --- the effect and its pairing ----------------------------------------------------------


def test_one_pairwise_run_gates_the_preference_minus_one_half(tmp_path: Path) -> None:
    wins = ["C"] * 12 + ["T"] * 4 + ["B"] * 4
    run = judged(pairwise_rows(wins), tmp_path / "pw", fair_judge)
    g = chatjudge.gate(run, report=False)
    assert g.metric == "preference" and g.runs == {"run": str(run)}
    assert g.difference.value == pytest.approx((12 + 0.5 * 4) / 20 - 0.5)
    assert g.n_pairs == 20
    assert g.counts == {"run": {"rows": 20, "failed": 0, "no_value": 0, "unpaired": 0}}
    prefs = np.array([1.0] * 12 + [0.5] * 4 + [0.0] * 4)
    # 20 rows, each one vote against the fixed 1/2: a small sample, guarded by the sign test
    expected = paired_difference(
        prefs, np.full(20, 0.5), None, seed=0, bounds=(-0.5, 0.5), three_point=True
    )
    assert g.difference.ci95 == pytest.approx(list(expected.ci95), abs=1e-6)
    assert g.method == expected.method == "cluster-bootstrap+sign-test"
    assert g.small_sample is not None and g.small_sample.rule == "sign-test"
    assert g.small_sample.difference_range == [-0.5, 0.5]
    StrictGate.model_validate_json((run / GATE).read_text(encoding="utf-8"))
    assert read_model(run / GATE, Gate) == g


def test_orders_that_disagree_count_as_a_tie(tmp_path: Path) -> None:
    run = judged(pairwise_rows(["C"] * 6), tmp_path / "pw", first_position_judge)
    g = chatjudge.gate(run, report=False)
    assert g.difference.value == 0.0  # every (judge, sample) pair disagreed: ties


def test_a_pointwise_run_alone_is_refused(tmp_path: Path) -> None:
    run = judged(pointwise_rows([(1, 2)] * 4), tmp_path / "pt")
    with pytest.raises(UsageError, match="--baseline DIR --candidate DIR"):
        chatjudge.gate(run, report=False)


def test_the_api_takes_the_gates_settings_by_name_and_writes_the_report_only_beside_it(
    tmp_path: Path,
) -> None:
    """`chatjudge.gate(**settings)`: the names of `GateSettings` (the CLI's flags), an
    unknown or ill-typed one refused before anything is written; the candidate run's
    report gets the gate section when gate.json goes there, and only then."""
    run = judged(pairwise_rows(["C"] * 6), tmp_path / "pw", fair_judge)
    with pytest.raises(UsageError, match="human_column"):
        chatjudge.gate(run, human_column="label")
    with pytest.raises(UsageError, match=r"margin \(--margin\)"):
        chatjudge.gate(run, margin="wide")
    assert not (run / GATE).exists() and not (run / "report.html").exists()
    elsewhere = chatjudge.gate(run, out=tmp_path / "g.json", seed=1)
    assert read_model(tmp_path / "g.json", Gate) == elsewhere
    assert not (run / "report.html").exists()  # gate.json is not the run's: no section
    chatjudge.gate(run)
    assert 'data-section="gate"' in (run / "report.html").read_text(encoding="utf-8")


def test_two_pointwise_runs_give_the_paired_difference_of_the_chosen_metric(
    tmp_path: Path,
) -> None:
    base = judged(pointwise_rows([(0, 1), (1, 2), (0, 2), (1, 3)] * 5), tmp_path / "b")
    cand = judged(pointwise_rows([(1, 3), (1, 2), (0, 3), (1, 3)] * 5), tmp_path / "c")
    g = chatjudge.gate(cand, base, report=False)
    assert g.metric == "interactivity"  # the protocol's first metric
    assert g.difference.value == pytest.approx((2 + 0 + 1 + 0) / 4)
    acc = chatjudge.gate(cand, base, metric="accuracy", out=tmp_path / "a.json", report=False)
    assert acc.difference.value == pytest.approx(0.25)
    itr = chatjudge.gate(cand, base, metric="itr", out=tmp_path / "i.json", report=False)
    assert itr.difference.value == pytest.approx(0.75 * 2 * 100)  # (score - 2.5) * 2 * 100
    with pytest.raises(UsageError, match="not a metric of interactivity-accuracy"):
        chatjudge.gate(cand, base, metric="preference", report=False)


def test_unpaired_and_failed_rows_are_counted_never_dropped(tmp_path: Path) -> None:
    rows = pointwise_rows([(1, 2)] * 10)
    base_rows = [dict(r) for r in rows[:8]]  # q8, q9: candidate only
    base_rows[0]["chat"] = "BROKEN"  # q0 fails in the baseline
    base_rows.append({**rows[0], "id": "only-base"})
    cand_rows = [dict(r) for r in rows]
    cand_rows[1]["chat"] = "BROKEN"  # q1 fails in the candidate
    base = judged(base_rows, tmp_path / "b", parse_retries=0)
    cand = judged(cand_rows, tmp_path / "c", parse_retries=0)
    g = chatjudge.gate(cand, base, report=False)
    assert g.counts == {
        "baseline": {"rows": 9, "failed": 1, "no_value": 0, "unpaired": 1},
        "candidate": {"rows": 10, "failed": 1, "no_value": 0, "unpaired": 2},
    }
    assert g.n_pairs == 6  # q2..q7
    result = cli("--baseline", str(base), "--candidate", str(cand), "--out", str(tmp_path / "g"))
    assert "baseline: 9 rows, 1 failed, 1 unpaired" in result.output
    assert "candidate: 10 rows, 1 failed, 2 unpaired" in result.output


def test_samples_of_one_source_row_are_one_unit(tmp_path: Path) -> None:
    def sampled(scores: list[tuple[int, int]]) -> list[dict[str, Any]]:
        rows = pointwise_rows(scores)
        out = []
        for r in rows:
            for k in range(3):  # as `simulate --samples 3` writes them
                out.append({**r, "id": f"{r['id']}#{k}", "sample": k})
        return out

    base = judged(sampled([(0, 1), (1, 2)] * 6), tmp_path / "b")
    cand = judged(sampled([(1, 2), (1, 2)] * 6), tmp_path / "c")
    g = chatjudge.gate(cand, base, metric="accuracy", report=False)
    assert g.n_pairs == 36 and g.n_units == 12
    assert g.difference.value == pytest.approx(0.5)


def test_a_column_of_the_input_is_kept_and_clusters_rows(tmp_path: Path) -> None:
    doc = [f"d{i // 4}" for i in range(20)]
    base = judged(pointwise_rows([(0, 2), (1, 2)] * 10, doc=doc), tmp_path / "b")
    cand = judged(pointwise_rows([(1, 2), (1, 2)] * 10, doc=doc), tmp_path / "c")
    g = chatjudge.gate(cand, base, metric="accuracy", cluster="doc", report=False)
    assert g.n_pairs == 20 and g.n_units == 5 and g.cluster == "doc"
    with pytest.raises(UsageError, match="row 'q0' has no field 'topic' \\(--cluster\\)"):
        chatjudge.gate(cand, base, metric="accuracy", cluster="topic", report=False)


def test_older_runs_join_their_columns_from_data(tmp_path: Path) -> None:
    rows = pointwise_rows([(0, 2), (1, 2)] * 4)
    base, cand = judged(rows, tmp_path / "b"), judged(rows, tmp_path / "c")
    data = tmp_path / "rows.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": r["id"], "topic": f"t{i % 2}"}) + "\n" for i, r in enumerate(rows)
        )
    )
    g = chatjudge.gate(cand, base, by="topic", data=data, report=False)
    assert sorted(s.value for s in g.slices) == ["t0", "t1"]


# --- refusing runs that were judged differently ------------------------------------------


def test_runs_of_different_judges_protocols_or_options_are_refused(tmp_path: Path) -> None:
    rows = pointwise_rows([(1, 2)] * 6)
    base = judged(rows, tmp_path / "b")
    other = judged(rows, tmp_path / "j", other_marker_judge)
    sampled = judged(rows, tmp_path / "s", samples=2)
    limited = judged(rows, tmp_path / "l", limit=5)
    pairwise = judged(pairwise_rows(["C"] * 6), tmp_path / "p", fair_judge)
    result = cli("--baseline", str(base), "--candidate", str(other))
    assert result.exit_code == 2
    assert "judges: python/marker_judge vs python/other_marker_judge" in result.output
    result = cli("--baseline", str(base), "--candidate", str(sampled))
    assert result.exit_code == 2 and "option samples: 1 vs 2" in result.output
    result = cli("--baseline", str(base), "--candidate", str(pairwise))
    assert result.exit_code == 2
    assert "protocol: interactivity-accuracy vs pairwise-chat-quality" in result.output
    # --limit changes which rows, not how they are judged: the rows pair by id
    g = chatjudge.gate(limited, base, report=False)
    assert g.mismatches == [] and g.counts["baseline"]["unpaired"] == 1


def test_allow_mismatch_gates_and_records_what_differs(tmp_path: Path) -> None:
    rows = pointwise_rows([(1, 2), (0, 3)] * 5)
    base = judged(rows, tmp_path / "b")
    other = judged(rows, tmp_path / "j", other_marker_judge)
    with pytest.warns(ChatJudgeWarning, match="runs differ: judges"):
        g = chatjudge.gate(other, base, allow_mismatch=True, report=False)
    assert g.mismatches[0] == "judges: python/marker_judge vs python/other_marker_judge"
    fingerprints = [RunDir(d).info.evaluator for d in (base, other)]
    assert None not in fingerprints and len(g.mismatches) == 2  # and the fingerprints
    assert g.mismatches[1] == "evaluator fingerprint: {} vs {}".format(
        *(f.fingerprint[:12] for f in fingerprints if f is not None)
    )
    assert read_model(other / GATE, Gate).mismatches == g.mismatches


def test_two_pairwise_runs_need_the_same_baseline_responses(tmp_path: Path) -> None:
    wins = ["C", "T", "B", "C"] * 5
    first = judged(pairwise_rows(wins), tmp_path / "one", fair_judge)
    second_rows = pairwise_rows(["C"] * 20)
    second = judged(second_rows, tmp_path / "two", fair_judge)
    g = chatjudge.gate(second, first, report=False)
    assert g.metric == "preference"
    assert g.difference.value == pytest.approx(1.0 - (2 * 1 + 1 * 0.5) / 4)
    changed = [dict(r) for r in second_rows]
    changed[3]["baseline_model_response"] = "a different baseline"
    third = judged(changed, tmp_path / "three", fair_judge)
    with pytest.raises(UsageError, match="different baseline_model_response on 1 .*'p3'"):
        chatjudge.gate(third, first, report=False)
    assert chatjudge.gate(third, first, allow_mismatch=True, report=False).n_pairs == 20


# --- the decision and its exit codes -----------------------------------------------------


@pytest.fixture(scope="module")
def decided(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A baseline and three candidates: clearly better, clearly worse, the same on average."""
    root = tmp_path_factory.mktemp("decided")
    n = 40
    return {
        "base": judged(pointwise_rows([(0, 2), (1, 2)] * (n // 2)), root / "base"),
        "better": judged(pointwise_rows([(1, 2), (1, 2)] * (n // 2)), root / "better"),
        "worse": judged(pointwise_rows([(0, 2), (0, 2)] * (n // 2)), root / "worse"),
        "mixed": judged(pointwise_rows([(1, 2), (0, 2)] * (n // 2)), root / "mixed"),
    }


@pytest.mark.parametrize(
    ("candidate", "require", "margin", "code", "outcome"),
    [
        ("better", "better", "0", 0, "pass"),
        ("worse", "not-worse", "0.05", 1, "fail"),
        ("mixed", "better", "0", 3, "inconclusive"),
        ("mixed", "not-worse", "0", 3, "inconclusive"),
    ],
)
def test_each_outcome_has_its_exit_code(
    decided: dict[str, Path],
    tmp_path: Path,
    candidate: str,
    require: str,
    margin: str,
    code: int,
    outcome: str,
) -> None:
    target = tmp_path / "gate.json"
    result = cli(
        "--baseline",
        str(decided["base"]),
        "--candidate",
        str(decided[candidate]),
        "--metric",
        "accuracy",
        "--require",
        require,
        "--margin",
        margin,
        "--out",
        str(target),
    )
    assert result.exit_code == code, result.output
    g = read_model(target, Gate)
    assert g.outcome == outcome and g.require == require and g.margin == float(margin)
    lo, hi = g.difference.ci95
    bound = 0.0 if require == "better" else -float(margin)
    assert (lo > bound) == (outcome == "pass") and (hi < bound) == (outcome == "fail")
    assert g.mde80 > 0 and "Minimum detectable effect" in result.output
    if outcome == "inconclusive":
        assert "is peeking" in result.output and "--sequential" in result.output
        assert "would decide it" in result.output or "No number of rows" in result.output
    else:
        assert g.rows_to_decide is None


def test_bad_usage_is_exit_2(decided: dict[str, Path], tmp_path: Path) -> None:
    assert cli().exit_code == 2
    assert cli("--candidate", str(decided["better"])).exit_code == 2
    result = cli(
        "--baseline", str(decided["base"]), "--candidate", str(decided["better"]), "--require", "x"
    )
    assert result.exit_code == 2 and "--require must be" in result.output
    result = cli(str(tmp_path / "nothing-here"))
    assert result.exit_code == 2 and "run.json" in result.output


def test_failed_items_never_change_the_exit_code(tmp_path: Path) -> None:
    rows = pointwise_rows([(0, 2)] * 30)
    cand_rows = pointwise_rows([(1, 2)] * 30)
    cand_rows[0]["chat"] = "BROKEN"
    base = judged(rows, tmp_path / "b", parse_retries=0)
    cand = judged(cand_rows, tmp_path / "c", parse_retries=0)
    result = cli("--baseline", str(base), "--candidate", str(cand), "--metric", "accuracy")
    assert result.exit_code == 0
    assert read_model(cand / GATE, Gate).counts["candidate"]["failed"] == 1


# --- slices ------------------------------------------------------------------------------


def test_slices_are_bonferroni_adjusted_and_worst_first(tmp_path: Path) -> None:
    n = 30
    lang = ["en"] * n + ["fr"] * n + ["de"] * n
    base = judged(pointwise_rows([(1, 2)] * (3 * n), lang=lang), tmp_path / "b")
    cand_scores = [(1, 2)] * n + [(0, 2)] * n + [(1, 2), (0, 2)] * (n // 2)
    cand = judged(pointwise_rows(cand_scores, lang=lang), tmp_path / "c")
    g = chatjudge.gate(cand, base, metric="accuracy", by="lang", margin=0.1, report=False)
    assert [s.value for s in g.slices] == ["fr", "de", "en"]  # worst first
    assert all(s.level == pytest.approx(1 - 0.05 / 3) for s in g.slices)
    fr = g.slices[0]
    assert fr.difference.value == -1.0 and fr.n_pairs == n and fr.counts and fr.below_margin
    mask = np.array(lang) == "de"
    # 15 of its 30 rows differ: a small slice, guarded at its own level and at -margin
    d = paired_difference(
        np.where(np.arange(3 * n) % 2 == 0, 1.0, 0.0)[mask], np.ones(n), None,
        level=1 - 0.05 / 3, bounds=(-1.0, 1.0), boundary=-0.1, three_point=True,
    )  # fmt: skip
    assert g.slices[1].difference.ci95 == pytest.approx(list(d.ci95), abs=1e-6)
    assert g.slices[1].method == d.method == "tango+betting"
    assert g.outcome == "fail"  # the whole is far below -0.1 too

    strict = chatjudge.gate(
        cand,
        base,
        metric="accuracy",
        by="lang",
        margin=1.0,
        slices_must_not_regress=True,
        report=False,
    )
    assert strict.outcome == "pass"  # -1 is not wholly below -1


def test_a_slice_of_three_ties_has_an_interval_not_a_point(tmp_path: Path) -> None:
    # `make demo-traces`: the slice user.tier=pro at +0 [+0, +0] on 3 pairs
    wins = ["T"] * 3 + ["C", "B"] * 8
    tier = ["pro"] * 3 + ["free"] * 16
    run = judged(pairwise_rows(wins, tier=tier), tmp_path / "pw", fair_judge, flip=False)
    g = chatjudge.gate(run, by="tier", report=False)
    pro = next(s for s in g.slices if s.value == "pro")
    assert pro.n_pairs == 3 and pro.difference.value == 0.0
    assert pro.method == "cluster-bootstrap+sign-test"
    lo, hi = pro.difference.ci95
    assert lo < -0.3 and hi > 0.3  # three ties say little of a preference in [0, 1]
    assert not pro.below_margin and g.outcome == "inconclusive"


def test_a_regressed_slice_fails_the_gate_only_from_30_rows(tmp_path: Path) -> None:
    def runs(n_small: int) -> tuple[Path, Path]:
        n_big = 60  # 50 better, 10 alike: the whole has three distinct differences
        group = ["big"] * n_big + ["small"] * n_small
        base = pointwise_rows([(0, 2)] * 50 + [(1, 2)] * (10 + n_small), group=group)
        cand = pointwise_rows([(1, 2)] * n_big + [(0, 2)] * n_small, group=group)
        root = tmp_path / str(n_small)
        return judged(base, root / "b"), judged(cand, root / "c")

    base, cand = runs(29)
    args = dict(metric="accuracy", by="group", margin=0.05, report=False)
    g = chatjudge.gate(cand, base, **args)  # type: ignore[arg-type]
    assert g.outcome == "pass"
    g = chatjudge.gate(cand, base, slices_must_not_regress=True, **args)  # type: ignore[arg-type]
    small = next(s for s in g.slices if s.value == "small")
    assert small.below_margin and not small.counts and g.outcome == "pass"
    base, cand = runs(30)
    g = chatjudge.gate(cand, base, slices_must_not_regress=True, **args)  # type: ignore[arg-type]
    small = next(s for s in g.slices if s.value == "small")
    assert small.below_margin and small.counts and g.outcome == "fail"
    assert "group=small" in g.reason
    result = cli(
        "--baseline",
        str(base),
        "--candidate",
        str(cand),
        "--metric",
        "accuracy",
        "--by",
        "group",
        "--margin",
        "0.05",
        "--slices-must-not-regress",
    )
    assert result.exit_code == 1 and "group=small" in result.output


# --- noise, looks, outputs --------------------------------------------------------------


def test_several_judge_samples_per_row_give_the_noise_split(tmp_path: Path) -> None:
    rows = pointwise_rows([(1, 2), (0, 2)] * 10)
    base = judged(rows, tmp_path / "b", samples=2)
    cand = judged(rows, tmp_path / "c", samples=2)
    g = chatjudge.gate(cand, base, report=False)
    assert g.noise is not None and g.noise.samples_per_row == 2
    one = chatjudge.gate(judged(rows, tmp_path / "c1"), judged(rows, tmp_path / "b1"), report=False)
    assert one.noise is None


def test_gating_a_grown_run_again_is_recorded_and_warned(tmp_path: Path) -> None:
    rows = pointwise_rows([(1, 2), (0, 2)] * 20)
    base = judged(rows, tmp_path / "b")
    small = judged(rows, tmp_path / "c", limit=20)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = chatjudge.gate(small, base, report=False)
        assert chatjudge.gate(small, base, report=False).looks == []  # same rows: no peeking
    grown = judged(rows, tmp_path / "c")  # the same directory, now with every row
    with pytest.warns(ChatJudgeWarning, match="peeking"):
        second = chatjudge.gate(grown, base, report=False)
    assert [look.n_pairs for look in second.looks] == [first.n_pairs] == [20]
    assert read_model(grown / GATE, Gate).looks[0].outcome == first.outcome


def test_markdown_table(tmp_path: Path) -> None:
    g = Gate(
        outcome="inconclusive",
        reason="the interval [-0.02, +0.04] contains -0",
        metric="accuracy",
        difference=GateDifference(value=0.01, ci95=[-0.02, 0.04]),
        se=0.015,
        method="tango",
        mde80=0.042,
        rows_to_decide=1234,
        margin=0.0,
        require="better",
        n_pairs=200,
        n_units=200,
        counts={"baseline": {"rows": 201, "failed": 1, "no_value": 0, "unpaired": 0}},
        by="lang",
        cluster=None,
        slices=[
            GateSlice(
                value="fr",
                n_pairs=40,
                difference=GateDifference(value=-0.05, ci95=[-0.2, 0.1]),
                level=0.975,
                below_margin=False,
                counts=True,
            )
        ],
        noise=None,
        mismatches=[],
        looks=[
            GateLook(
                n_pairs=100,
                outcome="inconclusive",
                difference=GateDifference(value=0.0, ci95=[-0.1, 0.1]),
                created="x",
            )
        ],
        runs={"baseline": "runs/b", "candidate": "runs/c"},
        created="2026-11-24T00:00:00+00:00",
        chatjudge_version="0",
    )
    text = markdown(g)
    assert text.startswith("### chatjudge gate: ⚠️ inconclusive\n")
    row = "| +0.0100 | [-0.0200, +0.0400] | 0 (better) | inconclusive | 0.0420 | 200 (200 units)"
    assert row in text
    assert "| baseline 0 / 1 |" in text
    assert "| lang=fr | -0.0500 | [-0.2000, +0.1000] | 97.50% | 40 | ok |" in text
    assert "about 1,234 rows in all would decide it" in text and "peeking" in text
    assert "Earlier looks at these runs: 1" in text


def test_cli_writes_markdown_and_gate_json(decided: dict[str, Path], tmp_path: Path) -> None:
    md = tmp_path / "summary.md"
    target = tmp_path / "out" / "gate.json"
    result = cli(
        "--baseline",
        str(decided["base"]),
        "--candidate",
        str(decided["better"]),
        "--metric",
        "accuracy",
        "--out",
        str(target),
        "--markdown",
        str(md),
    )
    assert result.exit_code == 0
    g = StrictGate.model_validate_json(target.read_text(encoding="utf-8"))
    assert md.read_text(encoding="utf-8") == markdown(g)
    assert "✅ pass" in md.read_text(encoding="utf-8")
    assert "+0.5000" in result.output  # Δ in the terminal table


def test_a_gate_json_of_another_format_is_refused(tmp_path: Path) -> None:
    path = tmp_path / GATE
    path.write_text(json.dumps({"format": 99, "outcome": "pass"}))
    with pytest.raises(UsageError, match="format 99"):
        read_model(path, Gate)
    path.write_text(json.dumps({"format": 1, "outcome": "pass"}))
    with pytest.raises(UsageError, match="not a chatjudge gate"):
        read_model(path, Gate)


CUSTOM = Path(__file__).resolve().parents[3] / "examples" / "chat_quality_1to5.toml"


def quality_judge(prompt: str) -> str:
    m = re.search(r"Q=(\d)", prompt)
    assert m is not None
    return json.dumps({"explanation": "x", "score": int(m[1])})


def test_a_custom_protocol_metric_through_its_toml(tmp_path: Path) -> None:
    def rows(scores: list[int]) -> list[dict[str, Any]]:
        return [
            {"id": f"c{i}", "prompt": f"ask {i}", "response": f"reply Q={q}"}
            for i, q in enumerate(scores)
        ]

    base = tmp_path / "b"
    cand = tmp_path / "c"
    chatjudge.evaluate(rows([3, 4] * 10), CUSTOM, judge=quality_judge, out=base, report=False)
    chatjudge.evaluate(rows([4, 5] * 10), CUSTOM, judge=quality_judge, out=cand, report=False)
    with pytest.raises(UsageError, match="custom protocol 'chat-quality-1to5'.*--protocol"):
        chatjudge.gate(cand, base, report=False)
    g = chatjudge.gate(cand, base, protocol=CUSTOM, report=False)
    assert g.metric == "quality" and g.difference.value == pytest.approx(1.0)
    result = cli("--baseline", str(base), "--candidate", str(cand), "-p", str(CUSTOM))
    assert result.exit_code == 0, result.output
    result = cli("--baseline", str(base), "--candidate", str(cand), "-p", "interactivity-accuracy")
    assert result.exit_code == 2 and "was judged with 'chat-quality-1to5'" in result.output


# --- small samples: never a pass on a few identical rows --------------------------------


def test_three_winning_pairwise_rows_are_inconclusive_not_a_pass(tmp_path: Path) -> None:
    run = judged(pairwise_rows(["C"] * 3), tmp_path / "pw", fair_judge, flip=False)
    done = run_cli("gate", str(run), "--require", "better")
    assert done.returncode == 3, done.stdout + done.stderr
    g = read_model(run / GATE, Gate)
    lo, hi = g.difference.ci95
    assert g.difference.value == 0.5 and lo <= 0 < hi  # not [+0.5000, +0.5000]
    assert g.method == "cluster-bootstrap+sign-test"
    assert g.small_sample is not None and g.small_sample.sign_p == [0.125, 1.0]
    assert g.mde80 > 0.5 and g.rows_to_decide == 6
    assert "Small sample, 3 units (fewer than 30): " in done.stdout
    assert "no outcome of this many rows can pass" in done.stdout
    assert "Small sample" in (run / "report.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(("wins", "outcome"), [(5, "inconclusive"), (6, "pass")])
def test_all_winning_pairwise_rows_pass_from_six(tmp_path: Path, wins: int, outcome: str) -> None:
    run = judged(pairwise_rows(["C"] * wins), tmp_path / "pw", fair_judge, flip=False)
    assert chatjudge.gate(run, require="better", report=False).outcome == outcome


@pytest.mark.parametrize(("ties", "outcome"), [(3, "inconclusive"), (90, "inconclusive"),
                                               (91, "pass")])  # fmt: skip
def test_all_tie_rows_pass_a_margin_of_002_from_91(tmp_path: Path, ties: int, outcome: str) -> None:
    run = judged(pairwise_rows(["T"] * ties), tmp_path / "pw", fair_judge, flip=False)
    g = chatjudge.gate(run, margin=0.02, report=False)
    assert g.outcome == outcome and g.method == "cluster-bootstrap+betting"
    assert g.small_sample is not None and g.small_sample.difference_range == [-0.5, 0.5]
    if outcome == "inconclusive":
        assert g.rows_to_decide == 91  # at least what equal rows need
    assert g.mde80 > 0


@pytest.mark.parametrize(
    ("rows", "score", "outcome"), [(3, 3, "inconclusive"), (9, 2, "inconclusive"), (10, 2, "pass")]
)
def test_score_differences_on_few_rows_need_the_bounded_mean_count(
    tmp_path: Path, rows: int, score: int, outcome: str
) -> None:
    # interactivity is a 1-3 score: a row's difference lies in [-2, 2]
    base = judged(pointwise_rows([(1, 1)] * rows), tmp_path / "b")
    cand = judged(pointwise_rows([(1, score)] * rows), tmp_path / "c")
    g = chatjudge.gate(cand, base, metric="interactivity", require="better", report=False)
    assert g.outcome == outcome and g.method == "cluster-bootstrap+betting"
    assert g.small_sample is not None and g.small_sample.difference_range == [-2.0, 2.0]


def test_four_discordant_pairs_one_way_do_not_pass(tmp_path: Path) -> None:
    # accuracy 0 -> 1 on 4 rows: Tango's lower end is 0.020, the exact McNemar p 1/16
    base = judged(pointwise_rows([(0, 2)] * 4), tmp_path / "b")
    cand = judged(pointwise_rows([(1, 2)] * 4), tmp_path / "c")
    g = chatjudge.gate(cand, base, metric="accuracy", require="better", report=False)
    assert g.outcome == "inconclusive" and g.method == "tango+sign-test"
    assert g.small_sample is not None and g.small_sample.sign_p == [0.0625, 1.0]
    # the side the sign test does not clear reaches the betting interval's end, below 0
    assert g.small_sample.betting_ci is not None
    assert g.difference.ci95[0] == g.small_sample.betting_ci[0] < 0.0


def test_two_rows_gate_and_fewer_say_why_not(tmp_path: Path) -> None:
    two = judged(pairwise_rows(["C", "C"]), tmp_path / "two", fair_judge, flip=False)
    done = run_cli("gate", str(two), "--require", "better")
    assert done.returncode == 3, done.stderr  # once: "level must be between 0 and 1, got 1.0"
    one = judged(pairwise_rows(["C"]), tmp_path / "one", fair_judge, flip=False)
    done = run_cli("gate", str(one))
    assert done.returncode == 2
    assert "1 row(s) in 1 unit(s) judged ok: an interval needs at least 2 units" in done.stderr
    rows = pointwise_rows([(1, 2)] * 3)
    broken = [{**r, "chat": "BROKEN"} for r in rows]
    base = judged(rows, tmp_path / "b")
    cand = judged(broken, tmp_path / "c", parse_retries=0)
    done = run_cli("gate", "--baseline", str(base), "--candidate", str(cand))
    assert done.returncode == 2
    assert "0 row(s) in 0 unit(s) judged ok in both runs" in done.stderr
    assert "candidate: 3 rows, 3 failed, 0 unpaired" in done.stderr


def test_a_run_against_itself_is_nothing_to_compare(tmp_path: Path) -> None:
    run = judged(pointwise_rows([(1, 2), (0, 2)] * 5), tmp_path / "run")
    (tmp_path / "link").symlink_to(run, target_is_directory=True)
    for other in (run, tmp_path / "link", tmp_path / "run" / ".." / "run"):
        done = run_cli("gate", "--baseline", str(run), "--candidate", str(other))
        assert done.returncode == 2, done.stdout
        assert "are the same run directory: nothing to compare" in done.stderr
    assert not (run / GATE).exists()


# --- slices of rows without a value ----------------------------------------------------


def test_rows_without_a_value_for_by_are_one_slice(tmp_path: Path) -> None:
    tier = ["free", "pro", None, "free", None, "pro"] * 2
    rows = pointwise_rows([(1, 2)] * 12, tier=tier)
    for r in rows[10:]:
        del r["tier"]  # absent, as in a row the column never reached
    base = judged(rows, tmp_path / "b")
    cand = judged([{**r, "chat": r["chat"].replace("ACC=1", "ACC=0")} for r in rows],
                  tmp_path / "c")  # fmt: skip
    done = run_cli(
        "gate", "--baseline", str(base), "--candidate", str(cand), "--metric", "accuracy",
        "--by", "tier",
    )  # fmt: skip
    assert done.returncode in (1, 3), done.stderr
    g = read_model(cand / GATE, Gate)
    assert sorted((s.value, s.n_pairs) for s in g.slices) == [
        ("(missing)", 5),
        ("free", 4),
        ("pro", 3),
    ]
    assert "tier=(missing)" in done.stdout
    with pytest.raises(UsageError, match="row 'q0' has no field 'topic' \\(--by\\)"):
        chatjudge.gate(cand, base, metric="accuracy", by="topic", report=False)
    done = run_cli("gate", "--baseline", str(base), "--candidate", str(cand), "--by", "topic")
    assert done.returncode == 2 and "no field 'topic' (--by), nor has any other row" in done.stderr
    assert "their fields: answer, chat, chat_history, id, question, tier." in done.stderr


def test_null_nan_and_absent_are_the_missing_slice() -> None:
    rows: list[dict[str, Any]] = [{"t": "a"}, {"t": None}, {"t": float("nan")}, {}, {"t": 3}]
    assert slice_values(["r0", "r1", "r2", "r3", "r4"], rows, "t") == [
        "a",
        "(missing)",
        "(missing)",
        "(missing)",
        "3",
    ]
    with pytest.raises(UsageError, match="row 'q1' has no value for 'doc' \\(--cluster\\)"):
        field_value("q1", {"doc": None}, "doc", "--cluster")

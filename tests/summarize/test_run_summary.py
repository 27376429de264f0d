"""`SummaryBuilder`: counts, metric values with intervals, position consistency, panels."""

from __future__ import annotations

import datetime as dt
import random
from typing import Any

import pytest

from chatjudge.__about__ import __version__
from chatjudge.formats.cost import Cost, RoleCostRecord
from chatjudge.formats.summary import Summary
from chatjudge.protocols import BASELINE, CANDIDATE, TIE, get_protocol
from chatjudge.summarize.run_summary import SummaryBuilder

POINTWISE = get_protocol("interactivity-accuracy")
PAIRWISE = get_protocol("pairwise-chat-quality")
USAGE = {"calls": 8, "cached_calls": 2, "input_tokens": 800, "output_tokens": 90}


def pointwise_summary(items: list[tuple[int, int] | None], **kwargs: Any) -> dict[str, Any]:
    """A one-judge pointwise summary of items (interactivity, accuracy); None: a failed item."""
    builder = SummaryBuilder(POINTWISE, ["local"], flip=True, samples=1)
    for i, item in enumerate(items):
        if item is None:
            builder.add(i, False, {}, None)
        else:
            builder.add(i, True, {"interactivity": item[0], "accuracy": item[1]}, None)
    built = builder.build(kwargs.get("usage", USAGE), kwargs.get("cost"))
    return built.model_dump(exclude_unset=True)


def test_counts_and_pointwise_metrics() -> None:
    judge = RoleCostRecord(usd=0.25, priced=True, source="--price-in/--price-out")
    cost = Cost(roles={"judge": judge}, total_usd=0.25, unpriced=[])
    summary = pointwise_summary([(3, 1), (2, 0), None, (1, 1), (3, 1)], cost=cost)
    assert (summary["n_items"], summary["n_ok"], summary["n_failed"]) == (5, 4, 1)
    m = summary["metrics"]
    assert set(m) == {"interactivity", "itr", "accuracy"}  # no position consistency
    assert m["interactivity"]["value"] == pytest.approx(2.25)
    # itr: the mean of (score - 2.5) * 200 = (100 - 100 - 300 + 100) / 4
    assert m["itr"]["value"] == pytest.approx(-50.0)
    assert m["accuracy"]["value"] == pytest.approx(0.75)
    for metric in m.values():
        assert metric["n"] == 4  # the failed item counts in none
        lo, hi = metric["ci95"]
        assert lo <= metric["value"] <= hi and lo < hi
    assert summary["usage"] == USAGE and summary["cost_usd"] == 0.25
    assert summary["cost"]["roles"]["judge"]["usd"] == 0.25
    assert summary["flip"] is False  # a pointwise run has no orders to flip


def test_the_summary_fields_and_format() -> None:
    summary = pointwise_summary([(3, 1), (2, 1)])
    assert summary["format"] == 2
    assert summary["protocol"] == "interactivity-accuracy" and summary["kind"] == "pointwise"
    assert summary["judge"] == "local" and summary["judges"] == ["local"]
    assert summary["samples"] == 1 and summary["per_judge"] == {}
    assert summary["cost_usd"] is None
    assert summary["chatjudge_version"] == __version__
    created = dt.datetime.fromisoformat(summary["created"])
    assert abs(dt.datetime.now(dt.UTC) - created) < dt.timedelta(minutes=1)
    Summary.model_validate(summary)
    strict = type("StrictSummary", (Summary,), {"model_config": {"extra": "forbid"}})
    strict.model_validate(summary)  # no field outside the documented format


def test_one_item_has_intervals_valid_at_one_item() -> None:
    # a percentile bootstrap has none; the range of a score and a share's exact interval do
    one = pointwise_summary([(3, 1), None])
    m = one["metrics"]
    assert all(metric["n"] == 1 for metric in m.values())
    assert m["itr"]["value"] == pytest.approx(100.0)
    assert m["accuracy"]["ci95"] == pytest.approx([0.025, 1.0])  # Clopper-Pearson, 1 of 1
    lo, hi = m["interactivity"]["ci95"]  # the betting interval of one 3 on a 1-3 scale
    assert 1.0 < lo < 2.0 and hi == pytest.approx(3.0)
    none = pointwise_summary([None, None])
    assert (none["n_items"], none["n_ok"], none["n_failed"]) == (2, 0, 2)
    for metric in none["metrics"].values():
        assert metric == {"value": None, "ci95": None, "n": 0}


def test_two_equal_items_do_not_collapse_to_a_point() -> None:
    m = pointwise_summary([(2, 1), (2, 1)])["metrics"]
    assert m["accuracy"]["ci95"][0] == pytest.approx(0.158, abs=1e-3)  # 2 of 2, exact
    assert m["accuracy"]["ci95"][1] == 1.0
    lo, hi = m["interactivity"]["ci95"]
    assert lo < 1.5 and hi > 2.5  # two 2s say little of a 1-3 mean


def test_eight_items_all_wrong_and_all_scored_1_have_intervals_that_hold_the_truth() -> None:
    # `make demo-simulate`: Accuracy 0.0% [0.0%, 0.0%] and Interactivity 1.00 [1.00, 1.00]
    m = pointwise_summary([(1, 0)] * 8)["metrics"]
    assert m["accuracy"]["value"] == 0.0
    assert m["accuracy"]["ci95"] == pytest.approx([0.0, 0.3694], abs=1e-4)  # 0 of 8, exact
    lo, hi = m["interactivity"]["ci95"]
    assert lo == 1.0 and hi > 1.5
    assert m["itr"]["ci95"][0] == -300.0 and m["itr"]["ci95"][1] > -200.0


def test_sixteen_pairs_without_a_candidate_win_have_a_win_rate_interval() -> None:
    # `make demo`: Candidate win rate 0.0% [0.0%, 0.0%] on 16 items
    m = pairwise_summary([(BASELINE, True)] * 10 + [(TIE, True)] * 6)["metrics"]
    assert m["candidate_win_rate"]["value"] == 0.0
    assert m["candidate_win_rate"]["ci95"] == pytest.approx([0.0, 0.2059], abs=1e-4)
    assert m["position_consistency"]["ci95"] == pytest.approx([0.7941, 1.0], abs=1e-4)


def test_a_figure_with_no_known_range_on_few_items_says_too_few_to_say() -> None:
    builder = SummaryBuilder(POINTWISE, ["local"], flip=False, samples=1)
    for i in range(8):
        builder.add(i, True, {"interactivity": 2, "accuracy": 1}, None)
        simulated = {"turns": 2, "assistant_tokens": 100 + i, "ended": "user"}
        builder.add_simulation(i, simulated)
    summary = builder.build(USAGE, None).model_dump(exclude_unset=True)
    tokens = summary["simulation"]["assistant_tokens"]
    assert tokens["value"] == pytest.approx(103.5) and tokens["ci95"] is None
    assert tokens["too_few"].startswith("too few to say: 8 items")
    ended = summary["simulation"]["ended_by_user"]
    assert ended["ci95"] == pytest.approx([0.6306, 1.0], abs=1e-4) and "too_few" not in ended
    Summary.model_validate(summary)


def test_intervals_are_deterministic() -> None:
    items = [(3, 1), (2, 0), (1, 1), (3, 0), (2, 1)]
    first, second = pointwise_summary(items), pointwise_summary(items)
    assert first["metrics"] == second["metrics"]


def pairwise_summary(
    items: list[tuple[str, bool | None] | None], *, flip: bool = True, samples: int = 1
) -> dict[str, Any]:
    builder = SummaryBuilder(PAIRWISE, ["j"], flip=flip, samples=samples)
    for i, item in enumerate(items):
        if item is None:
            builder.add(i, False, {}, None)
        else:
            builder.add(i, True, {"pairwise_choice": item[0]}, item[1])
    return builder.build(USAGE, None).model_dump(exclude_unset=True)


def test_pairwise_rates_and_position_consistency_with_flip() -> None:
    summary = pairwise_summary(
        [(CANDIDATE, True), (CANDIDATE, True), (TIE, False), (BASELINE, True), None], samples=3
    )
    m = summary["metrics"]
    assert m["candidate_win_rate"]["value"] == pytest.approx(0.5)
    assert m["baseline_win_rate"]["value"] == pytest.approx(0.25)
    assert m["tie_rate"]["value"] == pytest.approx(0.25)
    assert m["position_consistency"]["value"] == pytest.approx(0.75)
    assert m["position_consistency"]["n"] == 4
    assert summary["flip"] is True and summary["samples"] == 3
    assert summary["kind"] == "pairwise"


def test_an_unknown_consistency_is_left_out_of_its_metric() -> None:
    summary = pairwise_summary([(CANDIDATE, True), (CANDIDATE, None), (TIE, False)])
    consistency = summary["metrics"]["position_consistency"]
    assert consistency["value"] == pytest.approx(0.5) and consistency["n"] == 2
    assert summary["metrics"]["candidate_win_rate"]["n"] == 3


def test_no_position_consistency_without_flip() -> None:
    summary = pairwise_summary([(BASELINE, None), (BASELINE, None)], flip=False)
    assert "position_consistency" not in summary["metrics"]
    assert summary["metrics"]["baseline_win_rate"]["value"] == 1.0
    assert summary["flip"] is False


def test_a_panel_has_per_judge_metrics_and_inter_judge_agreement() -> None:
    judges = ["a", "b", "c"]
    builder = SummaryBuilder(PAIRWISE, judges, flip=True, samples=1)
    per_item = [  # (panel verdict, {judge: choice})
        (CANDIDATE, {"a": CANDIDATE, "b": CANDIDATE, "c": TIE}),
        (CANDIDATE, {"a": CANDIDATE, "b": CANDIDATE, "c": TIE}),
        (BASELINE, {"a": BASELINE, "b": CANDIDATE, "c": BASELINE}),
        (TIE, {"a": TIE, "b": TIE, "c": TIE}),
    ]
    for i, (verdict, choices) in enumerate(per_item):
        judge_scores = {j: {"pairwise_choice": c} for j, c in choices.items()}
        builder.add(i, True, {"pairwise_choice": verdict}, True, judge_scores)
    builder.add(len(per_item), False, {}, None)  # a failed item has no judge scores
    summary = builder.build(USAGE, None).model_dump(exclude_unset=True)

    assert summary["judge"] == "a+b+c" and summary["judges"] == judges
    assert summary["metrics"]["candidate_win_rate"]["value"] == pytest.approx(0.5)
    per = summary["per_judge"]
    assert set(per) == {"a", "b", "c", "inter_judge_agreement"}
    assert per["a"]["metrics"]["candidate_win_rate"]["value"] == pytest.approx(0.5)
    assert per["b"]["metrics"]["candidate_win_rate"]["value"] == pytest.approx(0.75)
    assert per["c"]["metrics"]["tie_rate"]["value"] == pytest.approx(0.75)
    assert per["c"]["metrics"]["tie_rate"]["n"] == 4
    assert "position_consistency" not in per["a"]["metrics"]  # the panel's, not a judge's
    pairs = {tuple(p["judges"]): (p["agreement"], p["n"]) for p in per["inter_judge_agreement"]}
    assert pairs == {
        ("a", "b"): (pytest.approx(0.75), 4),
        ("a", "c"): (pytest.approx(0.5), 4),
        ("b", "c"): (pytest.approx(0.25), 4),
    }


def test_pointwise_panel_agreement_is_on_the_whole_verdict() -> None:
    builder = SummaryBuilder(POINTWISE, ["a", "b"], flip=False, samples=1)
    for i, (a, b) in enumerate([((3, 1), (3, 1)), ((3, 1), (3, 0)), ((2, 0), (2, 0))]):
        judge_scores = {
            "a": {"interactivity": a[0], "accuracy": a[1]},
            "b": {"interactivity": b[0], "accuracy": b[1]},
        }
        mean = {"interactivity": a[0], "accuracy": (a[1] + b[1]) / 2}
        builder.add(i, True, mean, None, judge_scores)
    per = builder.build(USAGE, None).model_dump(exclude_unset=True)["per_judge"]
    assert per["inter_judge_agreement"] == [
        {"judges": ["a", "b"], "agreement": pytest.approx(2 / 3), "n": 3}
    ]
    assert per["a"]["metrics"]["accuracy"]["value"] == pytest.approx(2 / 3)
    assert per["b"]["metrics"]["accuracy"]["value"] == pytest.approx(1 / 3)
    assert per["b"]["metrics"]["itr"]["value"] == pytest.approx((100 + 100 - 100) / 3)


def test_intervals_do_not_depend_on_the_order_items_finish_in() -> None:
    """Items finish in any order (concurrency, Ray workers); the summary must not."""
    items = [(1 + i % 3, i % 2) for i in range(40)]

    def summary(order: list[int]) -> dict[str, Any]:
        builder = SummaryBuilder(POINTWISE, ["local"], flip=False, samples=1)
        for i in order:
            builder.add(i, True, {"interactivity": items[i][0], "accuracy": items[i][1]}, None)
        return builder.build(USAGE, None).model_dump(exclude_unset=True)["metrics"]

    in_order = summary(list(range(40)))
    shuffled = list(range(40))
    random.Random(7).shuffle(shuffled)
    assert summary(shuffled) == in_order


def test_tool_trajectory_micro_figures_are_ratios_over_all_calls_and_macro_are_means() -> None:
    # (matched, made, expected) per item, and its trajectory_match
    items = [(2, 2, 2, 1), (1, 3, 2, 0), (0, 0, 1, 0), (0, 0, 0, 1)]
    builder = SummaryBuilder(get_protocol("tool-trajectory"), ["deterministic"], flip=False,
                             samples=1)  # fmt: skip
    for i, (m, a, e, match) in enumerate(items):
        scores = {
            "trajectory_match": match,
            "tool_call_precision": m / a if a else None,
            "tool_call_recall": m / e if e else None,
            "tool_call_f1": 2 * m / (a + e) if a + e else None,
            "matched_calls": m,
            "actual_calls": a,
            "expected_calls": e,
        }
        builder.add(i, True, scores, None)
    metrics = builder.build(USAGE, None).model_dump()["metrics"]
    assert list(metrics) == [
        "trajectory_match",
        "tool_call_precision",
        "tool_call_recall",
        "tool_call_f1",
        "tool_call_precision_macro",
        "tool_call_recall_macro",
        "tool_call_f1_macro",
    ]
    expected = {
        "trajectory_match": (2 / 4, 4),
        "tool_call_precision": (3 / 5, 2),  # items that made calls
        "tool_call_recall": (3 / 5, 3),
        "tool_call_f1": (6 / 10, 3),
        "tool_call_precision_macro": ((1 + 1 / 3) / 2, 2),
        "tool_call_recall_macro": ((1 + 1 / 2 + 0) / 3, 3),
        "tool_call_f1_macro": ((1 + 2 / 5 + 0) / 3, 3),
    }
    for name, (value, n) in expected.items():
        assert metrics[name]["value"] == pytest.approx(value), name
        assert metrics[name]["n"] == n, name
        lo, hi = metrics[name]["ci95"]
        assert lo <= value <= hi, name

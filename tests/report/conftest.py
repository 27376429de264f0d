"""Hand-built run directories (results.jsonl + summary.json per docs/formats.md) and a browser.

`write_pairwise_run(run_dir)` and `write_pointwise_run(run_dir)` write realistic runs:
failures (a reply that does not parse, a provider fault), flipped calls, a panel of two
judges, and an item whose conversation and rationale carry markup that must never run.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.support.browser import PageWatch, chromium

OUTPUT_DIR = Path(__file__).resolve().parents[2] / "test-output"
INJECTION_SCRIPT = "<script>document.title='pwned'</script>"
INJECTION_IMG = "<img src=x onerror=\"document.title='pwned'\">"
INJECTED_ID = "xss-07"
PANEL = ("local", "openai/gpt-4o-mini")

TOPICS = [
    (
        "photosynthesis",
        "How do plants turn light into sugar?",
        "Plants capture light with chlorophyll and use it to turn CO2 and water into glucose.",
        "Light energy splits water; the Calvin cycle fixes CO2 into sugar.",
    ),
    (
        "tax",
        "Can I deduct my home office?",
        "If you use the room regularly and only for work, usually yes; keep records.",
        "Yes.",
    ),
    (
        "boiling",
        "At what temperature does water boil in Denver?",
        "Around 95°C, because the air pressure at 1,600 m is lower.",
        "Water boils at 100°C everywhere.",
    ),
    (
        "recursion",
        "Explain recursion to a ten-year-old.",
        "It's like Russian dolls: to open the big one you open a smaller one, until the tiniest.",
        "Recursion is when a function calls itself with a smaller input until a base case.",
    ),
    (
        "sourdough",
        "My sourdough is flat, what went wrong?",
        "Likely an under-active starter or over-proofing. How long did the bulk ferment take?",
        "Use more yeast.",
    ),
    (
        "mortgage",
        "Fixed or variable mortgage?",
        "It depends on how long you'll stay and your risk tolerance; can I ask your horizon?",
        "Fixed is always better.",
    ),
]


def _bootstrap(values: list[float], seed: int = 0) -> list[float] | None:
    """95% percentile bootstrap over items, as formats.md specifies (2,000 resamples)."""
    if len(values) < 2:
        return None
    data = np.asarray(values)
    means = data[np.random.default_rng(seed).integers(0, len(data), (2000, len(data)))].mean(1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return [round(float(lo), 6), round(float(hi), 6)]


def _metric(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"value": None, "ci95": None, "n": 0}
    return {
        "value": round(sum(values) / len(values), 6),
        "ci95": _bootstrap(values),
        "n": len(values),
    }


def _call(judge: str, sample: int, flipped: bool, **kw: Any) -> dict[str, Any]:
    call = {
        "judge": judge,
        "sample": sample,
        "flipped": flipped,
        "status": "ok",
        "scores": {},
        "label": None,
        "rationale": {},
        "raw": None,
        "error": None,
        "cached": False,
        "input_tokens": 640 + 13 * sample,
        "output_tokens": 88,
        "latency": 1.25,
    }
    call.update(kw)
    return call


def _write(run_dir: Path, items: list[dict[str, Any]], summary: dict[str, Any]) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    with (run_dir / "results.jsonl").open("w", encoding="utf-8") as out:
        for item in items:
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    (run_dir / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")
    return run_dir


def _usage(items: list[dict[str, Any]]) -> dict[str, int]:
    calls = [c for it in items for c in it["calls"]]
    return {
        "calls": len(calls),
        "cached_calls": sum(c["cached"] for c in calls),
        "input_tokens": sum(c["input_tokens"] or 0 for c in calls),
        "output_tokens": sum(c["output_tokens"] or 0 for c in calls),
    }


# ---------------------------------------------------------------- pairwise, a panel of two
LABEL = {  # candidate-side choice -> the label the judge writes, by presentation order
    (False, "CANDIDATE"): "B",
    (False, "BASELINE"): "A",
    (False, "TIE"): "SAME",
    (True, "CANDIDATE"): "A",
    (True, "BASELINE"): "B",
    (True, "TIE"): "SAME",
}
# Per item: each judge's choice in the normal order and in the flipped order.
PAIRWISE_PLAN = [
    {"local": ("CANDIDATE", "CANDIDATE"), "openai/gpt-4o-mini": ("CANDIDATE", "CANDIDATE")},
    {"local": ("CANDIDATE", "BASELINE"), "openai/gpt-4o-mini": ("CANDIDATE", "CANDIDATE")},
    {"local": ("BASELINE", "BASELINE"), "openai/gpt-4o-mini": ("BASELINE", "BASELINE")},
    {"local": ("TIE", "TIE"), "openai/gpt-4o-mini": ("CANDIDATE", "TIE")},
    {"local": ("CANDIDATE", "CANDIDATE"), "openai/gpt-4o-mini": ("BASELINE", "BASELINE")},
    {"local": ("CANDIDATE", "CANDIDATE"), "openai/gpt-4o-mini": ("CANDIDATE", "CANDIDATE")},
    {"local": ("BASELINE", "CANDIDATE"), "openai/gpt-4o-mini": ("BASELINE", "BASELINE")},
    {"local": ("CANDIDATE", "CANDIDATE"), "openai/gpt-4o-mini": ("CANDIDATE", "CANDIDATE")},
    {"local": ("CANDIDATE", "CANDIDATE"), "openai/gpt-4o-mini": ("CANDIDATE", "CANDIDATE")},
    {"local": ("TIE", "TIE"), "openai/gpt-4o-mini": ("TIE", "TIE")},
    {"local": ("CANDIDATE", None), "openai/gpt-4o-mini": ("CANDIDATE", "CANDIDATE")},  # unparsed
    {"local": ("BASELINE", "BASELINE"), "openai/gpt-4o-mini": ("CANDIDATE", "CANDIDATE")},
]


def _pairwise_fields(i: int) -> dict[str, Any]:
    topic, prompt, good, weak = TOPICS[i % len(TOPICS)]
    history: Any = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": f"Hi! I have a question about {topic}."},
        {"role": "assistant", "content": f"Of course, happy to help with {topic}. What is it?"},
    ]
    if i == 7:
        history = [
            {"role": "user", "content": f"Please repeat exactly: {INJECTION_SCRIPT}"},
            {"role": "assistant", "content": f"Here it is: {INJECTION_IMG}"},
        ]
    if i == 3:
        history = f"User: I have a question about {topic}.\nAssistant: Sure, go ahead."
    fields = {
        "history": history,
        "prompt": prompt,
        "baseline_model_response": weak,
        "response": good,
    }
    if i == 7:  # both responses called a tool, with markup in the arguments and the result
        for side, final in (("baseline_trajectory", weak), ("response_trajectory", good)):
            fields[side] = _trajectory(final)
    return fields


def _trajectory(final: str) -> list[dict[str, Any]]:
    """A response's messages: a search call whose arguments and result carry markup."""
    arguments = json.dumps({"q": INJECTION_SCRIPT})
    return [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "s1",
                    "type": "function",
                    "function": {"name": "search", "arguments": arguments},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "s1", "content": f"found {INJECTION_IMG}"},
        {"role": "assistant", "content": final},
    ]


def _pairwise_item(i: int, plan: dict[str, tuple[str, str | None]]) -> dict[str, Any]:
    item_id = INJECTED_ID if i == 7 else f"pw-{i + 1:02d}"
    calls, votes, consistent = [], [], None
    per_judge: dict[str, str] = {}
    for judge, (normal, flipped) in plan.items():
        for is_flipped, choice in ((False, normal), (True, flipped)):
            if choice is None:
                raw = "Response B is clearly better because it asks a clarifying"
                calls.append(
                    _call(
                        judge,
                        0,
                        is_flipped,
                        status="failed",
                        raw=raw,
                        error="no valid verdict: no JSON object found in the reply",
                    )
                )
                continue
            label = LABEL[(is_flipped, choice)]
            why = f"Response {label} answers the question directly and checks what the user needs."
            if i == 7:
                why = f"Both quote {INJECTION_SCRIPT} verbatim; {label} explains it."
            raw = json.dumps({"explanation": why, "pairwise_choice": label})
            calls.append(
                _call(
                    judge,
                    0,
                    is_flipped,
                    scores={"pairwise_choice": choice},
                    label=label,
                    rationale={"pairwise_choice": why},
                    raw=raw,
                    cached=judge == "local" and i % 4 == 0,
                )
            )
        if normal is not None and flipped is not None:
            same = normal == flipped
            consistent = same if consistent is None else consistent and same
            per_judge[judge] = normal if same else "TIE"
            votes.append(per_judge[judge])
    failed = any(c["status"] == "failed" for c in calls)
    ranked = Counter(votes).most_common()
    top = ranked[0][0] if len(ranked) == 1 or ranked[0][1] > ranked[1][1] else "TIE"
    first_ok = next((c for c in calls if c["status"] == "ok"), None)
    return {
        "format": 1,
        "id": item_id,
        "index": i,
        "status": "failed" if failed else "ok",
        "scores": {} if failed else {"pairwise_choice": top},
        "rationale": first_ok["rationale"] if first_ok and not failed else {},
        "raw": calls[0]["raw"],
        "error": next(c["error"] for c in calls if c["error"]) if failed else None,
        "usage": {
            "input_tokens": sum(c["input_tokens"] for c in calls),
            "output_tokens": sum(c["output_tokens"] for c in calls),
        },
        "consistent": None if failed else consistent,
        "agreement": None if failed else sum(v == top for v in votes) / len(votes),
        "calls": calls,
        "fields": _pairwise_fields(i),
        "_per_judge": per_judge,
    }


def write_pairwise_run(run_dir: Path) -> Path:
    """A pairwise-chat-quality run judged by a panel of two judges, both orders."""
    items = [_pairwise_item(i, plan) for i, plan in enumerate(PAIRWISE_PLAN)]
    order = [2, 0, 5, 1, 3, 4, 11, 6, 7, 9, 8, 10]  # completion order, not input order
    items = [items[k] for k in order]
    ok = [it for it in items if it["status"] == "ok"]
    choices = [it["scores"]["pairwise_choice"] for it in ok]
    metrics = {
        name: _metric([1.0 if c == side else 0.0 for c in choices])
        for name, side in (
            ("candidate_win_rate", "CANDIDATE"),
            ("baseline_win_rate", "BASELINE"),
            ("tie_rate", "TIE"),
        )
    }
    metrics["position_consistency"] = _metric([1.0 if it["consistent"] else 0.0 for it in ok])
    per_judge: dict[str, Any] = {}
    for judge in PANEL:
        votes = [it["_per_judge"][judge] for it in ok]
        per_judge[judge] = {
            "metrics": {
                name: _metric([1.0 if v == side else 0.0 for v in votes])
                for name, side in (
                    ("candidate_win_rate", "CANDIDATE"),
                    ("baseline_win_rate", "BASELINE"),
                    ("tie_rate", "TIE"),
                )
            }
        }
    same = [it["_per_judge"][PANEL[0]] == it["_per_judge"][PANEL[1]] for it in ok]
    per_judge["inter_judge_agreement"] = [
        {"judges": list(PANEL), "agreement": sum(same) / len(same), "n": len(same)}
    ]
    for it in items:
        del it["_per_judge"]
    summary = {
        "format": 1,
        "protocol": "pairwise-chat-quality",
        "kind": "pairwise",
        "judge": "+".join(PANEL),
        "judges": list(PANEL),
        "n_items": len(items),
        "n_ok": len(ok),
        "n_failed": len(items) - len(ok),
        "metrics": metrics,
        "samples": 1,
        "flip": True,
        "usage": _usage(items),
        "cost_usd": 0.0123,
        "per_judge": per_judge,
        "created": "2026-11-21T06:00:00+00:00",
        "chatjudge_version": "0.1.0",
    }
    return _write(run_dir, items, summary)


# ---------------------------------------------------------------- pointwise, two samples
POINTWISE_PLAN = [  # per item: (interactivity, accuracy) per sample; None = the call failed
    [(3, 1), (3, 1)],
    [(2, 1), (3, 1)],
    [(1, 0), (1, 0)],
    [(3, 1), (3, 1)],
    [(2, 0), (2, 1)],
    [(3, 1), None],
    [(2, 1), (2, 1)],
    [(1, 1), (1, 1)],
    [(3, 0), (3, 0)],
    [(2, 1), (2, 1)],
]
PROVIDER_FAULT = 5  # item whose second call never came back


def _pointwise_fields(i: int) -> dict[str, Any]:
    topic, prompt, good, _ = TOPICS[i % len(TOPICS)]
    chat: Any = [
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": "Before I answer: is this for a class or for yourself?"},
        {"role": "user", "content": "For myself, keep it short please."},
        {"role": "assistant", "content": good},
    ]
    if i == 4:
        chat[0]["content"] = f"{prompt} {INJECTION_SCRIPT} {INJECTION_IMG}"
    history: Any = (
        []
        if i % 3
        else [
            {"role": "user", "content": f"Earlier we talked about {topic}."},
            {"role": "assistant", "content": "Yes, I remember. Ask away."},
        ]
    )
    if i == 6:
        history = "User: hello\nAssistant: hi, how can I help?"
    return {"chat_history": history, "chat": chat, "question": prompt, "answer": good}


def _pointwise_item(i: int, samples: list[tuple[int, int] | None]) -> dict[str, Any]:
    calls = []
    for s, verdict in enumerate(samples):
        if verdict is None:
            calls.append(
                _call(
                    "local",
                    s,
                    False,
                    status="failed",
                    raw=None,
                    error="ServerError: 503 Service Unavailable after 6 retries",
                    input_tokens=None,
                    output_tokens=None,
                    latency=None,
                )
            )
            continue
        inter, acc = verdict
        rationale = {
            "interactivity": f"The assistant asked one clarifying question (sample {s + 1}).",
            "accuracy": "Matches the ground truth." if acc else "Contradicts the ground truth.",
        }
        if i == 4:
            rationale["accuracy"] = f"The user wrote {INJECTION_IMG}; the answer is still wrong."
        raw = json.dumps(
            {
                "interactivity": {"thought": rationale["interactivity"], "score": inter},
                "accuracy": {"thought": rationale["accuracy"], "score": acc},
            }
        )
        calls.append(
            _call(
                "local",
                s,
                False,
                scores={"interactivity": inter, "accuracy": acc},
                rationale=rationale,
                raw=raw,
            )
        )
    ok = [c for c in calls if c["status"] == "ok"]
    failed = len(ok) < len(calls)
    scores = {}
    if not failed:
        for name in ("interactivity", "accuracy"):
            mean = sum(c["scores"][name] for c in ok) / len(ok)
            scores[name] = int(mean) if mean.is_integer() else round(mean, 6)
    tuples = Counter((c["scores"]["interactivity"], c["scores"]["accuracy"]) for c in ok)
    return {
        "format": 1,
        "id": f"ia-{i + 1:02d}",
        "index": i,
        "status": "failed" if failed else "ok",
        "scores": scores,
        "rationale": ok[0]["rationale"] if ok and not failed else {},
        "raw": calls[0]["raw"],
        "error": next(c["error"] for c in calls if c["error"]) if failed else None,
        "usage": {
            "input_tokens": sum(c["input_tokens"] or 0 for c in calls),
            "output_tokens": sum(c["output_tokens"] or 0 for c in calls),
        },
        "consistent": None,
        "agreement": None if failed else tuples.most_common(1)[0][1] / len(calls),
        "calls": calls,
        "fields": _pointwise_fields(i),
    }


def write_pointwise_run(run_dir: Path, n_items: int | None = None) -> Path:
    """An interactivity-accuracy run with two samples per item; `n_items` repeats the plan."""
    n = n_items or len(POINTWISE_PLAN)
    items = [_pointwise_item(i, POINTWISE_PLAN[i % len(POINTWISE_PLAN)]) for i in range(n)]
    ok = [it for it in items if it["status"] == "ok"]
    inter = [float(it["scores"]["interactivity"]) for it in ok]
    summary = {
        "format": 1,
        "protocol": "interactivity-accuracy",
        "kind": "pointwise",
        "judge": "local",
        "judges": ["local"],
        "n_items": len(items),
        "n_ok": len(ok),
        "n_failed": len(items) - len(ok),
        "metrics": {
            "interactivity": _metric(inter),
            "itr": _metric([(v - 2.5) * 200 for v in inter]),
            "accuracy": _metric([float(it["scores"]["accuracy"]) for it in ok]),
        },
        "samples": 2,
        "flip": False,
        "usage": _usage(items),
        "cost_usd": None,
        "per_judge": {},
        "created": "2026-11-21T06:10:00+00:00",
        "chatjudge_version": "0.1.0",
    }
    return _write(run_dir, items, summary)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def check_report(watch: PageWatch, run_dir: Path) -> Page:
    """Write and open `run_dir`'s report and check it against the run's own files.

    Counts and metrics equal summary.json, the table holds every item, the first item
    opens with all its judge calls, and the page made no request and raised no error.
    Works on any run directory, hand-built or from a real `chatjudge run`.
    """
    from chatjudge.report import write_report

    summary = json.loads((run_dir / "summary.json").read_text("utf-8"))
    items = read_jsonl(run_dir / "results.jsonl")
    path = write_report(run_dir)
    page = watch.open(path)
    for key in ("n_items", "n_ok", "n_failed"):
        assert page.locator(f"#{key}").get_attribute("data-value") == str(summary[key])
    for name, m in summary["metrics"].items():
        card = page.locator(f'.metric[data-metric="{name}"]')
        value = card.get_attribute("data-value")
        assert (float(value) if value else None) == m["value"], name
        assert card.get_attribute("data-n") == str(m["n"])
    count = page.locator("#items-count")
    assert count.get_attribute("data-count") == str(len(items)) == str(summary["n_items"])
    first = page.locator("#item-rows tr").first
    item = next(it for it in items if it["id"] == first.get_attribute("data-id"))
    first.click()
    detail = page.locator("#detail")
    expect(detail).to_have_attribute("data-item-id", str(item["id"]))
    assert detail.locator(".call").count() == len(item["calls"])
    assert watch.requests == [path.resolve().as_uri()]
    assert watch.errors == [] and watch.dialogs == []
    return page


# ---------------------------------------------------------------- fixtures
@pytest.fixture(scope="package")
def browser() -> Iterator[BrowserContext]:
    with chromium() as context:
        yield context


@pytest.fixture
def watch(browser: BrowserContext) -> Iterator[PageWatch]:
    """A fresh page that records every request and every script error."""
    page: Page = browser.new_page()
    with PageWatch(page) as w:
        yield w


@pytest.fixture
def pairwise_run(tmp_path: Path) -> Path:
    return write_pairwise_run(tmp_path / "pairwise")


@pytest.fixture
def pointwise_run(tmp_path: Path) -> Path:
    return write_pointwise_run(tmp_path / "pointwise")


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT_DIR.mkdir(exist_ok=True)
    return OUTPUT_DIR

"""What `report.html` weighs and how fast it opens at 100,000 items, in headless Chromium.

Two runs of N items each (issue 41, item 3):
- tool-trajectory: `bench/tool_trajectory.py`'s rows, through `chatjudge run -p
  tool-trajectory` as its own process (deterministic: no model), which writes the page;
- pairwise: `bench/run_engine.py`'s pairwise rows (a history, a prompt, two replies),
  each with two judge calls (both orders) and their rationales, about 2 KB an item in
  `results.jsonl`, written through the results format without a judge; the page is then
  written by `chatjudge.report.write_report`, timed.

Then one item whose tool call carries a 5 MB argument: the size of its `results.jsonl`
and of its page.

Each page is opened from disk in a fresh tab of one headless Chromium (/usr/bin/chromium),
`--repeat` times (the median is shown):
- first paint: the first contentful paint, and when the table's first row shows its
  conversation (the page usable), from the navigation's start;
- opening an item: from the click on a row to the item's detail drawn, with its chunk
  already inflated for the table (warm), and stepping onto the next page's first item,
  whose chunk nothing has inflated yet (cold);
- the first search: from typing a far item's id to the table showing it alone (it
  inflates every chunk once).
and each figure's ratio to its target: 30 MB, 3 s, 200 ms (the search has none).

    PYTHONPATH=src:. python bench/report_size.py [--n 100000] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_engine import write_pairwise_dataset  # noqa: E402
from tool_trajectory import write_rows  # noqa: E402

from chatjudge import jsoncodec  # noqa: E402
from chatjudge.formats.io import write_json  # noqa: E402
from chatjudge.formats.results import result_row  # noqa: E402
from chatjudge.formats.summary import Summary  # noqa: E402
from chatjudge.report import write_report  # noqa: E402
from tests.support.browser import chromium  # noqa: E402

TARGET_MB = 30.0
TARGET_PAINT_S = 3.0
TARGET_OPEN_MS = 200.0
CHOICES = ("CANDIDATE", "BASELINE", "TIE")
LABELS = {(False, "CANDIDATE"): "B", (False, "BASELINE"): "A", (True, "CANDIDATE"): "A",
          (True, "BASELINE"): "B", (False, "TIE"): "SAME", (True, "TIE"): "SAME"}  # fmt: skip


def _scored(data: Path, out: Path) -> Path:
    """`chatjudge run -p tool-trajectory` on `data` into `out`."""
    subprocess.run(
        [sys.executable, "-m", "chatjudge.cli", "run", str(data), "-p", "tool-trajectory",
         "--out", str(out), "--overwrite", "--quiet"],
        check=True, stdout=subprocess.DEVNULL,
    )  # fmt: skip
    return out


def tool_trajectory_run(root: Path, n: int) -> Path:
    """`chatjudge run -p tool-trajectory` on N of the tool bench's rows."""
    data, out = root / "rows.jsonl", root / "tool-trajectory"
    write_rows(data, n)
    return _scored(data, out)


def _call(rng: random.Random, flipped: bool, choice: str) -> dict[str, Any]:
    label = LABELS[(flipped, choice)]
    why = (f"Response {label} answers the question that was asked, keeps the units right "
           f"and checks what the user needs first ({rng.randint(1, 10**6)}).")  # fmt: skip
    return {"judge": "local", "sample": 0, "flipped": flipped, "status": "ok",
            "scores": {"pairwise_choice": choice}, "label": label,
            "rationale": {"pairwise_choice": why},
            "raw": json.dumps({"explanation": why, "pairwise_choice": label}),
            "error": None, "cached": False, "input_tokens": 700 + rng.randint(0, 300),
            "output_tokens": 90, "latency": round(rng.uniform(0.4, 2.0), 3)}  # fmt: skip


def pairwise_run(root: Path, n: int) -> Path:
    """N judged pairwise items written through the results format, and their summary."""
    data, out = root / "pairwise.jsonl", root / "pairwise"
    out.mkdir()
    write_pairwise_dataset(data, n, seed=1)
    rng = random.Random(0)
    wins = []
    with data.open("rb") as rows, (out / "results.jsonl").open("wb") as results:
        for i, line in enumerate(rows):
            fields = jsoncodec.loads(line)
            normal, flipped = rng.choice(CHOICES), rng.choice(CHOICES)
            choice = normal if normal == flipped else "TIE"
            wins.append(choice)
            calls = [_call(rng, False, normal), _call(rng, True, flipped)]
            verdict = {"status": "ok", "scores": {"pairwise_choice": choice}, "error": None,
                       "consistent": normal == flipped, "agreement": 1.0}  # fmt: skip
            usage = {"input_tokens": sum(c["input_tokens"] for c in calls),
                     "output_tokens": sum(c["output_tokens"] for c in calls)}  # fmt: skip
            record = result_row(
                id=fields["id"], index=i, verdict=verdict, rationale=calls[0]["rationale"],
                raw=calls[0]["raw"], usage=usage, calls=calls, fields=fields, simulation=None,
            )  # fmt: skip
            results.write(jsoncodec.dumps(record) + b"\n")
    metrics = {
        f"{name}_rate" if name == "tie" else f"{name}_win_rate": {
            "value": sum(w == side for w in wins) / n, "ci95": None, "n": n}
        for name, side in (("candidate", "CANDIDATE"), ("baseline", "BASELINE"), ("tie", "TIE"))
    }  # fmt: skip
    summary = Summary(
        protocol="pairwise-chat-quality", kind="pairwise", judge="local", judges=["local"],
        n_items=n, n_ok=n, n_failed=0, metrics=metrics, samples=1, flip=True,
        usage={"calls": 2 * n}, cost_usd=None, per_judge={},
        created="2026-11-28T00:00:00+00:00", chatjudge_version="bench",
    )  # fmt: skip
    write_json(out / "summary.json", summary)
    started = time.perf_counter()
    write_report(out)
    print(f"pairwise: report written in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return out


def big_argument_run(root: Path) -> Path:
    """One tool-trajectory row whose call carries a 5 MB argument (random text)."""
    data, out = root / "big.jsonl", root / "big"
    rng = random.Random(0)
    text = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz ") for _ in range(5_000_000))
    function = {"name": "write_file", "arguments": json.dumps({"text": text})}
    call = {"id": "c0", "type": "function", "function": function}
    row = {"id": "big", "expected_tool_calls": [{"name": "write_file", "arguments": {"text": "x"}}],
           "response_trajectory": [{"role": "assistant", "content": "", "tool_calls": [call]},
                                   {"role": "tool", "tool_call_id": "c0", "content": "written"},
                                   {"role": "assistant", "content": "Done."}]}  # fmt: skip
    data.write_text(json.dumps(row) + "\n")
    return _scored(data, out)


# The page's figures, from the navigation's start (performance.now()'s origin).
READY = """() => {
  const td = document.querySelector('#item-rows tr td.preview');
  return td && td.textContent ? performance.now() : false;
}"""
FCP = "performance.getEntriesByName('first-contentful-paint').map(e => e.startTime)[0] || null"
# The id of the item at input position `n` (the table's order when nothing is sorted).
AT_POSITION = """n => {
  const index = JSON.parse(document.getElementById('items-index').textContent);
  return index.id[index.index.indexOf(n)];
}"""
# Click `selector` (a row, or the detail's Next) and wait for the detail to show item `id`.
OPEN = """([selector, id]) => new Promise(done => {
  const detail = document.getElementById('detail');
  const started = performance.now();
  const seen = () => detail.dataset.itemId === id && !detail.hidden;
  new MutationObserver((_, obs) => {
    if (seen()) { obs.disconnect(); done(performance.now() - started); }
  }).observe(detail, {attributes: true, childList: true, subtree: true});
  document.querySelector(selector).click();
})"""


def measure_page(context: Any, page_path: Path, far_id: str) -> dict[str, float]:
    """One fresh tab: first paint, the table ready, opening items, the first search."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(page_path.resolve().as_uri(), wait_until="commit", timeout=120_000)
        ready = page.wait_for_function(READY, polling="raf", timeout=120_000).json_value()
        fcp = page.evaluate(FCP)
        first = page.locator("#item-rows tr").first.get_attribute("data-id")
        warm = page.evaluate(OPEN, ["#item-rows tr", first])
        # Page 2's last row, then Next: the first item of page 3, whose chunk is cold.
        page.evaluate("document.getElementById('next-page').click()")  # the drawer covers it
        page.evaluate(OPEN, ["#item-rows tr:last-child", page.evaluate(AT_POSITION, 99)])
        cold = page.evaluate(OPEN, ["#detail-next", page.evaluate(AT_POSITION, 100)])
        started = time.perf_counter()
        page.fill("#search", far_id)
        page.wait_for_function(
            "document.getElementById('items-count').dataset.count === '1'", timeout=600_000
        )
        search = time.perf_counter() - started - 0.15  # less the box's 150 ms debounce
        if errors:
            raise SystemExit(f"{page_path}: script errors {errors}")
        return {"fcp_s": fcp / 1000 if fcp else float("nan"), "ready_s": ready / 1000,
                "open_warm_ms": warm, "open_cold_ms": cold, "first_search_s": search}  # fmt: skip
    finally:
        page.close()


def median_figures(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: round(statistics.median(r[k] for r in runs), 3) for k in runs[0]}


def verdict(value: float, target: float) -> str:
    return f"{value / target:.2f} of the target ({'ok' if value <= target else 'MISSED'})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=100_000, help="items per run")
    parser.add_argument("--repeat", type=int, default=3, help="page opens (the median is shown)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    figures: dict[str, Any] = {"n": args.n}
    with tempfile.TemporaryDirectory() as tmp, chromium() as context:
        root = Path(tmp)
        for kind, make in (("tool-trajectory", tool_trajectory_run), ("pairwise", pairwise_run)):
            run = make(root, args.n)
            page = run / "report.html"
            far = jsoncodec.loads((run / "results.jsonl").read_bytes().rsplit(b"\n", 2)[-2])[
                "id"
            ]  # the last item: its chunk is the last one inflated by a search
            runs = [measure_page(context, page, far) for _ in range(args.repeat)]
            figures[kind] = {
                "results_mb": round((run / "results.jsonl").stat().st_size / 1e6, 1),
                "report_mb": round(page.stat().st_size / 1e6, 1),
                **median_figures(runs),
            }
        big = big_argument_run(root)
        figures["big_argument"] = {
            "results_mb": round((big / "results.jsonl").stat().st_size / 1e6, 1),
            "report_mb": round((big / "report.html").stat().st_size / 1e6, 2),
        }
    if args.json:
        print(json.dumps(figures))
        return
    for kind in ("tool-trajectory", "pairwise"):
        f = figures[kind]
        print(f"{kind}, {args.n:,} items: results.jsonl {f['results_mb']} MB")
        print(f"  report.html {f['report_mb']} MB: {verdict(f['report_mb'], TARGET_MB)}")
        print(f"  first contentful paint {f['fcp_s']:.2f} s; table ready {f['ready_s']:.2f} s: "
              f"{verdict(f['ready_s'], TARGET_PAINT_S)}")  # fmt: skip
        print(f"  open an item: warm {f['open_warm_ms']:.0f} ms, "
              f"{verdict(f['open_warm_ms'], TARGET_OPEN_MS)}; cold {f['open_cold_ms']:.0f} ms, "
              f"{verdict(f['open_cold_ms'], TARGET_OPEN_MS)}")  # fmt: skip
        print(f"  first search (inflates every chunk): {f['first_search_s']:.2f} s")
    b = figures["big_argument"]
    print(f"one item with a 5 MB tool argument: results.jsonl {b['results_mb']} MB, "
          f"report.html {b['report_mb']} MB")  # fmt: skip
    print(f"(machine load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()

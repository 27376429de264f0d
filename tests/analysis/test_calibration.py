"""Corrected figures end to end: style control in summaries, tables, reports and compare;
human calibration (`--human`) in agree, report and compare; bad human files."""

from __future__ import annotations

import codecs
import json
import re
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console
from typer.testing import CliRunner

import chatjudge
from chatjudge.analysis.calibration import calibrate_run
from chatjudge.cli import app
from chatjudge.report import summary_table
from chatjudge.rundir import RunDir
from chatjudge.stats import ppi_mean, style_control
from chatjudge.stats.intervals import SHARE
from chatjudge.stats.style import style_counts
from tests.support.cli import run_cli

runner = CliRunner()
N = 40


def pairs(n: int = N) -> list[dict]:
    """Pairwise items on one line each; the candidate is long on two items in three and
    carries a bold span on odd items."""
    rows = []
    for i in range(n):
        candidate = ("a long and detailed answer " * (4 if i % 3 else 0)) + f"fine {i}"
        rows.append(
            {
                "id": f"q{i}",
                "prompt": f"question {i}",
                "baseline_model_response": f"a plain answer {i}" + (" **key**" * (i % 4 == 0)),
                "response": candidate + (" **note**" if i % 2 else ""),
            }
        )
    return rows


def _shown(prompt: str) -> tuple[str, str]:
    a = re.search(r"### Response A\n(.*?)\n\n### Response B", prompt, re.S).group(1)
    b = re.search(r"### Response B\n(.*?)\n", prompt, re.S).group(1)
    return a, b


def length_judge(prompt: str) -> str:
    """Prefers the clearly longer response; similar lengths: the verdict rotates with the
    item number, so both orders agree."""
    a, b = _shown(prompt)
    if len(b) > len(a) + 40:
        choice = "B"
    elif len(a) > len(b) + 40:
        choice = "A"
    else:
        number = int(re.search(r"question (\d+)", prompt).group(1))
        choice = "SAME" if number % 3 == 0 else ("A" if "plain" in a else "B")
    return json.dumps({"explanation": "length", "pairwise_choice": choice})


@pytest.fixture(scope="module")
def pairwise_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs") / "pair"
    chatjudge.evaluate(pairs(), "pairwise-chat-quality", length_judge, out, report=True)
    return out


def outcomes(run: Path) -> dict[str, float]:
    lines = (run / "results.jsonl").read_text().splitlines()
    value = {"CANDIDATE": 1.0, "TIE": 0.5, "BASELINE": 0.0}
    return {
        r["id"]: value[r["scores"]["pairwise_choice"]]
        for r in map(json.loads, lines)
        if r["status"] == "ok"
    }


def test_pairwise_summary_has_the_controlled_rates(pairwise_run: Path) -> None:
    summary = json.loads((pairwise_run / "summary.json").read_text())
    rows = {r["id"]: r for r in pairs()}
    y = outcomes(pairwise_run)
    ids = [f"q{i}" for i in range(N)]
    candidate = np.array([style_counts(rows[i]["response"]) for i in ids])
    baseline = np.array([style_counts(rows[i]["baseline_model_response"]) for i in ids])
    expected = style_control(np.array([y[i] for i in ids]), candidate, baseline)
    metrics = summary["metrics"]
    assert metrics["length_controlled_preference"] == expected.length.to_dict()
    assert metrics["style_controlled_preference"] == expected.style.to_dict()
    control = summary["style_control"]
    assert control["style_coefficients"] == expected.style.coefficients
    assert control["length_coefficients"]["length"] > 0  # the judge likes length
    assert control["raw_preference"]["value"] == pytest.approx(np.mean(list(y.values())))
    assert control["sentence"].startswith("Length explains")
    assert control["dropped"] == ["headers", "lists"]


def test_terminal_and_report_name_the_corrected_rates(pairwise_run: Path) -> None:
    summary = json.loads((pairwise_run / "summary.json").read_text())
    console = Console(record=True, width=200, color_system=None)
    console.print(summary_table(RunDir(pairwise_run).summary))
    text = console.export_text()
    value = summary["metrics"]["length_controlled_preference"]["value"]
    line = next(x for x in text.splitlines() if "Preference, length-controlled (corrected)" in x)
    assert f"{value * 100:.1f}%" in line
    assert "Preference, style-controlled (corrected)" in text
    assert "Preference, raw (ties count half)" in text
    assert summary["style_control"]["sentence"][:60] in text.replace("\n", " ")

    page = (pairwise_run / "report.html").read_text()
    assert 'data-metric="length_controlled_preference"' in page
    assert "Preference, length-controlled (corrected)" in page
    assert 'data-key="style-control"' in page or "style-control" in page
    assert "Preference corrected for length and style" in page


def test_compare_with_style_control(pairwise_run: Path, tmp_path: Path) -> None:
    done = runner.invoke(
        app, ["compare", f"cand={pairwise_run}", "--control", "style", "--out", str(tmp_path)]
    )
    assert done.exit_code == 0, done.output
    result = json.loads((tmp_path / "compare.json").read_text())
    assert result["control"] == "style"
    raw = {r["model"]: r["rating"] for r in result["ratings"]}
    controlled = {r["model"]: r for r in result["controlled_ratings"]}
    assert controlled["baseline"]["rating"] == pytest.approx(1000.0)  # anchored as before
    assert set(result["style_coefficients"]) == {"length", "bold"}
    assert result["style_coefficients"]["length"] > 0
    # Length explains part of the candidate's lead: the controlled gap differs from the raw.
    assert controlled["cand"]["rating"] != pytest.approx(raw["cand"])
    assert "style-controlled ratings (corrected" in " ".join(done.output.split())

    length = runner.invoke(
        app, ["compare", f"cand={pairwise_run}", "--control", "length", "--out", str(tmp_path)]
    )
    assert length.exit_code == 0, length.output
    assert set(json.loads((tmp_path / "compare.json").read_text())["style_coefficients"]) == {
        "length"
    }
    bad = runner.invoke(app, ["compare", f"cand={pairwise_run}", "--control", "colour"])
    assert bad.exit_code == 2 and "length or style" in bad.output


def human_file(path: Path, labels: dict[str, str | list[str]]) -> Path:
    lines = []
    for item, label in labels.items():
        for one in label if isinstance(label, list) else [label]:
            lines.append(json.dumps({"id": item, "label": one}))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_agree_writes_calibrated_preference(pairwise_run: Path, tmp_path: Path) -> None:
    labels: dict[str, str | list[str]] = {
        f"q{i}": ["A", "B", "SAME", "B"][i % 4] for i in range(0, N, 2)
    }
    labels["q2"] = ["A", "B"]  # two raters: the row's human value is their mean, 0.5
    human = human_file(tmp_path / "human.jsonl", labels)
    done = runner.invoke(app, ["agree", str(pairwise_run), "--human", str(human)])
    assert done.exit_code == 0, done.output
    written = json.loads((pairwise_run / "agreement.json").read_text())
    calibrated = written["calibrated"]["preference"]

    y = outcomes(pairwise_run)
    order = [f"q{i}" for i in range(N)]
    value = {"A": 0.0, "B": 1.0, "SAME": 0.5}
    ids = [i for i in order if i in labels]
    human_values = [
        np.mean([value[x] for x in (labels[i] if isinstance(labels[i], list) else [labels[i]])])
        for i in ids
    ]
    expected = ppi_mean([y[i] for i in order], [y[i] for i in ids], human_values, known=SHARE)
    assert calibrated == expected.to_dict()
    assert set(calibrated) >= {"value", "ci95", "n_labels", "effective_labels"}
    assert calibrated["n_labels"] == N // 2
    assert set(written["calibrated"]) == {
        "preference",
        "candidate_win_rate",
        "baseline_win_rate",
        "tie_rate",
    }
    assert "human-calibrated" in done.output
    assert written["calibration"]["n_labelled_not_judged"] == 0


def test_report_and_compare_take_human_labels(pairwise_run: Path, tmp_path: Path) -> None:
    labels = {f"q{i}": "B" if i % 3 else "A" for i in range(0, N, 3)}
    human = human_file(tmp_path / "h.jsonl", labels)
    done = runner.invoke(app, ["report", str(pairwise_run), "--human", str(human)])
    assert done.exit_code == 0, done.output
    expected = calibrate_run(pairwise_run, human)["calibrated"]["preference"]
    assert f"{expected['value'] * 100:.1f}%" in done.output
    page = (pairwise_run / "report.html").read_text()
    assert 'data-key="preference:calibrated"' in page
    assert "human-calibrated (corrected)" in page

    done = runner.invoke(
        app,
        ["compare", f"cand={pairwise_run}", "--human", f"cand={human}", "--out", str(tmp_path)],
    )
    assert done.exit_code == 0, done.output
    result = json.loads((tmp_path / "compare.json").read_text())
    assert result["calibrated"]["cand"]["preference"]["value"] == pytest.approx(expected["value"])
    wrong = runner.invoke(app, ["compare", f"cand={pairwise_run}", "--human", f"other={human}"])
    assert wrong.exit_code == 2 and "no run named 'other'" in wrong.output
    # Plain report (no --human) rewrites the page without the calibrated section.
    assert runner.invoke(app, ["report", str(pairwise_run)]).exit_code == 0
    assert "preference:calibrated" not in (pairwise_run / "report.html").read_text()


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('{"id": "q1", "label": "B"}\n{"id": "zzz", "label": "A"}', "row 2, field 'id': unknown"),
        ('{"id": "q1", "label": "B"}\n{"id": "q2", "label": ""}', "row 2, field 'label': missing"),
        ('{"id": "q1", "label": "B"}\n{"id": "q3"}', "row 2, field 'label': missing label"),
        ('{"id": "q1", "label": "maybe"}', "row 1, field 'label': bad value 'maybe'"),
        ('{"id": "q1", "label": 3}', "row 1, field 'label': bad value 3"),
        ('{"label": "A"}', "no 'id' column"),
    ],
)
def test_bad_human_files_exit_2_with_row_and_field(
    pairwise_run: Path, tmp_path: Path, lines: str, message: str
) -> None:
    human = tmp_path / "bad.jsonl"
    human.write_text(lines + "\n")
    for command in (["agree"], ["report"]):
        done = runner.invoke(app, [*command, str(pairwise_run), "--human", str(human)])
        assert done.exit_code == 2, done.output
        assert message in " ".join(done.output.split()), done.output


GOOD_LINE = b'{"id": "q1", "label": "B"}\n'


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("png.jsonl", b"\x89PNG\r\n\x1a\n\x00\x00", "png.jsonl: row 1: not valid UTF-8: byte 0x89"),
        (
            "png.csv",
            b"id,label\n\x89PNG\r\n",
            "png.csv: row 2: line 2 of the file is not valid UTF-8: byte 0x89",
        ),
        ("cut.jsonl", GOOD_LINE + b'{"id": "q2", "lab', "cut.jsonl: row 2: unparseable JSON line"),
        (
            "deep.jsonl",
            GOOD_LINE + b"[" * 10_000 + b"]" * 10_000 + b"\n",
            "deep.jsonl: row 2: unparseable JSON line: nested more than 200 levels deep",
        ),
    ],
    ids=["binary", "binary-csv", "cut-line", "deep"],
)
def test_a_human_file_that_cannot_be_read_names_the_file_and_row(
    pairwise_run: Path, tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    human = tmp_path / name
    human.write_bytes(content)
    for command in ("agree", "gate"):
        done = run_cli(command, str(pairwise_run), "--human", str(human))
        assert done.returncode == 2, done.stderr
        assert f"{tmp_path / message}" in " ".join(done.stderr.split())
        assert "Traceback" not in done.stderr


def test_a_human_file_with_a_byte_order_mark_loads(pairwise_run: Path, tmp_path: Path) -> None:
    labels = {f"q{i}": "B" if i % 3 else "A" for i in range(0, N, 2)}
    plain = human_file(tmp_path / "h.jsonl", labels)
    expected = calibrate_run(pairwise_run, plain)
    (tmp_path / "h.csv").write_text("id,label\n" + "".join(f"{k},{v}\n" for k, v in labels.items()))
    for path in (plain, tmp_path / "h.csv"):
        marked = tmp_path / f"bom{path.suffix}"
        marked.write_bytes(codecs.BOM_UTF8 + path.read_bytes())
        assert calibrate_run(pairwise_run, marked) == expected, path.suffix


def pointwise_rows(n: int = 30) -> list[dict]:
    return [
        {
            "id": f"d{i}",
            "chat": f"**user**: question {i}\n**assistant**: answer {i}" + " more" * (i % 5),
            "question": f"q{i}",
            "answer": str(i % 3 + 1),
        }
        for i in range(n)
    ]


def point_judge(prompt: str) -> str:
    if "question 7\n" in prompt:
        return "not json"  # item d7 fails: labelled but not judged
    truth = int(re.search(r"Ground Truth Answer: (\d)", prompt).group(1))
    return json.dumps(
        {
            "interactivity": {"thought": "t", "score": truth},
            "accuracy": {"thought": "t", "score": int(truth > 1)},
        }
    )


def test_pointwise_columns_named_like_scores_and_several_raters(tmp_path: Path) -> None:
    run = tmp_path / "point"
    chatjudge.evaluate(pointwise_rows(), "interactivity-accuracy", point_judge, run, report=False)
    human = tmp_path / "h.csv"
    lines = ["id,rater,interactivity,accuracy"]
    for i in range(0, 30, 2):
        lines += [f"d{i},r1,{i % 3 + 1},1", f"d{i},r2,{min(3, i % 3 + 2)},0"]
    human.write_text("\n".join(lines) + "\n")
    result = calibrate_run(run, human)
    calibrated = result["calibrated"]
    assert set(calibrated) == {"interactivity", "itr", "accuracy"}
    assert result["n_labelled_not_judged"] == 0
    results = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    judged = {r["id"]: r["scores"] for r in results if r["status"] == "ok"}
    order = [r["id"] for r in results if r["status"] == "ok"]
    ids = [i for i in order if int(i[1:]) % 2 == 0]
    human_mean = [((int(i[1:]) % 3 + 1) + min(3, int(i[1:]) % 3 + 2)) / 2 for i in ids]
    expected = ppi_mean(
        [judged[i]["interactivity"] for i in order],
        [judged[i]["interactivity"] for i in ids],
        human_mean,
    )
    assert calibrated["interactivity"]["value"] == pytest.approx(expected.value)
    # itr is (score - 2.5) * 200 of the same ratings: the same estimate, transformed.
    assert calibrated["itr"]["value"] == pytest.approx((expected.value - 2.5) * 200)
    assert calibrated["accuracy"]["human_only"]["value"] == pytest.approx(0.5)

    # A generic `score` column rates --score; a failed item with a label is counted.
    generic = tmp_path / "g.jsonl"
    generic.write_text(
        "".join(json.dumps({"id": f"d{i}", "score": 1 + i % 2}) + "\n" for i in range(0, 12))
    )
    out = calibrate_run(run, generic, score="interactivity")
    assert set(out["calibrated"]) == {"interactivity", "itr"}
    assert out["n_labelled_not_judged"] == 1 and out["labelled_not_judged"] == ["d7"]

    done = runner.invoke(app, ["agree", str(run), "--human", str(human)])
    assert done.exit_code == 0, done.output
    written = json.loads((run / "agreement.json").read_text())
    assert written["calibrated"]["accuracy"]["n_labels"] == 15
    bad = tmp_path / "bad.csv"
    bad.write_text("id,score\nd1,2\nd2,high\n")
    done = runner.invoke(app, ["agree", str(run), "--human", str(bad), "--score", "interactivity"])
    assert done.exit_code == 2 and "row 2, field 'score': bad value 'high'" in done.output


def test_a_labelled_sample_unlike_the_rest_is_warned_about(tmp_path: Path) -> None:
    rows = pairs(60)
    for i, row in enumerate(rows):
        if i < 20:
            row["response"] = "short"
    run = tmp_path / "r"
    chatjudge.evaluate(rows, "pairwise-chat-quality", length_judge, run, report=False)
    human = human_file(tmp_path / "h.jsonl", {f"q{i}": "B" for i in range(20)})
    result = calibrate_run(run, human)
    assert any("shorter on average than the rest" in w for w in result["warnings"])
    done = runner.invoke(app, ["agree", str(run), "--human", str(human)])
    assert "random sample" in " ".join(done.output.split())
    fair = human_file(tmp_path / "f.jsonl", {f"q{i}": "B" for i in range(2, 60, 5)})
    assert calibrate_run(run, fair)["warnings"] == []


def test_compare_pointwise_runs_with_length_control(tmp_path: Path) -> None:
    runs = {}
    for name, extra in (("terse", ""), ("verbose", " and much more detail here" * 3)):
        rows = [
            {
                "id": f"d{i}",
                "chat": [
                    {"role": "user", "content": f"question {i}"},
                    {"role": "assistant", "content": f"answer {i}" + extra * (i % 2)},
                ],
                "question": f"q{i}",
                "answer": str(i % 3 + 1),
            }
            for i in range(30)
        ]
        runs[name] = tmp_path / name

        def judge(prompt: str) -> str:
            long = "much more detail" in prompt
            number = int(re.search(r"question (\d+)", prompt).group(1))
            score = 3 if long else 1 + number % 3
            return json.dumps(
                {
                    "interactivity": {"thought": "t", "score": score},
                    "accuracy": {"thought": "t", "score": 1},
                }
            )

        chatjudge.evaluate(rows, "interactivity-accuracy", judge, runs[name], report=False)
    done = runner.invoke(
        app,
        ["compare", *(f"{k}={v}" for k, v in runs.items()), "--control", "length",
         "--out", str(tmp_path / "cmp")],
    )  # fmt: skip
    assert done.exit_code == 0, done.output
    result = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    raw = {r["model"]: r["rating"] for r in result["ratings"]}
    controlled = {r["model"]: r["rating"] for r in result["controlled_ratings"]}
    # The verbose run wins by length alone: controlled for length, its lead shrinks.
    assert raw["verbose"] > raw["terse"]
    assert controlled["verbose"] - controlled["terse"] < raw["verbose"] - raw["terse"]
    assert result["style_coefficients"]["length"] > 0  # the longer side wins more

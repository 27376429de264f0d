"""`chatjudge gate`: whether the candidate ships, from finished runs or judged batch by
batch (`--sequential`); its terminal text is `chatjudge.analysis.gate_text`'s."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from chatjudge.cli.common import (
    ColumnOpt,
    HumanOpt,
    OverwriteOpt,
    fail,
    interrupted,
    out,
    show_warnings,
)
from chatjudge.errors import BudgetReachedError, ChatJudgeError, UsageError


def gate(
    run_or_data: Annotated[
        Path | None,
        typer.Argument(
            help="One pairwise run directory (candidate vs baseline); with --sequential, "
            "the DATA file to judge."
        ),
    ] = None,
    baseline: Annotated[
        Path | None, typer.Option("--baseline", help="The baseline's run directory.")
    ] = None,
    candidate: Annotated[
        Path | None, typer.Option("--candidate", help="The candidate's run directory.")
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(help="The metric (default: pairwise preference, else the first)."),
    ] = None,
    margin: Annotated[
        float, typer.Option(help="How much worse still passes not-worse (metric units).")
    ] = 0.0,
    require: Annotated[
        str, typer.Option(help="not-worse (default) or better.")
    ] = "not-worse",
    cluster: Annotated[
        str | None, typer.Option(help="A column grouping rows that move together.")
    ] = None,
    by: Annotated[
        str | None,
        typer.Option(
            help="A column: the difference per slice, worst first (no value: '(missing)')."
        ),
    ] = None,
    slices_must_not_regress: Annotated[
        bool,
        typer.Option(
            "--slices-must-not-regress",
            help="Fail when a slice of 30+ rows lies wholly below -margin (Bonferroni).",
        ),
    ] = False,
    data: Annotated[
        Path | None,
        typer.Option("--data", help="The input rows, joined by id (older runs lack columns)."),
    ] = None,
    protocol: Annotated[
        str | None,
        typer.Option(
            "--protocol", "-p", help="A custom protocol's .toml (with --sequential: any protocol)."
        ),
    ] = None,
    allow_mismatch: Annotated[
        bool,
        typer.Option(
            "--allow-mismatch", help="Gate runs judged differently (recorded in gate.json)."
        ),
    ] = False,
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="gate.json's path (default: in the candidate run directory); with "
            "--sequential, the run directory to judge into.",
        ),
    ] = None,
    markdown: Annotated[
        Path | None,
        typer.Option(help="Also write a Markdown summary (e.g. $GITHUB_STEP_SUMMARY)."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Bootstrap (and --sequential order) seed.")] = 0,
    sequential: Annotated[
        bool, typer.Option("--sequential", help="Judge DATA batch by batch until decided.")
    ] = False,
    judge: Annotated[
        list[str] | None, typer.Option("--judge", "-j", help="--sequential: the judge(s).")
    ] = None,
    baseline_data: Annotated[
        Path | None,
        typer.Option(help="--sequential, pointwise: the baseline's rows (same ids)."),
    ] = None,
    batch: Annotated[
        int, typer.Option(help="--sequential: units (rows, or clusters) per batch.", min=1)
    ] = 50,
    base_url: Annotated[
        list[str] | None, typer.Option("--base-url", help="--sequential: judge endpoint.")
    ] = None,
    concurrency: Annotated[
        int, typer.Option(help="--sequential: calls in flight at once.", min=1)
    ] = 16,
    samples: Annotated[
        int, typer.Option(help="--sequential: judge calls per row and order.", min=1)
    ] = 1,
    max_cost_usd: Annotated[
        float | None,
        typer.Option(
            help="--sequential: budget in USD for the judging; reached before a decision, "
            "exit 4 (the same command with a larger budget resumes).",
            min=0,
        ),
    ] = None,
    price_in: Annotated[
        float | None, typer.Option(help="--sequential: USD per million input tokens.", min=0)
    ] = None,
    price_out: Annotated[
        float | None, typer.Option(help="--sequential: USD per million output tokens.", min=0)
    ] = None,
    prices: Annotated[
        Path | None, typer.Option(help="--sequential: prices per model, a TOML file.")
    ] = None,
    control: Annotated[
        str | None,
        typer.Option(
            help="length or style: one pairwise run decided on its length- (or length and "
            "markdown style-) controlled preference, the raw one shown beside it."
        ),
    ] = None,
    human: HumanOpt = None,
    column: ColumnOpt = None,
    score: Annotated[
        str | None, typer.Option(help="--human, pointwise: the score the rating column rates.")
    ] = None,
    overwrite: OverwriteOpt = False,
) -> None:
    """Decide whether the candidate ships: a paired difference with its 95% interval.

    One pairwise run (the candidate's preference rate minus 1/2), or --baseline DIR
    --candidate DIR (two runs of one protocol on the same rows). Exit status: 0 pass,
    1 fail, 3 inconclusive, 2 bad usage or invalid input, 4 --max-cost-usd reached
    before a decision. Failed or unpaired rows are counted and shown, never an exit code.
    """
    from chatjudge.analysis.gate import EXIT_CODES
    from chatjudge.analysis.gate import gate as run_gate
    from chatjudge.analysis.gate_text import markdown as gate_markdown
    from chatjudge.analysis.gate_text import notes, table
    from chatjudge.outputs import check_not_a_run_file, check_not_input

    show_warnings()
    if require not in ("not-worse", "better"):
        raise fail(f"--require must be not-worse or better, got {require!r}")
    if control not in (None, "length", "style"):
        raise fail(f"--control takes length or style, not {control!r}")
    common: dict[str, Any] = {
        "metric": metric,
        "margin": margin,
        "require": require,
        "cluster": cluster,
        "by": by,
        "slices_must_not_regress": slices_must_not_regress,
        "seed": seed,
    }
    try:
        if markdown is not None:  # written last: refused now, never over an input or a run's file
            inputs = [p for p in (run_or_data, data, human, baseline_data) if p is not None]
            check_not_input(markdown, [markdown], inputs, flag="--markdown")
            check_not_a_run_file(markdown, [markdown], flag="--markdown")
        if sequential:
            from chatjudge.analysis.gate_sequential import gate_sequential

            if run_or_data is None or protocol is None:
                raise UsageError("--sequential needs DATA and --protocol")
            if control or human:
                raise UsageError("--control and --human apply to a gate on finished runs")
            options: dict[str, Any] = {"concurrency": concurrency, "samples": samples}
            pricing = {"max_cost_usd": max_cost_usd, "price_in": price_in, "price_out": price_out}
            options.update({k: v for k, v in pricing.items() if v is not None})
            if prices is not None:
                options["prices"] = prices
            if base_url:
                options["base_url"] = tuple(base_url)
            if overwrite:
                options["overwrite"] = True  # the judged runs' --out, as `run --overwrite`
            result = gate_sequential(
                run_or_data,
                protocol,
                judge or ["local"],
                out_path,
                baseline_data=baseline_data,
                batch=batch,
                **common,
                **options,
            )
        else:
            if (baseline is None) != (candidate is None):
                raise UsageError("give both --baseline DIR and --candidate DIR")
            if run_or_data is not None and candidate is not None:
                raise UsageError("give one pairwise run, or --baseline and --candidate, not both")
            if run_or_data is None and candidate is None:
                raise UsageError(
                    "gate needs one pairwise run (chatjudge gate DIR) or "
                    "--baseline DIR --candidate DIR"
                )
            result = run_gate(
                candidate or run_or_data,  # type: ignore[arg-type]
                baseline,
                data=data,
                protocol=protocol,
                allow_mismatch=allow_mismatch,
                out=out_path,
                overwrite=overwrite,
                control=control,  # type: ignore[arg-type]
                human=human,
                human_column=column,
                human_score=score,
                **common,
            )
    except BudgetReachedError as exc:
        raise fail(str(exc), 4) from None
    except (ChatJudgeError, ValueError) as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        if not sequential:
            raise
        raise interrupted(f"the judgments of the batches so far are kept in {out_path}") from None
    out.print(table(result))
    for line in notes(result):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    if markdown is not None:
        markdown.write_text(gate_markdown(result), encoding="utf-8")
    if result.sequential is not None and result.sequential.stopped == "budget":
        raise typer.Exit(4)  # the budget was reached before a decision
    raise typer.Exit(EXIT_CODES[result.outcome])


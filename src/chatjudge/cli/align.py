"""`chatjudge align`: a judge's protocol with guidance learnt from human labels, kept only
when it agrees with people better on held-out labels (`chatjudge.analysis.align`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from chatjudge.cli.common import err, exit_for, fail, option_values, out, with_options
from chatjudge.errors import BudgetReachedError, ChatJudgeError, ExitCode

RunArg = Annotated[Path, typer.Argument(help="A run directory written by `chatjudge run`.")]


@with_options("align")
def align(run_dir: RunArg, **options: Any) -> None:
    """Align a run's judge to human labels: rules the optimiser writes from the judge's
    disagreements with the humans, labelled examples, or both, appended to the protocol's
    template; chosen by cross-validation on part of the labels and measured on the held-out
    rest. Writes DIR/protocol.toml and DIR/alignment.json. Exit status: 0 the held-out
    gain's 95% interval lies above 0 (recommended); 3 no gain shown on held-out labels (the
    TOML is still written), or fewer than 30 held-out rows; 2 bad usage or input (nothing
    sent); 4 --max-cost-usd reached (the same command resumes)."""
    from chatjudge.analysis.align.align_run import ALIGNMENT, align_run
    from chatjudge.analysis.align.search import TooFewHeldOut
    from chatjudge.options import AlignOptions, RunConfig, describe

    values = option_values(options, "align")
    own = {k: v for k, v in values.items() if k in AlignOptions.model_fields}
    try:
        chosen = AlignOptions(**own)
        config = RunConfig.from_options(
            {k: v for k, v in values.items() if k not in own and v is not None},
            command="align",
        )
    except ValidationError as exc:
        raise fail(describe(exc)) from None
    except ChatJudgeError as exc:
        raise fail(str(exc)) from None
    human, optimizer, target = chosen.human, chosen.optimizer, chosen.out
    if human is None or optimizer is None or target is None:
        raise fail("align needs --human LABELS, --optimizer MODEL and --out DIR")
    try:
        result = align_run(run_dir, human, optimizer, target,
                           judge=chosen.judge, protocol=chosen.protocol,
                           held_out=chosen.held_out, seed=chosen.seed, column=chosen.column,
                           score=chosen.score, dry_run=chosen.dry_run, config=config)  # fmt: skip
    except TooFewHeldOut as exc:
        raise fail(f"not aligned: {exc}", ExitCode.INCONCLUSIVE) from None
    except BudgetReachedError as exc:
        raise fail(str(exc), exit_for(exc)) from None
    except (ChatJudgeError, ValueError) as exc:
        raise fail(str(exc)) from None
    from chatjudge.analysis.align.text import alignment_lines
    from chatjudge.formats.alignment import Alignment

    if not isinstance(result, Alignment):
        from chatjudge.report.terminal import estimate_table

        out.print(estimate_table(result))
        raise typer.Exit(ExitCode.OK)
    out.print(alignment_lines(result), highlight=False, markup=False)
    for warning in result.warnings:
        err.print(f"warning: {warning}", highlight=False, markup=False)
    err.print(f"alignment: {target / ALIGNMENT}", highlight=False, markup=False)
    raise typer.Exit(ExitCode.OK if result.recommended else ExitCode.INCONCLUSIVE)

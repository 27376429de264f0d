"""`chatjudge realism`: simulated users measured against the real users of production
conversations (`chatjudge.realism`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from chatjudge.cli.common import (
    DryRunOpt,
    MapOpt,
    QuietOpt,
    column_map,
    err,
    exit_for,
    fail,
    interrupted,
    option_values,
    out,
    refused_before_sending,
    show_warnings,
    with_options,
)
from chatjudge.errors import BudgetReachedError, ChatJudgeError, ExitCode, FatalModelError
from chatjudge.options.declare import PROVIDERS

if TYPE_CHECKING:
    from chatjudge.user_realism.command import Realism


@with_options("realism")
def realism(
    data: Annotated[
        Path,
        typer.Argument(
            help="The real conversations: `chatjudge import` output (rows sharing a "
            "conversation_id; each conversation's last turn is read), or rows with chat."
        ),
    ],
    assistant: Annotated[
        str,
        typer.Option(
            "--assistant",
            "-a",
            help="The assistant the simulated users talk with; it should be the one the real "
            f"conversations were had with, so that only the users differ: {PROVIDERS}.",
        ),
    ],
    map_: MapOpt = None,
    quiet: QuietOpt = False,
    dry_run: DryRunOpt = False,
    **options: Any,
) -> None:
    """Measure how simulated users differ from real ones: each real conversation's goal is
    written (question, facts, user_context; rows holding question keep theirs), simulated
    --samples times with the same assistant, and the two compared goal by goal: user turns,
    words per message, questions, disclosure of the goal's facts in the first message, who
    ended, pushback, stylistic uniformity, and a discriminator (the judge picks the real user
    of a real/simulated pair, both orders; 0.5 = it cannot tell). A difference is claimed only
    by an exact within-goal permutation test, Holm-corrected across measures. Writes
    DIR/goals.jsonl, DIR/simulated.jsonl, DIR/realism.json and DIR/report.html. With --tune
    --optimizer MODEL, the simulated user is also tuned on 60% of the goals (split by --seed)
    and the gain proven on the 40% held out (DIR/user_prompt.txt, for simulate --user-prompt).
    Exit status: 0 measured (--tune: and a gain shown on held-out conversations); 1 some
    conversations failed (left out, counted); 2 bad usage or input (nothing sent); 3 --tune:
    no gain shown on held-out conversations, or fewer than 50 held-out goals (nothing sent);
    4 --max-cost-usd reached (the same command resumes)."""
    from chatjudge.user_realism.measuring import estimate

    show_warnings()
    job = _set_up(data, assistant, option_values(options, "realism"), map_, quiet, dry_run)
    if dry_run:
        from chatjudge.report.terminal import estimate_table

        with refused_before_sending(data, "a model"):
            out.print(estimate_table(estimate(job)))
        raise typer.Exit(ExitCode.OK)
    err.print(
        f"realism of {len(job.reals)} conversation(s) of {data}: assistant {assistant} "
        f"-> {job.out}",
        highlight=False,
        markup=False,
    )
    raise _measured(job)


def _set_up(
    data: Path, assistant: str, values: dict[str, Any], map_: list[str] | None, quiet: bool,
    dry_run: bool,
) -> Realism:  # fmt: skip
    """The command set up, or exit 2 before anything is sent (3: --tune with too few
    conversations)."""
    from chatjudge.options import RealismOptions, RunConfig
    from chatjudge.user_realism.measuring import set_up
    from chatjudge.user_realism.tune_search import TooFewGoals

    own = {k: v for k, v in values.items() if k in RealismOptions.model_fields}
    with refused_before_sending(data, "a model"):
        chosen = RealismOptions(**own).model_dump()
        rest = {k: v for k, v in values.items() if k not in own}
        config = RunConfig.from_options(rest, command="realism", progress=not quiet)
        try:
            return set_up(data, assistant, chosen, config, column_map=column_map(map_),
                          dry_run=dry_run)  # fmt: skip
        except TooFewGoals as exc:
            raise fail(f"not tuned: {exc}\nnothing was sent.", ExitCode.INCONCLUSIVE) from None


def _measured(job: Realism) -> typer.Exit:
    """Run it, print the table; the exit: 0, 1 when something failed, 3 when --tune showed
    no gain, 4 at the budget."""
    from chatjudge.user_realism.measuring import measure

    try:
        result = measure(job)
    except (BudgetReachedError, FatalModelError) as exc:
        raise fail(f"{exc}\neverything finished is in {job.out}", exit_for(exc)) from None
    except ChatJudgeError as exc:
        raise fail(str(exc)) from None
    except KeyboardInterrupt:
        raise interrupted(f"every finished call is kept in {job.out}") from None
    from chatjudge.report.realism_text import realism_table

    out.print(realism_table(result))
    err.print(f"realism: {job.out / 'realism.json'}\nreport:  {job.out / 'report.html'}",
              highlight=False, markup=False)  # fmt: skip
    if result.tuning is not None:
        tuned = result.tuning
        err.print(f"tuned ({tuned.chosen}): {tuned.reason}"
                  + ("; overshoot: the judge takes the tuned user for the real one"
                     if tuned.overshoot else "")
                  + f"\nuser prompt: {job.out / 'user_prompt.txt'}",
                  highlight=False, markup=False)  # fmt: skip
        if not tuned.gain_shown:
            return typer.Exit(ExitCode.INCONCLUSIVE)
    return typer.Exit(ExitCode.FAILED if sum((result.failed or {}).values()) else ExitCode.OK)

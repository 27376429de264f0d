"""Producing what is judged: `generate` (replies of a model under test) and `simulate`
(conversations with a simulated user). Both go through `_produce`: options, set-up
refused before anything is sent, the run, its summary table and exit status."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Protocol, TypeVar

import typer

from chatjudge.cli.common import (
    DryRunOpt,
    MapOpt,
    QuietOpt,
    collect_less_often,
    column_map,
    err,
    exit_status,
    option_values,
    out,
    refused_before_sending,
    show_warnings,
    stopping,
    warn_skipped,
    with_options,
)
from chatjudge.errors import ExitCode
from chatjudge.options.declare import PROVIDERS

if TYPE_CHECKING:
    from chatjudge.calls.estimate import CostEstimate
    from chatjudge.options import RunConfig
    from chatjudge.produce.generation import Generation
    from chatjudge.produce.simulation import Simulation
    from chatjudge.rundir import Produced


class _Job(Protocol):
    """A generation or a simulation, set up: where it writes, and the work."""

    output: Produced

    def run(self) -> Coroutine[Any, Any, dict[str, Any]]: ...

    def estimate(self) -> Coroutine[Any, Any, CostEstimate]: ...


Job = TypeVar("Job", bound=_Job)

OutOpt = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        help="The JSONL file to write (default: under ./chatjudge-runs/, named after the "
        "command, so it resumes); its store, summary and record (<name>.run.json: what "
        "wrote it, so that the same command resumes there) are written beside it.",
    ),
]


@with_options("generate")
def generate(
    data: Annotated[
        Path, typer.Argument(help="JSONL, CSV or Parquet file with history and prompt.")
    ],
    model: Annotated[
        str,
        typer.Option("--model", "-m", help=f"The model under test: {PROVIDERS}."),
    ],
    field: Annotated[
        str,
        typer.Option(
            "--field", "-f", help="The field its replies fill: response or baseline_model_response."
        ),
    ] = "response",
    out_path: OutOpt = None,
    map_: MapOpt = None,
    quiet: QuietOpt = False,
    dry_run: DryRunOpt = False,
    **options: Any,
) -> None:
    """Fill RESPONSE (or the baseline's) with a model's reply to every row's history and
    prompt: a dataset for `run -p pairwise-chat-quality`.

    A row with tools (a tools column, or tool calls in its history, prompt or trajectory,
    from which definitions are derived) offers them to the model; its calls are answered by
    --tool-replay or --tools, until it answers in text or has been called --max-tool-steps
    times; with --tools, a row without tools is offered the functions (definitions made from
    their names, parameters and docstrings), as simulate offers them. Such a row also gets
    the turn's messages (the calls, their results, the final message) in
    response_trajectory, or baseline_trajectory with --field baseline_model_response (the
    columns pairwise-chat-quality shows the judge), and FIELD_ended: final, or
    max_tool_steps where the turn ends on calls without results.
    Rows with tools and neither option, or a model that cannot be offered tools (local):
    exit 2, nothing sent."""
    from chatjudge.produce import build_generation

    def build(config: RunConfig) -> Generation:
        return build_generation(
            data, model, field, out_path, column_map=column_map(map_), config=config,
            dry_run=dry_run,
        )  # fmt: skip

    def describe(job: Generation, config: RunConfig) -> str:
        return (
            f"generating {field} for {job.validation.n_rows} row(s) of {data} with "
            f"{job.model.name} -> {job.output.rows}"
        )

    _produce("generate", data, options, quiet, dry_run, build, describe)


@with_options("simulate")
def simulate(
    data: Annotated[
        Path, typer.Argument(help="JSONL, CSV or Parquet file with question and answer.")
    ],
    assistant: Annotated[
        str,
        typer.Option("--assistant", "-a", help=f"The assistant under test: {PROVIDERS}."),
    ],
    user: Annotated[
        str | None,
        typer.Option("--user", "-u", help="The simulated user's model (default: the assistant's)."),
    ] = None,
    out_path: OutOpt = None,
    map_: MapOpt = None,
    quiet: QuietOpt = False,
    dry_run: DryRunOpt = False,
    **options: Any,
) -> None:
    """Let a simulated user, whose hidden goal is each row's question, talk with the
    assistant: conversations for `run -p interactivity-accuracy`.

    With --tools MODULE:OBJECT the assistant is offered your functions (a row's tools
    column where it has one, else definitions made from the functions' names, parameters
    and docstrings) and each of its turns runs until it answers in text or has been called
    --max-tool-steps times; its calls and their results are in chat as OpenAI messages (the
    judge sees them), while the simulated user sees only what the assistant says. A turn
    cut at --max-tool-steps ends the conversation (ended: max_tool_steps). There is no
    recording to replay in a simulation: --tool-replay is not an option here."""
    from chatjudge.produce import build_simulation

    def build(config: RunConfig) -> Simulation:
        return build_simulation(
            data, assistant, user, out_path, column_map=column_map(map_), config=config,
            dry_run=dry_run,
        )  # fmt: skip

    def describe(job: Simulation, config: RunConfig) -> str:
        return (
            f"simulating {job.validation.n_rows * config.run.samples} conversation(s) of "
            f"{data}: assistant {job.assistant.name}, user {job.user.name} -> {job.output.rows}"
        )

    _produce("simulate", data, options, quiet, dry_run, build, describe)


def _produce(
    command: str,
    data: Path,
    options: dict[str, Any],
    quiet: bool,
    dry_run: bool,
    build: Callable[[RunConfig], Job],
    describe: Callable[[Job, RunConfig], str],
) -> None:
    """Set the job up (exit 2 before any call on a problem), run it, print its summary; exit 1
    if a row failed or was skipped, as `run` does; 4 at `--max-cost-usd`. `--dry-run`
    prints what it would send instead, and exits 0."""
    from chatjudge.calls.run_sync import run_sync
    from chatjudge.options import RunConfig
    from chatjudge.report import produced_table

    show_warnings()
    with refused_before_sending(data, "a model"):
        config = RunConfig.from_options(
            option_values(options, command), command=command, progress=not quiet
        )
        job = build(config)
    if dry_run:
        from chatjudge.report.terminal import estimate_table

        with refused_before_sending(data, "a model"):
            estimate = run_sync(job.estimate())
        out.print(estimate_table(estimate))
        raise typer.Exit(ExitCode.OK)
    err.print(describe(job, config), highlight=False, markup=False)
    output = job.output

    def written(summary: dict[str, Any]) -> None:
        out.print(produced_table(summary))
        err.print(
            f"rows:    {output.rows}\nsummary: {output.summary}", highlight=False, markup=False
        )

    collect_less_often()
    finished = f"row(s) are in {output.rows}, every call in {output.store}"
    with stopping(finished, f"every finished call is kept in {output.store}", written):
        summary = run_sync(job.run())
    written(summary)
    warn_skipped(summary, "the summary")
    raise exit_status(summary)

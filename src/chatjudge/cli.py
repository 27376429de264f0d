"""The `chatjudge` command line. Exit status: 0 all judged, 1 some items failed, 2 bad usage
or invalid data (nothing sent)."""

from __future__ import annotations

import contextlib
import gc
import inspect
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from chatjudge.errors import ChatJudgeError, DataValidationError, UsageError
from chatjudge.options import flags_of, option_fields
from chatjudge.secrets import mask

app = typer.Typer(
    name="chatjudge",
    help="Evaluate multi-turn chat assistants with LLM judges.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)

ProtocolOpt = Annotated[
    str, typer.Option("--protocol", "-p", help="A built-in protocol name or a custom .toml file.")
]
MapOpt = Annotated[
    list[str] | None,
    typer.Option("--map", help="Rename an input column: COLUMN=FIELD (repeatable)."),
]


def _fail(message: str, code: int = 2) -> typer.Exit:
    message = escape(mask(message))  # no key, and a message's brackets are not rich markup
    err.print(f"[bold red]error:[/] {message}", highlight=False, markup=True, soft_wrap=True)
    return typer.Exit(code)


def _column_map(pairs: list[str] | None) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for pair in pairs or []:
        column, sep, field = pair.partition("=")
        if not sep or not column or not field:
            raise UsageError(f"--map takes COLUMN=FIELD, got {pair!r}")
        mapping[column] = field
    return mapping


def with_options(name: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Give a command one flag per option `chatjudge.options` declares for command `name`
    (type, default, help, limits); their values arrive in the command's `**options`."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        signature = inspect.signature(command, eval_str=True)
        fixed = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
        generated = [_flag(option, info) for option, info in option_fields(name)]
        command.__signature__ = signature.replace(parameters=[*fixed, *generated])  # type: ignore[attr-defined]
        return command

    return decorate


def _flag(name: str, info: Any) -> inspect.Parameter:
    annotation: Any = info.annotation
    default = info.default
    if default == ():  # a repeatable option
        annotation, default = list[str] | None, None
    option = typer.Option(*flags_of(name, info), help=info.description)
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=default,
        annotation=Annotated[annotation, option],
    )


def _options(raw: dict[str, Any], command: str) -> dict[str, Any]:
    """The CLI's option values as the options model takes them (repeatables as tuples)."""
    repeatable = {name for name, info in option_fields(command) if info.default == ()}
    return {k: tuple(v or ()) if k in repeatable else v for k, v in raw.items()}


@app.command()
@with_options("run")
def run(
    data: Annotated[Path, typer.Argument(help="JSONL, CSV or Parquet file of items.")],
    protocol: ProtocolOpt,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            "-j",
            help="local, local/PATH.gguf, openai/MODEL, anthropic/MODEL "
            "or google/MODEL; repeat for a panel.",
        ),
    ] = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Run directory (default: under ./chatjudge-runs/, named "
            "after the run, so the same command resumes).",
        ),
    ] = None,
    map_: MapOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    **options: Any,
) -> None:
    """Judge every item of DATA and write results.jsonl, summary.json and report.html."""
    from chatjudge.api import build_engine, run_sync
    from chatjudge.errors import FatalJudgeError
    from chatjudge.options import RunConfig

    _show_warnings()
    with _refused_before_sending(data, "a judge"):
        config = RunConfig.from_options(_options(options, "run"), progress=not quiet)
        engine = build_engine(
            data,
            protocol,
            judge or ["local"],
            out_dir,
            column_map=_column_map(map_),
            config=config,
        )
    err.print(
        f"judging {engine.n_rows} item(s) of {data} with {protocol} "
        f"({', '.join(m.name for m in engine.models)}) -> {engine.out_dir}",
        highlight=False,
    )
    from chatjudge.report import ReportBuilder, summary_table

    builder = ReportBuilder(engine.out_dir)  # the page is built as items finish
    _collect_less_often()
    try:
        outcome = run_sync(engine, on_item=builder.add)
    except FatalJudgeError as exc:
        builder.close()
        # 1: items were judged before the stop (all kept); 2: it stopped before any was.
        raise _fail(
            f"{exc}\n{exc.finished} finished item(s) are kept in {engine.out_dir}; "
            "after the fix, the same command resumes.",
            1 if exc.finished else 2,
        ) from None
    except ChatJudgeError as exc:
        builder.close()
        raise _fail(str(exc)) from None
    except KeyboardInterrupt:
        builder.close()
        raise _fail(
            f"interrupted: finished judgments are kept in {engine.out_dir}; "
            "run the same command again to resume.",
            130,
        ) from None
    page = builder.finish(outcome.summary)
    out.print(summary_table(outcome.summary))
    _paths(engine.out_dir, page)
    summary = outcome.summary
    if summary.get("n_skipped"):
        err.print(
            f"[bold yellow]warning:[/] {summary['n_skipped']} invalid row(s) skipped "
            "(listed in summary.json and the report)",
            highlight=False,
        )
    raise typer.Exit(1 if summary["n_failed"] or summary.get("n_skipped") else 0)


@app.command()
@with_options("generate")
def generate(
    data: Annotated[
        Path, typer.Argument(help="JSONL, CSV or Parquet file with history and prompt.")
    ],
    model: Annotated[
        str,
        typer.Option(
            "--model", "-m", help="The model under test: local, openai/MODEL, anthropic/MODEL, ..."
        ),
    ],
    field: Annotated[
        str,
        typer.Option(
            "--field", "-f", help="The field its replies fill: response or baseline_model_response."
        ),
    ] = "response",
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="The JSONL file to write (default: under ./chatjudge-runs/, named after the "
            "command, so it resumes); its store and summary are written beside it.",
        ),
    ] = None,
    map_: MapOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    **options: Any,
) -> None:
    """Fill RESPONSE (or the baseline's) with a model's reply to every row's history and
    prompt: a dataset for `run -p pairwise-chat-quality`."""
    from chatjudge.options import RunConfig
    from chatjudge.produce import build_generation

    _show_warnings()
    with _refused_before_sending(data, "a model"):
        config = RunConfig.from_options(
            _options(options, "generate"), command="generate", progress=not quiet
        )
        job = build_generation(
            data, model, field, out_path, column_map=_column_map(map_), config=config
        )
    err.print(
        f"generating {field} for {job.validation.n_rows} row(s) of {data} with "
        f"{job.model.name} -> {job.output.rows}",
        highlight=False,
    )
    _produce(job.run(), job.output)


@app.command()
@with_options("simulate")
def simulate(
    data: Annotated[
        Path, typer.Argument(help="JSONL, CSV or Parquet file with question and answer.")
    ],
    assistant: Annotated[
        str,
        typer.Option(
            "--assistant", "-a", help="The assistant under test: local, openai/MODEL, ..."
        ),
    ],
    user: Annotated[
        str | None,
        typer.Option("--user", "-u", help="The simulated user's model (default: the assistant's)."),
    ] = None,
    out_path: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="The JSONL file to write (default: under ./chatjudge-runs/, named after the "
            "command, so it resumes); its store and summary are written beside it.",
        ),
    ] = None,
    map_: MapOpt = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    **options: Any,
) -> None:
    """Let a simulated user, whose hidden goal is each row's question, talk with the
    assistant: conversations for `run -p interactivity-accuracy`."""
    from chatjudge.options import RunConfig
    from chatjudge.produce import build_simulation

    _show_warnings()
    with _refused_before_sending(data, "a model"):
        config = RunConfig.from_options(
            _options(options, "simulate"), command="simulate", progress=not quiet
        )
        job = build_simulation(
            data, assistant, user, out_path, column_map=_column_map(map_), config=config
        )
    err.print(
        f"simulating {job.validation.n_rows * config.run.samples} conversation(s) of {data}: "
        f"assistant {job.assistant.name}, user {job.user.name} -> {job.output.rows}",
        highlight=False,
    )
    _produce(job.run(), job.output)


@contextlib.contextmanager
def _refused_before_sending(data: Path, to: str) -> Iterator[None]:
    """A problem found while setting a command up (options, data, models) is exit 2 with its
    message; nothing has been sent to `to` yet."""
    try:
        yield
    except DataValidationError as exc:
        raise _fail(f"{data}: {exc}\nnothing was sent to {to}.") from None
    except (ChatJudgeError, ValueError) as exc:
        raise _fail(str(exc)) from None


def _produce(work: Any, output: Any) -> None:
    """Run a generation or simulation, print its summary; exit 1 if a row failed or was
    skipped, as `run` does."""
    from chatjudge.errors import FatalJudgeError
    from chatjudge.report import produced_table
    from chatjudge.sync import run_sync

    _collect_less_often()
    try:
        summary = run_sync(work)
    except FatalJudgeError as exc:
        raise _fail(
            f"{exc}\n{exc.finished} finished row(s) are in {output.rows}, every call in "
            f"{output.store}; after the fix, the same command resumes.",
            1 if exc.finished else 2,
        ) from None
    except ChatJudgeError as exc:
        raise _fail(str(exc)) from None
    except KeyboardInterrupt:
        raise _fail(
            f"interrupted: every finished call is kept in {output.store}; "
            "run the same command again to resume.",
            130,
        ) from None
    out.print(produced_table(summary))
    err.print(f"rows:    {output.rows}\nsummary: {output.summary}", highlight=False)
    if summary.get("n_skipped"):
        err.print(
            f"[bold yellow]warning:[/] {summary['n_skipped']} invalid row(s) skipped "
            "(listed in the summary)",
            highlight=False,
        )
    raise typer.Exit(1 if summary["n_failed"] or summary.get("n_skipped") else 0)


def _show_warnings() -> None:
    """Warnings (an AMX build of llama.cpp, say) as one `warning:` line each, on stderr."""

    def show(message: Warning | str, *_: Any, **__: Any) -> None:
        text = escape(mask(str(message)))
        err.print(f"[bold yellow]warning:[/] {text}", highlight=False, soft_wrap=True)

    warnings.showwarning = show


def _collect_less_often() -> None:
    """Tune the cyclic garbage collector for the judge loop, in our own process only.

    With hundreds of calls in flight, the default gen-0 threshold (700 allocations) runs
    a collection every few calls, and each one walks the requests still waiting: 30 us
    of CPU per call at C=256, L=1 s, against 2 us with start-up objects frozen (modules,
    models: never garbage) and a 10,000 threshold. Garbage without cycles is freed by
    reference counting as before. `evaluate()` leaves the caller's collector alone.
    """
    gc.freeze()
    gc.set_threshold(10_000)


def _paths(run_dir: Path, page: Path) -> None:
    from chatjudge.rundir import RESULTS

    err.print(f"results: {run_dir / RESULTS}\nreport:  {page}", highlight=False)


HumanOpt = Annotated[
    Path | None,
    typer.Option(
        "--human",
        help="JSONL/CSV of human ratings (id, label or score; the `agree` format): adds "
        "human-calibrated (PPI++) estimates of the metrics.",
    ),
]
ColumnOpt = Annotated[
    str | None, typer.Option(help="The rating column (default: label, score or human).")
]


@app.command()
def report(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by `chatjudge run`.")],
    human: HumanOpt = None,
    column: ColumnOpt = None,
    score: Annotated[
        str | None, typer.Option(help="Pointwise runs: the score the rating column rates.")
    ] = None,
) -> None:
    """Print a run's summary and (re)write DIR/report.html."""
    from chatjudge.analysis.calibration import calibrate_run
    from chatjudge.report import calibration_table, summary_table, write_report
    from chatjudge.report.load import read_summary

    try:
        summary = read_summary(run_dir)
        calibration = (
            calibrate_run(run_dir, human, column=column, score=score) if human else None
        )
        page = write_report(run_dir, calibrated=calibration and calibration["calibrated"])
    except (ChatJudgeError, ValueError) as exc:
        raise _fail(str(exc)) from None
    out.print(summary_table(summary))
    if calibration is not None:
        out.print(calibration_table(calibration))
    _paths(run_dir, page)


@app.command()
def protocols() -> None:
    """List the built-in protocols with their data fields, verdict and metrics."""
    from chatjudge.protocols import list_protocols

    for p in list_protocols():
        fields = ", ".join(
            f.name
            + (" (optional)" if not f.required else "")
            + (" [messages]" if f.conversation else "")
            for f in p.fields
        )
        scores = [f"{s.name} {s.min:g}-{s.max:g}" for s in p.scores]
        if p.choice is not None:
            scores.append(f"{p.choice.name} {'/'.join(p.choice.options)}")
        out.print(f"[bold]{p.name}[/] ({p.kind}): {p.description}", highlight=False)
        out.print(f"  fields:  {fields}", highlight=False, markup=False)
        out.print(f"  verdict: {', '.join(scores)}", highlight=False, markup=False)
        out.print(f"  metrics: {', '.join(m.name for m in p.metrics)}\n", highlight=False)
    out.print(
        "Custom protocols: pass a .toml file to --protocol (see examples/chat_quality_1to5.toml)."
    )


@app.command()
def prompt(
    data: Annotated[Path, typer.Argument(help="JSONL, CSV or Parquet file of items.")],
    protocol: ProtocolOpt,
    row: Annotated[int, typer.Option("--row", help="Which row (1-based, among rows).")] = 1,
    map_: MapOpt = None,
    flipped: Annotated[bool, typer.Option(help="Pairwise: show the flipped order.")] = False,
    instruction: Annotated[
        bool, typer.Option(help="Append the output-format instruction (judges without schema).")
    ] = False,
    include_system: Annotated[bool, typer.Option("--include-system")] = False,
) -> None:
    """Print the exact prompt a judge would get for one row."""
    from chatjudge.data import Source, iter_items, validate
    from chatjudge.protocols import get_protocol

    try:
        if row < 1:
            raise UsageError(f"--row {row}: rows are numbered from 1 (the first row is --row 1)")
        proto = get_protocol(protocol)
        source = Source(data, _column_map(map_))
        n = validate(source, proto.fields, limit=row).n_rows
        if row < 1 or row > n:
            raise UsageError(f"--row {row} is out of range: the data has {n} row(s)")
        item = next(
            i
            for i in iter_items(source, proto.fields, limit=row, include_system=include_system)
            if i.index == row - 1
        )
    except DataValidationError as exc:
        raise _fail(f"{data}: {exc}") from None
    except ChatJudgeError as exc:
        raise _fail(str(exc)) from None
    text = proto.render(item.text, flipped=flipped)
    sys.stdout.write(text + (proto.output_instruction if instruction else "") + "\n")


@app.command()
def compare(
    runs: Annotated[list[str], typer.Argument(help="Run directories, optionally named: NAME=DIR.")],
    out_dir: Annotated[
        Path | None, typer.Option("--out", "-o", help="Where compare.json/.html go.")
    ] = None,
    baseline_name: Annotated[
        str, typer.Option(help="Pairwise runs: the name of their shared baseline.")
    ] = "baseline",
    score: Annotated[
        str | None, typer.Option(help="Pointwise runs: the score to compare (default: first).")
    ] = None,
    control: Annotated[
        str | None,
        typer.Option(
            help="length or style: also rate with the responses' length (and markdown) "
            "differences as covariates (Arena's style control)."
        ),
    ] = None,
    human: Annotated[
        list[str] | None,
        typer.Option(
            "--human",
            help="NAME=FILE (repeatable; FILE alone with one run): human ratings of run "
            "NAME, for its human-calibrated (PPI++) metrics.",
        ),
    ] = None,
) -> None:
    """Rate several candidates judged on the same items: Bradley-Terry ratings with 95%
    intervals and the pairwise win-rate matrix (Arena-Hard-Auto style)."""
    from rich.table import Table

    from chatjudge.analysis import compare_runs
    from chatjudge.analysis.calibration import calibrate_run
    from chatjudge.report import calibration_table, write_compare_report
    from chatjudge.rundir import COMPARISON, COMPARISON_REPORT, RUNS_ROOT, Comparison, write_json

    named: dict[str, Path] = {}
    for spec in runs:
        name, sep, path = spec.partition("=")
        run_dir = Path(path if sep else spec)
        named[name if sep else run_dir.name] = run_dir
    try:
        if control not in (None, "length", "style"):
            raise UsageError(f"--control takes length or style, not {control!r}")
        result = compare_runs(
            named,
            baseline=baseline_name,
            score=score,
            control=control,  # type: ignore[arg-type]
        )
        calibrations = {
            name: calibrate_run(named[name], path, score=score)
            for name, path in _human_files(human, named).items()
        }
        if calibrations:
            result["calibrated"] = {n: c["calibrated"] for n, c in calibrations.items()}
            result = Comparison.model_validate(result).model_dump(mode="json")
    except (ChatJudgeError, ValueError) as exc:
        raise _fail(str(exc)) from None
    controlled = {r["model"]: r for r in result.get("controlled_ratings") or []}
    columns = ["model", "rating", "95% CI", "won", "tied", "lost"]
    if controlled:
        columns += ["controlled", "95% CI "]
    table = Table(
        *columns,
        title=f"{result['protocol']}: {result['n_items']} items, {result['n_battles']} battles",
    )
    for r in result["ratings"]:
        c = result["outcomes"][r["model"]]
        cells = [
            r["model"],
            f"{r['rating']:.0f}",
            _rating_ci(r["ci95"]),
            str(c["won"]),
            str(c["tied"]),
            str(c["lost"]),
        ]
        if controlled:
            k = controlled[r["model"]]
            cells += [f"{k['rating']:.0f}", _rating_ci(k["ci95"])]
        table.add_row(*cells)
    out.print(table)
    if result.get("style_coefficients") is not None:
        coefficients = ", ".join(f"{k} {v:+.3f}" for k, v in result["style_coefficients"].items())
        out.print(
            f"controlled: {control}-controlled ratings (corrected, not the judge's raw result), "
            f"the responses' {control} differences held equal; coefficients per SD: "
            f"{coefficients or 'none (constant)'}",
            highlight=False,
        )
    for name, calibration in calibrations.items():
        out.print(calibration_table(calibration, f"{name}: human-calibrated (PPI++)"))
    target = out_dir or RUNS_ROOT / ("compare-" + "-".join(named)[:60])
    target.mkdir(parents=True, exist_ok=True)
    write_json(target / COMPARISON, result)
    page = write_compare_report(target / COMPARISON_REPORT, result)
    err.print(f"comparison: {target / COMPARISON}\nreport:     {page}", highlight=False)


@app.command()
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
        str | None, typer.Option(help="A column: the difference per slice, worst first.")
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
) -> None:
    """Decide whether the candidate ships: a paired difference with its 95% interval.

    One pairwise run (the candidate's preference rate minus 1/2), or --baseline DIR
    --candidate DIR (two runs of one protocol on the same rows). Exit status: 0 pass,
    1 fail, 3 inconclusive, 2 bad usage or invalid input. Failed or unpaired rows are
    counted and shown, never an exit code.
    """
    from chatjudge.analysis.gate import EXIT_CODES
    from chatjudge.analysis.gate import gate as run_gate
    from chatjudge.analysis.gate_text import markdown as gate_markdown

    _show_warnings()
    if require not in ("not-worse", "better"):
        raise _fail(f"--require must be not-worse or better, got {require!r}")
    if control not in (None, "length", "style"):
        raise _fail(f"--control takes length or style, not {control!r}")
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
        if sequential:
            from chatjudge.analysis.gate_sequential import gate_sequential

            if run_or_data is None or protocol is None:
                raise UsageError("--sequential needs DATA and --protocol")
            if control or human:
                raise UsageError("--control and --human apply to a gate on finished runs")
            options: dict[str, Any] = {"concurrency": concurrency, "samples": samples}
            if base_url:
                options["base_url"] = tuple(base_url)
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
                control=control,  # type: ignore[arg-type]
                human=human,
                human_column=column,
                human_score=score,
                **common,
            )
    except (ChatJudgeError, ValueError) as exc:
        raise _fail(str(exc)) from None
    out.print(_gate_table(result))
    from chatjudge.analysis.gate_text import notes

    for line in notes(result):
        out.print(line, highlight=False, markup=False, soft_wrap=True)
    if markdown is not None:
        markdown.write_text(gate_markdown(result), encoding="utf-8")
    raise typer.Exit(EXIT_CODES[result.outcome])


def _gate_table(result: Any) -> Any:
    from rich.table import Table

    from chatjudge.analysis.gate_text import counts_text, fmt, interval, slice_row

    style = {"pass": "bold green", "fail": "bold red", "inconclusive": "bold yellow"}
    table = Table(
        "Δ",
        "95% CI",
        "margin",
        "outcome",
        "MDE 80%",
        "n pairs",
        title=f"gate: {result.metric} (candidate − baseline)",
        caption=counts_text(result),
    )
    table.add_row(
        fmt(result.difference.value),
        interval(result.difference.ci95),
        f"{result.margin:g} ({result.require})",
        f"[{style[result.outcome]}]{result.outcome}[/]",
        f"{result.mde80:.4f}",
        f"{result.n_pairs} ({result.n_units} units)",
    )
    if not result.slices:
        return table
    slices = Table(
        "slice", "Δ", "interval", "level", "n pairs", "", title="slices, worst first"
    )
    for s in result.slices:
        slices.add_row(*(escape(c) for c in slice_row(result, s)))
    from rich.console import Group

    return Group(table, slices)


def _rating_ci(ci: list[float] | None) -> str:
    return f"[{ci[0]:.0f}, {ci[1]:.0f}]" if ci else "-"


def _human_files(specs: list[str] | None, runs: dict[str, Path]) -> dict[str, Path]:
    """`compare --human`: NAME=FILE per run, or one FILE when one run is compared."""
    files: dict[str, Path] = {}
    for spec in specs or []:
        name, sep, path = spec.partition("=")
        if not sep:
            if len(runs) != 1:
                raise UsageError(f"--human {spec}: name the run it rates, NAME=FILE")
            name, path = next(iter(runs)), spec
        if name not in runs:
            raise UsageError(f"--human {spec}: no run named {name!r} ({', '.join(runs)})")
        files[name] = Path(path)
    return files


@app.command()
def agree(
    run_dir: Annotated[Path, typer.Argument(help="A run directory written by `chatjudge run`.")],
    human: Annotated[
        Path, typer.Option("--human", help="JSONL/CSV of human ratings: id, label or score.")
    ],
    column: Annotated[
        str | None, typer.Option(help="The rating column (default: label, score or human).")
    ] = None,
    score: Annotated[
        str | None, typer.Option(help="Pointwise runs: the judge score to correlate.")
    ] = None,
) -> None:
    """Agreement of a run's judge with human raters: agreement with and without ties and
    Cohen's kappa (pairwise), Spearman/Kendall and Krippendorff's alpha (scores); and the
    run's metrics calibrated by the human labels (PPI++), in agreement.json's `calibrated`."""
    from chatjudge.analysis import agree_with_humans
    from chatjudge.rundir import AGREEMENT, write_json

    try:
        result = agree_with_humans(run_dir, human, column=column, score=score)
    except (ChatJudgeError, ValueError) as exc:
        raise _fail(str(exc)) from None
    out.print(_agreement_lines(result), highlight=False)
    if result.get("calibrated"):
        from chatjudge.report import calibration_table

        out.print(calibration_table({**result["calibration"], "calibrated": result["calibrated"]}))
    write_json(run_dir / AGREEMENT, result)
    err.print(f"agreement: {run_dir / AGREEMENT}", highlight=False)


def _ci(ci: list[float] | None) -> str:
    return f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-"


def _agreement_lines(r: dict[str, Any]) -> str:
    lines = [f"{r['judge']} vs humans on {r['n_items']} items ({r['protocol']})"]
    for key, title in (("with_ties", "with ties (S1)"), ("without_ties", "without ties (S2)")):
        a = r.get(key)
        if a and "error" in a:
            lines.append(f"  {title}: {a['error']}")
        elif a:
            kappa = "-" if a["kappa"] is None else f"{a['kappa']:.3f} {_ci(a['kappa_ci95'])}"
            lines.append(
                f"  {title}: agreement {a['agreement']:.3f} {_ci(a['ci95'])}, "
                f"kappa {kappa}, n={a['n']}"
            )
    if "correlation" in r and "error" in r["correlation"]:
        lines.append(f"  {r['score']} vs mean human: {r['correlation']['error']}")
    elif "correlation" in r:
        c = r["correlation"]
        lines.append(
            f"  {r['score']} vs mean human: Spearman {c['spearman']:.3f} "
            f"{_ci(c['spearman_ci95'])}, Kendall {c['kendall']:.3f} "
            f"{_ci(c['kendall_ci95'])}, n={c['n']}"
        )
    if "krippendorff_alpha" in r:
        k = r["krippendorff_alpha"]
        for key in ("humans", "humans_and_judge"):
            v = k[key]
            value = "-" if v["value"] is None else f"{v['value']:.3f} {_ci(v['ci95'])}"
            lines.append(f"  Krippendorff's alpha, {key.replace('_', ' ')}: {value}")
    return "\n".join(lines)


def main() -> None:
    app()


if __name__ == "__main__":
    main()

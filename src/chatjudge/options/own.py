"""The option groups of the commands with options of their own: `gate`, `align` and
`import`."""

from __future__ import annotations

from pathlib import Path, PurePath
from typing import Any

from pydantic import field_validator

from chatjudge.options.declare import OptionGroup, option
from chatjudge.options.texts import COLUMN_HELP, HUMAN_HELP, OVERWRITE_HELP


class GateSettings(OptionGroup):
    """What a gate on finished runs decides with (`chatjudge.analysis.gate.decide.gate`), and where
    it writes; `chatjudge.gate(**settings)` takes the same names as keywords."""

    @field_validator("protocol", mode="before")
    @classmethod
    def _a_path(cls, value: Any) -> Any:
        return str(value) if isinstance(value, PurePath) else value

    metric: str | None = option(
        None,
        "The metric (default: pairwise preference, else the first); a 0/1 metric's "
        "<metric>_pass_hat_<k> or <metric>_pass_at_<k> decides on tasks tried several times "
        "(rows sharing task_id, or --samples outputs), paired by task.",
    )
    margin: float = option(0.0, "How much worse still passes not-worse (metric units).")
    require: str = option("not-worse", "not-worse (default) or better.")
    cluster: str | None = option(None, "A column grouping rows that move together.")
    by: str | None = option(
        None, "A column: the difference per slice, worst first (no value: '(missing)')."
    )
    slices_must_not_regress: bool = option(
        False, "Fail when a slice of 30+ rows lies wholly below -margin (Bonferroni)."
    )
    data: Path | None = option(
        None, "The input rows, joined by id (older runs lack columns).", flags=("--data",)
    )
    protocol: str | None = option(
        None,
        "A custom protocol's .toml (with --sequential: any protocol).",
        flags=("--protocol", "-p"),
    )
    allow_mismatch: bool = option(False, "Gate runs judged differently (recorded in gate.json).")
    judge_check_level: float = option(
        0.01,
        "Both runs judged the same --judge-check file: the level at which a change of the "
        "judge's verdicts on it beyond its own noise refuses the gate (Bonferroni across a "
        "verdict's components).",
        gt=0,
        lt=1,
    )
    allow_judge_change: bool = option(
        False, "Gate even when the judge check says the judge changed (recorded in gate.json)."
    )
    out: Path | None = option(
        None,
        "gate.json's path (default: in the candidate run directory); with --sequential, the "
        "run directory to judge into.",
        flags=("--out", "-o"),
    )
    seed: int = option(0, "Bootstrap (and --sequential order) seed.")
    control: str | None = option(
        None,
        "length or style: one pairwise run decided on its length- (or length and markdown "
        "style-) controlled preference, the raw one shown beside it.",
    )
    human: Path | None = option(None, HUMAN_HELP)
    column: str | None = option(None, COLUMN_HELP)
    score: str | None = option(None, "--human, pointwise: the score the rating column rates.")
    overwrite: bool = option(False, OVERWRITE_HELP)


class GateOptions(GateSettings):
    """`chatjudge gate`: which runs are compared, and how it is decided (`GateSettings`);
    with `--sequential`, also what is judged (the run options it passes on are the run's,
    `COMMAND_OPTIONS`)."""

    baseline: Path | None = option(None, "The baseline's run directory.")
    candidate: Path | None = option(None, "The candidate's run directory.")
    markdown: Path | None = option(
        None,
        "Also write a Markdown summary: appended to $GITHUB_STEP_SUMMARY (GitHub's "
        "convention); any other FILE is replaced when it holds an earlier gate's summary, "
        "else only with --overwrite.",
    )
    sequential: bool = option(False, "Judge DATA batch by batch until decided.")
    judge: tuple[str, ...] = option((), "--sequential: the judge(s).", flags=("--judge", "-j"))
    baseline_data: Path | None = option(
        None, "--sequential, pointwise: the baseline's rows (same ids)."
    )
    batch: int = option(50, "--sequential: units (rows, or clusters) per batch.", ge=1)


class AlignOptions(OptionGroup):
    """`chatjudge align` (and `chatjudge.align(...)`'s keywords); the run options it passes
    on to its calls are the run's (`COMMAND_OPTIONS`)."""

    @field_validator("protocol", mode="before")
    @classmethod
    def _a_path(cls, value: Any) -> Any:
        return str(value) if isinstance(value, PurePath) else value

    human: Path | None = option(
        None,
        "JSONL/CSV of human labels (id, label or score; the `agree` format), a random sample "
        "of the run's rows. Required.",
    )
    optimizer: str | None = option(
        None, "The model that writes rules from the disagreements (PROVIDER/MODEL). Required."
    )
    out: Path | None = option(
        None,
        "Where protocol.toml, alignment.json, the optimiser's store and the judgings go. Required.",
        flags=("--out", "-o"),
    )
    judge: str | None = option(
        None, "The judge to align (default: the run's).", flags=("--judge", "-j")
    )
    protocol: str | None = option(
        None,
        "The run's protocol, where it is a custom one: its .toml file.",
        flags=("--protocol", "-p"),
    )
    held_out: float = option(
        0.4, "Share of the labelled rows held out for the final measurement.", gt=0, lt=1
    )
    seed: int = option(0, "The seed of the split, the folds and the examples.")
    column: str | None = option(None, COLUMN_HELP)
    score: str | None = option(None, "Pointwise: the score the rating column rates.")
    dry_run: bool = option(
        False,
        "Send nothing: print the calls align would send (after what its stores hold) and "
        "their cost as a range; exit 0.",
    )


class ImportOptions(OptionGroup):
    """`chatjudge import` (docs/traces.md); the importer checks the values (`--turns`,
    `--sample`, `--keep`) with the files, naming the flag."""

    turns: str = option(
        "last",
        "last: one row per conversation, its last assistant turn; all: one row per assistant turn.",
    )
    sample: int | None = option(
        None, "Keep N conversations, drawn at random with --seed.", metavar="N"
    )
    seed: int = option(0, "The seed of --sample.")
    redact: tuple[str, ...] = option(
        (),
        "Replace matches with [REDACTED] in everything written (repeatable), e.g. e-mail "
        "addresses or keys.",
        metavar="REGEX",
    )
    keep: tuple[str, ...] = option(
        (),
        "Copy this span attribute (or log field) into a column of its name, to slice by "
        "with `gate --by` (repeatable).",
        metavar="ATTR",
    )
    skip_invalid: bool = option(
        False,
        "Go on with the valid calls and list the invalid ones (file, line or span id) on "
        "stderr, exit 1; without it, invalid input stops everything (exit 2).",
    )
    overwrite: bool = option(False, OVERWRITE_HELP)


class ExportOptions(OptionGroup):
    """`chatjudge export` (docs/traces.md): where the records go, and what they mask."""

    otlp: Path | None = option(
        None,
        "Write the records to this OTLP/JSON file: one ExportLogsServiceRequest a line, as "
        "the OpenTelemetry SDK's OTLP JSON file exporter writes them.",
        metavar="FILE.jsonl",
    )
    otlp_endpoint: str | None = option(
        None,
        "Send the records over OTLP/HTTP (protobuf) to this collector's base URL (/v1/logs "
        "is appended, as to OTEL_EXPORTER_OTLP_ENDPOINT), with the SDK's exporter: "
        "OTEL_EXPORTER_OTLP_HEADERS and _TIMEOUT apply, batches of 512, retried as the SDK "
        "does. Needs the otel extra.",
        metavar="URL",
    )
    redact: tuple[str, ...] = option(
        (),
        "Replace matches with [REDACTED] in every record (repeatable), on top of the key "
        "masking every record gets.",
        metavar="REGEX",
    )
    protocol: str | None = option(
        None,
        "A custom protocol's .toml (the run's built-in one is found by name).",
        flags=("--protocol", "-p"),
    )
    overwrite: bool = option(
        False,
        "Replace an existing --otlp file that is not an earlier export (which is replaced "
        "anyway); never a run's files nor the data it judged.",
    )


class RealismOptions(OptionGroup):
    """`chatjudge realism` (and `chatjudge.realism(...)`'s keywords): its models, protocol
    and output; the run and simulation options it passes on are simulate's
    (`COMMAND_OPTIONS`)."""

    @field_validator("protocol", mode="before")
    @classmethod
    def _a_path(cls, value: Any) -> Any:
        return str(value) if isinstance(value, PurePath) else value

    user: str | None = option(
        None, "The simulated user's model (default: the assistant's).", flags=("--user", "-u")
    )
    goal_model: str | None = option(
        None, "The model that writes each real conversation's goal (default: the user model)."
    )
    judge: str | None = option(
        None,
        "The judge of disclosure, pushback and the discriminator (default: the user model).",
        flags=("--judge", "-j"),
    )
    protocol: str | None = option(
        None,
        "Also judge real and simulated conversations with this protocol (name or .toml): "
        "the metric gap.",
        flags=("--protocol", "-p"),
    )
    max_turns: int | None = option(
        None,
        "Assistant replies per simulated conversation at most (default: the longest real "
        "conversation's user turns); the share cut by it is reported.",
        ge=1,
    )
    tune: bool = option(
        False,
        "Also tune the simulated user: the optimiser writes guidance on 60% of the goals, "
        "chosen by the discriminator's cross-validated accuracy, proven on the 40% held out "
        "(at least 50; --seed splits them); writes DIR/user_prompt.txt.",
    )
    optimizer: str | None = option(
        None,
        "--tune: the model that writes the guidance from the judge's reasons and the "
        "behaviour gaps (PROVIDER/MODEL).",
    )
    out: Path | None = option(
        None,
        "The directory of goals.jsonl, simulated.jsonl, realism.json, report.html and the "
        "stores (the same command resumes there). Required.",
        flags=("--out", "-o"),
    )

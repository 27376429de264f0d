"""A command's pre-flight, written once for the commands that call models (`run`, `generate`,
`simulate`, and the judging of `gate --sequential`): everything is checked before anything
is sent, in the order that makes bad input cost nothing. The data is read and validated
first; then the models are built (their keys checked here, or by each Ray worker) and the
options checked against them; then the output is checked, and created; Ray workers start
last, only for a command that has passed every check.

A dry run goes through the same steps with the executor of this process (it sends
nothing, so it starts no Ray worker) and creates nothing; only its `estimate` is asked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chatjudge.chat.fields import EXPECTED_TOOL_CALLS, FieldSpec
from chatjudge.data import Source, Validation, validate
from chatjudge.data.shard_rows import of
from chatjudge.models import Model, ModelSpec, check_options, get_model
from chatjudge.options import ClientOptions, RunConfig
from chatjudge.ray_executor import distribute, key_checked_here
from chatjudge.rundir import default_out_dir, default_output, prepare_output


class Setup:
    """One command's set-up, step by step: made with the data validated; then `model`,
    `check`, `output_path` and `prepare` for the output, and `distribute` last."""

    def __init__(
        self,
        command: str,
        data: Any,
        column_map: Mapping[str, str] | None,
        fields: Sequence[FieldSpec],
        config: RunConfig,
        *,
        dry_run: bool = False,
    ) -> None:
        """`command`: `run`, `generate` or `simulate` (which options name its output);
        `fields`: what each row must hold."""
        self.command = command
        self.dry_run = dry_run
        self.config = config.in_process() if dry_run else config
        # tool-trajectory compares values: an integer beyond 64 bits keeps every digit
        exact = any(f.name == EXPECTED_TOOL_CALLS for f in fields)
        self.source = Source(data, column_map, exact_ints=exact)
        run = self.config.run
        self.validation: Validation = validate(
            self.source,
            fields,
            limit=run.limit,
            skip_invalid=run.skip_invalid,
            shard=of(run.shard),
            checked_tools=run.checked(),
        )

    def model(
        self, spec: ModelSpec, *, client: ClientOptions | None = None, call_with: str = "prompt"
    ) -> Model:
        """A model of the command (reached with `client`, by default the command's); a dry
        run sends nothing, so it needs no key."""
        check_key = key_checked_here(self.config) and not self.dry_run
        return get_model(
            spec, client or self.config.client, call_with=call_with, check_key=check_key
        )

    def check(self, models: Sequence[Model]) -> None:
        """Refuse an option that one of `models` cannot honour."""
        check_options(models, self.config)

    def output_path(self, out: str | Path | None, kind: str, models: Sequence[Model]) -> Path:
        """`out`, or the command's default output, named after the data, `kind`, the models
        and the options that change results, so that the same command finds it and resumes
        (`run`: a directory; `generate` and `simulate`: a JSONL file)."""
        if out is not None:
            return Path(out)
        default = default_out_dir if self.command == "run" else default_output
        names = [m.name for m in models]
        return default(self.source.name, kind, names, self.config.fingerprint(self.command))

    @property
    def inputs(self) -> list[Path]:
        """The files the command reads, which it never writes over."""
        data = self.source.file()
        return [data] if data is not None else []

    def prepare(self, directory: Path, files: tuple[Path, ...]) -> None:
        """`directory` can be written and `files` there replaced; it is created, unless this
        is a dry run."""
        prepare_output(directory, files, create=not self.dry_run)

    def distribute(self, models: Sequence[Model], *, call_with: str = "prompt") -> list[Model]:
        """`models` as the executor runs them (on Ray workers, started now), once every
        check has passed."""
        return distribute(models, self.config, call_with=call_with)

"""Where `chatjudge realism` writes, checked at set-up, before the first goal is paid for:
every file of DIR (never the input, never through a link, writable); the record
`realism.run.json` of the command that wrote them (the same command of the same data,
models and options resumes there; another, or files of these names that no realism wrote,
are refused unless `--overwrite`); and `simulated.jsonl` as `simulate` itself would check
it, which it does only when it starts, after the goals."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from chatjudge.errors import UsageError
from chatjudge.formats.io import read_model, write_json
from chatjudge.formats.produced import ASSISTANT, SIMULATED_USER, ProducedInfo
from chatjudge.models import ModelSpec, get_model
from chatjudge.options import RunConfig
from chatjudge.outputs import check_produced_output, check_written
from chatjudge.rundir import Produced, produced_differences

RECORD = "realism.run.json"
GOALS_NAME = "goals"  # the data name `simulate` gives goals.jsonl (its stem)


def simulation_record(
    assistant: ModelSpec, user: ModelSpec | None, config: RunConfig
) -> ProducedInfo:
    """The record `simulate` writes beside simulated.jsonl when realism runs it on
    goals.jsonl (`produce.build_simulation`'s: its models named as it names them)."""
    s, client = config.simulation, config.client
    assistant_client = client.model_copy(update={"base_url": s.assistant_base_url})
    name = get_model(assistant, assistant_client, call_with="messages", check_key=False).name
    user_urls = s.user_base_url or s.assistant_base_url
    user_name = name
    if not (user is None or (user == assistant and user_urls == s.assistant_base_url)):
        user_client = client.model_copy(update={"base_url": user_urls})
        user_name = get_model(user, user_client, call_with="messages", check_key=False).name
    return ProducedInfo(command="simulate", models={ASSISTANT: name, SIMULATED_USER: user_name},
                        data=GOALS_NAME, options=config.options("simulate"))  # fmt: skip


def realism_record(
    data: str, models: dict[str, str], protocol: str | None, config: RunConfig
) -> ProducedInfo:
    """`realism.run.json`: the data, every role's model, `--protocol` (in `field`) and the
    options."""
    return ProducedInfo(command="realism", models=models, field=protocol, data=data,
                        options=config.options("realism"))  # fmt: skip


def check_outputs(
    directory: Path,
    written: Sequence[Path],
    inputs: Sequence[Path],
    record: ProducedInfo,
    simulation: ProducedInfo,
    *,
    folders: Sequence[Path] = (),
    overwrite: bool,
) -> None:
    """Every check of DIR's outputs (`folders`: the run directories it writes too);
    raises `UsageError` naming what would be replaced."""
    check_written(written[0], written, inputs)
    path = directory / RECORD
    if not overwrite and path.is_file():
        found = produced_differences(read_model(path, ProducedInfo), record)
        if found:
            raise UsageError(
                f"{directory} holds a different realism ({'; '.join(found)}): its files would "
                "be replaced. Use another --out, or --overwrite to replace them."
            )
    elif not overwrite:
        files = [p for p in written if p.suffix != ".sqlite"]  # a store is only added to
        there = [p.name for p in (*files, *folders) if p.exists()]
        if there:
            raise UsageError(
                f"{directory} holds {', '.join(there)} but no {RECORD}: no chatjudge realism "
                "wrote them, and they would be replaced. Use another --out, or --overwrite "
                "to replace them."
            )
    check_produced_output(Produced(directory / "simulated.jsonl"), simulation, inputs,
                          overwrite=overwrite)  # fmt: skip


def write_record(directory: Path, record: ProducedInfo) -> None:
    """Written before the first call, as `run` writes run.json."""
    write_json(directory / RECORD, record)

"""Producing what is judged: replies of the models under test (`generate`) and
conversations with a simulated user (`simulate`), through the same model layer, store,
retries and progress as judging. Both return the path of the JSONL file they wrote,
which `chatjudge.evaluate` and `chatjudge run` read as it is.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chatjudge.calls.run_sync import run_sync
from chatjudge.errors import UsageError
from chatjudge.formats.produced import ProducedInfo
from chatjudge.models import ModelSpec
from chatjudge.options import RunConfig, SimulationOptions
from chatjudge.outputs import check_produced_output
from chatjudge.preflight import Setup
from chatjudge.produce import generation as gen
from chatjudge.produce import simulation as sim
from chatjudge.produce.tool_answers import assistant_tools, tool_answering
from chatjudge.produce.user import load_instructions
from chatjudge.rundir import Produced

_USER_TEMPERATURE = SimulationOptions.model_fields["user_temperature"].default


def build_generation(
    data: Any,
    model: ModelSpec,
    field: str,
    out: str | Path | None,
    *,
    column_map: Mapping[str, str] | None,
    config: RunConfig,
    dry_run: bool = False,
) -> gen.Generation:
    """Validate everything (data first) and assemble a generation; nothing is sent yet.
    `dry_run`: for its `estimate` only: nothing is created and no Ray worker starts."""
    gen.check_target(field)
    setup = Setup("generate", data, column_map, gen.FIELDS, config, dry_run=dry_run)
    built = setup.model(model, call_with="messages")
    setup.check([built])
    path = setup.output_path(out, f"generate-{field}", [built])
    made = ProducedInfo(
        command="generate",
        models={"model_under_test": built.name},
        field=field,
        data=setup.source.name,
        options=setup.config.options("generate"),
    )
    tools = tool_answering(setup.config.tools, setup.validation.tool_rows, built)
    output = _output(setup, path, made)
    (built,) = setup.distribute([built], call_with="messages")
    return gen.Generation(
        setup.source, setup.validation, built, field, setup.config, output, made, tools
    )


def build_simulation(
    data: Any,
    assistant: ModelSpec,
    user: ModelSpec | None,
    out: str | Path | None,
    *,
    column_map: Mapping[str, str] | None,
    config: RunConfig,
    dry_run: bool = False,
) -> sim.Simulation:
    """Validate everything (data first) and assemble a simulation; nothing is sent yet.
    `dry_run`: for its `estimate` only: nothing is created and no Ray worker starts."""
    setup = Setup("simulate", data, column_map, sim.FIELDS, config, dry_run=dry_run)
    s = setup.config.simulation
    load_instructions(s.user_prompt)  # a bad --user-prompt is refused before any call
    client = setup.config.client
    built = setup.model(
        assistant,
        client=client.model_copy(update={"base_url": s.assistant_base_url}),
        call_with="messages",
    )
    user_urls = s.user_base_url or s.assistant_base_url
    if user is None or (user == assistant and user_urls == s.assistant_base_url):
        simulated = built  # one model in both roles: one worker pool, one concurrency cap
    else:
        user_client = client.model_copy(update={"base_url": user_urls})
        simulated = setup.model(user, client=user_client, call_with="messages")
    setup.check([built])
    if "temperature" not in simulated.honours and s.user_temperature != _USER_TEMPERATURE:
        raise UsageError(f"{simulated.name} cannot honour --user-temperature")
    path = setup.output_path(out, "simulate", [built, simulated])
    made = ProducedInfo(
        command="simulate",
        models={"assistant": built.name, "simulated_user": simulated.name},
        data=setup.source.name,
        options=setup.config.options("simulate"),
    )
    tools = assistant_tools(setup.config.tools, built)
    output = _output(setup, path, made)
    built, simulated = setup.distribute([built, simulated], call_with="messages")
    return sim.Simulation(
        setup.source, setup.validation, built, simulated, setup.config, output, made, tools
    )


def _output(setup: Setup, out: Path, made: ProducedInfo) -> Produced:
    """Where the command writes, checked before anything is sent: not over its input, nor
    over another command's output unless `--overwrite`; and it can be written."""
    produced = Produced(out)
    overwrite = setup.config.run.overwrite
    check_produced_output(produced, made, setup.inputs, overwrite=overwrite)
    setup.prepare(out.parent, (out, produced.store, produced.summary, produced.record))
    return produced


def generate(
    data: Any,
    model: ModelSpec,
    field: str = "response",
    out: str | Path | None = None,
    *,
    column_map: Mapping[str, str] | None = None,
    **options: Any,
) -> Path:
    """Fill `field` (`response` or `baseline_model_response`) of every row of `data` with
    `model`'s reply to its `history` and `prompt`; returns the JSONL file written.

    `model`: `local`, `openai/MODEL`, ..., or a callable taking OpenAI-style messages and
    returning the reply text. `options`: as `chatjudge generate`'s flags (`concurrency`,
    `temperature`, `base_url`, ...). Re-running with the same arguments resumes.
    """
    config = RunConfig.from_options(options, command="generate", progress=False)
    generation = build_generation(data, model, field, out, column_map=column_map, config=config)
    run_sync(generation.run())
    return generation.output.rows


def simulate(
    data: Any,
    assistant: ModelSpec,
    user: ModelSpec | None = None,
    out: str | Path | None = None,
    *,
    column_map: Mapping[str, str] | None = None,
    **options: Any,
) -> Path:
    """Let a simulated user (`user`, by default the assistant's own model) with each row's
    `question` as hidden goal talk with `assistant`; returns the JSONL file written, ready
    for `interactivity-accuracy`.

    Models as for `generate`. `options`: as `chatjudge simulate`'s flags (`max_turns`,
    `samples`, `user_temperature`, `assistant_base_url`, ...). Re-running resumes.
    """
    config = RunConfig.from_options(options, command="simulate", progress=False)
    simulation = build_simulation(data, assistant, user, out, column_map=column_map, config=config)
    run_sync(simulation.run())
    return simulation.output.rows


__all__ = ["build_generation", "build_simulation", "generate", "simulate"]

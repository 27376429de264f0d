"""Which options each command takes, by name, from the groups that declare them."""

from __future__ import annotations

from chatjudge.options.calling import (
    ClientOptions,
    GenerationOptions,
    PricingOptions,
    RateOptions,
    RetryOptions,
    RunOptions,
    SimulationOptions,
    ToolOptions,
)
from chatjudge.options.declare import OptionGroup
from chatjudge.options.own import (
    AlignOptions,
    ExportOptions,
    GateOptions,
    GateSettings,
    ImportOptions,
    RealismOptions,
)


def _names(*groups: type[OptionGroup], but: tuple[str, ...] = ()) -> tuple[str, ...]:
    return tuple(n for g in groups for n in g.model_fields if n not in but)


# The groups of every command that calls models (run, generate, simulate), in help order.
_CALLS = (RunOptions, GenerationOptions, RetryOptions, RateOptions, PricingOptions, ClientOptions)

# What a judge is shown of a row, and how a deterministic protocol scores: options of `run`
# only.
_JUDGE_VIEW = (
    "include_system",
    "judge_sees",
    "tool_result_chars",
    "match",
    "checked_tools",
    "judge_check",
    "judge_check_samples",
)

# Which options each command takes (its CLI flags and its Python keywords).
COMMAND_OPTIONS: dict[str, tuple[str, ...]] = {
    "run": _names(*_CALLS),
    "generate": _names(*_CALLS, ToolOptions, but=("flip", *_JUDGE_VIEW, "parse_retries")),
    # No recording to replay in a simulation: `--tool-replay` is not an option of simulate.
    "simulate": _names(
        *_CALLS,
        SimulationOptions,
        ToolOptions,
        but=("flip", *_JUDGE_VIEW, "parse_retries", "base_url", "tool_replay", "no_tools"),
    ),
    "import": _names(ImportOptions),
    # Its models and output, then simulate's options (no --tools: real conversations' tools
    # are not replayed), the turn cap its own (default: the longest real conversation).
    "realism": (
        *_names(RealismOptions),
        *_names(
            *_CALLS,
            SimulationOptions,
            but=(
                "flip",
                *_JUDGE_VIEW,
                "parse_retries",
                "max_turns",
                "shard",
                "limit",
                "skip_invalid",
            ),
        ),
    ),
    "export": _names(ExportOptions),
    # In the order of `gate --help`: which runs, how it decides, what --sequential judges
    # and the run options it passes on, the corrections, --overwrite.
    "gate": (
        "baseline",
        "candidate",
        *_names(GateSettings, but=("seed", "control", "human", "column", "score", "overwrite")),
        "markdown",
        "seed",
        "sequential",
        "judge",
        "baseline_data",
        "batch",
        "base_url",
        "concurrency",
        "samples",
        "max_cost_usd",
        "price_in",
        "price_out",
        "prices",
        "control",
        "human",
        "column",
        "score",
        "overwrite",
    ),
    # Its own options, then the run options its judge's and optimiser's calls take.
    "align": (
        *_names(AlignOptions),
        "concurrency",
        "base_url",
        "max_retries",
        "timeout",
        "max_cost_usd",
        "price_in",
        "price_out",
        "prices",
    ),
}

# The commands with a group of their own, whose names win over the run's (`gate --seed`).
OWN_OPTIONS: dict[str, type[OptionGroup]] = {
    "gate": GateOptions,
    "align": AlignOptions,
    "import": ImportOptions,
    "export": ExportOptions,
    "realism": RealismOptions,
}

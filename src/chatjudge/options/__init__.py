"""Every run option, declared once: its type, default, limits, help text and CLI flag.

The CLI builds its flags from these declarations, `evaluate(**options)` takes the same
names as keywords, and the default run directory is named after the options marked
`fingerprint` (those that change results). Adding an option is one `option(...)` line
in its group, plus the code that uses it.
"""

from chatjudge.options.calling import (
    ClientOptions,
    GenerationOptions,
    PricingOptions,
    SimulationOptions,
    ToolOptions,
)
from chatjudge.options.config import OPTION_GROUPS, RunConfig, describe, option_fields
from chatjudge.options.declare import flags_of, help_of, metavar_of
from chatjudge.options.own import (
    AlignOptions,
    ExportOptions,
    GateOptions,
    GateSettings,
    ImportOptions,
    RealismOptions,
)
from chatjudge.options.per_command import COMMAND_OPTIONS
from chatjudge.options.texts import COLUMN_HELP, HUMAN_HELP, OVERWRITE_HELP

__all__ = [
    "COLUMN_HELP",
    "COMMAND_OPTIONS",
    "HUMAN_HELP",
    "OPTION_GROUPS",
    "OVERWRITE_HELP",
    "ClientOptions",
    "AlignOptions",
    "RealismOptions",
    "GateOptions",
    "GateSettings",
    "GenerationOptions",
    "ExportOptions",
    "ImportOptions",
    "PricingOptions",
    "RunConfig",
    "SimulationOptions",
    "ToolOptions",
    "describe",
    "flags_of",
    "help_of",
    "metavar_of",
    "option_fields",
]

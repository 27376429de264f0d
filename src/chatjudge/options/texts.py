"""Help texts that several commands' options share, so that they say the same thing."""

from chatjudge.conversation import TOOL_RESULT_CHARS

# Every command that writes takes --overwrite with this help (`run`, `generate`, `simulate`
# through their option groups; `import`, `merge`, `gate` through
# `chatjudge.cli.common.OverwriteOpt`).
OVERWRITE_HELP = (
    "Replace what --out holds when it is not this command's output of the same data and "
    "options; without it, that is refused (exit 2), and the same command resumes there. "
    "Never over the command's own input, nor over a run's own files."
)

# `--human` and `--column` of `gate`, `report` and `agree`.
HUMAN_HELP = (
    "JSONL/CSV of human ratings (id, label or score; the `agree` format): adds "
    "human-calibrated (PPI++) estimates of the metrics."
)
COLUMN_HELP = "The rating column (default: label, score or human)."

# What a judge is shown of a row: `run`'s options and `prompt`'s flags.
JUDGE_SEES_HELP = (
    "What a response slot shows the judge: trajectory (the default) shows each tool call, "
    "its result and the final text where the row holds the response's trajectory with a "
    "tool call (its column named by the protocol's field, as baseline_trajectory); final "
    "shows only the final text."
)
TOOL_RESULT_CHARS_HELP = (
    f"A tool result's characters the judge reads (default {TOOL_RESULT_CHARS:,}); a longer "
    "one is cut, ending with `… [cut N of M characters]`."
)

"""Help texts that several commands' options share, so that they say the same thing."""

from chatjudge.chat.render import TOOL_RESULT_CHARS

# Every command that writes takes --overwrite with this help (`run`, `generate`, `simulate`
# through their option groups; `import`, `merge`, `gate` through
# `chatjudge.cli.common.OverwriteOpt`).
OVERWRITE_HELP = (
    "Replace what --out holds when it is not this command's output of the same data and "
    "options; without it, that is refused (exit 2), and the same command resumes there. "
    "Never over the command's own input, nor over a run's own files, nor through a symbolic "
    "link."
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

# How the model under test's tool calls are answered: `generate` and `simulate`.
TOOL_REPLAY_HELP = (
    "Answer each tool call of the model under test with the recorded result of a call to "
    "the same tool with equal arguments (canonical JSON; otherwise the text as recorded) "
    "in the row's history, prompt or trajectories (baseline_trajectory); a call with none "
    "gets a tool message saying so, counted as unmatched_tool_calls."
)
NO_TOOLS_HELP = (
    "Answer rows with tools without offering them, for a model that cannot call tools "
    "(local, for one): it reads the row's tool calls and results as the judge does, as text "
    "in the assistant's messages, and answers from what it knows. Not like for like with a "
    "production reply that used tools: counted as rows_without_tools, and said."
)
TOOLS_HELP = (
    "Answer the tool calls with your Python functions: OBJECT of MODULE (importable from "
    "the current directory) is a dict of tool name to function, sync or async, called "
    "with the call's arguments as keywords; what it returns is the result (text as it is, "
    "anything else as JSON). An exception, a timeout or an unknown name goes back to the "
    "model as the tool's error text, counted as tool_errors. A re-run calls them again."
)

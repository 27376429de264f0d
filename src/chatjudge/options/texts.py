"""Help texts that several commands' options share, so that they say the same thing."""

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

"""Summaries as functions of rows: the run's (`run_summary`), `generate`'s
(`generate_summary`) and `simulate`'s (`simulate_summary`). The commands and `chatjudge
merge` (which rebuilds the summary of joined shards from their rows) both build them here,
so a summary is computed one way whoever writes it. The models they build are
`chatjudge.formats`'."""

"""`chatjudge gate`: should the candidate ship? The gate on finished runs (`decide`) and the
gate that drives judging until it decides (`sequential_judging`), over one pairing of rows:
each run's rows as values of a metric (`units`), paired by id (`pair_rows`), decided on and
recorded (`assemble`), with the judge's known biases corrected (`corrections`) and small
samples decided on what bounds them (`small`). Its text for people is in
`chatjudge.report.gate_text` (the report's layer: it renders with the report's formats).
"""

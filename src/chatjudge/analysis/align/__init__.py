"""`chatjudge align`: a judge's protocol with guidance learnt from a few human labels
(`align_run`), kept only when it agrees with people better on held-out labels: the split and
the search (`search`), the measures (`measure`), the guidance in the prompt (`guidance`),
the model calls (`model_calls`) and the terminal text (`text`).
"""

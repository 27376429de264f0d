"""`chatjudge realism`: simulated users measured against real ones (DESIGN §16): real
conversations turned into goals, simulated, marked and compared paired by goal
(`command`, `statistics`), and the simulated user tuned until a judge cannot tell
(`tune`). The Python API is `chatjudge.realism(...)` (`measuring.realism`)."""

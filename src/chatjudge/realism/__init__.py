"""`chatjudge realism`: simulated users measured against real ones (DESIGN §16)."""

"""Small custom protocols for tests where the local model judges and what runs around it
is the point, not the template."""

# The local judge's cheapest verdict: a short prompt and one number to reply (~40 prompt
# tokens, ~0.3 s of CPU a call, where a built-in template's ~1,000 tokens cost ~10 s).
POLITE = """name = "polite"
kind = "pointwise"
template = "Is this reply polite? {response}"

[[fields]]
name = "response"

[[scores]]
name = "polite"
path = "polite"
min = 1
max = 3
"""

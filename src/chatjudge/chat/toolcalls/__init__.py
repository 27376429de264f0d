"""Tool-call data at the bottom of the layers: definitions (`definitions`), the rule that
pairs calls with their results and writes their ids (`call_ids`), and the calls a row
expects (`expected`). The row rules that read them from a row live in
`chatjudge.data.tool_rows`; the providers' wire forms in `chatjudge.models.tool_wire`.
"""

"""Production traces and logs turned into rows for a pairwise replay (`chatjudge import`)."""

from chatjudge.options import ImportOptions
from chatjudge.traces.importer import Imported, TraceError, import_traces
from chatjudge.traces.rows import ImportedRow

__all__ = ["ImportOptions", "Imported", "ImportedRow", "TraceError", "import_traces"]

"""Production traces and logs turned into rows for a pairwise replay (`chatjudge import`)."""

from chatjudge.traces.importer import Imported, ImportOptions, TraceError, import_traces
from chatjudge.traces.rows import ImportedRow

__all__ = ["ImportOptions", "Imported", "ImportedRow", "TraceError", "import_traces"]

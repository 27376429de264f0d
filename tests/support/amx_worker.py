"""The real llama.cpp worker, reporting an AMX build: for the AMX warning and crash tests.

No machine of this project's CI is guaranteed to have AMX, so the report is the one
thing made up; the model, the process and the protocol are the real ones.
"""

import llama_cpp

from chatjudge.models import llama_worker

_real_info = llama_cpp.llama_print_system_info
llama_cpp.llama_print_system_info = lambda: _real_info() + b"AMX_INT8 = 1 | "

if __name__ == "__main__":
    llama_worker.main()

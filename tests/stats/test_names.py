"""`chatjudge.stats` imports a name's module when the name is first used (a run's summary
loads only the bootstraps and style control); every name is still the function or class its
module defines, whichever of its modules were imported before."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import importlib, pkgutil, types
import chatjudge.stats.label_agreement, chatjudge.stats.rank_correlation  # first
import chatjudge.stats.style
import chatjudge.stats as stats
for name in stats.__all__:
    assert not isinstance(getattr(stats, name), types.ModuleType), name
for info in pkgutil.iter_modules(stats.__path__):
    module = importlib.import_module(f"chatjudge.stats.{info.name}")
    for name in set(stats.__all__) & set(vars(module)):
        value = getattr(module, name)
        if getattr(value, "__module__", None) == module.__name__:  # defined there
            assert getattr(stats, name) is value, name
from chatjudge.stats import agreement, correlation
assert callable(agreement) and callable(correlation)
print(len(stats.__all__))
"""


def test_every_name_is_its_modules_whatever_was_imported_first() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert int(done.stdout) >= 36

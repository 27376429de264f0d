"""`chatjudge realism`: simulated users measured against real ones (DESIGN §16).

`chatjudge.realism(...)` is the command's Python API; as this package has the same name, the
package itself is callable (`run.realism`), whichever of the two was imported first."""

from __future__ import annotations

import sys
import types
from typing import Any


class _CallablePackage(types.ModuleType):
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        from chatjudge.realism.run import realism

        return realism(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage

"""The one call path every model call takes, whether it judges, answers or simulates a user:
the request key (`keys`), the store lookup and commit (`ledger`), retries and rate limits
(`policy`) through a model's `Caller`, the worker pool (`pool`), usage and cost (`usage`),
and the progress bar (`progress`). A model in a part of a command makes its calls as a
`role.Role`; what a call needs of the unit of work it is for (its place in the budget's
line, its sample, the dry run's accounting) is that unit's (`unit.Unit`), set once where
the unit starts. A command opens them once, as one `session.Session`,
and only plans calls and folds replies through it: judging (`runner`) and producing
(`produce`); the Ray code (`ray_executor`) sits beneath the callers.
"""

from chatjudge.calls.caller import Caller
from chatjudge.calls.keys import KEY_VERSION, KeyMaker, LegacyKeyMaker
from chatjudge.calls.ledger import Ledger
from chatjudge.calls.policy import CallPolicy, RetryConfig
from chatjudge.calls.pool import Pool
from chatjudge.calls.progress import RunProgress
from chatjudge.calls.role import Role
from chatjudge.calls.usage import Usage

__all__ = [
    "KEY_VERSION",
    "CallPolicy",
    "Caller",
    "KeyMaker",
    "LegacyKeyMaker",
    "Ledger",
    "Pool",
    "RetryConfig",
    "Role",
    "RunProgress",
    "Usage",
]

"""The one call path every model call takes, whether it judges, answers or simulates a user:
the request key (`keys`), the store lookup and commit (`ledger`), retries and rate limits
(`policy`) through a model's `Caller`, the worker pool (`pool`), usage and cost (`usage`),
and the progress bar (`progress`). Judging (`runner`), producing (`produce`) and the Ray
code (`cluster`) sit on it.
"""

from chatjudge.calls.caller import Caller
from chatjudge.calls.keys import KEY_VERSION, KeyMaker, LegacyKeyMaker
from chatjudge.calls.ledger import Ledger
from chatjudge.calls.policy import CallPolicy, RetryConfig
from chatjudge.calls.pool import Pool
from chatjudge.calls.progress import RunProgress
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
    "RunProgress",
    "Usage",
]

"""chatjudge.cli.common's one ladder (`stopping`) from how a command that sends calls
stopped to what it says and its exit status: `run`, `generate` and `simulate` share it."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from chatjudge.cli.common import stopping
from chatjudge.errors import (
    BudgetReachedError,
    ExitCode,
    FatalModelError,
    UsageError,
)


@pytest.mark.parametrize(
    ("raised", "code", "said"),
    [
        (BudgetReachedError("the budget is reached", summary={"n": 3}), ExitCode.BUDGET,
         "error: the budget is reached"),
        (FatalModelError("stopped: bad key", finished=2), ExitCode.FAILED,
         "error: stopped: bad key\n2 finished item(s) are kept in D; after the fix, the same "
         "command resumes."),
        (FatalModelError("stopped: bad key"), ExitCode.USAGE, "0 finished item(s)"),
        (UsageError("no such thing"), ExitCode.USAGE, "error: no such thing"),
        (KeyboardInterrupt(), ExitCode.INTERRUPTED,
         "error: interrupted: calls kept; run the same command again to resume."),
    ],
)  # fmt: skip
def test_each_way_a_command_stops_says_what_is_kept_and_exits_with_its_status(
    raised: BaseException, code: ExitCode, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    shown: list[dict[str, Any]] = []
    with pytest.raises(typer.Exit) as ended, stopping("item(s) are kept in D", "calls kept",
                                                      shown.append):  # fmt: skip
        raise raised
    assert ended.value.exit_code == code
    assert said in capsys.readouterr().err
    assert shown == ([{"n": 3}] if isinstance(raised, BudgetReachedError) else [])


def test_a_command_that_ends_well_passes_through() -> None:
    with stopping("item(s)", "calls", lambda s: None):
        done = 1
    assert done == 1

"""What the realism statistics read: for each goal, its real conversation and its simulated ones,
reduced to what the measures need (user messages, who ended, the judge's marks), never raw rows.

The command (`chatjudge realism`) builds these from goals, simulations and judge calls; the
statistics (`chatjudge.user_realism.statistics`) read only these, so that each side is tested alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class UserSide:
    """One conversation as the measures see it: the user's side, tool messages left out."""

    user_messages: tuple[str, ...]
    # The user closed the conversation (simulated: before the turn cap; real: see the command).
    ended_by_user: bool
    # Per fact of the goal: given in the first user message (a judge's mark); None when not marked.
    disclosed: tuple[bool, ...] | None = None
    # Per user message: it pushes back on or corrects the assistant (a judge's mark); None
    # when not marked.
    pushback: tuple[bool, ...] | None = None
    # The protocol's metrics on this conversation (`--protocol`); empty without one.
    metrics: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class GoalSample:
    """A goal: its real conversation and its K simulated ones (failed simulations left out)."""

    goal_id: str
    real: UserSide
    simulated: tuple[UserSide, ...]
    # The discriminator on (real, first simulated) shown in both orders: True where it picked the
    # real user; one entry per order it answered (an unparseable verdict is left out).
    discriminations: tuple[bool, ...] = ()
    # Its reasons, as it wrote them, for grouping and counting.
    reasons: tuple[str, ...] = ()

"""`chatjudge realism`'s fixed prompts, as `chatjudge prompt --realism NAME` prints them: the
goal writer's (`goal`) and the judge's (`disclosure`, `pushback`, `discriminator`), their
placeholders left in braces, so that what the models are asked is read, never guessed."""

from __future__ import annotations

from chatjudge.errors import UsageError
from chatjudge.user_realism.goals import goal_template
from chatjudge.user_realism.marks import PROMPTS, prompt

NAMES = ("goal", *PROMPTS)


def fixed_prompt(name: str) -> str:
    """The prompt `name` with its placeholders shown (`{conversation}`, `{facts}`, ...)."""
    if name not in NAMES:
        raise UsageError(f"--realism {name}: the prompts are {', '.join(NAMES)}")
    template = goal_template() if name == "goal" else prompt(name)
    return template.render({f: "{" + f + "}" for f in template.fields})

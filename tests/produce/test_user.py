"""The simulated user's instructions file (`--user-prompt`): its leading `#` lines are
comments, skipped; the rest is the instructions as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatjudge.errors import UsageError
from chatjudge.produce.user import comment_free, load_instructions


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("# made by realism --tune\n# seed: 0\nWant {question}.\n", "Want {question}.\n"),
        ("#no space\nWant {question}", "Want {question}"),
        (
            "# only\n\n# not a comment: after an empty line\n{question}",
            "\n# not a comment: after an empty line\n{question}",
        ),
        (
            "Want {question}.\n# kept: not at the top\n",
            "Want {question}.\n# kept: not at the top\n",
        ),
        (" # indented: kept\n{question}", " # indented: kept\n{question}"),
        ("# a\r\n# b\r\nWant {question}\r\n", "Want {question}\r\n"),
        ("Want {question}", "Want {question}"),
    ],
)
def test_leading_hash_lines_are_comments(text: str, kept: str) -> None:
    assert comment_free(text) == kept


def test_a_file_is_read_without_its_comments(tmp_path: Path) -> None:
    own = tmp_path / "user.txt"
    own.write_text("# provenance: {not a placeholder}\nWant {question}; end with {end_marker}")
    template = load_instructions(own)
    assert template.fields == ("question", "end_marker")
    assert template.render({"question": "Q", "end_marker": "E"}) == "Want Q; end with E"


def test_a_file_of_comments_only_has_no_question(tmp_path: Path) -> None:
    own = tmp_path / "user.txt"
    own.write_text("# {question}\n")
    with pytest.raises(UsageError, match="must use"):
        load_instructions(own)

"""`chatjudge.writing`: the write itself refuses a symbolic link, so a link made after a
command checked its outputs is refused too, and the file it names is left as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from chatjudge.errors import UsageError
from chatjudge.writing import open_write, replaced


def test_open_write_refuses_a_link_dangling_or_not(tmp_path: Path) -> None:
    target = tmp_path / "theirs.txt"
    target.write_text("theirs\n")
    (tmp_path / "link").symlink_to(target)
    (tmp_path / "dangling").symlink_to(tmp_path / "made-by-the-link")
    for name in ("link", "dangling"):
        for append in (False, True):
            with pytest.raises(UsageError, match="is a symbolic link"):
                open_write(tmp_path / name, append=append)
    assert target.read_text() == "theirs\n" and not (tmp_path / "made-by-the-link").exists()
    with open_write(tmp_path / "mine.txt") as out:
        out.write(b"one\n")
    with open_write(tmp_path / "mine.txt", append=True) as out:
        out.write(b"two\n")
    assert (tmp_path / "mine.txt").read_text() == "one\ntwo\n"


def test_a_link_made_while_replaced_writes_is_refused_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    target = tmp_path / "theirs.txt"
    target.write_text("theirs\n")
    path = tmp_path / "out.txt"
    with pytest.raises(UsageError, match="is a symbolic link"), replaced(path) as out:
        out.write(b"mine\n")
        path.symlink_to(target)  # after the first look, before the rename
    assert path.is_symlink() and target.read_text() == "theirs\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt", "theirs.txt"]
    path.unlink()
    with replaced(path) as out:
        out.write(b"mine\n")
    assert path.read_text() == "mine\n" and oct(path.stat().st_mode & 0o777) == "0o644"


def test_a_replaced_file_keeps_its_mode_and_a_new_one_is_readable_by_all(tmp_path: Path) -> None:
    private = tmp_path / "private.md"
    private.write_text("old")
    private.chmod(0o600)
    with replaced(private) as out:
        out.write(b"new")
    assert private.read_text() == "new" and private.stat().st_mode & 0o777 == 0o600
    fresh = tmp_path / "fresh.md"
    with replaced(fresh) as out:
        out.write(b"x")
    assert fresh.stat().st_mode & 0o777 == 0o644

"""Opening a file to write, never through a symbolic link: the last step of the output rule
(`chatjudge.outputs`), taken by every writer as it writes. A command checks its outputs
before anything is read or sent; a link made between that check and the write is still
refused here, where the check is the write itself (`O_NOFOLLOW`), or a rename that
replaces the name (never what a link names) right after a last look."""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from chatjudge.errors import UsageError


def link_refusal(path: Path) -> UsageError:
    """Why `path` is not written: it is a symbolic link (dangling or not)."""
    return UsageError(
        f"{path} is a symbolic link: chatjudge never writes through one (its target would be "
        "replaced, whatever --overwrite says); remove the link or choose another output"
    )


def refuse_link(path: Path) -> None:
    """A symbolic link at `path` (dangling too) is refused."""
    if path.is_symlink():
        raise link_refusal(path)


def open_write(path: Path, *, append: bool = False, buffering: int = -1) -> BinaryIO:
    """`path` opened to write in binary, emptied first unless `append`, made if missing;
    a symbolic link there is refused by the open itself."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    flags |= os.O_APPEND if append else os.O_TRUNC
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise link_refusal(path) from None
        raise
    return os.fdopen(fd, "ab" if append else "wb", buffering)


@contextmanager
def replaced(path: Path) -> Iterator[BinaryIO]:
    """A file written beside `path` and renamed over it when complete, so a reader never
    sees half of it and a failure leaves `path` as it was; a link at `path` is refused."""
    refuse_link(path)
    fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            yield out
        os.chmod(temporary, _mode(path))  # mkstemp's 0600 is for the file in the making
        refuse_link(path)  # made since the first look: the rename would drop the link
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _mode(path: Path) -> int:
    """The mode of the file written: the replaced one's where there is one (a file kept
    private stays so), else readable by all, as the outputs of a command are."""
    try:
        return os.stat(path, follow_symlinks=False).st_mode & 0o777
    except FileNotFoundError:
        return 0o644

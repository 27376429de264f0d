"""Reading and writing a file through its model: an older version is upgraded on read
(the file's chain of `Versioned.UPGRADES`, as inspect_ai upgrades an old `EvalLog`), a
version this chatjudge does not know is refused naming the file, and what is written is
always JSON that every parser reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from chatjudge import jsoncodec
from chatjudge.__about__ import __version__
from chatjudge.errors import UsageError
from chatjudge.formats.shared import Versioned
from chatjudge.writing import open_write

V = TypeVar("V", bound=Versioned)


def read_model(path: Path, model: type[V]) -> V:
    """A JSON file of `model`'s format, upgraded from an earlier version; a version this
    chatjudge does not know, or not that kind of file, is a usage error naming the file."""
    data = upgraded(load(path, model.WHAT), model, path)
    return validate(data, model, path, model.WHAT)


def upgraded(data: Any, model: type[Versioned], path: Path) -> dict[str, Any]:
    """`data` (a file's parsed content) brought to `model`'s version, one numbered upgrade
    after another; another version, or not a JSON object, is refused."""
    current = model.version()
    found = data.get("format", model.UNVERSIONED) if isinstance(data, dict) else None
    if not isinstance(data, dict) or type(found) is not int:
        raise UsageError(refusal(path, found, model))
    version: int = found
    if version != current and version not in model.UPGRADES:
        raise UsageError(refusal(path, found, model))
    while version < current:
        data = model.UPGRADES[version](data)
        version += 1
        data["format"] = version
    return data


def refusal(path: Path, found: Any, model: type[Versioned]) -> str:
    """Why a file of version `found` is not read, and what reads it."""
    earlier = sorted(model.UPGRADES)
    reads = f"format {model.version()}"
    if earlier:
        reads += f" (and upgrades {', '.join(map(str, earlier))})"
    if type(found) is int and found > model.version():
        advice = "it was written by a newer chatjudge: upgrade chatjudge to read it"
    else:
        advice = "use the chatjudge version that wrote it"
    return (
        f"{path} has format {found!r}; this chatjudge ({__version__}) reads {reads} of a "
        f"{model.WHAT}: {advice}"
    )


def validate(data: dict[str, Any], model: type[V], path: Path, what: str) -> V:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise UsageError(f"{path} is not a chatjudge {what}: {first_error(exc)}") from None


def write_json(path: Path, model: BaseModel, *, only_set: bool = False) -> dict[str, Any]:
    """Write a file through its model, with its version (`Versioned.format` always counts
    as given); returns what was written.
    `only_set`: the other fields its writer did not give are left out (a summary's sections
    that did not apply this time). A NaN or infinite number is written as null: `json`
    would write `NaN`, which is not JSON and which strict parsers (and `jq`, and browsers)
    refuse."""
    data = jsoncodec.finite(model.model_dump(mode="json", exclude_unset=only_set))
    with open_write(path) as out:  # never through a symbolic link
        out.write(json.dumps(data, indent=2, allow_nan=False).encode() + b"\n")
    return data


def load(path: Path, what: str) -> Any:
    """A JSON file's content; one that is not JSON (cut short, damaged) is a usage error."""
    try:
        return jsoncodec.loads(path.read_bytes(), parse_constant=no_nan)
    except ValueError:
        raise UsageError(
            f"{path} is cut off or not JSON: not a chatjudge {what} as written (re-run the "
            "command that wrote it)"
        ) from None


def no_nan(_: str) -> None:
    """NaN and Infinity are not JSON: they become null so that a page can parse its data."""
    return None


def first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    return f"{'.'.join(map(str, error['loc']))}: {error['msg']}"

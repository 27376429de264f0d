"""`chatjudge import` of files that are not traces: how long a refusal takes.

Someone passes a plain-text log or a binary file by mistake; import must refuse it (exit 2,
naming the file and its first bad lines) in one pass over the file. Each bad line used to
re-read and re-parse the whole file: a 2 MB log took 35 s, 5 MB of binary 47 s.

It writes a 3 MB, 60,000-line text log and 5 MB and 50 MB of random bytes (seeded), runs
the CLI on each in its own process, and prints the wall time (start-up included, as a user
waits for it) against its target, and the time less start-up per MB. Linearity: the same
files at half their size, the ratio of the two times less start-up (2.0 when linear, 4.0
when quadratic).

    python bench/import_junk.py

Run it with the interpreter of the environment chatjudge is installed in.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LEVELS = ("INFO", "DEBUG", "WARN", "ERROR")
WORDS = ("request", "served", "user", "path", "/api/v1/chat", "took", "ms", "status", "retry")


def text_log(path: Path, lines: int) -> None:
    """`lines` lines of an application log, about 50 bytes each."""
    rng = random.Random(0)
    with path.open("w", encoding="utf-8") as out:
        for i in range(lines):
            words = " ".join(rng.choice(WORDS) for _ in range(4))
            clock = f"{i // 3600 % 24:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
            out.write(f"2025-10-09 {clock} {rng.choice(LEVELS)} {words}\n")


def junk(path: Path, size: int) -> None:
    path.write_bytes(random.Random(1).randbytes(size))


def startup(folder: Path) -> float:
    """The CLI's wall time on a one-line file, the best of three: what every import pays
    before reading."""
    (folder / "one.jsonl").write_text("{}\n")
    command = [sys.executable, "-m", "chatjudge.cli", "import", str(folder / "one.jsonl")]
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run([*command, "--out", str(folder / "rows.jsonl")], capture_output=True)
        times.append(time.perf_counter() - start)
    return min(times)


def refuse(path: Path, out: Path) -> float:
    """The CLI's wall time on `path`; it must exit 2 and name the file's first line."""
    command = [sys.executable, "-m", "chatjudge.cli", "import", str(path), "--out", str(out)]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    said = " ".join(done.stderr.split())
    if done.returncode != 2 or f"{path.name}:1: unparseable JSON" not in said:
        raise SystemExit(f"import of {path.name} did not refuse it as expected:\n{said[:2000]}")
    return seconds


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="chatjudge-import-junk-"))
    out = folder / "rows.jsonl"
    try:
        fixed = startup(folder)
        print(f"start-up (import of a one-line file, best of 3): {fixed:.2f} s")
        cases = [  # (what, file, how it is written, target in s: the issue's, or the test's)
            ("text log, 60,000 lines", folder / "log.txt", lambda p: text_log(p, 60_000), 8.0),
            ("text log, 240,000 lines", folder / "log4.txt", lambda p: text_log(p, 240_000), 0),
            ("binary, 5 MB", folder / "junk5.bin", lambda p: junk(p, 5 * 2**20), 15.0),
            ("binary, 50 MB", folder / "junk50.bin", lambda p: junk(p, 50 * 2**20), 10.0),
        ]
        beyond: dict[str, float] = {}
        for label, path, write, target in cases:
            write(path)
            seconds = refuse(path, out)
            megabytes = path.stat().st_size / 2**20
            beyond[label] = seconds - fixed
            figures = {
                "file": label,
                "mb": round(megabytes, 1),
                "seconds": round(seconds, 2),
                "target_s": target or None,
                "ok": seconds < target if target else None,
                "ms_per_mb_less_startup": round(1000 * (seconds - fixed) / megabytes),
            }
            print(json.dumps(figures))
            path.unlink()
        ratio = beyond["text log, 240,000 lines"] / max(beyond["text log, 60,000 lines"], 1e-3)
        print(f"4x the log's lines, time less start-up: x{ratio:.1f} (linear 4, quadratic 16)")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()

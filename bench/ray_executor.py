"""Ray executor benchmark: the same run with `--executor local` and `--executor ray`.

N=5,000 interactivity-accuracy items, stand-in server at L=0.2 s, the same total
concurrency C=100 both ways, on a Ray cluster started here (`ray start --head`, 2 CPUs,
no dashboard). For each: items/s and its ratio to the ideal C/L (while judging: from the
server's first request to its last reply; whole run: start-up included), and CPU per
call of the driver (the CLI process), of the Ray workers (the ModelActor processes) and
of Ray's own daemons (raylet, GCS). These are the inputs of docs/scaling.md's capacity
model. On one 2-core machine Ray is not expected to win: the figures show its overhead.

    python bench/ray_executor.py            # about 1 minute on 2 cores
    python bench/ray_executor.py --n 1000   # a smoke test

Run it with the interpreter of the environment chatjudge (with its `ray` extra) is in.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_engine import Run, StubProcess, run_cli, write_dataset  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
PORT = 6391  # the benchmark's own cluster, beside any other on this machine
SMALL = 500  # the small run whose figures are subtracted: start-up and fixed costs


def _processes(marker: str) -> dict[int, float]:
    """CPU seconds of every process whose command line holds `marker`, by pid."""
    out: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if marker not in (entry / "cmdline").read_bytes().decode(errors="replace"):
                continue
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            out[int(entry.name)] = (int(fields[11]) + int(fields[12])) / TICKS
        except OSError:
            continue
    return out


class CpuSampler:
    """Polls processes' CPU while a run goes; workers are gone when it ends, so the last
    sample of each (at most `interval` old) is what is counted."""

    def __init__(self, markers: tuple[str, ...], interval: float = 0.1) -> None:
        self.markers = markers
        self.interval = interval
        self.start = {m: _processes(m) for m in markers}
        self.last: dict[str, dict[int, float]] = {m: dict(v) for m, v in self.start.items()}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)
        self._thread.start()

    def _poll(self) -> None:
        while not self._stop.wait(self.interval):
            for m in self.markers:
                self.last[m].update(_processes(m))

    def stop(self) -> dict[str, float]:
        """CPU seconds spent during the sampling, by marker."""
        self._stop.set()
        self._thread.join()
        return {
            m: sum(cpu - self.start[m].get(pid, 0.0) for pid, cpu in self.last[m].items())
            for m in self.markers
        }


def one_run(
    cli: list[str], python: str, data: Path, out: Path, args: argparse.Namespace, ray: str | None
) -> tuple[Run, dict[str, float], float]:
    """(the CLI's run, CPU seconds of workers and daemons, seconds until the first request)."""
    stub = StubProcess(args.latency, python)
    extra = (
        ("--quiet", "--executor", "ray", "--workers", str(args.workers)) if ray else ("--quiet",)
    )
    # A client joining by address must be told the cluster uses tokens (Ray's default).
    env = {"RAY_ADDRESS": ray, "RAY_AUTH_MODE": "token"} if ray else {}
    sampler = CpuSampler(("ray::ModelActor", "raylet", "gcs_server"))
    started = time.time()
    try:
        run = run_cli(cli, data, out, stub.base_url, args.concurrency, 3600, extra, env)
        cpu = sampler.stop()
        stats = stub.stats()
    finally:
        stub.stop()
    run.requests = stats["requests"]
    if not run.requests:
        raise RuntimeError(f"no request reached the server; the CLI said:\n{run.log[-3000:]}")
    run.judging = stats["last_reply_at"] - stats["first_request_at"]
    return run, cpu, stats["first_request_at"] - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=5_000)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--workers", type=int, default=2, help="Ray workers (actors)")
    parser.add_argument("--cli", default=f"{shlex.quote(sys.executable)} -m chatjudge.cli")
    args = parser.parse_args()
    cli = shlex.split(args.cli)
    ray_bin = str(Path(sys.executable).with_name("ray"))
    work = Path(tempfile.mkdtemp(prefix="chatjudge-bench-ray-"))
    data = work / "data.jsonl"
    write_dataset(data, args.n, seed=13)
    head = [ray_bin, "start", "--head", f"--port={PORT}", "--num-cpus=2"]
    head += ["--include-dashboard=false", "--disable-usage-stats"]
    started = subprocess.run(head, check=True, capture_output=True, text=True)
    found = re.search(r"--address='([^']+)'", started.stdout + started.stderr)
    if found is None:
        print(f"`ray start` printed no address:\n{started.stdout}{started.stderr}")
        return 1
    address = found.group(1)
    ideal = args.concurrency / args.latency
    print(f"N={args.n:,} C={args.concurrency} L={args.latency:g}s: ideal {ideal:,.0f} items/s")
    print(f"(per call: the runs of N and of {SMALL} items differenced, so start-up is apart)")
    small = work / "small.jsonl"
    small.write_text("".join(data.read_text().splitlines(keepends=True)[:SMALL]))
    try:
        for name, ray in (("local", None), ("ray", address)):
            runs = {}
            for n, rows in ((SMALL, small), (args.n, data)):
                run, cpu, first = one_run(
                    cli, sys.executable, rows, work / f"{name}-{n}", args, ray
                )
                if run.exit_code != 0 or run.n_ok != n:
                    print(f"{name}: exit {run.exit_code}, n_ok {run.n_ok}\n{run.log[-2000:]}")
                    return 1
                runs[n] = (run, cpu, first)
            (run0, cpu0, _), (run, cpu, first) = runs[SMALL], runs[args.n]
            calls = run.requests - run0.requests

            def per_call(big: float, little: float, calls: int = calls) -> str:
                return f"{(big - little) / calls * 1e3:8.3f} ms/call"

            while_judging = run.requests / run.judging
            print(f"{name} executor" + (f" ({args.workers} workers)" if ray else ""))
            print(
                f"  while judging  {while_judging:8.0f} items/s  ratio {while_judging / ideal:.3f}"
            )
            print(
                f"  whole run      {args.n / run.wall:8.0f} items/s  ratio "
                f"{args.n / run.wall / ideal:.3f}  ({run.wall:.1f} s, first request after "
                f"{first:.1f} s)"
            )
            print(
                f"  driver CPU     {per_call(run.cpu, run0.cpu)}  (start-up and outputs "
                f"{run0.cpu - SMALL * (run.cpu - run0.cpu) / calls:.2f} s; peak RSS "
                f"{run.max_rss_mb:.0f} MB)"
            )
            if ray:
                actors = cpu["ray::ModelActor"], cpu0["ray::ModelActor"]
                print(f"  workers CPU    {per_call(*actors)}  (all workers together)")
                daemons = cpu["raylet"] + cpu["gcs_server"], cpu0["raylet"] + cpu0["gcs_server"]
                print(f"  Ray daemons    {per_call(*daemons)}  (raylet and GCS)")
    finally:
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

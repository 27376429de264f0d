"""Ray executor benchmark: the same runs with `--executor local` and `--executor ray`.

Three scenarios, local and Ray side by side, each against the stand-in server as its own
process (interactivity-accuracy items, one judge call each):

  a. N=5,000, C=100, L=0.2 s (ideal C/L = 500 calls/s), best of 2 runs each. The Ray run
     starts its own local cluster (no RAY_ADDRESS), as a user's first `--executor ray`
     does, so its whole-run wall includes the cluster's start. Per call: the CPU of the
     driver (the CLI process itself), of the Ray workers (ModelActor processes) and of
     Ray's daemons (raylet, GCS), from the difference between the N-item run and a
     500-item run, so start-up is apart.
  b. N=10,000, C=1,000, L=1 s (ideal 1,000 calls/s): the ratio for both executors.
  c. The driver's ceiling on one core: the judge answers at once (L=0), the driver is
     pinned to CPU 0 and everything else (the server, and for Ray a cluster started with
     `ray start` and the workers) to CPU 1. Calls/s while judging, the driver's busy share
     of its core then (near 1: the driver is the bound), and 1 / (driver CPU per call).

    python bench/ray_executor.py            # about 4 minutes on 2 cores
    python bench/ray_executor.py --quick    # smaller N, a smoke test of the whole chain
    python bench/ray_executor.py --only a   # one scenario

Targets (issue 24) are printed beside the figures. Run it with the interpreter of the
environment chatjudge (with its `ray` extra) is in.
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
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_engine import Run, StubProcess, run_cli, write_dataset  # noqa: E402

TICKS = os.sysconf("SC_CLK_TCK")
PORT = 6391  # scenario c's own cluster, beside any other on this machine
SMALL = 500  # the small run whose figures are subtracted: start-up and fixed costs
RAY_MARKERS = ("ray::ModelActor", "raylet", "gcs_server")


def _processes(marker: str) -> dict[int, float]:
    """CPU seconds (itself, not its children) of every process whose command line holds
    `marker`, by pid."""
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
    """Polls processes' CPU while a run goes; processes are gone when it ends, so the last
    sample of each (at most `interval` old) is what is counted. The driver is sampled too
    (by its run directory, which only its command line names): the CPU its own rusage
    reports would include the Ray daemons and workers it started and reaped."""

    def __init__(self, markers: tuple[str, ...], interval: float = 0.05) -> None:
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


@dataclass
class Measured:
    run: Run
    cpu: dict[str, float]  # CPU seconds by marker ("driver", RAY_MARKERS)
    first: float  # seconds from the command's start to the server's first request

    @property
    def rate(self) -> float:
        """Calls per second while judging (server's first request to its last reply)."""
        return self.run.requests / (self.run.judging or float("nan"))


def one_run(
    cli: list[str],
    python: str,
    data: Path,
    out: Path,
    *,
    concurrency: int,
    latency: float,
    ray: tuple[str, ...] | None,
    env: dict[str, str] | None = None,
    stub_cpus: set[int] | None = None,
) -> Measured:
    """One CLI run against its own stand-in server; `ray`: the Ray options, None for local."""
    stub = StubProcess(latency, python)
    if stub_cpus:
        os.sched_setaffinity(stub.process.pid, stub_cpus)
    extra = ("--quiet", "--executor", "ray", *ray) if ray is not None else ("--quiet",)
    sampler = CpuSampler((str(out), *RAY_MARKERS))
    started = time.time()
    try:
        run = run_cli(cli, data, out, stub.base_url, concurrency, 3600, extra, env)
        cpu = sampler.stop()
        stats = stub.stats()
    finally:
        stub.stop()
    cpu["driver"] = cpu.pop(str(out))
    run.requests = stats["requests"]
    if run.exit_code != 0 or not run.requests:
        raise RuntimeError(f"{out.name}: exit {run.exit_code}; the CLI said:\n{run.log[-3000:]}")
    run.judging = stats["last_reply_at"] - stats["first_request_at"]
    return Measured(run, cpu, stats["first_request_at"] - started)


def _per_call(big: Measured, small: Measured, what: str) -> float:
    """Milliseconds of `what`'s CPU per call, the small run's fixed costs taken out."""
    return (big.cpu[what] - small.cpu[what]) / (big.run.requests - small.run.requests) * 1e3


def _check(ok: bool) -> str:
    return "ok" if ok else "MISSED"


def scenario_a(cli: list[str], work: Path, args: argparse.Namespace) -> None:
    n, c, lat = args.n, 100, 0.2
    ideal = c / lat
    data, small = work / "a.jsonl", work / "a-small.jsonl"
    write_dataset(data, n, seed=13)
    small.write_text("".join(data.read_text().splitlines(keepends=True)[:SMALL]))
    print(f"a. N={n:,} C={c} L={lat:g}s, ideal {ideal:,.0f} calls/s, best of {args.repeat}")
    best: dict[str, Measured] = {}
    for name, ray in (("local", None), ("ray", ("--workers", str(args.workers)))):
        runs = [
            one_run(cli, sys.executable, data, work / f"a-{name}-{i}", concurrency=c,
                    latency=lat, ray=ray)
            for i in range(args.repeat)
        ]  # fmt: skip
        little = one_run(
            cli, sys.executable, small, work / f"a-{name}-small", concurrency=c, latency=lat,
            ray=ray,
        )  # fmt: skip
        big = best[name] = min(runs, key=lambda m: m.run.wall)
        label = f"{name} executor" + (f" ({args.workers} workers)" if ray else "")
        print(f"  {label}: walls {', '.join(f'{m.run.wall:.1f}' for m in runs)} s")
        print(f"    while judging {big.rate:7.0f} calls/s  ratio {big.rate / ideal:.3f}")
        print(
            f"    whole run     {n / big.run.wall:7.0f} items/s  ratio "
            f"{n / big.run.wall / ideal:.3f}  ({big.run.wall:.1f} s, first request after "
            f"{big.first:.1f} s; peak RSS {big.run.max_rss_mb:.0f} MB)"
        )
        print(f"    driver CPU    {_per_call(big, little, 'driver'):7.3f} ms/call")
        if ray:
            print(f"    workers CPU   {_per_call(big, little, RAY_MARKERS[0]):7.3f} ms/call "
                  "(all workers together)")  # fmt: skip
            daemons = sum(_per_call(big, little, m) for m in RAY_MARKERS[1:])
            print(f"    Ray daemons   {daemons:7.3f} ms/call (raylet and GCS)")
        best[name + "-small"] = little
    local, ray_ = best["local"], best["ray"]
    local_cpu = _per_call(local, best["local-small"], "driver")
    ray_driver = _per_call(ray_, best["ray-small"], "driver")
    workers = _per_call(ray_, best["ray-small"], RAY_MARKERS[0])
    wall = ray_.run.wall / local.run.wall
    print("  targets:")
    print(f"    Ray while judging >= 0.9 of C/L: {ray_.rate / ideal:.3f} "
          f"{_check(ray_.rate / ideal >= 0.9)}")  # fmt: skip
    print(f"    Ray whole run <= 1.25x local wall: {wall:.2f}x {_check(wall <= 1.25)}")
    print(f"    Ray driver CPU <= 0.6 ms/call: {ray_driver:.3f} {_check(ray_driver <= 0.6)}")
    print(f"    Ray workers CPU <= local's per call ({local_cpu:.3f}): {workers:.3f} "
          f"{_check(workers <= local_cpu)}")  # fmt: skip


def scenario_b(cli: list[str], work: Path, args: argparse.Namespace) -> None:
    n, c, lat = args.n_big, 1000, 1.0
    ideal = c / lat
    data = work / "b.jsonl"
    write_dataset(data, n, seed=17)
    print(f"b. N={n:,} C={c:,} L={lat:g}s, ideal {ideal:,.0f} calls/s")
    for name, ray in (("local", None), ("ray", ("--workers", str(args.workers)))):
        m = one_run(cli, sys.executable, data, work / f"b-{name}", concurrency=c, latency=lat,
                    ray=ray)  # fmt: skip
        print(f"  {name:5s} while judging {m.rate:7.0f} calls/s  ratio {m.rate / ideal:.3f}; "
              f"whole run {n / m.run.wall:7.0f} items/s ({m.run.wall:.1f} s)")  # fmt: skip


def scenario_c(cli: list[str], work: Path, args: argparse.Namespace) -> None:
    n, c = args.n_big, 256
    data, small = work / "c.jsonl", work / "c-small.jsonl"
    write_dataset(data, n, seed=19)
    small.write_text("".join(data.read_text().splitlines(keepends=True)[:SMALL]))
    pinned = ["taskset", "-c", "0", *cli]
    print(f"c. the driver's ceiling on one core: N={n:,} C={c} L=0, driver on CPU 0, "
          "the rest on CPU 1")  # fmt: skip
    ray_bin = str(Path(sys.executable).with_name("ray"))
    head = ["taskset", "-c", "1", ray_bin, "start", "--head", f"--port={PORT}", "--num-cpus=2"]
    head += ["--include-dashboard=false", "--disable-usage-stats"]
    # Token authentication on both sides (Ray's default where a token exists).
    token = {"RAY_AUTH_MODE": "token"}
    out = subprocess.run(
        head, check=True, capture_output=True, text=True, env={**os.environ, **token}
    )
    found = re.search(r"--address='([^']+)'", out.stdout + out.stderr)
    if found is None:
        raise RuntimeError(f"`ray start` printed no address:\n{out.stdout}{out.stderr}")
    try:
        for name, ray in (("local", None), ("ray", ("--workers", str(args.workers)))):
            env = {"RAY_ADDRESS": found.group(1), **token} if ray else None
            runs = {
                size: one_run(pinned, sys.executable, rows, work / f"c-{name}-{size}",
                              concurrency=c, latency=0.0, ray=ray, env=env, stub_cpus={1})
                for size, rows in ((SMALL, small), (n, data))
            }  # fmt: skip
            big = runs[n]
            ms = _per_call(big, runs[SMALL], "driver")
            busy = big.cpu["driver"] / big.run.wall
            print(f"  {name:5s} while judging {big.rate:7.0f} calls/s; driver {ms:.3f} ms/call "
                  f"= {1e3 / ms:,.0f} calls/s on its core; driver busy {busy:.2f} of its "
                  "core over the whole run")  # fmt: skip
    finally:
        subprocess.run([ray_bin, "stop", "--force"], capture_output=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=5_000, help="items in scenario a")
    parser.add_argument("--n-big", type=int, default=10_000, help="items in scenarios b and c")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each executor in a")
    parser.add_argument("--workers", type=int, default=2, help="Ray workers (actors)")
    parser.add_argument("--only", choices=("a", "b", "c"), action="append")
    parser.add_argument("--quick", action="store_true", help="N=1,500 and 3,000, one run each")
    parser.add_argument("--cli", default=f"{shlex.quote(sys.executable)} -m chatjudge.cli")
    args = parser.parse_args()
    if args.quick:
        args.n, args.n_big, args.repeat = 1_500, 3_000, 1
    cli = shlex.split(args.cli)
    work = Path(tempfile.mkdtemp(prefix="chatjudge-bench-ray-"))
    scenarios = {"a": scenario_a, "b": scenario_b, "c": scenario_c}
    try:
        for name in args.only or scenarios:
            scenarios[name](cli, work, args)
    except RuntimeError as exc:
        print(exc)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

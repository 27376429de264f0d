"""`chatjudge export RUN --otlp FILE` of a 100,000-item pairwise run: wall and CPU time of
the CLI in its own process (start-up, reading and validating results.jsonl, masking,
encoding, writing), against the target of issue 33 (under 10 s), and beside it what the
OpenTelemetry SDK's own path (its LogRecord types and OTLP JSON file exporter) costs for the
same records, in this process (the reason the file is encoded by chatjudge).

The run is a real one of 20 items (a Python judge), whose results lines are copied to N
with new ids, indexes and span ids: results.jsonl of a run of N imported rows.

    python bench/export_otlp.py                   # 100,000 items
    python bench/export_otlp.py --items 20000 --no-sdk

Run it with the interpreter of the environment chatjudge[otel] is installed in.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 10.0


def make_run(root: Path, items: int) -> Path:
    import chatjudge

    rows = [
        {
            "id": f"conv-{i}#1",
            "history": [{"role": "system", "content": "You are a travel assistant."}],
            "prompt": f"Can I change the date of booking {i}?",
            "baseline_model_response": "Yes: open the booking and choose another date.",
            "response": "Yes. Open the booking, choose Change date, and pay any difference.",
            "trace_id": f"{i + 1:032x}",
            "span_id": f"{i + 1:016x}",
            "response_id": f"chatcmpl-{i}",
        }
        for i in range(20)
    ]

    def judge(prompt: str) -> str:
        return json.dumps(
            {
                "explanation": "Response B names the step and the cost; A leaves the cost out, "
                "which the user will need to know before changing the booking.",
                "pairwise_choice": "B",
            }
        )

    run = root / "run"
    chatjudge.evaluate(rows, protocol="pairwise-chat-quality", judge=judge, out=run, report=False)
    lines = (run / "results.jsonl").read_text().splitlines()
    with (run / "results.jsonl").open("w") as fh:
        for i in range(items):
            record = json.loads(lines[i % len(lines)])
            record["id"] = record["fields"]["id"] = f"conv-{i}#1"
            record["index"] = i
            record["fields"]["trace_id"] = f"{i + 1:032x}"
            record["fields"]["span_id"] = f"{i + 1:016x}"
            fh.write(json.dumps(record) + "\n")
    return run


def cli(run: Path, out: Path) -> tuple[float, float]:
    started = time.perf_counter()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "chatjudge.cli",
            "export",
            str(run),
            "--otlp",
            str(out),
            "--overwrite",
        ],  # fmt: skip
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    assert status == 0, process.stderr.read() if process.stderr else status
    return wall, usage.ru_utime + usage.ru_stime


def sdk(run: Path, out: Path) -> tuple[float, float]:
    """The SDK's path for the same records: its LogRecord, ReadableLogRecord and file
    exporter, 512 records an export."""
    from opentelemetry.exporter.otlp.json.file._log_exporter import FileLogExporter

    from chatjudge.otel.encode import BATCH
    from chatjudge.otel.records import evaluations, open_run
    from chatjudge.otel.sdk import readable, resource
    from chatjudge.traces.redact import Redactor

    started, cpu = time.perf_counter(), time.process_time()
    source, protocol = open_run(run)
    where, exporter, batch = resource(), FileLogExporter(out), []
    for record in evaluations(run, source, protocol, Redactor(())):
        batch.append(record)
        if len(batch) == BATCH:
            exporter.export(readable(batch, where, source.time_unix_nano, time.time_ns()))
            batch = []
    if batch:
        exporter.export(readable(batch, where, source.time_unix_nano, time.time_ns()))
    exporter.shutdown()
    return time.perf_counter() - started, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--no-sdk", action="store_true", help="skip the SDK's path")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        run = make_run(root, args.items)
        out = root / "evaluations.jsonl"
        cli(run, out)  # writes the bytecode; not measured
        wall, cpu = cli(run, out)
        size = out.stat().st_size / 1e6
        print(f"chatjudge export: {args.items:,} records, {size:.0f} MB: {wall:.2f} s wall, "
              f"{cpu:.2f} s CPU ({cpu / args.items * 1e6:.0f} µs a record); target < "
              f"{TARGET_S:g} s: {wall / TARGET_S:.2f} of it "
              f"({'ok' if wall < TARGET_S else 'MISSED'})")  # fmt: skip
        if not args.no_sdk:
            sdk_out = root / "sdk.jsonl"
            sdk_wall, sdk_cpu = sdk(run, sdk_out)
            print(f"the SDK's types and file exporter, same records (in-process, no start-up): "
                  f"{sdk_wall:.2f} s wall, {sdk_cpu:.2f} s CPU; chatjudge's CPU is "
                  f"{cpu / sdk_cpu:.2f} of it")  # fmt: skip


if __name__ == "__main__":
    main()

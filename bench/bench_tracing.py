"""What tracing costs a message: the trace context captured at push and restored around the run.

Measures, per message and without Redis (the round trips are the same with
or without tracing; a traced envelope is one line, about 70 bytes, longer):
the push's steps up to and after its round trip (the envelope built, the send
span started and ended), ``Message.parse`` of that envelope, and the worker's
wrap around the handler (its process span, the sender's context restored),
with a handler that does nothing. Each mode runs in its own process:

* ``absent``: opentelemetry cannot be imported (blocked in sys.modules);
  tracing off, as for every project that does not enable it.
* ``off``: opentelemetry installed, tracing not enabled.
* ``api``: ``REDCOORD["TRACING"]`` on (``otel.enable()``) with
  opentelemetry-api only, no SDK tracer provider set (no-op spans).
* ``sdk``: the SDK's TracerProvider with a SimpleSpanProcessor and an
  exporter that drops everything: two spans recorded per message. Pushed
  inside a request span (``sdk-in-span``) or with none current (``sdk``).
* ``hand-rolled`` (the peer): what a project does today with RQ, huey,
  dramatiq or django-tasks, none of which carries trace context: inject into
  a dict sent with the arguments, extract and start a span in the task
  (the same two SDK spans with the same attributes, the same exporter; the
  push and parse of the envelope, which it does not include, are the
  ``before`` row's).
* ``before`` (``--before REV``): the code of git revision REV (before
  tracing existed), tracing absent; read with ``git archive``, nothing checked out.

Target: tracing absent, off, or on without a tracer provider costs under
5 µs per message over the code without tracing.

Times are CPU time of the measuring process (best of several runs, modes
interleaved): on a shared machine wall time measures the neighbours.

Run: ``.venv/bin/python bench/bench_tracing.py [--messages N] [--repeat N] [--rounds N] [--before
REV] [--quick]``
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from support.cli import Options  # noqa: E402
from support.processes import run_main  # noqa: E402
from support.tables import print_table  # noqa: E402

MODES = ["absent", "off", "api", "sdk", "sdk-in-span", "hand-rolled"]
# what each mode imports beyond django_redcoord: a mode whose package is missing is left out
NEEDS = {
    "off": "opentelemetry.trace",
    "api": "opentelemetry.trace",
    "sdk": "opentelemetry.sdk",
    "sdk-in-span": "opentelemetry.sdk",
    "hand-rolled": "opentelemetry.sdk",
}
BODY = {
    "task": "shop.tasks.send_receipt",
    "result": "x" * 32,
    "args": [12345],
    "kwargs": {"lang": "fr"},
}


def measure(mode: str, messages: int, repeat: int) -> float:
    """Best of ``repeat`` runs: µs per message in this process."""
    if mode in ("absent", "before"):
        sys.modules["opentelemetry"] = None  # type: ignore[assignment]  # as if it were not installed
    import redis

    from django_redcoord.core.queues import messages as envelopes
    from django_redcoord.core.queues.messages import Message
    from django_redcoord.core.queues.queue import Queue

    queue = Queue(
        "bench", client=redis.Redis(), prefix="bench"
    )  # never connects: no round trip is made
    parent = None
    if mode in ("sdk", "sdk-in-span", "hand-rolled"):
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import (
            SimpleSpanProcessor,
            SpanExporter,
            SpanExportResult,
        )

        class Drop(SpanExporter):
            def export(self, spans):
                return SpanExportResult.SUCCESS

        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(Drop()))
        trace.set_tracer_provider(provider)
        if mode == "sdk-in-span":
            parent = trace.get_tracer("bench").start_as_current_span("GET /checkout")
    if mode == "hand-rolled":
        return _hand_rolled(messages, repeat)
    if mode in ("api", "sdk", "sdk-in-span"):
        from django_redcoord.contrib import otel

        otel.enable()

    def handler(message: Message) -> None:
        pass

    def one() -> None:
        steps = queue._push_steps(BODY, None, None, 0, None)
        step = next(steps)  # the envelope built (the send span started)
        try:
            steps.send(1)  # the push answered (the send span ended)
        except StopIteration:
            pass
        message = Message.parse(step.args[4], "bench")
        tracer = getattr(envelopes, "tracer", None)  # the worker's wrap, as in Worker._run_batch
        if tracer is None:
            handler(message)
        else:
            with tracer.process(message):
                handler(message)

    if parent is not None:
        parent.__enter__()
    return _best(one, messages, repeat)


def _hand_rolled(messages: int, repeat: int) -> float:
    """The peer: a carrier dict in the task's arguments, extracted around the call (SDK on)."""
    from opentelemetry import context, propagate, trace

    from django_redcoord.core.queues.messages import to_json

    tracer = trace.get_tracer("hand-rolled")
    kind_p, kind_c = trace.SpanKind.PRODUCER, trace.SpanKind.CONSUMER

    common = {
        "messaging.system": "redis",
        "messaging.destination.name": "bench",
    }  # the attributes ours carry
    sent = {**common, "messaging.operation.type": "send", "messaging.operation.name": "send"}
    processed = {
        **common,
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
    }

    def one() -> None:
        mid = uuid.uuid4().hex
        with tracer.start_as_current_span(
            "send bench", kind=kind_p, attributes={**sent, "messaging.message.id": mid}
        ):
            carrier: dict[str, str] = {}
            propagate.inject(carrier)
            text = to_json({**BODY, "kwargs": {**BODY["kwargs"], "_trace": carrier}}, "arguments")
        body = json.loads(text)
        token = context.attach(propagate.extract(body["kwargs"].pop("_trace")))
        try:
            attributes = {
                **processed,
                "messaging.message.id": mid,
                "redcoord.delivery": 1,
                "redcoord.task": body["task"],
            }
            with tracer.start_as_current_span("process bench", kind=kind_c, attributes=attributes):
                pass
        finally:
            context.detach(token)

    return _best(one, messages, repeat)


def _best(one, messages: int, repeat: int) -> float:
    for _ in range(min(messages, 2000)):  # warm up
        one()
    best = float("inf")
    for _ in range(repeat):  # CPU time of this process: a shared, loaded machine inflates wall time
        started = time.process_time()
        for _ in range(messages):
            one()
        best = min(best, (time.process_time() - started) / messages * 1e6)
    return best


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:  # its parent package is missing
        return False


def run_mode(mode: str, messages: int, repeat: int, path: str | None = None) -> float:
    env = {**os.environ}
    if path is not None:
        env["PYTHONPATH"] = path
    done = subprocess.run(
        [
            sys.executable,
            __file__,
            "--child",
            mode,
            "--messages",
            str(messages),
            "--repeat",
            str(repeat),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        cwd=path or ROOT,
    )
    if done.returncode != 0:
        raise RuntimeError(f"mode {mode} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])["us"]


def main() -> int:
    cli = Options(__doc__, quick="smoke run: 1 round of 1 x 500 messages")
    cli.number("--messages", 20_000, 500, "messages per run", least=1)
    cli.number("--repeat", 5, 1, "runs per process, the best is kept", least=1)
    cli.number("--rounds", 3, 1, "processes per mode, the best is kept", least=1)
    cli.add("--before", default=None, help="a git revision without tracing, measured as 'before'")
    cli.add("--child", default=None, help=argparse.SUPPRESS)
    args = cli.parse()
    if args.child:
        print(json.dumps({"us": measure(args.child, args.messages, args.repeat)}))
        return 0
    package = {"opentelemetry.trace": "opentelemetry-api", "opentelemetry.sdk": "opentelemetry-sdk"}
    missing = {mode: package[module] for mode, module in NEEDS.items() if not _installed(module)}
    if _installed("opentelemetry.version"):
        import opentelemetry.version

        otel_version = opentelemetry.version.__version__
    else:
        otel_version = "not installed"
    print(
        f"# Tracing cost per message: Python {sys.version.split()[0]}, opentelemetry "
        f"{otel_version}, {os.cpu_count()} cores; best CPU time of {args.rounds} x {args.repeat} x "
        f"{args.messages} messages, no Redis round trip"
    )
    results: dict[str, float] = {}
    if args.before:
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.run(
                ["git", "archive", args.before, "django_redcoord"],
                cwd=ROOT,
                capture_output=True,
                check=True,
            )
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
            shutil.copytree(ROOT / "bench" / "support", Path(tmp, "bench", "support"))
            Path(tmp, "bench", "__init__.py").write_bytes((ROOT / "bench/__init__.py").read_bytes())
            results["before"] = min(
                run_mode("before", args.messages, args.repeat, tmp) for _ in range(args.rounds)
            )
    for _ in range(args.rounds):  # modes interleaved, the best round kept: load comes and goes
        for mode in (m for m in MODES if m not in missing):
            results[mode] = min(
                results.get(mode, float("inf")), run_mode(mode, args.messages, args.repeat)
            )
    base = results.get("before", results["absent"])
    reference = _best(lambda: json.dumps(BODY), args.messages, args.repeat)
    print(
        f"# reference: one json.dumps of the {len(json.dumps(BODY))}-byte body costs "
        f"{reference:.2f} µs of CPU here now (about 1 µs on an idle machine: scale the table by it)"
    )
    what = {
        "before": f"the code of {args.before} (no tracing), opentelemetry absent",
        "absent": "opentelemetry not installed",
        "off": "installed, TRACING off",
        "api": "TRACING on, opentelemetry-api only (no tracer provider)",
        "sdk": "TRACING on, SDK + no-op exporter, no span current at push",
        "sdk-in-span": "TRACING on, SDK + no-op exporter, pushed inside a request span",
        "hand-rolled": "peer: carrier in the task's kwargs, by hand (RQ, huey, dramatiq, "
        "django-tasks), SDK",
    }
    target = {"before": "", "absent": "< 5", "off": "< 5", "api": "< 5"}
    rows = [
        [
            mode,
            what[mode],
            f"{us:.2f}",
            f"{us - base:+.2f}",
            target.get(mode, "-"),
            ("yes" if us - base < 5 else "NO") if mode in target and mode != "before" else "",
        ]
        for mode, us in results.items()
    ]
    rows += [
        [mode, what[mode], f"left out: {needed} not installed", "", target.get(mode, "-"), ""]
        for mode, needed in missing.items()
    ]
    print_table(
        [
            "mode",
            "what",
            "µs/message",
            f"vs {'before' if 'before' in results else 'absent'} (µs)",
            "target (µs)",
            "met",
        ],
        rows,
    )
    return 0


if __name__ == "__main__":
    run_main(main)

"""Edge cases of tracing across real ``manage.py run_worker --burst`` processes.

Tasks are enqueued here with tracing on (the SDK's in-memory exporter);
the envelopes' trace lines are then damaged in Redis as a foreign producer, a
proxy or a bug would, and run by a worker with tracing on (spans written to a
file, tests/support/tracing_settings.py) and by one with tracing off
(tests/support/worker_settings.py). Every task must run and succeed; a trace line
that cannot be read starts a fresh trace, never an error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from django_redcoord.contrib import otel
from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.queues import messages

from ..support import tracing_tasks

try:
    from django.tasks import TaskResultStatus
except ImportError:
    from django_tasks import TaskResultStatus

ROOT = Path(__file__).resolve().parents[2]
TRACE, SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"

#: trace lines a worker may find in an envelope flagged TRACED, none of which it can use
DAMAGED = {
    "version-ff": json.dumps({"traceparent": f"ff-{TRACE}-{SPAN}-01"}),
    "zero-trace": json.dumps({"traceparent": f"00-{'0' * 32}-{SPAN}-01"}),
    "zero-span": json.dumps({"traceparent": f"00-{TRACE}-{'0' * 16}-01"}),
    "short": json.dumps({"traceparent": f"00-{TRACE[:20]}-{SPAN}-01"}),
    "not-hex": json.dumps({"traceparent": f"00-{'g' * 32}-{SPAN}-01", "tracestate": "=,=,=" * 50}),
    "null-value": json.dumps({"traceparent": None}),
    "a-number": "5",
    "a-list": json.dumps([f"00-{TRACE}-{SPAN}-01"]),
    "empty-object": "{}",
    "not-json": "traceparent: 00-x",
}
#: a usable traceparent beside garbage: the trace goes on (the garbage is dropped)
USABLE = {
    "bad-baggage": json.dumps(
        {"traceparent": f"00-{TRACE}-{SPAN}-01", "baggage": "%%%;;==,,\\u0000" * 100}
    ),
    "bad-state": json.dumps({"traceparent": f"00-{TRACE}-{SPAN}-01", "tracestate": "=" * 600}),
}


@pytest.fixture
def spans():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel.enable(tracer_provider=provider)
    yield provider
    otel.disable()


def run_worker(redis_url: str, tmp_path: Path, settings_module: str) -> list[dict]:
    path = tmp_path / f"{settings_module}.jsonl"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings_module,
        "REDCOORD_REDIS_URL": redis_url,
        "REDCOORD_KEY_PREFIX": "test",
        "DEMO_DB_PATH": ":memory:",
        "REDCOORD_TEST_SPANS": str(path),
    }
    done = subprocess.run(
        [sys.executable, "manage.py", "run_worker", "--burst", "-v", "0"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def damage(redis_client, lines: dict[str, str]) -> dict[str, str]:
    """Replace the trace line of each ready envelope (a result id per label) by ``lines[label]``."""
    ready = KeyBuilder("test").queue("default").ready
    replaced = {}
    for raw, score in redis_client.zrange(ready, 0, -1, withscores=True):
        header, carried, body = raw.decode().split("\n")
        assert int(header.split("|")[4]) & messages.TRACED and json.loads(carried)["traceparent"]
        label = json.loads(body)["args"][0]
        redis_client.zrem(ready, raw)
        redis_client.zadd(ready, {f"{header}\n{lines[label]}\n{body}": score})
        replaced[label] = json.loads(body)["result"]
    return replaced


@pytest.mark.timeout(120)
def test_damaged_trace_lines_run_in_fresh_traces_in_a_real_worker(
    spans, redis_url, redis_client, tmp_path
):
    with spans.get_tracer("red").start_as_current_span("request"):
        for label in [*DAMAGED, *USABLE]:
            tracing_tasks.locked.enqueue(label)
    results = damage(redis_client, {**DAMAGED, **USABLE})
    assert sorted(results) == sorted([*DAMAGED, *USABLE])
    remote = run_worker(redis_url, tmp_path, "tests.support.tracing_settings")
    for label, result_id in results.items():
        assert tracing_tasks.locked.get_result(result_id).status == TaskResultStatus.SUCCESSFUL, (
            label
        )
    processes = {
        s["attributes"]["messaging.message.id"]: s for s in remote if s["name"] == "process default"
    }
    assert sorted(processes) == sorted(results.values())
    for label in USABLE:
        span = processes[results.pop(label)]
        assert (span["context"]["trace_id"], span["parent_id"]) == (f"0x{TRACE}", f"0x{SPAN}"), (
            label,
            span,
        )
    for label, result_id in results.items():
        span = processes[result_id]
        assert span["parent_id"] is None and span["links"] == [], (label, span)
        assert (
            span["status"]["status_code"] != "ERROR" and span["context"]["trace_id"] != f"0x{TRACE}"
        ), label
    seen = {json.loads(r)["label"] for r in redis_client.lrange("traced", 0, -1)}
    assert seen == {*DAMAGED, *USABLE}


@pytest.mark.timeout(120)
def test_a_worker_with_tracing_off_runs_traced_messages_as_they_were_sent(
    spans, redis_url, redis_client, tmp_path
):
    with spans.get_tracer("red").start_as_current_span("request"):
        sent = [tracing_tasks.locked.enqueue(label) for label in ("off-1", "off-2")]
    ready = redis_client.zrange(KeyBuilder("test").queue("default").ready, 0, -1)
    assert all(int(raw.split(b"|")[4]) & messages.TRACED for raw in ready) and len(ready) == 2
    assert (
        run_worker(redis_url, tmp_path, "tests.support.worker_settings") == []
    )  # no span: tracing is off there
    assert [tracing_tasks.locked.get_result(r.id).status for r in sent] == [
        TaskResultStatus.SUCCESSFUL
    ] * 2
    assert [tracing_tasks.locked.get_result(r.id).return_value for r in sent] == ["off-1", "off-2"]
    ran = [json.loads(r) for r in redis_client.lrange("traced", 0, -1)]
    assert sorted(r["label"] for r in ran) == ["off-1", "off-2"]
    assert {r["trace_id"] for r in ran} == {"0" * 32}  # the task ran outside any span

"""OpenTelemetry tracing (django_redcoord.contrib.otel): one trace from a view to the task it
enqueued.

The test process records its spans in memory (the SDK's InMemorySpanExporter);
the tasks run in real ``manage.py run_worker --burst`` processes
(tests/support/tracing_settings.py) that write theirs as JSON lines to a file read
back here. Both must tell one story: the request's trace id all the way down,
each span's parent the one before it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.db import transaction
from django.http import JsonResponse
from django.urls import path
from opentelemetry import propagate, trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from django_redcoord.contrib import otel
from django_redcoord.core.keys import KeyBuilder
from django_redcoord.core.queues import Message, Queue, Worker, messages
from django_redcoord.core.ratelimit.limiter import RateLimiter
from django_redcoord.core.transport.clients import client_from_url

from ..support import tracing_tasks

try:
    from django.tasks import TaskResultStatus
except ImportError:
    from django_tasks import TaskResultStatus

ROOT = Path(__file__).resolve().parents[2]
REQUEST_TRACE = (
    "4bf92f3577b34da6a3ce929d0e0e4736"  # the caller's trace, as a browser or gateway sends it
)
CALLER_SPAN = "00f067aa0ba902b7"

#: the test's tracer provider (set by the `spans` fixture), used by the middleware below
PROVIDER: list[TracerProvider] = []


# -- a Django site: a middleware that opens the request's span (as an instrumentation would), views
# ---------


def request_span_middleware(get_response):
    def middleware(request):
        tracer = PROVIDER[0].get_tracer("test-site")
        parent = propagate.extract(request.headers)
        with tracer.start_as_current_span(
            f"{request.method} {request.path}", context=parent, kind=trace.SpanKind.SERVER
        ):
            return get_response(request)

    return middleware


def enqueue_view(request):
    result = tracing_tasks.locked.enqueue(request.GET["label"])
    return JsonResponse({"id": result.id})


def enqueue_on_commit_view(request):
    tracer = PROVIDER[0].get_tracer("test-site")
    with transaction.atomic():
        with tracer.start_as_current_span("checkout"):
            result = tracing_tasks.locked.enqueue(request.GET["label"])
        tracer.start_span("after checkout").end()  # the commit's moment has its own current span
        with tracer.start_as_current_span("before commit"):
            pass
    return JsonResponse({"id": result.id})


urlpatterns = [
    path("traced/enqueue/", enqueue_view),
    path("traced/on-commit/", enqueue_on_commit_view),
]


@pytest.fixture
def site(settings):
    settings.ROOT_URLCONF = __name__
    settings.MIDDLEWARE = [f"{__name__}.request_span_middleware"]


@pytest.fixture
def spans():
    """Tracing on in this process, its spans in memory; off again afterwards."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    PROVIDER[:] = [provider]
    otel.enable(tracer_provider=provider)
    yield exporter
    otel.disable()
    PROVIDER.clear()


@pytest.fixture
def worker(redis_url, tmp_path):
    """Run ``manage.py run_worker --burst`` (tracing on); return the spans it wrote so far."""
    path = tmp_path / "worker-spans.jsonl"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.support.tracing_settings",
        "REDCOORD_REDIS_URL": redis_url,
        "REDCOORD_KEY_PREFIX": "test",
        "DEMO_DB_PATH": ":memory:",
        "REDCOORD_TEST_SPANS": str(path),
    }

    def run() -> list[dict]:
        done = subprocess.run(
            [sys.executable, "manage.py", "run_worker", "--burst", "-v", "0"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=90,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return (
            [_from_json(json.loads(line)) for line in path.read_text().splitlines()]
            if path.exists()
            else []
        )

    return run


def _hex(value: str | None) -> str | None:
    return None if value is None else value.removeprefix("0x")


def _from_json(span: dict) -> dict:
    """A span written by the worker (ReadableSpan.to_json), in the shape of _from_sdk."""
    return {
        "name": span["name"],
        "kind": span["kind"].removeprefix("SpanKind."),
        "trace_id": _hex(span["context"]["trace_id"]),
        "span_id": _hex(span["context"]["span_id"]),
        "parent_id": _hex(span["parent_id"]),
        "attributes": span["attributes"],
        "links": [
            (_hex(link["context"]["trace_id"]), _hex(link["context"]["span_id"]))
            for link in span["links"]
        ],
        "status": span["status"]["status_code"],
        "events": [e["name"] for e in span["events"]],
        "start": span["start_time"],
        "end": span["end_time"],
    }


def _from_sdk(span) -> dict:
    return {
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": f"{span.context.trace_id:032x}",
        "span_id": f"{span.context.span_id:016x}",
        "parent_id": f"{span.parent.span_id:016x}" if span.parent else None,
        "attributes": dict(span.attributes),
        "links": [
            (f"{link.context.trace_id:032x}", f"{link.context.span_id:016x}") for link in span.links
        ],
        "status": span.status.status_code.name,
        "events": [e.name for e in span.events],
    }


def local(exporter: InMemorySpanExporter) -> list[dict]:
    return [_from_sdk(s) for s in exporter.get_finished_spans()]


def one(found: list[dict], **match) -> dict:
    hits = [s for s in found if all(s[k] == v for k, v in match.items())]
    assert len(hits) == 1, (
        f"{len(hits)} spans match {match}: {[(s['name'], s['attributes']) for s in found]}"
    )
    return hits[0]


def seen_in_task(redis_client, label: str) -> list[dict]:
    """What the task bodies recorded: the span they ran in, and their pid."""
    return [r for r in map(json.loads, redis_client.lrange("traced", 0, -1)) if r["label"] == label]


def ready_envelopes(redis_client, queue: str = "default") -> list[str]:
    return [e.decode() for e in redis_client.zrange(KeyBuilder("test").queue(queue).ready, 0, -1)]


# -- one trace, end to end
# ---------------------------------------------------------------------------------


@pytest.mark.timeout(180)
def test_one_trace_from_the_view_through_enqueue_to_the_task_and_its_lock(
    site, spans, worker, client, redis_client
):
    response = client.get(
        "/traced/enqueue/?label=one", HTTP_TRACEPARENT=f"00-{REQUEST_TRACE}-{CALLER_SPAN}-01"
    )
    result_id = response.json()["id"]
    [envelope] = ready_envelopes(redis_client)
    header, carried, body = envelope.split("\n")
    assert int(header.split("|")[4]) & messages.TRACED and json.loads(body)["result"] == result_id
    assert json.loads(carried)["traceparent"].startswith(f"00-{REQUEST_TRACE}-")

    remote = worker()
    assert tracing_tasks.locked.get_result(result_id).status == TaskResultStatus.SUCCESSFUL

    mine = local(spans)
    request = one(mine, name="GET /traced/enqueue/")
    assert (
        request["trace_id"] == REQUEST_TRACE
        and request["parent_id"] == CALLER_SPAN
        and request["kind"] == "SERVER"
    )
    send = one(mine, name="send default")
    assert (
        send["kind"] == "PRODUCER"
        and send["parent_id"] == request["span_id"]
        and send["trace_id"] == REQUEST_TRACE
    )
    assert send["attributes"] == {
        "messaging.system": "redis",
        "messaging.destination.name": "default",
        "messaging.operation.type": "send",
        "messaging.operation.name": "send",
        "messaging.message.id": result_id,
    }
    assert json.loads(carried)["traceparent"] == f"00-{REQUEST_TRACE}-{send['span_id']}-01"

    process = one(remote, name="process default")
    assert process["kind"] == "CONSUMER" and process["trace_id"] == REQUEST_TRACE
    assert process["parent_id"] == send["span_id"] and process["links"] == []
    assert process["attributes"] == {
        "messaging.system": "redis",
        "messaging.destination.name": "default",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.message.id": result_id,
        "redcoord.delivery": 1,
        "redcoord.task": "tests.support.tracing_tasks.locked",
    }
    [ran] = seen_in_task(redis_client, "one")
    assert ran["pid"] != os.getpid() and (ran["trace_id"], ran["span_id"]) == (
        REQUEST_TRACE,
        process["span_id"],
    )
    acquire = one(remote, name="lock acquire")
    hold = one(remote, name="lock hold")
    for span in (acquire, hold):
        assert span["trace_id"] == REQUEST_TRACE and span["parent_id"] == process["span_id"]
        assert process["start"] <= span["start"] <= span["end"] <= process["end"]
    assert acquire["attributes"] == {"redcoord.kind": "lock", "redcoord.outcome": "acquired"}
    assert hold["attributes"] == {"redcoord.kind": "lock"} and acquire["start"] <= hold["start"]
    assert {s["trace_id"] for s in remote} == {
        REQUEST_TRACE
    }  # nothing else in the worker made a trace


@pytest.mark.timeout(180)
def test_a_retry_is_a_new_trace_linked_to_the_send(spans, worker, redis_client):
    with PROVIDER[0].get_tracer("test").start_as_current_span("request"):
        result = tracing_tasks.flaky.enqueue("retry")
    send = one(local(spans), name="send default")
    remote: list[dict] = []
    deadline = time.monotonic() + 60
    while not tracing_tasks.flaky.get_result(result.id).is_finished:
        assert time.monotonic() < deadline, "the retry never ran"
        remote = worker()
    assert tracing_tasks.flaky.get_result(result.id).status == TaskResultStatus.SUCCESSFUL
    first = one(
        remote,
        name="process default",
        attributes={**_process_attributes(result.id), "redcoord.delivery": 1},
    )
    again = one(
        remote,
        name="process default",
        attributes={**_process_attributes(result.id), "redcoord.delivery": 2},
    )
    assert (
        first["trace_id"] == send["trace_id"]
        and first["parent_id"] == send["span_id"]
        and first["links"] == []
    )
    assert first["status"] == "ERROR" and "exception" in first["events"]
    assert again["parent_id"] is None and again["trace_id"] != send["trace_id"]
    assert again["links"] == [(send["trace_id"], send["span_id"])] and again["status"] == "UNSET"
    ran = seen_in_task(redis_client, "retry")
    assert [(r["trace_id"], r["span_id"]) for r in ran] == [
        (first["trace_id"], first["span_id"]),
        (again["trace_id"], again["span_id"]),
    ]


def _process_attributes(result_id: str) -> dict:
    return {
        "messaging.system": "redis",
        "messaging.destination.name": "default",
        "messaging.operation.type": "process",
        "messaging.operation.name": "process",
        "messaging.message.id": result_id,
        "redcoord.task": "tests.support.tracing_tasks.flaky",
    }


@pytest.mark.timeout(180)
def test_messages_sent_without_a_trace_run_in_a_fresh_one(worker, redis_client, spans):
    otel.disable()  # sent as an older version, or a process with tracing off, sends
    old = tracing_tasks.locked.enqueue("untraced")
    [envelope] = ready_envelopes(redis_client)
    assert envelope.count("\n") == 1 and not int(envelope.split("|")[4]) & messages.TRACED
    otel.enable(tracer_provider=PROVIDER[0])
    rootless = tracing_tasks.locked.enqueue(
        "no-span"
    )  # tracing on, but no span is current: the send starts a trace
    remote = worker()
    assert {tracing_tasks.locked.get_result(r.id).status for r in (old, rootless)} == {
        TaskResultStatus.SUCCESSFUL
    }

    fresh = one(
        remote,
        name="process default",
        attributes={
            **_process_attributes(old.id),
            "redcoord.delivery": 1,
            "redcoord.task": "tests.support.tracing_tasks.locked",
        },
    )
    assert fresh["parent_id"] is None and fresh["links"] == []
    [ran] = seen_in_task(redis_client, "untraced")
    assert (ran["trace_id"], ran["span_id"]) == (fresh["trace_id"], fresh["span_id"])
    assert {
        s["parent_id"]
        for s in remote
        if s["name"].startswith("lock ") and s["trace_id"] == fresh["trace_id"]
    } == {fresh["span_id"]}

    send = one(local(spans), name="send default")
    assert send["parent_id"] is None and send["attributes"]["messaging.message.id"] == rootless.id
    child = one(
        remote,
        name="process default",
        attributes={
            **_process_attributes(rootless.id),
            "redcoord.delivery": 1,
            "redcoord.task": "tests.support.tracing_tasks.locked",
        },
    )
    assert (
        child["trace_id"] == send["trace_id"] != fresh["trace_id"]
        and child["parent_id"] == send["span_id"]
    )


@pytest.mark.django_db(transaction=True)
def test_a_task_sent_at_commit_belongs_to_the_span_that_enqueued_it(
    site, spans, client, redis_client
):
    response = client.get(
        "/traced/on-commit/?label=commit", HTTP_TRACEPARENT=f"00-{REQUEST_TRACE}-{CALLER_SPAN}-01"
    )
    result_id = response.json()["id"]
    mine = local(spans)
    checkout = one(mine, name="checkout")
    send = one(mine, name="send default")
    assert send["parent_id"] == checkout["span_id"] and send["trace_id"] == REQUEST_TRACE
    assert send["attributes"]["messaging.message.id"] == result_id
    [envelope] = ready_envelopes(redis_client)
    assert (
        json.loads(envelope.split("\n")[1])["traceparent"]
        == f"00-{REQUEST_TRACE}-{send['span_id']}-01"
    )


# -- the envelope without tracing
# -----------------------------------------------------------------------


def test_without_tracing_the_envelope_carries_nothing(redis_client):
    assert messages.tracer is None and not otel.enabled()
    result = tracing_tasks.locked.enqueue("plain")
    Queue("default").push({"plain": True})
    envelopes = ready_envelopes(redis_client)
    assert len(envelopes) == 2
    for envelope in envelopes:
        header, body = envelope.split(
            "\n"
        )  # exactly the header and the JSON body, as before tracing existed
        assert int(header.split("|")[4]) & messages.TRACED == 0 and json.loads(body)
        assert Message.parse(envelope, "default").headers is None
    assert json.loads(envelopes[0].split("\n")[1])["result"] == result.id


_NO_OTEL = """
import json, os, sys
sys.modules["opentelemetry"] = None  # as if opentelemetry were not installed
import django
django.setup()
from django.core.checks import run_checks
from django_redcoord.contrib import otel
from django_redcoord.core.queues import messages
from django_redcoord.core.transport.clients import get_client
from tests.support import tracing_tasks
try:
    otel.enable()
    enabled = "yes"
except ImportError as exc:
    enabled = str(exc)
result = tracing_tasks.locked.enqueue("no-otel")
from django_redcoord.core.keys import KeyBuilder
[envelope] = get_client().zrange(KeyBuilder("test").queue("default").ready, 0, -1)
checks = sorted(m.id for m in run_checks() if m.id and m.id.startswith("redcoord.E"))
imported = sorted(m for m, v in sys.modules.items()
                  if m.startswith("opentelemetry") and v is not None)
print(json.dumps({"tracer": messages.tracer is None, "envelope": envelope.decode(),
                  "enable": enabled,
                  "checks": checks, "imported": imported}))
"""


@pytest.mark.parametrize(
    "settings_module", ["tests.support.worker_settings", "tests.support.tracing_settings"]
)
def test_without_opentelemetry_installed_nothing_is_carried_and_tracing_on_is_a_check_error(
    redis_url, redis_client, settings_module
):
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": settings_module,
        "REDCOORD_REDIS_URL": redis_url,
        "REDCOORD_KEY_PREFIX": "test",
        "DEMO_DB_PATH": ":memory:",
    }
    env.pop("REDCOORD_TEST_SPANS", None)
    done = subprocess.run(
        [sys.executable, "-c", _NO_OTEL],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["tracer"] is True and out["imported"] == []
    assert "pip install 'django-redcoord[otel]'" in out["enable"]
    header, body = out["envelope"].split("\n")
    assert (
        int(header.split("|")[4]) & messages.TRACED == 0
        and json.loads(body)["task"] == "tests.support.tracing_tasks.locked"
    )
    assert out["checks"] == (
        ["redcoord.E040"] if settings_module == "tests.support.tracing_settings" else []
    )


def test_old_and_damaged_trace_headers_still_run(spans, redis_url, redis_client):
    queue = Queue("plain", client=client_from_url(redis_url), prefix="test")
    seen = []
    queue.push({"n": 1})  # traced
    otel.disable()
    queue.push({"n": 2})  # older: no headers
    envelope = queue._envelope("damaged", {"n": 3}, 0, 0, "{not json")
    redis_client.zadd(queue.keys.ready, {envelope: 2**50})
    Worker(
        [queue], lambda m: seen.append(m.body), burst=True
    ).run()  # a worker with tracing off reads all three
    assert sorted(b["n"] for b in seen) == [1, 2, 3]
    otel.enable(tracer_provider=PROVIDER[0])
    queue.push({"n": 4})
    redis_client.zadd(queue.keys.ready, {envelope.replace("damaged", "damaged-2"): 2**50})
    Worker(
        [queue],
        lambda m: seen.append((m.body, trace.get_current_span().get_span_context().trace_id)),
        burst=True,
    ).run()
    after = dict((b["n"], t) for b, t in seen[3:])
    processes = [s for s in local(spans) if s["name"] == "process plain"]
    assert sorted(after) == [3, 4] and len(processes) == 2
    damaged = one(
        processes, attributes={**processes[0]["attributes"], "messaging.message.id": "damaged-2"}
    )
    assert (
        damaged["parent_id"] is None
        and damaged["links"] == []
        and f"{after[3]:032x}" == damaged["trace_id"]
    )


# -- spans from the coordination events
# ------------------------------------------------------------------


def test_event_spans_join_a_trace_in_progress_and_never_start_one(spans, redis_url):
    from django_redcoord.core.leader.election import LeaderElection
    from django_redcoord.core.observe import observe

    tracer = PROVIDER[0].get_tracer("t")
    limiter = RateLimiter("1/m", name="tracing", client=client_from_url(redis_url), prefix="test")
    from django_redcoord import Lock

    with Lock("outside", ttl=5, wait=1):  # no trace in progress: no span
        limiter.hit("someone else")
    assert local(spans) == []
    with tracer.start_as_current_span("request"):
        limiter.hit("someone")
        limiter.hit("someone")
        with Lock("inside", ttl=5, wait=1):
            pass
    mine = local(spans)
    request = one(mine, name="request")
    assert [s["name"] for s in mine if s["parent_id"] == request["span_id"]] == [
        "lock acquire",
        "lock hold",
    ]
    [event, refused] = spans.get_finished_spans()[-1].events
    assert (event.name, dict(event.attributes)) == (
        "redcoord.ratelimit.hit",
        {"redcoord.ratelimit.limiter": "tracing", "redcoord.ratelimit.allowed": True},
    )
    assert dict(refused.attributes)["redcoord.ratelimit.allowed"] is False

    spans.clear()
    election = LeaderElection(
        "tracing",
        lease=3,
        renew_deadline=2,
        retry_period=0.5,
        client=client_from_url(redis_url),
        prefix="test",
    )
    assert election.campaign()
    observe("periodic.run", election="tracing", job="tick", outcome="error", duration=0.25)
    election.resign()
    term = one(local(spans), name="leader term")
    run = one(local(spans), name="periodic run")
    assert (
        term["parent_id"] is None
        and term["attributes"]["redcoord.election"] == "tracing"
        and term["attributes"]["redcoord.term"] >= 1
    )
    assert run["parent_id"] == term["span_id"] and run["status"] == "ERROR"
    assert run["attributes"] == {
        "redcoord.election": "tracing",
        "redcoord.job": "tick",
        "redcoord.outcome": "error",
    }
    sdk_run = [s for s in spans.get_finished_spans() if s.name == "periodic run"][0]
    assert (
        abs((sdk_run.end_time - sdk_run.start_time) - 250_000_000) < 1_000_000
    )  # its real start, not the report's


def test_the_tracing_setting_turns_tracing_on_and_off_and_is_validated(settings, redis_client):
    from django.core.checks import run_checks

    from django_redcoord.core.observe import observers

    assert not otel.enabled()
    settings.REDCOORD = {**settings.REDCOORD, "TRACING": True}
    assert otel.enabled() and isinstance(messages.tracer, otel.MessageTracer)
    assert any(isinstance(o, otel.EventSpans) for o in observers)
    assert (
        trace.get_tracer_provider().__class__ is trace.ProxyTracerProvider
    )  # this process set none
    tracing_tasks.locked.enqueue(
        "no-provider"
    )  # on, but spans would go nowhere: nothing is carried
    [envelope] = ready_envelopes(redis_client)
    assert envelope.count("\n") == 1 and not int(envelope.split("|")[4]) & messages.TRACED
    settings.REDCOORD = {**settings.REDCOORD, "TRACING": {"EVENTS": False}}
    assert otel.enabled() and not any(isinstance(o, otel.EventSpans) for o in observers)
    settings.REDCOORD = {**settings.REDCOORD, "TRACING": "yes"}
    errors = [m for m in run_checks() if m.id == "redcoord.E003"]
    assert [m.msg for m in errors] == [
        "REDCOORD['TRACING'] must be True, False, or a dict like {'EVENTS': False} (EVENTS: spans "
        "for lock waits and holds, rate limits and leader terms; default True) (got 'yes')"
    ]
    assert otel.enabled()  # an invalid value changes nothing; the check says why
    settings.REDCOORD = {**settings.REDCOORD, "TRACING": False}
    assert (
        not otel.enabled()
        and messages.tracer is None
        and not any(isinstance(o, otel.EventSpans) for o in observers)
    )


def test_aenqueue_and_push_many_carry_the_context_too(spans, redis_url, redis_client):
    from asgiref.sync import async_to_sync

    tracer = PROVIDER[0].get_tracer("t")

    async def view() -> str:
        with tracer.start_as_current_span("async view"):
            return (await tracing_tasks.locked.aenqueue("async")).id

    result_id = async_to_sync(view)()
    queue = Queue("batch", client=client_from_url(redis_url), prefix="test")
    with tracer.start_as_current_span("import"):
        ids = queue.push_many([{"n": n} for n in range(3)])
    mine = local(spans)
    sent = one(mine, name="send default")
    assert (
        sent["parent_id"] == one(mine, name="async view")["span_id"]
        and sent["attributes"]["messaging.message.id"] == result_id
    )
    batch = one(mine, name="send batch")
    assert batch["parent_id"] == one(mine, name="import")["span_id"]
    assert (
        batch["attributes"]["messaging.batch.message_count"] == 3
        and "messaging.message.id" not in batch["attributes"]
    )
    Worker([queue], lambda m: None, burst=True).run()
    processed = [s for s in local(spans) if s["name"] == "process batch"]
    assert sorted(s["attributes"]["messaging.message.id"] for s in processed) == sorted(ids)
    assert {(s["trace_id"], s["parent_id"]) for s in processed} == {
        (batch["trace_id"], batch["span_id"])
    }


def test_a_trace_line_nested_too_deep_or_with_garbled_values_still_runs(
    spans, redis_url, redis_client
):
    # json.loads of "[[[[..." raises RecursionError, not ValueError: the process span failed to
    # start and the
    # handler never ran, so a message whose trace line was damaged was retried until dead, for
    # tracing alone.
    queue = Queue("plain", client=client_from_url(redis_url), prefix="test")
    for mid, line in [
        ("deep", "[" * 100_000),
        (
            "garbled",
            json.dumps({"traceparent": "00-" + "z" * 10_000, "baggage": "=;=,%%%\x00" * 1000}),
        ),
    ]:
        redis_client.zadd(queue.keys.ready, {queue._envelope(mid, {"n": mid}, 0, 0, line): 2**50})
    seen = []
    Worker([queue], lambda m: seen.append(m.body["n"]), burst=True).run()
    assert sorted(seen) == ["deep", "garbled"]
    processes = [s for s in local(spans) if s["name"] == "process plain"]
    assert len(processes) == 2 and all(
        s["parent_id"] is None and s["status"] != "ERROR" for s in processes
    )


def test_an_envelope_flagged_traced_without_its_trace_line_is_read_as_its_body(redis_url):
    # The flag without the line (a damaged envelope, a foreign producer) took the whole body for the
    # trace
    # line and left an empty body: "body is not readable JSON", dead-lettered unrun.
    queue = Queue("plain", client=client_from_url(redis_url), prefix="test")
    parsed = Message.parse(queue._envelope("flagged", {"n": 1}, 0, messages.TRACED), "plain")
    assert (parsed.error, parsed.body, parsed.headers) == (None, {"n": 1}, None)
    # with the line, it is the headers (positive control)
    parsed = Message.parse(
        queue._envelope("traced", {"n": 2}, 0, 0, '{"traceparent":"x"}'), "plain"
    )
    assert (parsed.error, parsed.body, parsed.headers) == (None, {"n": 2}, '{"traceparent":"x"}')

"""Locks, semaphores and read-write locks around views, as deployed: real servers, real clients.

Each test runs on every deployment (gunicorn 2 processes x 4 threads on TCP
and behind nginx on a Unix socket; uvicorn 2 processes on TCP and ``--uds``
behind nginx). The views record who is inside in Redis; the checks read it.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from .servers import V4A, V4B, V6

pytestmark = pytest.mark.xdist_group("deploy")  # --dist loadgroup: one worker, servers started once


def together(site, paths, clients=(V4A, V4B, V6)):
    """Request every path at once (each from the next client in turn); the replies in order."""
    barrier = threading.Barrier(len(paths))

    def one(i):
        barrier.wait(30)
        return site.get(paths[i], client=clients[i % len(clients)])

    with ThreadPoolExecutor(len(paths)) as pool:
        return list(pool.map(one, range(len(paths))))


def seen(site, name):
    return [int(x) for x in site.redis.lrange(f"seen:{name}", 0, -1)]


def test_negative_control_unguarded_requests_do_overlap(site):
    """Without a decorator the detector sees requests inside at once: the servers run them
    concurrently."""
    replies = together(site, ["/unguarded/?hold=0.6"] * 4)
    assert [r.status for r in replies] == [200] * 4
    assert max(seen(site, "unguarded")) >= 2, (
        f"{site.name}: no overlap without a lock: the detector proves nothing"
    )


LOCKED = {  # path -> detector name
    "/lock/fn/": "lock_fn",
    "/lock/afn/": "lock_afn",
    "/lock/cbv/": "lock_cbv",
    "/lock/acbv/": "lock_acbv",
    "/lock/method/": "lock_method",
    "/lock/md/a/": "lock_md",  # method_decorator(with_lock(...), name="dispatch")
    "/lock/amd/a/": "lock_amd",  # the same on an async view
    "/lock/drf/1/": "lock_drf",  # a DRF APIView method
}


def test_with_lock_excludes_across_worker_processes_and_threads(site):
    """``@with_lock`` on function, async, class-based (sync, async) views and a CBV method: one
    inside at a time."""
    paths = [f"{path}?hold=0.15" for path in LOCKED for _ in range(4)]
    replies = together(site, paths)
    assert [r.status for r in replies] == [200] * len(paths), site.logs()
    for name in LOCKED.values():
        inside = seen(site, name)
        assert len(inside) == 4, (name, inside)
        assert max(inside) == 1, f"{site.name}: {name} had {max(inside)} requests inside at once"


def test_a_busy_lock_answers_409_in_every_view_style(site):
    """Held elsewhere, each decorated view answers 409 with Retry-After (not a 500)."""
    from django_redcoord.core.locks import Lock
    from django_redcoord.core.transport.clients import client_from_url

    client = client_from_url(site.redis_url)
    names = {  # path -> its lock (the site's KEY_PREFIX is "deploy")
        "/busy/md/b/": "deploy:lock:md:b",
        "/busy/amd/b/": "deploy:lock:amd:b",
        "/busy/drf/2/": "deploy:lock:drf:2",
    }
    held = [Lock(name, ttl=30, client=client, prefix="deploy") for name in names.values()]
    for lock in held:
        assert lock.acquire(wait=0)
    try:
        replies = {path: site.get(path) for path in names}
    finally:
        for lock in held:
            lock.release()
    assert {p: r.status for p, r in replies.items()} == dict.fromkeys(names, 409), site.logs()


def test_with_semaphore_admits_at_most_its_permits(site):
    paths = [f"{path}?hold=0.3" for path in ("/sem/fn/", "/sem/afn/") for _ in range(5)]
    replies = together(site, paths)
    assert [r.status for r in replies] == [200] * len(paths)
    for name in ("sem_fn", "sem_afn"):
        inside = seen(site, name)
        assert len(inside) == 5 and max(inside) <= 2, (site.name, name, inside)


@pytest.mark.parametrize(
    "read, write, tags",
    [("/rw/read/", "/rw/write/", ("r", "w")), ("/rw/aread/", "/rw/awrite/", ("ar", "aw"))],
    ids=["sync", "async-cbv"],
)
def test_read_write_lock_writers_alone_readers_together(site, read, write, tags):
    paths = [f"{read}?hold=0.3"] * 4 + [f"{write}?hold=0.15"] * 2
    replies = together(site, paths)
    assert [r.status for r in replies] == [200] * len(paths)
    readers = [
        tuple(map(int, x.split(b","))) for x in site.redis.lrange(f"seen:rw:{tags[0]}", 0, -1)
    ]
    writers = [
        tuple(map(int, x.split(b","))) for x in site.redis.lrange(f"seen:rw:{tags[1]}", 0, -1)
    ]
    assert len(readers) == 4 and len(writers) == 2, (readers, writers)
    assert all(w == (1, 0) for w in writers), f"{site.name}: a writer was not alone: {writers}"
    assert all(others == 0 for _, others in readers), (
        f"{site.name}: a reader met a writer: {readers}"
    )


# -- streamed responses: held until the body is sent, given back when the client hangs up ----
# The bodies are what each server streams: plain generators under WSGI, async
# generators under ASGI (views.py: Django reads the other kind whole first).

STREAMS = {  # path -> (detector name, the answer while it is held)
    "/stream/lock/": ("lock", 409),
    "/stream/alock/": ("alock", 409),
    "/stream/sem/": ("sem", 429),
    "/stream/rl/": ("rl", 429),  # @rate_limit("concurrency=1")
    "/stream/arl/": ("arl", 429),
    "/mw/stream/": ("mw", 429),  # RATE_LIMITS' concurrency=1 rule
}


def _until_free(site, path, client, deadline):
    while True:
        reply = site.get(f"{path}?chunks=1", client=client)
        if reply.status == 200 or time.monotonic() > deadline:
            return reply
        time.sleep(0.1)


@pytest.mark.parametrize("path", list(STREAMS))
def test_a_streamed_response_holds_until_its_body_is_sent(site, path):
    name, busy = STREAMS[path]
    first = site.stream(f"{path}?chunks=3&every=0.05&gate=1", client=V4A)
    assert first.status == 200, site.logs()
    assert first.chunk() == b"chunk-000000000\n"
    during = site.get(
        f"{path}?chunks=1", client=V4A
    )  # the view has returned; its body has not been sent
    assert during.status == busy, (
        f"{site.name} {path}: {during.status} while the body was being sent (held: {busy})"
    )
    site.redis.set(f"go:{name}", 1)
    assert first.rest() == b"chunk-000000001\nchunk-000000002\n"
    after = _until_free(site, path, V4A, time.monotonic() + 5)
    assert after.status == 200, (
        f"{site.name} {path}: still held after the body was sent ({after.status})"
    )


@pytest.mark.parametrize("path", list(STREAMS))
def test_a_client_hanging_up_mid_stream_gives_the_hold_back(site, path):
    """The body would run 40 s; the hold is given back within 15 s of the client leaving."""
    name, busy = STREAMS[path]
    first = site.stream(f"{path}?chunks=400&every=0.1", client=V4A)
    assert first.status == 200
    assert first.chunk() == b"chunk-000000000\n"
    assert site.get(f"{path}?chunks=1", client=V4A).status == busy
    first.hang_up()
    left = time.monotonic()
    after = _until_free(site, path, V4A, left + 15)
    assert after.status == 200, (
        f"{site.name} {path}: still held {time.monotonic() - left:.1f} s after the client left"
    )
    sent = int(site.redis.get(f"sent:{name}"))
    time.sleep(0.3)  # a body still running sends a chunk every 0.1 s
    assert int(site.redis.get(f"sent:{name}")) == sent, (
        f"{site.name} {path}: the body went on after the client left"
    )


@pytest.mark.parametrize("deployment", ["wsgi-tcp", "asgi-uds"], indirect=True)
def test_negative_control_a_hold_released_only_at_the_body_end_stays_held_after_a_hang_up(site):
    """The test above can fail: a lock given back only when the body runs to its end stays held."""
    first = site.stream("/stream/naive/?chunks=400&every=0.1", client=V4A)
    assert first.status == 200 and first.chunk() == b"chunk-000000000\n"
    first.hang_up()
    time.sleep(2)
    assert site.get("/stream/naive/?chunks=1", client=V4A).status == 409

"""Tasks of the red-team unique/outbox tests (module level, as the Tasks framework requires).
Each says what it did in the test's own Redis (lists under rt:), so runs can be counted across
worker processes."""

import os
import time

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task

from django_redcoord.core.transport.clients import get_client
from django_redcoord.tasks.options import task_options


def _ran(label, version):
    client = get_client()
    client.rpush(f"rt:ran:{label}", str(version))
    client.set(f"rt:running:{label}", os.getpid())


def _hold(seconds):
    """Sleep ``seconds``; negative: until the test sets rt:release (at most a minute)."""
    client = get_client()
    if seconds < 0:
        deadline = time.monotonic() + 60
        while not client.exists("rt:release") and time.monotonic() < deadline:
            time.sleep(0.01)
    elif seconds:
        time.sleep(seconds)


# -- key functions -----------------------------------------------------------------------


def the_key(key, *rest, **named):
    """The key is the first argument, whatever it is (the attacks pass odd ones)."""
    return key


def key_raises(x):
    raise LookupError(f"no key for {x!r}")


def key_of_version(version, seconds=0.0):
    return f"v:{version}"


def long_backoff(exc, result):
    """A retry waits long enough for the test to act on it."""
    return 60.0


# -- tasks ---------------------------------------------------------------------------------


@task_options(unique=the_key)
@task()
def raw_key(key, version=0):
    _ran("raw", version)
    return version


@task_options(unique=key_raises)
@task()
def raising_key(x):
    _ran("raising", x)


@task_options(unique="shared")
@task()
def shared_a(version):
    _ran("shared_a", version)


@task_options(unique="shared")
@task()
def shared_b(version):
    _ran("shared_b", version)


@task_options(unique="latest", while_running="replace")
@task()
def latest(version, seconds=0.0):
    _ran("latest", version)
    _hold(seconds)
    return version


@task_options(unique="flaky", while_running="replace", max_attempts=3, backoff=long_backoff)
@task()
def flaky_latest(version):
    _ran("flaky", version)
    raise RuntimeError(f"fails {version}")


@task_options(unique="flaky-skip", max_attempts=3, backoff=long_backoff)
@task()
def flaky_skip(version):
    _ran("flaky-skip", version)
    raise RuntimeError(f"fails {version}")


@task_options(unique="started", until="started")
@task()
def until_started(version, seconds=0.0):
    _ran("started", version)
    _hold(seconds)
    return version


@task_options(unique="finished-key")
@task()
def until_finished(version, seconds=0.0):
    _ran("finished", version)
    _hold(seconds)
    return version


@task()
def blocker(label):
    """Not unique: keeps a worker thread busy until rt:release."""
    _ran("blocker", label)
    _hold(-1)


@task_options(unique="followup", while_running="one_followup")
@task()
def followup(version, seconds=0.0):
    _ran("followup", version)
    _hold(seconds)
    return version


@task_options(unique="slow", max_attempts=2)
@task()
def slow_unique(version):
    _ran("slow", version)
    time.sleep(60)


@task_options(unique="short", unique_ttl=0.5)
@task()
def short_ttl(version):
    _ran("short", version)


@task_options(unique="later", unique_ttl=1.0)
@task()
def later_ttl(version):
    _ran("later", version)


@task_options(unique=key_of_version)
@task()
def per_version(version, seconds=0.0):
    _ran("per_version", version)
    return version


@task_options(unique="outboxed")
@task()
def outboxed(version):
    _ran("outboxed", version)
    return version


@task_options(unique="outboxed-replace", while_running="replace")
@task()
def outboxed_replace(version):
    _ran("outboxed-replace", version)
    return version


@task()
def plain(version):
    _ran("plain", version)
    return version


def surrogate_key(n):
    """A key of clean arguments that is a str Python accepts and UTF-8 cannot encode."""
    return "k" + chr(0xD800 + n)


@task_options(unique=surrogate_key)
@task()
def surrogate_keyed(n):
    _ran("surrogate", n)

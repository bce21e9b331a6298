"""The oracle: a Redis server no nemesis touches, where subjects record what
they did (runs of tasks and jobs, critical sections, fenced writes) with the
oracle's own clock, so observations survive the faults they are made under."""

from __future__ import annotations

import json
import os
from typing import Any

from django_redcoord.core.transport.clients import client_from_url

#: Where tests/faults/jobs.py records the runs of the periodic job.
RUNS_KEY = "leader:runs"

_client: Any = None
_pid = 0

# A write to the protected resource is accepted only with a token above the
# last accepted one: what a fenced downstream system does.
FENCED_WRITE = """
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
local token = tonumber(ARGV[1])
if token > last then
  redis.call('SET', KEYS[1], ARGV[1])
  return 1
end
return 0
"""


def oracle() -> Any:
    """This process's client for the oracle (FAULTS_ORACLE_URL)."""
    global _client, _pid
    if _client is None or _pid != os.getpid():
        _client, _pid = client_from_url(os.environ["FAULTS_ORACLE_URL"]), os.getpid()
    return _client


def now_us(client: Any = None) -> int:
    """The oracle's clock, microseconds: one time base for every process."""
    seconds, micros = (client or oracle()).time()
    return int(seconds) * 1_000_000 + int(micros)


def record(key: str, **entry: Any) -> None:
    oracle().rpush(key, json.dumps(entry))


def entries(client: Any, key: str) -> list[dict[str, Any]]:
    return [json.loads(e) for e in client.lrange(key, 0, -1)]

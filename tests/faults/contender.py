"""A lock contender subject: ``python -m tests.faults.contender NAME SECONDS TTL [naive]``.

Loops for SECONDS: takes the lock NAME (ttl TTL, waiting), writes its
fencing token to the protected resource on the oracle as it enters and again
as it leaves (a fenced system accepts a token only above the last one it
accepted), holds it a few ms, releases. Each critical section is recorded on
the oracle (list ``cs``): pid, token, oracle times of entry and exit, whether
the lock was lost before release, and whether each write was accepted.
Outages are ridden out (CoordinationUnavailable: try again). With ``naive``
it uses a deliberately unsafe lock instead (GET then SET, no token, no TTL
check): the negative control of the overlap checker.
"""

from __future__ import annotations

import os
import sys
import time

from django_redcoord.core.exceptions import CoordinationUnavailable, LockLost, LockNotAcquired
from django_redcoord.core.locks import Lock
from django_redcoord.core.transport.clients import client_from_url

from .oracle import FENCED_WRITE, now_us, oracle, record


class NaiveLock:
    """Deliberately unsafe: check, then set (two round trips, no NX, no token)."""

    counter = 0

    def __init__(self, name, client):
        self.key, self.client, self.token = f"naive:{name}", client, None

    def __enter__(self):
        while self.client.get(self.key):
            time.sleep(0.001)
        time.sleep(0.001)  # the window between check and set
        self.client.set(self.key, 1, px=5000)
        self.token = int(self.client.incr("naive:fence"))
        return self

    def __exit__(self, *exc):
        self.client.delete(self.key)


def main() -> int:
    name, seconds, ttl = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
    naive = len(sys.argv) > 4 and sys.argv[4] == "naive"
    client = client_from_url(
        os.environ["REDCOORD_REDIS_URL"], socket_timeout=1.0, connect_timeout=1.0
    )
    prefix = os.environ.get("REDCOORD_KEY_PREFIX", "faults")
    fenced = oracle().register_script(FENCED_WRITE)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        entry = {"pid": os.getpid(), "lost": False}
        try:
            lock = (
                NaiveLock(name, client)
                if naive
                else Lock(name, ttl=ttl, wait=2.0, client=client, prefix=prefix)
            )
            with lock:
                entry.update(token=lock.token, enter=now_us())
                entry["accepted_in"] = bool(fenced(keys=["resource"], args=[lock.token]))
                time.sleep(0.005)
                entry["accepted_out"] = bool(fenced(keys=["resource"], args=[lock.token]))
                entry["exit"] = now_us()
        except LockLost:
            entry["lost"] = True
        except (LockNotAcquired, CoordinationUnavailable):
            time.sleep(0.05)
            continue
        if "exit" in entry:
            record("cs", **entry)
    return 0


if __name__ == "__main__":
    sys.exit(main())

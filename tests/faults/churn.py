"""A thread-churn subject: ``python -m tests.faults.churn THREADS``.

Starts THREADS short-lived threads, ten at a time, each taking a lock and
pushing a message through one shared client (a pool of at most 50
connections), as a thread-per-request server or a per-call executor does.
Prints every error and exits 1 if there was any; records on the oracle how
many client connections the server had at the end (``churn:clients``).
"""

from __future__ import annotations

import os
import sys
import threading

from django_redcoord.core.locks import Lock
from django_redcoord.core.queues import Queue
from django_redcoord.core.transport.clients import client_from_url

from .oracle import oracle


def main() -> int:
    threads = int(sys.argv[1])
    client = client_from_url(os.environ["REDCOORD_REDIS_URL"], max_connections=50)
    prefix = os.environ.get("REDCOORD_KEY_PREFIX", "faults")
    errors = []

    def request(i):
        try:
            with Lock(f"churn:{i % 5}", ttl=5, wait=5, client=client, prefix=prefix):
                Queue("churn", client=client, prefix=prefix).push({"i": i})
        except Exception as exc:  # collected and printed: any failure fails the subject
            errors.append(f"thread {i}: {exc!r}")

    for batch in range(0, threads, 10):
        group = [
            threading.Thread(target=request, args=(i,))
            for i in range(batch, min(threads, batch + 10))
        ]
        for t in group:
            t.start()
        for t in group:
            t.join()
    oracle().set("churn:clients", len(client.client_list()))
    for error in errors[:20]:
        print(error)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

"""A soak producer: ``python -m bench._soak_producer COUNT RATE``.

Sends COUNT Django Tasks at RATE per second (on schedule; it catches up
without sleeping when it fell behind) through the Tasks API: mostly
``bench._soak_tasks.timed``, every 100th ``tests.faults.fault_tasks.always_fails``
and one ``exits(3)`` (kind "fail": it must end FAILED and dead-lettered).
Each enqueue that returned is recorded on the oracle in the list ``sent``
(id, kind, ``at`` µs), in pipelined batches: the format tests/faults/checks.py
reads. One that raised CoordinationUnavailable has an unknown outcome: it goes
to ``maybe`` and is not required to run; the producer tries again 0.1 s later
(a new task: an application retrying), its schedule shifted by the wait, so
an outage neither eats the plan nor brings a burst after it. Exits 0 when
COUNT tasks were sent.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> int:
    import django

    django.setup()
    from django_redcoord.core.exceptions import CoordinationUnavailable
    from tests.faults import fault_tasks
    from tests.faults.oracle import oracle

    from . import _soak_tasks

    count, rate = int(sys.argv[1]), float(sys.argv[2])
    start = time.monotonic()
    batch: list[tuple[str, str]] = []
    flushed = time.monotonic()

    def flush() -> None:
        nonlocal batch, flushed
        if batch:
            pipe = oracle().pipeline(transaction=False)
            for key, entry in batch:
                pipe.rpush(key, entry)
            pipe.execute()
        batch, flushed = [], time.monotonic()

    i = 0
    while i < count:
        ahead = start + i / rate - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)
        if i == count // 2:
            task, kind, args = fault_tasks.exits, "fail", (3,)
        elif i % 100 == 99:
            task, kind, args = fault_tasks.always_fails, "fail", (i,)
        else:
            task, kind, args = _soak_tasks.timed, "ok", (i, time.time())
        try:
            result = task.enqueue(*args)
        except CoordinationUnavailable as exc:
            batch.append(
                (
                    "maybe",
                    json.dumps({"n": i, "error": str(exc)[:200], "at": int(time.time() * 1e6)}),
                )
            )
            time.sleep(0.1)
            start += 0.1
        else:
            batch.append(
                ("sent", json.dumps({"id": result.id, "kind": kind, "at": int(time.time() * 1e6)}))
            )
            i += 1
        if len(batch) >= 200 or time.monotonic() - flushed > 0.25:
            flush()
    flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A producer subject: enqueues Django Tasks for a while, recording each one sent.

``python -m tests.faults.producer COUNT SECONDS [QUEUE]`` (settings:
tests/faults/settings.py) sends COUNT tasks spread over SECONDS: mostly
``counted``, every 20th ``always_fails``, and one ``exits(3)``. Each enqueue
that returned is recorded on the oracle (list ``sent``: id, kind, the oracle
time). One that raised CoordinationUnavailable has an unknown outcome: it is
recorded in ``maybe`` and not required to run. Exits 0 when done.
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    import django

    django.setup()
    from django_redcoord.core.exceptions import CoordinationUnavailable

    from . import fault_tasks
    from .oracle import now_us, record

    count, seconds = int(sys.argv[1]), float(sys.argv[2])
    queue = sys.argv[3] if len(sys.argv) > 3 else "default"
    pause = seconds / max(1, count)
    for i in range(count):
        if i == count // 2:
            task, kind, args = fault_tasks.exits, "fail", (3,)
        elif i % 20 == 19:
            task, kind, args = fault_tasks.always_fails, "fail", (i,)
        else:
            task, kind, args = fault_tasks.counted, "ok", (i,)
        try:
            result = task.using(queue_name=queue).enqueue(*args)
        except CoordinationUnavailable as exc:
            record("maybe", n=i, error=str(exc)[:200], at=now_us())
        else:
            record("sent", id=result.id, kind=kind, at=now_us())
        time.sleep(pause)
    return 0


if __name__ == "__main__":
    sys.exit(main())

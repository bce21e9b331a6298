"""``python -m tests.faults.matrix.producer COUNT QUEUE...``: enqueue COUNT ``counted``
tasks on each QUEUE in one process (one interpreter start per phase, not per queue),
recording each one sent on the oracle as tests/faults/producer.py does."""

from __future__ import annotations

import sys


def main() -> int:
    import django

    django.setup()
    from django_redcoord.core.exceptions import CoordinationUnavailable

    from .. import fault_tasks
    from ..oracle import now_us, record

    count, queues = int(sys.argv[1]), sys.argv[2:]
    for i in range(count):
        for queue in queues:
            try:
                result = fault_tasks.counted.using(queue_name=queue).enqueue(i)
            except CoordinationUnavailable as exc:
                record("maybe", n=i, error=str(exc)[:200], at=now_us())
            else:
                record("sent", id=result.id, kind="ok", at=now_us())
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A rate-limited client of the soak: ``python -m bench._soak_limiter SECONDS POLICY KEY``.

For SECONDS, hits the rate limiter ``soak`` (policy POLICY, e.g.
``"20/s;burst=5"``, decided by the Lua script on Redis's clock) for KEY as
fast as it can with a 2 ms pause, with the settings' client (so through
Sentinel when the settings say so). Each admitted hit is recorded on the
oracle (list ``rl:admitted``: ``"<before> <after>"``, this host's
``time.time()`` just before the call and just after its reply: the decision
was taken on the server between the two); counts of refused hits and of
outages go to the hash ``rl:counts``. Exits 0 when done.
"""

from __future__ import annotations

import sys
import time


def main() -> int:
    import django

    django.setup()
    from django_redcoord.core.exceptions import CoordinationUnavailable
    from django_redcoord.core.ratelimit import RateLimiter
    from tests.faults.oracle import oracle

    seconds, policy, key = float(sys.argv[1]), sys.argv[2], sys.argv[3]
    limiter = RateLimiter(policy, name="soak", native=False)
    admitted: list[str] = []
    counts = {"admitted": 0, "refused": 0, "unavailable": 0}
    end = flushed = time.monotonic()
    end += seconds
    while time.monotonic() < end:
        before = time.time()
        try:
            decision = limiter.hit(key)
        except CoordinationUnavailable:
            counts["unavailable"] += 1
            time.sleep(0.05)
            continue
        after = time.time()
        if decision.allowed:
            admitted.append(f"{before:.6f} {after:.6f}")
            counts["admitted"] += 1
        else:
            counts["refused"] += 1
        if time.monotonic() - flushed > 0.5:
            if admitted:
                oracle().rpush("rl:admitted", *admitted)
            admitted, flushed = [], time.monotonic()
        time.sleep(0.01)
    pipe = oracle().pipeline(transaction=False)
    if admitted:
        pipe.rpush("rl:admitted", *admitted)
    for name, value in counts.items():
        pipe.hincrby("rl:counts", name, value)
    pipe.execute()
    return 0


if __name__ == "__main__":
    sys.exit(main())

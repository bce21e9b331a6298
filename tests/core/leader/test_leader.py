"""Leader election semantics in one process (threads where waiting is needed), real Redis."""

import logging
import threading
import time

import pytest

from django_redcoord.core.exceptions import CoordinationUnavailable
from django_redcoord.core.leader.election import LeaderElection, check_timing, leader_defaults
from django_redcoord.core.transport.clients import client_from_url

from ...support.multiproc import run_python_without_settings

FAST = {"lease": 1.5, "renew_deadline": 1.0, "retry_period": 0.25}


def make(client, identity, name="e", **kwargs):
    return LeaderElection(name, **{**FAST, **kwargs}, identity=identity, client=client, prefix="t")


def record(client, election):
    return {k.decode(): v.decode() for k, v in client.hgetall(election.keys.record).items()}


def wait_until(predicate, timeout, step=0.002):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def test_first_campaign_elects_and_writes_the_record_with_server_time(redis_client):
    a = make(redis_client, "a")
    before = redis_client.time()
    assert a.campaign() and a.is_leader()
    term = a.term
    rec = record(redis_client, a)
    assert rec["identity"] == "a" and rec["term"] == str(term) and len(rec["token"]) == 32
    # a hybrid logical clock: the server's time in µs at least
    assert term >= before[0] * 1_000_000 + before[1]
    assert abs(int(rec["since_ms"]) - (before[0] * 1000 + before[1] // 1000)) < 1000
    assert rec["since_ms"] == rec["renewed_ms"] and rec["lease_ms"] == "1500"
    assert 1400 < redis_client.pttl(a.keys.record) <= 1500
    # the term counter expires a minute after the lease: terms grow without it
    assert 1500 < redis_client.pttl(a.keys.term) <= 1500 + 60_000
    current = a.current()
    assert (current.identity, current.term) == ("a", term) and 1.3 < current.expires_in <= 1.5
    assert a.fence() == (term, rec["token"])


def test_the_incumbent_keeps_leadership_and_its_term_while_it_renews(redis_client):
    a, b = make(redis_client, "a"), make(redis_client, "b")
    assert a.campaign() and not b.campaign()
    assert b.term is None and not b.is_leader()
    first = record(redis_client, a)
    for _ in range(3):
        time.sleep(0.3)
        assert a.campaign() and not b.campaign()
    renewed = record(redis_client, a)
    assert (
        renewed["term"] == first["term"]
        and renewed["token"] == first["token"]
        and renewed["since_ms"] == first["since_ms"]
    )
    assert int(renewed["renewed_ms"]) >= int(first["renewed_ms"]) + 800
    assert redis_client.pttl(a.keys.record) > 1300


def test_the_term_grows_on_every_change_of_leader(redis_client):
    a, b = make(redis_client, "a"), make(redis_client, "b")
    terms = []
    for leader, other in [(a, b), (b, a), (a, b), (b, a)]:
        assert leader.campaign() and not other.campaign()
        terms.append(leader.term)
        assert leader.resign() and not leader.is_leader()
    assert terms == sorted(set(terms)) and len(terms) == 4
    assert a.current() is None


def test_is_leader_turns_false_at_the_renew_deadline_without_renewal(redis_client):
    demoted = []
    a = make(
        redis_client,
        "a",
        lease=1.0,
        renew_deadline=0.5,
        retry_period=0.1,
        on_demoted=demoted.append,
    )
    started = time.monotonic()
    assert a.campaign()
    elected = time.monotonic()
    first = a.term
    # Each look is timed from just before it: a loaded machine may leave long gaps between two
    # looks, but no look may answer True past the deadline (counted from a send made between
    # ``started`` and ``elected``), nor False well before it.
    last_true = first_false = None
    while first_false is None and time.monotonic() - started < 2.0:
        looked = time.monotonic()
        if a.is_leader():
            last_true = looked
        else:
            first_false = looked
        time.sleep(0.002)
    assert first_false is not None, "still leader 2 s after a renew deadline of 0.5 s"
    assert first_false - started >= 0.45, first_false - started
    assert last_true is not None and last_true - elected <= 0.5, last_true - elected
    assert a.term is None and a.fence() is None
    # The record is still there (lease 1.0 > renew deadline 0.5): nobody else leads yet.
    assert redis_client.pttl(a.keys.record) > 300
    # The next campaign notices the step-down (on_demoted) and takes its own
    # record back at once, under a new term, instead of waiting for it to expire.
    assert a.campaign() and a.term > first and demoted == [first]


def test_a_leader_whose_record_was_deleted_learns_it_and_starts_a_new_term(redis_client):
    events = []
    a = make(
        redis_client,
        "a",
        on_elected=lambda t: events.append(("elected", t)),
        on_demoted=lambda t: events.append(("demoted", t)),
    )
    b = make(redis_client, "b")
    assert a.campaign()
    first = a.term
    redis_client.delete(a.keys.record)
    assert b.campaign() and b.term > first
    assert not a.campaign() and not a.is_leader()
    assert events == [("elected", first), ("demoted", first)]


def test_a_leader_that_cannot_reach_redis_steps_down_before_its_lease_ends(redis_servers):
    server = redis_servers(1)[0]
    client = client_from_url(server.url, socket_timeout=0.2, connect_timeout=0.2)
    demoted, steps = [], []
    a = make(client, "a", on_demoted=demoted.append)
    assert a.campaign()
    first = a.term
    a.start()
    server.pause()
    paused_at = time.monotonic()
    try:
        assert wait_until(lambda: not a.is_leader(), 3.0)
        steps.append(time.monotonic() - paused_at)
        assert wait_until(lambda: demoted == [first], 2.0)
    finally:
        server.resume()
        a.stop()
    assert steps[0] <= a.renew_deadline + 0.05, steps
    server.pause()
    try:
        with pytest.raises(
            CoordinationUnavailable, match="timed out during campaign in election 'e'"
        ):
            a.campaign()
    finally:
        server.resume()


def test_a_crashed_leader_is_replaced_after_its_lease(redis_client):
    a = make(redis_client, "a")
    b = make(redis_client, "b")
    assert a.campaign()  # then "crashes": never renews
    first = a.term
    crashed_at = time.monotonic()
    b.start()
    try:
        assert wait_until(lambda: b.is_leader(), 5.0)
        took = time.monotonic() - crashed_at
    finally:
        b.stop()
    assert 1.3 <= took <= a.lease + a.retry_period + 0.3, took
    assert b.term > first


def test_resign_wakes_a_blocked_standby_at_once(redis_client):
    # A long retry period: without the notify list the standby would sleep 2 s.
    slow = {"lease": 10.0, "renew_deadline": 5.0, "retry_period": 2.0}
    a, b = make(redis_client, "a", **slow), make(redis_client, "b", **slow)
    assert a.campaign()
    first = a.term
    b.start()
    try:
        time.sleep(0.3)  # b has campaigned and is blocked in BLPOP
        assert not b.is_leader()
        resigned_at = time.monotonic()
        assert a.resign()
        assert wait_until(lambda: b.is_leader(), 3.0)
        took = time.monotonic() - resigned_at
    finally:
        b.stop()
    assert took < 1.0, took  # woken, not its 2 s retry (a loaded machine may take a while)
    assert b.term > first and not a.is_leader()


def test_resign_stops_the_campaign_thread_so_it_cannot_re_elect_itself(redis_client):
    a = make(redis_client, "a")
    a.start()
    assert wait_until(a.is_leader, 2.0)
    assert a.resign()
    time.sleep(0.6)
    assert a.current() is None and not a.is_leader()
    assert not a.resign()  # nothing left to give up


def test_only_one_of_many_threads_campaigning_at_once_leads(redis_url):
    elections = [make(client_from_url(redis_url), f"c{i}") for i in range(6)]
    barrier = threading.Barrier(len(elections))
    results = []

    def go(election):
        barrier.wait()
        results.append(election.campaign())

    threads = [threading.Thread(target=go, args=(e,)) for e in elections]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [False] * 5 + [True]


def test_terms_keep_growing_when_redis_loses_its_data(redis_client):
    a, b = make(redis_client, "a"), make(redis_client, "b")
    terms = []
    for _ in range(3):
        assert a.campaign()
        terms.append(a.term)
        a.resign()
    redis_client.flushall()  # Redis restarted without persistence
    assert b.campaign()  # a candidate that never saw the old terms
    assert b.term > terms[-1]


def test_a_term_not_above_every_term_seen_is_raised_above_them(redis_client, caplog):
    """Only a server clock far behind (the one assumption) could issue a lower term."""
    a = make(redis_client, "a")
    assert a.campaign()
    a.resign()
    a._seen_term = 5 * 10**15  # as if an earlier server's clock had run far ahead
    with caplog.at_level(logging.WARNING, logger="django_redcoord.leader"):
        assert a.campaign()
    assert a.term == 5 * 10**15 + 1
    assert "term counter went backwards" in caplog.text


@pytest.mark.parametrize(
    ("timing", "error", "message"),
    [
        ((10, 10, 2), ValueError, r"lease \(10 s\) must be longer than renew_deadline \(10 s\)"),
        (
            (15, 2.4, 2),
            ValueError,
            r"renew_deadline \(2.4 s\) must be longer than 1.2 × retry_period "
            r"\(1.2 × 2 s = 2.4 s\)",
        ),
        ((0, 1, 0.5), ValueError, "lease must be between 0.001 and 86400 seconds"),
        (("15", 10, 2), TypeError, "lease must be a number of seconds > 0, not '15'"),
        ((15, True, 2), TypeError, "renew_deadline must be a number"),
        ((15, 10, float("nan")), TypeError, "retry_period must be a number"),
    ],
)
def test_timing_is_validated_with_client_go_rules(redis_client, timing, error, message):
    with pytest.raises(error, match=message):
        make(redis_client, "a", lease=timing[0], renew_deadline=timing[1], retry_period=timing[2])


def test_every_timing_message_says_what_is_allowed():
    with pytest.raises(ValueError, match=r"allowed: lease > renew_deadline > 1.2 × retry_period"):
        check_timing(5, 6, 1)
    assert check_timing(3, 2, 0.5) == (3.0, 2.0, 0.5)


def test_defaults_come_from_the_leader_settings(settings, redis_url):
    assert leader_defaults() == (15.0, 10.0, 2.0)
    settings.REDCOORD = {
        "URL": redis_url,
        "LEADER_LEASE": 6,
        "LEADER_RENEW_DEADLINE": 4,
        "LEADER_RETRY_PERIOD": 1,
    }
    election = LeaderElection("e")
    assert (election.lease, election.renew_deadline, election.retry_period) == (6.0, 4.0, 1.0)
    assert election.keys.record == "redcoord:leader:{e}"


def test_bad_names_and_identities_are_refused(redis_client):
    with pytest.raises(ValueError, match="election name 'a b' contains ' '"):
        LeaderElection("a b", client=redis_client)
    with pytest.raises(ValueError, match="identity must be a printable str"):
        make(redis_client, "line\nbreak")
    with pytest.raises(TypeError, match="on_elected must be a callable"):
        make(redis_client, "a", on_elected=1)


def test_the_core_works_without_django_settings(redis_url):
    code = (
        "from django_redcoord.core.transport.clients import client_from_url\nfrom "
        "django_redcoord.core.leader.election import LeaderElection\nfrom django.conf import "
        f"settings\ne = LeaderElection('plain', client=client_from_url({redis_url!r}), "
        "prefix='plain')\nassert not settings.configured and (e.lease, e.renew_deadline, "
        "e.retry_period) == (15.0, 10.0, 2.0)\nassert e.campaign() and e.current().term == e.term "
        "> 0 and e.resign()\nprint('ok')\n"
    )
    out = run_python_without_settings(code)
    assert out.stdout.strip() == "ok", out.stderr


def test_resign_stops_believing_before_the_record_is_deleted(redis_client, monkeypatch):
    """The moment the record is gone a standby may be elected: the old leader's
    is_leader() must already be False, or both say they lead."""
    from django_redcoord.core.leader import election as leader_module

    a = make(redis_client, "a")
    assert a.campaign()
    seen = []
    real = leader_module._RESIGN

    class Watching:
        def __call__(self, *args, **kwargs):
            seen.append(a.is_leader())  # when the DEL is sent
            return real(*args, **kwargs)

    monkeypatch.setattr(leader_module, "_RESIGN", Watching())
    assert a.resign()
    assert seen == [False]


def test_a_campaign_thread_that_meets_a_fault_no_retry_mends_stops_and_says_why(redis_client):
    a = make(redis_client, "a")
    redis_client.set(a.keys.record, "not a hash")  # WRONGTYPE on every campaign
    a.start()
    assert wait_until(lambda: not a.running, 3.0)
    assert "WRONGTYPE" in str(a.failure) and not a.is_leader()

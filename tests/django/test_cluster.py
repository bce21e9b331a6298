"""REDCOORD['CLUSTER']: every primitive, the admin and the workers on a real Redis Cluster.

The session's Cluster (3 primaries, a replica each, built by ``redis-cli
--cluster create``) serves the functional tests; the failover tests build
their own and SIGKILL a primary under load. The contract suites run on the
Cluster too (their ``*-cluster`` runs); this file covers what they do not:
tagged names, the admin indexes read per primary, operator actions, queues
and workers, the leader, Django Tasks, the replica check and failovers.
"""

from __future__ import annotations

import threading
import time

import pytest

from django_redcoord.core import indexes
from django_redcoord.core.exceptions import ReplicasNotSynced
from django_redcoord.core.keys import KeyBuilder, key_slot
from django_redcoord.core.latches import Barrier, CountDownLatch
from django_redcoord.core.leader import LeaderElection as Election
from django_redcoord.core.locks import Lock, force_release
from django_redcoord.core.queues import Queue, Worker
from django_redcoord.core.ratelimit import RateLimiter, reset_key
from django_redcoord.core.runtime import default_prefix
from django_redcoord.core.rwlocks import ReadWriteLock
from django_redcoord.core.semaphores import Semaphore, revoke_permit
from django_redcoord.core.signals import Event, Topic
from django_redcoord.core.transport.clients import cluster_client

from ..support.redis_servers import ClusterTopology, replicated


@pytest.fixture
def cluster(cluster_topology):
    cluster_topology.flush()
    client = cluster_client(cluster_topology.config)
    yield client
    client.close()


def _primary_of(client, key: str) -> str:
    return client.nodes_manager.get_node_from_slot(key_slot(key)).name


def test_a_tag_in_a_name_chooses_the_slot_and_bad_braces_are_refused():
    keys = KeyBuilder("p", cluster=True)
    a, b = keys.lock("invoice:{customer-7}:1"), keys.lock("invoice:{customer-7}:2")
    assert key_slot(a.lock) == key_slot(b.lock) == key_slot("{customer-7}") == key_slot(a.index)
    assert (
        keys.lock("x").lock == "p:lock:{x}" and keys.lock("{x}").lock == "p:lock:{x}:{x}"
    )  # never the same key
    assert key_slot(keys.queue("q").ready) == key_slot(keys.queue("q").index)
    for bad, why in (
        ("a{b", "misplaced braces"),
        ("a{}b", "misplaced braces"),
        ("{a}{b}", "misplaced braces"),
        ("a}b{", "misplaced braces"),
        ("a {b}", "contains ' '"),
    ):
        with pytest.raises(ValueError, match=why):
            keys.lock(bad)
    with pytest.raises(ValueError, match=r"contains '\{\}'"):
        keys.worker("w{1}")
    with pytest.raises(ValueError, match=r"contains '\{\}'"):
        keys.rate_limit("api", "{user}")


def test_every_primitive_and_the_admin_indexes_span_all_primaries(cluster):
    from django_redcoord.dashboard import overview

    names = [f"invoice:{i}" for i in range(60)]
    held = [Lock(n, client=cluster, ttl=30, wait=0) for n in names]
    assert all(lock.acquire() for lock in held)
    assert (
        len({_primary_of(cluster, lock.keys.lock) for lock in held}) == 3
    )  # the names spread over every primary
    tagged = [Lock(f"order:{{tenant-9}}:{i}", client=cluster, ttl=30, wait=0) for i in range(5)]
    assert all(lock.acquire() for lock in tagged)
    assert len({_primary_of(cluster, lock.keys.lock) for lock in tagged}) == 1
    sem = Semaphore("exports", 2, client=cluster, ttl=30)
    assert sem.acquire(wait=0)
    reader = ReadWriteLock("catalog", client=cluster, ttl=30).read()
    assert reader.acquire(wait=0)
    CountDownLatch("boot", 2, client=cluster).count_down()
    barrier = Barrier("phase", 2, client=cluster)
    # 30 s: the party waits while the overview below is read (and judged) several times over 3
    # primaries
    waiting = threading.Thread(target=lambda: barrier.wait(timeout=30))
    waiting.start()
    Event("ready", client=cluster).set()
    Topic("orders", client=cluster).publish({"id": 1})
    limiter = RateLimiter("5/m", name="api", client=cluster)
    for key in ("alice", "bob", "carol", "dave"):  # keys in several slots
        limiter.hit(key)
    limiter.hit("alice")
    for q in ("emails", "reports", "sms"):
        Queue(q, client=cluster).push({"to": q})
    ran = []
    worker = Worker([Queue("emails", client=cluster)], handler=ran.append, worker_id="w-cluster")
    working = threading.Thread(target=worker.run)
    working.start()
    deadline = time.monotonic() + 10
    while not ran:
        assert time.monotonic() < deadline, "the worker ran nothing"
        time.sleep(0.02)

    prefix = default_prefix()  # the objects above use the configured KEY_PREFIX
    deadline = time.monotonic() + 10
    while not overview(cluster, prefix)[
        "workers"
    ]:  # its first heartbeat may come after its first job
        assert time.monotonic() < deadline, "the worker never listed itself"
        time.sleep(0.05)
    data = overview(cluster, prefix)
    assert data["locks"]["total"] == 65
    listed = {row["name"] for row in data["locks"]["items"]}
    assert listed <= set(names) | {lock.name for lock in tagged} and len(listed) == len(
        data["locks"]["items"]
    )
    assert [s["name"] for s in data["semaphores"]] == ["exports"]
    assert [r["name"] for r in data["rwlocks"]] == ["catalog"]
    assert {(x["kind"], x["name"]) for x in data["latches"]} >= {
        ("latch", "boot"),
        ("barrier", "phase"),
    }
    assert {(x["kind"], x["name"]) for x in data["signals"]} >= {
        ("event", "ready"),
        ("topic", "orders"),
    }
    assert {(r["name"], r["key"], r["hits"]) for r in data["rate_limits"]} >= {
        ("api", "alice", 2),
        ("api", "bob", 1),
    }
    queues = {q["name"]: q for q in data["queues"]}
    assert (
        set(queues) == {"emails", "reports", "sms"}
        and queues["reports"]["ready"] == 1
        and queues["emails"]["ready"] == 0
    )
    assert [w["id"] for w in data["workers"]] == ["w-cluster"]
    assert indexes.read_index(cluster, KeyBuilder(prefix, cluster=True), "queues") == {
        "emails",
        "reports",
        "sms",
    }
    Barrier("phase", 2, client=cluster).wait(timeout=30)
    waiting.join(5)
    worker.stop()
    working.join(10)

    # operator actions, each on the resource's own slot
    victim = held[7]
    assert force_release(victim.name, victim.token, client=cluster) == "released"
    assert revoke_permit("exports", sem.token, client=cluster) == "revoked"
    assert reset_key("api", "alice", client=cluster) >= 1
    assert limiter.peek("alice").remaining == 5
    for lock in held[8:] + tagged:
        lock.release()


def test_waiters_queues_and_the_leader_on_the_cluster(cluster):
    holder = Lock("report", client=cluster, ttl=10, wait=0)
    assert holder.acquire()
    got = []
    waiter = threading.Thread(
        target=lambda: got.append(Lock("report", client=cluster, ttl=5, wait=10).acquire())
    )
    waiter.start()
    time.sleep(0.3)
    holder.release()
    waiter.join(10)
    assert got == [True]  # woken by the hand-off, not by polling

    queues = [Queue(f"jobs-{i}", client=cluster) for i in range(4)]
    for i, q in enumerate(queues):
        q.push_many([{"n": i * 100 + j} for j in range(100)])
    done = []
    lock = threading.Lock()

    def handle(message):
        with lock:
            done.append(message.body["n"])

    Worker(queues, handler=handle, concurrency=4, burst=True, worker_id="w-drain").run()
    assert sorted(done) == list(range(400))

    first = Election(
        "cluster-jobs", lease=2, renew_deadline=1.5, retry_period=0.5, identity="a", client=cluster
    )
    second = Election(
        "cluster-jobs", lease=2, renew_deadline=1.5, retry_period=0.5, identity="b", client=cluster
    )
    assert first.campaign() and not second.campaign()
    term = first.term
    assert first.resign() and second.campaign() and second.term > term


def test_a_queue_paused_on_the_cluster_is_not_claimed_from_and_is_listed(cluster):
    # The pause key, the claim's and the queue's index entry are in the queue's slot (one script
    # each).
    jobs, other = Queue("paused-jobs", client=cluster), Queue("other-jobs", client=cluster)
    assert jobs.pause("cluster maintenance")
    jobs.push_many(range(3))
    other.push("x")
    ran = []
    Worker(
        [jobs, other], handler=lambda m: ran.append(m.body), burst=True, worker_id="w-paused"
    ).run()
    assert (
        ran == ["x"]
        and jobs.depths().ready == 3
        and jobs.depths().paused["reason"] == "cluster maintenance"
    )
    assert "paused-jobs" in indexes.read_index(
        cluster, KeyBuilder(default_prefix(), cluster=True), "queues"
    )
    assert jobs.resume()
    Worker([jobs], handler=lambda m: ran.append(m.body), burst=True, worker_id="w-resumed").run()
    assert sorted(ran[1:]) == [0, 1, 2]


def test_the_replica_check_waits_on_the_grants_own_primary(cluster):
    lock = Lock("payroll", client=cluster, ttl=10, wait=0, replicas=1, replica_timeout=2)
    assert lock.acquire()
    lock.release()
    with pytest.raises(
        ReplicasNotSynced
    ):  # each primary has one replica: two can never acknowledge
        Lock("payroll", client=cluster, ttl=10, wait=0, replicas=2, replica_timeout=0.2).acquire()
    assert not Lock("payroll", client=cluster, wait=0).locked()  # the grant was given back


def test_django_tasks_run_worker_and_the_check_on_the_cluster(settings, cluster_topology):
    """Results of several tasks are written per slot (tasks/results takes one slot's records)."""
    from django.core.management import call_command

    from django_redcoord.checks import check_settings
    from django_redcoord.core.transport.clients import get_client

    from ..support import task_defs

    cluster_topology.flush()
    settings.REDCOORD = {"CLUSTER": {"NODES": cluster_topology.urls[:1]}, "KEY_PREFIX": "tk"}
    assert check_settings() == []
    assert type(get_client()).__name__ == "RedisCluster"
    results = [task_defs.add.enqueue(i, 1) for i in range(20)]
    call_command("run_worker", "--burst", verbosity=0)
    values = []
    for result in results:
        result.refresh()
        values.append(result.return_value)
    assert values == [i + 1 for i in range(20)]
    settings.REDCOORD = {"CLUSTER": {"NODES": ["redis://127.0.0.1:1"]}}
    assert [m.id for m in check_settings()] == ["redcoord.W009"]
    settings.REDCOORD = {"CLUSTER": {"NODES": ["redis://a:1/3"]}}
    assert any("only database 0" in m.msg for m in check_settings())
    settings.REDCOORD = {"URL": "redis://a:1/0", "CLUSTER": {"NODES": ["redis://a:1"]}}
    assert any(
        "more than one of URL, CACHE, SENTINEL and CLUSTER" in m.msg for m in check_settings()
    )


def _until(what, deadline, fn):
    while True:
        try:
            return fn()
        except Exception:  # noqa: PERF203 - an outage until the replica takes over
            assert time.monotonic() < deadline, f"{what}: nothing within the deadline"
            time.sleep(0.05)


def test_a_task_cancelled_on_the_cluster_in_both_queues_slots(settings, cluster_topology):
    """tasks/cancel.lua names the record and its queue's keys (one slot: the id was made in it);
    the two queues of TASKS sit in different slots."""
    from django.core.management import call_command

    from django_redcoord.tasks import Cancel, TaskCancelled, cancel, task_backends_for

    from ..support import task_defs

    cluster_topology.flush()
    settings.REDCOORD = {"CLUSTER": {"NODES": cluster_topology.urls[:1]}, "KEY_PREFIX": "tc"}
    backend = task_backends_for("default")
    assert key_slot(backend._queue_key("default")) != key_slot(backend._queue_key("receipts"))
    waiting = [task_defs.record.using(queue_name=q).enqueue(q) for q in ("default", "receipts")]
    claimed = task_defs.record.enqueue("claimed")
    kept = task_defs.record.using(queue_name="receipts").enqueue("kept")
    assert [cancel(r) for r in waiting] == [Cancel.REMOVED, Cancel.REMOVED]
    consumer = backend.queue("default").consumer("elsewhere")
    messages, _ = consumer.claim(1)
    assert [m.id for m in messages] == [claimed.id]
    assert cancel(claimed) is Cancel.REQUESTED
    consumer.release(messages)
    call_command("run_worker", "--burst", verbosity=0)
    from django_redcoord.core.transport.clients import get_client

    assert get_client().lrange("ran", 0, -1) == [b"kept"]
    for result in [*waiting, claimed]:
        result.refresh()
        assert result.status == "FAILED" and result.errors[-1].exception_class is TaskCancelled
    kept.refresh()
    assert kept.status == "SUCCESSFUL" and cancel(kept) is Cancel.FINISHED


def test_unique_tasks_on_the_cluster(settings, cluster_topology):
    """push_unique.lua and the scripts that free a key name only the queue's slot."""
    from django.core.management import call_command

    from django_redcoord.tasks import task_backends_for

    from ..support import unique_tasks as ut

    cluster_topology.flush()
    settings.REDCOORD = {"CLUSTER": {"NODES": cluster_topology.urls[:1]}, "KEY_PREFIX": "tu"}
    first = ut.rebuild_report.enqueue(1)
    assert ut.rebuild_report.enqueue(1).id == first.id
    replaced = ut.rebuild_index_latest.enqueue(1)
    latest = ut.rebuild_index_latest.enqueue(2)
    assert latest.id != replaced.id
    call_command("run_worker", "--burst", verbosity=0)
    assert task_backends_for("default").queue("default").unique_keys() == {}
    first.refresh()
    replaced.refresh()
    assert first.status == "SUCCESSFUL" and replaced.status == "FAILED"


def test_grouped_tasks_and_queue_groups_on_the_cluster(settings, cluster_topology):
    """A queue's group keys share its slot: push, claim, nack, cancel and the Tasks worker name
    only that slot."""
    from django.core.management import call_command

    from django_redcoord.core.queues.groups import Group
    from django_redcoord.tasks import Cancel, cancel

    from ..support import group_tasks as gt

    cluster_topology.flush()
    client = cluster_client(cluster_topology.config)
    queue = Queue("grouped-jobs", client=client)
    queue.push_many(range(3), group=Group("t:1", concurrency=1))
    queue.push("x", group="t:2")
    consumer = queue.consumer("c")
    got, _ = consumer.claim(10)
    assert sorted(map(str, (m.body for m in got))) == ["0", "x"]
    assert consumer.nack(got[0] if got[0].body == 0 else got[1], "again", delay=0.01) == "retry"
    settings.REDCOORD = {"CLUSTER": {"NODES": cluster_topology.urls[:1]}, "KEY_PREFIX": "tg"}
    steps = [gt.tenant_step.enqueue(3, s) for s in range(3)]
    assert cancel(steps[1].id) == Cancel.REMOVED
    call_command("run_worker", "--burst", verbosity=0)
    steps[2].refresh()
    assert steps[2].status == "SUCCESSFUL"
    assert [int(x) for x in client.lrange("gt:runs:3", 0, -1)] == [0, 2]


def test_workflows_on_the_cluster(settings, cluster_topology):
    """A workflow's hash, its index bucket, its members' records and queues share one slot: its
    script names only that slot. Queues in other slots are refused, saying how to fix it."""
    from django.core.management import call_command

    from django_redcoord.tasks import chain, chord, step

    from ..support import workflow_tasks as wt

    cluster_topology.flush()
    settings.REDCOORD = {"CLUSTER": {"NODES": cluster_topology.urls[:1]}, "KEY_PREFIX": "tw"}
    first = chain(step(wt.record, "a"), step(wt.record, "b")).enqueue()
    second = chord(
        [step(wt.record, "c"), step(wt.fail, "d")],
        then=step(wt.record, "cb"),
        on_failure="run_callback",
    ).enqueue()
    call_command("run_worker", "--burst", verbosity=0)
    assert first.refresh().status == "SUCCESSFUL"
    assert second.refresh().status == "FAILED" and second.callback["state"] == "succeeded"
    settings.TASKS = {
        "default": {
            "BACKEND": "django_redcoord.tasks.RedisTaskBackend",
            "QUEUES": ["default", "receipts"],
        }
    }
    with pytest.raises(ValueError, match="one slot"):
        chain(step(wt.record, "x"), step(wt.record.using(queue_name="receipts"), "y")).enqueue()


def test_a_primary_killed_under_load_is_replaced_and_nothing_is_lost_or_granted_twice():
    """SIGKILL the primary serving a lock, a queue and an election while they are busy.
    Writes resume on the promoted replica; fencing tokens only grow; every push that
    was acknowledged is delivered; the leader's term grows."""
    topo = ClusterTopology().start()
    try:
        config = topo.config
        client = cluster_client(config)
        lock_name = "ledger"
        victim_addr = _primary_of(
            client, KeyBuilder(default_prefix(), cluster=True).lock(lock_name).lock
        )
        stop = threading.Event()
        fences, pushed = [], []

        def locker():
            own = cluster_client(config)
            while not stop.is_set():
                try:
                    with Lock(lock_name, client=own, ttl=5, wait=1) as held:
                        fences.append(held.token)
                except Exception:  # noqa: S112 - outages during the failover
                    time.sleep(0.02)
                    continue

        def pusher():
            own = cluster_client(config)
            q = Queue("ledger-jobs", client=own)
            n = 0
            while not stop.is_set():
                try:
                    q.push({"n": n})
                    pushed.append(n)
                    n += 1
                except Exception:
                    n += 1  # not acknowledged: may or may not be there
                    time.sleep(0.02)

        threads = [threading.Thread(target=locker), threading.Thread(target=pusher)]
        for t in threads:
            t.start()
        election = Election(
            "leader:{ledger}",
            lease=2,
            renew_deadline=1.5,
            retry_period=0.3,
            identity="a",
            client=client,
        )
        assert election.campaign()
        term_before = election.term
        # a lock waiter and an idle worker blocked on the primary that dies, in the same slot
        holder = Lock("report:{ledger}", client=client, ttl=4, wait=0)
        assert holder.acquire()
        replicated(
            client.get_redis_connection(client.nodes_manager.get_node(node_name=victim_addr))
        )
        waited = []
        waiter = threading.Thread(
            target=lambda: waited.append(
                Lock("report:{ledger}", client=cluster_client(config), ttl=5, wait=25).acquire()
            )
        )
        waiter.start()
        ran = []
        idle = Worker(
            [Queue("jobs:{ledger}", client=cluster_client(config))],
            handler=lambda m: ran.append(m.body),
            worker_id="w-idle",
        )
        idling = threading.Thread(target=idle.run)
        idling.start()
        time.sleep(0.5)
        victim = next(n for n in topo.nodes if f"127.0.0.1:{n.port}" == victim_addr)
        new_client = cluster_client(config)
        victim.kill()
        killed = time.monotonic()
        _until(
            "lock",
            killed + 15,
            lambda: Lock("after-kill", client=new_client, ttl=5, wait=0).acquire() or 1 / 0,
        )
        lock_back = time.monotonic() - killed
        time.sleep(1.0)
        stop.set()
        for t in threads:
            t.join(15)
        assert lock_back < 10, f"locks resumed {lock_back:.1f} s after the kill"
        assert fences == sorted(fences) and len(set(fences)) == len(fences), (
            "a fencing token went backwards"
        )
        assert len(fences) > 10
        # every acknowledged push is delivered
        seen = []
        Worker(
            [Queue("ledger-jobs", client=new_client)],
            handler=lambda m: seen.append(m.body["n"]),
            burst=True,
            worker_id="w-after",
        ).run()
        lost = set(pushed) - set(seen)
        assert not lost, f"{len(lost)} acknowledged pushes were lost"
        _until(
            "push",
            time.monotonic() + 15,
            lambda: Queue("jobs:{ledger}", client=new_client).push("after"),
        )
        waiter.join(30)
        assert waited == [True], "the lock waiter blocked on the dead primary never got the lock"
        deadline = time.monotonic() + 15
        while not ran:
            assert time.monotonic() < deadline, (
                "the idle worker never ran the message pushed after the failover"
            )
            time.sleep(0.05)
        idle.stop()
        idling.join(15)
        assert ran == ["after"]
        successor = Election(
            "leader:{ledger}",
            lease=2,
            renew_deadline=1.5,
            retry_period=0.3,
            identity="b",
            client=new_client,
        )
        _until("leader", time.monotonic() + 15, lambda: successor.campaign() or 1 / 0)
        assert successor.term > term_before
    finally:
        topo.cleanup()


def test_a_script_unknown_to_a_promoted_replica_is_loaded_again():
    """Scripts are cached per node: after a failover the new primary answers NOSCRIPT once."""
    topo = ClusterTopology(masters=3, replicas=1).start()
    try:
        client = cluster_client(topo.config)
        lock = Lock("noscript", client=client, ttl=5, wait=0)
        assert lock.acquire()
        lock.release()
        victim_addr = _primary_of(client, lock.keys.lock)
        for node in topo.primaries():
            if f"127.0.0.1:{node.port}" == victim_addr:
                node.kill()
        deadline = time.monotonic() + 15
        _until("lock after failover", deadline, lambda: lock.acquire() or 1 / 0)
        assert lock.owned()
        lock.release()
        assert not lock.locked()
    finally:
        topo.cleanup()


def test_health_metrics_status_and_the_deploy_check_read_every_primary(
    settings, cluster_topology, capsys
):
    from django.core.management import call_command

    from django_redcoord.checks import check_what_redis_keeps
    from django_redcoord.health import Probe, run_checks
    from django_redcoord.metrics import RedcoordCollector

    cluster_topology.flush()
    settings.REDCOORD = {"CLUSTER": {"NODES": cluster_topology.urls[:2]}, "KEY_PREFIX": "ops"}
    client = cluster_client(cluster_topology.config)
    held = [Lock(f"ops:{i}", client=client, prefix="ops", ttl=30, wait=0) for i in range(12)]
    assert all(lock.acquire() for lock in held)
    for name in ("mail", "sms"):
        Queue(name, client=client, prefix="ops").push({"n": 1})
    results = run_checks(client, "ops", Probe.build(queues=("mail", "sms"), max_age=3600))
    assert [r.ok for r in results] == [True, True, True], [r.line() for r in results]
    snapshot = RedcoordCollector(client, prefix="ops").read()
    assert snapshot["locks"]["held"] == 12 and {q["name"] for q in snapshot["queues"]} == {
        "mail",
        "sms",
    }
    call_command("redcoord", "status")
    out = capsys.readouterr().out
    assert "ops:3" in out and "mail" in out
    persisted = [m for m in check_what_redis_keeps() if m.id == "redcoord.W004"]
    assert len(persisted) == 3 and all(
        "a Cluster primary" in m.msg for m in persisted
    )  # our nodes persist nothing
    for lock in held:
        lock.release()


def test_a_slot_being_migrated_refuses_for_now_and_then_moved_is_followed(cluster):
    """Resharding: while a slot migrates, a script over keys of it that are not all in one
    place is refused with TRYAGAIN (at the source, or after ASK and ASKING at the importing
    node): an outage to retry, nothing granted. Once the slot is moved, MOVED re-reads the map."""
    from django_redcoord.core.exceptions import CoordinationUnavailable

    lock = Lock("moving", client=cluster, ttl=10, wait=0)
    slot = key_slot(lock.keys.lock)
    source = cluster.nodes_manager.get_node_from_slot(slot)
    target = next(n for n in cluster.get_primaries() if n.name != source.name)
    src, dst = cluster.get_redis_connection(source), cluster.get_redis_connection(target)
    src_id, dst_id = src.execute_command("CLUSTER", "MYID"), dst.execute_command("CLUSTER", "MYID")
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", src_id)
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", dst_id)
    try:
        with pytest.raises(CoordinationUnavailable, match="TRYAGAIN|rehashing"):
            lock.acquire()
        assert not lock.held
    finally:
        for node in (dst, src):
            node.execute_command("CLUSTER", "SETSLOT", slot, "NODE", dst_id)
    again = Lock("moving", client=cluster, ttl=10, wait=0)
    _until("lock after the move", time.monotonic() + 10, lambda: again.acquire() or 1 / 0)
    assert (
        cluster.nodes_manager.get_node_from_slot(slot).name == target.name
    )  # MOVED re-read the map
    assert dst.exists(again.keys.lock)
    again.release()


def test_the_admin_index_reads_and_a_tasks_worker_ride_out_a_slot_in_migration(
    settings, cluster_topology
):
    """One slot MIGRATING (as all through a reshard), even one holding none of our keys: the
    per-slot index read aborted with "non local key" on its node, so the dashboard, the
    metrics and `redcoord status` failed, and every Tasks worker's heartbeat thread died (its
    workflow sweep reads the index) and the worker exited 1. The slot is now missed for the
    moment and the rest read."""
    from django_redcoord.metrics import RedcoordCollector

    cluster_topology.flush()
    settings.REDCOORD = {"CLUSTER": {"NODES": cluster_topology.urls[:2]}, "KEY_PREFIX": "mig"}
    client = cluster_client(cluster_topology.config)
    held = [Lock(f"mig:{i}", client=client, prefix="mig", ttl=30, wait=0) for i in range(6)]
    assert all(lock.acquire() for lock in held)
    empty_slot = next(s for s in range(16384) if all(key_slot(h.keys.index) != s for h in held))
    source = client.nodes_manager.get_node_from_slot(empty_slot)
    target = next(n for n in client.get_primaries() if n.name != source.name)
    src, dst = client.get_redis_connection(source), client.get_redis_connection(target)
    src_id, dst_id = src.execute_command("CLUSTER", "MYID"), dst.execute_command("CLUSTER", "MYID")
    dst.execute_command("CLUSTER", "SETSLOT", empty_slot, "IMPORTING", src_id)
    src.execute_command("CLUSTER", "SETSLOT", empty_slot, "MIGRATING", dst_id)
    try:
        live = indexes.read_index(client, KeyBuilder("mig", cluster=True), "locks")
        names = {n.decode() if isinstance(n, bytes) else n for n in live}
        assert {f"mig:{i}" for i in range(6)} <= names
        assert RedcoordCollector(client, prefix="mig").read()["locks"]["held"] == 6
        # (the worker's workflow sweep reads this index the same way)
        indexes.read_index(client, KeyBuilder("mig", cluster=True), "workflows")
    finally:
        for node in (src, dst):
            node.execute_command("CLUSTER", "SETSLOT", empty_slot, "STABLE")
        for lock in held:
            lock.release()
        client.close()


def test_the_slot_recorder_catches_a_cross_slot_call_and_agrees_with_the_server(cluster):
    """The run's slot check (tests/support/key_slots.py) must be able to fail: a call whose keys
    span two slots is caught (negative control), and its slots are the server's own."""
    from ..support import key_slots

    samples = [
        "plain",
        "p:lock:{invoice:1}",
        "p:lock:{c-7}:invoice:{c-7}:2",
        "a{}b",
        "{}{x}",
        "x{y}{z}",
        "é{ü}",
    ]
    assert [key_slots.slot(k) for k in samples] == [
        cluster.execute_command("CLUSTER KEYSLOT", k) for k in samples
    ]
    seen, on_cluster = dict(key_slots.SEEN), set(key_slots.ON_CLUSTER)
    try:
        key_slots.record("negative/control", ["p:lock:{a}", "p:index:locks:{b}"], cluster=True)
        assert "negative/control" in key_slots.SEEN and key_slots.problems()
        key_slots.record("one-server/index", ["p:lock:{a}", "p:index:locks:7"], cluster=False)
        assert "one-server/index" not in key_slots.SEEN  # a one-server index key is left out there
    finally:
        key_slots.SEEN.clear()
        key_slots.SEEN.update(seen)
        key_slots.ON_CLUSTER.clear()
        key_slots.ON_CLUSTER.update(on_cluster)
        key_slots.INDEX_WRITERS.discard("one-server/index")


def test_the_cluster_clients_own_outage_errors_are_ours_and_its_misuse_is_not():
    """redis-py's Cluster client raises RedisClusterException (not a RedisError) when no
    node serves a slot or none answers: an outage loops must ride out, so ours is
    CoordinationUnavailable; a call that can never work stays what it is."""
    from redis.exceptions import RedisClusterException, SlotNotCoveredError

    from django_redcoord.core.exceptions import CoordinationUnavailable
    from django_redcoord.core.transport.errors import unavailable_as_ours

    for outage in (
        SlotNotCoveredError('Slot "7" is not covered by the cluster.'),
        RedisClusterException(
            "Redis Cluster cannot be connected. Please provide at least one reachable node"
        ),
        RedisClusterException("Cluster Node 127.0.0.1:1 has no redis_connection"),
    ):
        with pytest.raises(CoordinationUnavailable), unavailable_as_ours(None, "a call"):
            raise outage
    with (
        pytest.raises(RedisClusterException, match="same key slot"),
        unavailable_as_ours(None, "a call"),
    ):
        raise RedisClusterException("EVALSHA - all keys must map to the same key slot")

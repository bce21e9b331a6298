"""@with_lock on views (through Django's test client) and on plain code."""

import asyncio
import concurrent.futures

import pytest
from asgiref.sync import sync_to_async

from django_redcoord import CoordinationUnavailable, Lock, LockNotAcquired, current_lock, with_lock


@pytest.fixture(autouse=True)
def _urls(settings):
    settings.ROOT_URLCONF = "tests.support.decorator_views"


def hold(name):
    lock = Lock(name, ttl=30, wait=0)
    assert lock.acquire()
    return lock


def test_function_view_holds_the_lock_named_by_its_arguments(client):
    response = client.get("/invoice/42/")
    assert response.status_code == 200
    first = response.json()
    assert first["name"] == "invoice:42" and first["same"] is True and first["token"] > 0
    assert (
        client.get("/invoice/42/").json()["token"] > first["token"]
    )  # released, then fenced again
    assert not Lock("invoice:42").locked()


def test_attribute_access_in_the_template(client, django_user_model):
    user = django_user_model.objects.create_user("ann", password="pw")
    client.force_login(user)
    assert client.get("/me/").json()["name"] == f"user:{user.pk}"


def test_cbv_method(client):
    data = client.get("/report/q3/").json()
    assert data["token"] > 0 and data == {
        "name": "report:q3",
        "token": data["token"],
        "same": True,
        "view": "method",
    }


def test_whole_cbv_wraps_dispatch(client):
    assert client.get("/export/csv/").json()["name"] == "export:csv"


@pytest.mark.parametrize(
    "url, name",
    [("/invoice/7/", "invoice:7"), ("/report/q3/", "report:q3"), ("/export/csv/", "export:csv")],
)
def test_busy_view_answers_409_with_retry_after(client, url, name):
    held = hold(name)
    response = client.get(url)
    assert response.status_code == 409
    assert 1 <= int(response["Retry-After"]) <= 30
    assert name in response.content.decode()
    held.release()
    assert client.get(url).status_code == 200


def test_on_busy_replaces_the_409(client):
    held = hold("custom:1")
    response = client.get("/custom/1/")
    assert response.status_code == 418 and response.content == b"busy: custom:1"
    held.release()


def test_async_view(async_client):
    async def scenario():
        ok = await async_client.get("/async/3/")
        assert ok.status_code == 200 and ok.json()["name"] == "async:3"
        held = hold("async:3")
        busy = await async_client.get("/async/3/")
        assert busy.status_code == 409
        held.release()

    asyncio.run(scenario())


@pytest.mark.django_db(transaction=True)
def test_an_async_view_may_name_its_lock_after_the_signed_in_user(async_client, django_user_model):
    user = django_user_model.objects.create_user("erin", password="x")
    async_client.force_login(user)  # reading request.user on the loop would query the database

    async def scenario():
        ok = await async_client.get("/report/")
        assert ok.status_code == 200 and ok.json()["lock"] == f"report:{user.pk}"
        held = hold(f"report:{user.pk}")
        assert (await async_client.get("/report/")).status_code == 409
        held.release()

    asyncio.run(scenario())


def test_an_async_class_based_view_holds_the_lock_while_its_handler_runs(async_client):
    async def scenario():
        ok = await async_client.get("/async-export/q3/")
        assert ok.status_code == 200 and ok.json() == {
            "name": "async-export:q3",
            "held_meanwhile": True,
        }
        held = hold("async-export:q3")
        busy = await async_client.get("/async-export/q3/")
        assert busy.status_code == 409  # a refusal Django can await
        held.release()

    asyncio.run(scenario())
    assert not Lock("async-export:q3", ttl=5).locked()  # released after the handler


class Invoice:
    def __init__(self, pk):
        self.pk = pk

    @with_lock("invoice:{self.pk}", ttl=5, wait=0)
    def pay(self, amount):
        lock = current_lock()
        return lock.name, lock.token, amount


@with_lock(lambda account, amount: f"account:{account}", ttl=5, wait=0)
def transfer(account, amount):
    return current_lock().name


def test_plain_method_and_callable_key():
    name, token, amount = Invoice(9).pay(10)
    assert (name, amount) == ("invoice:9", 10) and token > 0
    assert transfer("acme", amount=3) == "account:acme"
    assert current_lock() is None


def test_plain_function_raises_lock_not_acquired_when_busy():
    held = hold("invoice:9")
    with pytest.raises(LockNotAcquired, match="'invoice:9' could not be acquired within 0 s"):
        Invoice(9).pay(1)
    held.release()


def test_key_naming_a_missing_argument_fails_at_decoration_and_says_which_arguments_exist():
    with pytest.raises(
        ValueError, match=r"\{order_id\} names no argument \(its arguments are pk\)"
    ):

        @with_lock("order:{order_id}", wait=0)
        def ship(pk):
            return pk

    with pytest.raises(ValueError, match=r"each \{\.\.\.\} must start with an argument name"):
        with_lock("order:{0}")(lambda pk: pk)
    with pytest.raises(ValueError, match="is not a valid format template"):
        with_lock("order:{pk")(lambda pk: pk)


def test_key_over_var_keyword_arguments_is_checked_at_call_time(redis_client):
    @with_lock("order:{slug}", wait=0, client=redis_client)
    def ship(request, **kw):
        return kw["slug"]

    assert ship(None, slug="a1") == "a1"  # {slug} reads **kw, whatever it is called
    with pytest.raises(
        ValueError,
        match=r"could not be formatted: KeyError\('slug'\); the call's arguments are request, kw",
    ):
        ship(None, other=1)


def test_key_producing_an_unsafe_name_is_refused():
    @with_lock("x:{name}", wait=0)
    def f(name):
        return name

    with pytest.raises(ValueError, match="allowed characters are"):
        f("a*b")


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"ttl": 0}, "ttl must be between"),
        ({"wait": -2}, "wait must be seconds >= 0"),
        ({"on_busy": 5}, "on_busy must be a callable"),
    ],
)
def test_bad_decorator_arguments_fail_at_decoration(kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        with_lock("k", **kwargs)


def test_bad_key_type_fails_at_decoration():
    with pytest.raises(TypeError, match="non-empty format string or a callable"):
        with_lock(42)


# -- the lock covers the work, however it runs -------------------------------------------


@pytest.mark.django_db
def test_a_streamed_response_holds_the_lock_until_its_body_is_sent(client):
    response = client.get("/stream/1/")
    assert response.status_code == 200
    assert Lock("stream:1").locked()  # the view returned, the body is not sent yet
    body = b"".join(response.streaming_content).decode()
    assert body == "0:held\n1:held\n2:held\n"
    response.close()
    assert not Lock("stream:1").locked()


@pytest.mark.django_db
def test_a_streamed_response_closed_early_releases_the_lock(client):
    response = client.get("/stream/2/")
    next(iter(response.streaming_content))
    response.close()  # the client went away mid-body
    assert not Lock("stream:2").locked()


@pytest.mark.django_db
def test_a_streamed_response_closed_before_its_body_starts_releases_the_lock(client):
    """A middleware replaced it, or the client left before the first chunk: close() alone
    releases."""
    response = client.get("/stream/3/")
    assert Lock("stream:3").locked()
    response.close()
    assert not Lock("stream:3").locked()


@pytest.mark.django_db(transaction=True)
def test_an_async_streamed_response_closed_before_its_body_starts_releases_the_lock(async_client):
    async def scenario():
        response = await async_client.get("/astream/3/")
        assert Lock("astream:3").locked()
        # What Django's ASGI handler does when the response ends.
        await sync_to_async(response.close, thread_sensitive=True)()

    asyncio.run(scenario())
    assert not Lock("astream:3").locked()


def test_an_async_streamed_response_holds_the_lock_until_its_body_is_sent(async_client):
    async def scenario():
        response = await async_client.get("/astream/1/")
        assert response.status_code == 200
        chunks = [chunk async for chunk in response.streaming_content]
        return b"".join(chunks).decode()

    assert asyncio.run(scenario()) == "0:held\n1:held\n2:held\n"
    assert not Lock("astream:1").locked()


@with_lock("gen:{n}", ttl=5, wait=0)
def numbers(n):
    for i in range(n):
        yield i, Lock(f"gen:{n}").locked()


def test_a_generator_holds_the_lock_while_it_runs_and_releases_when_exhausted_or_closed():
    assert list(numbers(3)) == [(0, True), (1, True), (2, True)]
    assert not Lock("gen:3").locked()
    gen = numbers(4)
    assert not Lock("gen:4").locked()  # a generator's body (and its lock) starts on first next()
    assert next(gen) == (0, True)
    gen.close()
    assert not Lock("gen:4").locked()
    held = hold("gen:5")
    with pytest.raises(LockNotAcquired):
        next(numbers(5))
    held.release()


@with_lock("agen:{n}", ttl=5, wait=0)
async def async_numbers(n):
    for i in range(n):
        yield i


def test_an_async_generator_holds_the_lock_while_it_runs():
    async def scenario():
        seen = []
        async for i in async_numbers(2):
            seen.append((i, Lock("agen:2").locked()))
        return seen

    assert asyncio.run(scenario()) == [(0, True), (1, True)]
    assert not Lock("agen:2").locked()


@with_lock("cancel:{n}", ttl=30, wait=10)
async def slow_to_get(n):
    return "ran"


def test_an_async_call_cancelled_while_waiting_never_keeps_the_lock(redis_client):
    """The client went away while its request waited: the lock must pass on, not be
    granted later to nobody and held for its whole TTL."""
    held = hold("cancel:1")

    async def scenario():
        task = asyncio.ensure_future(slow_to_get(1))
        await asyncio.sleep(0.3)  # queued in Redis, blocked on its wake list
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.3)  # the interrupted wait gives up
        # The server keeps running: a waiter still queued would be handed the lock now.
        await asyncio.get_running_loop().run_in_executor(None, held.release)
        await asyncio.sleep(0.3)
        return Lock("cancel:1").locked(), redis_client.llen(Lock("cancel:1").keys.queue)

    assert asyncio.run(scenario()) == (False, 0)


def test_an_async_call_cancelled_just_as_it_is_granted_gives_the_lock_back():
    held = hold("cancel:2")

    async def scenario():
        task = asyncio.ensure_future(slow_to_get(2))
        await asyncio.sleep(0.3)
        held.release()  # hands the lock to the queued task ...
        task.cancel()  # ... which is cancelled before it runs its body
        try:
            await task
        except asyncio.CancelledError:
            pass
        await asyncio.sleep(0.5)

    asyncio.run(scenario())
    assert not Lock("cancel:2").locked()


def test_a_view_answers_503_with_retry_after_while_redis_is_down(client, settings):
    from tests.support.redis_servers import free_port

    settings.REDCOORD = {
        **settings.REDCOORD,
        "URL": f"redis://127.0.0.1:{free_port()}/0",
        "CONNECT_TIMEOUT": 0.2,
    }
    response = client.get("/invoice/5/")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    custom = client.get("/unavailable/5/")
    assert custom.status_code == 418 and custom.content == b"down: acquire lock 'unavail:5'"
    with pytest.raises(CoordinationUnavailable):
        Invoice(5).pay(1)  # not a view: the error itself


class _NoThreads(concurrent.futures.ThreadPoolExecutor):
    def submit(self, *args, **kwargs):
        raise AssertionError("an async call hopped to a thread")


def test_an_async_call_takes_and_releases_its_lock_on_the_event_loop():
    async def scenario():
        asyncio.get_running_loop().set_default_executor(_NoThreads())
        return await slow_to_get(3), await async_numbers_list(2)

    assert asyncio.run(scenario()) == ("ran", [0, 1])
    assert not Lock("cancel:3").locked()


async def async_numbers_list(n):
    return [i async for i in async_numbers(n)]


def test_a_new_event_loop_per_call_keeps_no_client_per_call():
    """async_to_sync and asyncio.run start a loop per call: clients of closed loops are dropped."""
    from django_redcoord.core.transport import clients as connection

    for _ in range(20):
        assert asyncio.run(slow_to_get(4)) == "ran"
    assert len(connection._async_clients) <= 1


def test_async_calls_given_a_sync_client_never_wait_behind_each_other_in_threads(redis_client):
    """With a sync ``client=`` an async call waits in a thread. Many waiters at once
    (more than the event loop's default executor has threads) must not starve the
    releases that would serve them: every call completes, one at a time per name."""
    inside = {0: 0, 1: 0}
    overlaps = []

    @with_lock("sync-client:{k}", ttl=30, wait=20, client=redis_client)
    async def work(k):
        inside[k] += 1
        overlaps.append(inside[k] > 1)
        await asyncio.sleep(0.005)
        inside[k] -= 1
        return k

    async def scenario():
        asyncio.get_running_loop().set_default_executor(concurrent.futures.ThreadPoolExecutor(4))
        return await asyncio.wait_for(asyncio.gather(*(work(i % 2) for i in range(40))), 15)

    assert sorted(asyncio.run(scenario())) == [0] * 20 + [1] * 20
    assert not any(overlaps)
    assert not Lock("sync-client:0").locked() and not Lock("sync-client:1").locked()


@pytest.mark.parametrize("url", ["/limited/pdf/", "/alimited/pdf/"])
def test_a_semaphore_view_lets_permits_in_then_answers_429_with_retry_after(
    client, url, redis_client
):
    from django_redcoord import Semaphore

    held = [Semaphore("exports:pdf", 2, ttl=5, wait=0) for _ in range(2)]
    first = client.get(url)
    assert first.status_code == 200 and first.json()["permits"] == 2
    assert first.json()["name"] == "exports:pdf"
    assert all(s.acquire() for s in held)  # the view released its permit: two are free again
    busy = client.get(url)
    assert busy.status_code == 429 and 1 <= int(busy["Retry-After"]) <= 5
    assert b"semaphore 'exports:pdf'" in busy.content
    for s in held:
        s.release()
    assert Semaphore("exports:pdf", 2).available() == 2


def test_with_semaphore_checks_its_arguments_at_decoration():
    from django_redcoord import with_semaphore

    with pytest.raises(ValueError, match="permits must be a whole number from 1"):
        with_semaphore("x", permits=0)
    with pytest.raises(TypeError, match="on_busy must be a callable"):
        with_semaphore("x", permits=1, on_busy=5)
    with pytest.raises(ValueError, match=r"with_semaphore key 'x:\{nope\}' on .*names no argument"):
        with_semaphore("x:{nope}", permits=1)(lambda request: None)


def test_read_and_write_lock_views(client):
    from django_redcoord import ReadWriteLock

    assert client.get("/catalog/1/").json()["kind"] == "read lock"
    assert client.get("/catalog/1/write/").json()["kind"] == "write lock"
    reading = ReadWriteLock("catalog:1", wait=0).read()
    assert reading.acquire()
    assert client.get("/catalog/1/").status_code == 200  # readers share
    busy = client.get("/catalog/1/write/")
    assert (
        busy.status_code == 409 and b"'catalog:1'" in busy.content and int(busy["Retry-After"]) >= 1
    )
    reading.release()
    assert client.get("/catalog/1/write/").status_code == 200

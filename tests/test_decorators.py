"""@with_lock on views (through Django's test client) and on plain code."""

import asyncio

import pytest

from django_redcoord import Lock, LockNotAcquired, current_lock, with_lock


@pytest.fixture(autouse=True)
def _urls(settings):
    settings.ROOT_URLCONF = "tests.decorator_views"


def hold(name):
    lock = Lock(name, ttl=30, wait=0)
    assert lock.acquire()
    return lock


def test_function_view_holds_the_lock_named_by_its_arguments(client):
    response = client.get("/invoice/42/")
    assert response.status_code == 200
    assert response.json() == {"name": "invoice:42", "token": 1, "same": True}
    assert client.get("/invoice/42/").json()["token"] == 2  # released, then fenced again
    assert not Lock("invoice:42").locked()


def test_attribute_access_in_the_template(client, django_user_model):
    user = django_user_model.objects.create_user("ann", password="pw")
    client.force_login(user)
    assert client.get("/me/").json()["name"] == f"user:{user.pk}"


def test_cbv_method(client):
    assert client.get("/report/q3/").json() == {"name": "report:q3", "token": 1, "same": True, "view": "method"}


def test_whole_cbv_wraps_dispatch(client):
    assert client.get("/export/csv/").json()["name"] == "export:csv"


@pytest.mark.parametrize("url, name", [("/invoice/7/", "invoice:7"), ("/report/q3/", "report:q3"), ("/export/csv/", "export:csv")])
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
    assert Invoice(9).pay(10) == ("invoice:9", 1, 10)
    assert transfer("acme", amount=3) == "account:acme"
    assert current_lock() is None


def test_plain_function_raises_lock_not_acquired_when_busy():
    held = hold("invoice:9")
    with pytest.raises(LockNotAcquired, match="'invoice:9' could not be acquired within 0 s"):
        Invoice(9).pay(1)
    held.release()


def test_key_naming_a_missing_argument_fails_at_decoration_and_says_which_arguments_exist():
    with pytest.raises(ValueError, match=r"\{order_id\} names no argument \(its arguments are pk\)"):

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
    with pytest.raises(ValueError, match=r"could not be formatted: KeyError\('slug'\); the call's arguments are request, kw"):
        ship(None, other=1)


def test_key_producing_an_unsafe_name_is_refused():
    @with_lock("x:{name}", wait=0)
    def f(name):
        return name

    with pytest.raises(ValueError, match="allowed characters are"):
        f("a*b")


@pytest.mark.parametrize(
    "kwargs, message",
    [({"ttl": 0}, "ttl must be between"), ({"wait": -2}, "wait must be seconds >= 0"), ({"on_busy": 5}, "on_busy must be a callable")],
)
def test_bad_decorator_arguments_fail_at_decoration(kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        with_lock("k", **kwargs)


def test_bad_key_type_fails_at_decoration():
    with pytest.raises(TypeError, match="non-empty format string or a callable"):
        with_lock(42)

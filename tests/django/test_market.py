"""The demo market under concurrent buyers in several OS processes and threads.

A real ``manage.py runserver`` (threaded) serves the demo on a free port with
a file SQLite database; buyer processes POST purchases at once. With
``@with_lock`` nothing is oversold and no funds go negative; the same
purchase without the lock (negative control) breaks those invariants. The
page's promises: "Buy without a lock" and the stampede buttons oversell and
say so in red, the locked ones never do, a sold-out item has no buy buttons,
and a busy lock sends the page back to the market with a message.
"""

import http.cookiejar
import io
import os
import random
import re
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from django_redcoord import Lock

from ..support import multiproc
from ..support.redis_servers import free_port

ROOT = Path(__file__).resolve().parents[2]
INITIAL = {"Lamp": 3, "Chair": 2, "Book": 5}
TOTAL_FUNDS = 100 + 100 + 50


@pytest.fixture
def serve_market(tmp_path, redis_url):
    """``serve_market(**env)`` starts the demo on a fresh database; returns (base URL, env,
    {item: id})."""
    servers = []

    def serve(**extra_env):
        env = {
            **os.environ,
            "DEMO_DB_PATH": str(tmp_path / f"market{len(servers)}.sqlite3"),
            "REDCOORD_REDIS_URL": redis_url,
            "REDCOORD_KEY_PREFIX": "demo",
            "DEMO_MARKET_THINK_TIME": "0.02",
            "DJANGO_SETTINGS_MODULE": "testproject.settings",
            **extra_env,
        }
        for args in (["migrate", "--noinput", "-v", "0"], ["demo_setup"]):
            subprocess.run(
                [sys.executable, "manage.py", *args],
                cwd=ROOT,
                env=env,
                check=True,
                capture_output=True,
            )
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        servers.append(server)
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                urllib.request.urlopen(base + "/market/", timeout=2)
                break
            except (urllib.error.URLError, ConnectionError):
                assert time.monotonic() < deadline and server.poll() is None, (
                    "runserver did not start"
                )
                time.sleep(0.1)
        return base, env, dict(_db(env, "select name, id from demo_item"))

    yield serve
    for server in servers:
        server.terminate()
        server.wait(10)


@pytest.fixture
def market(serve_market):
    return serve_market()


def _db(env, sql):
    with sqlite3.connect(env["DEMO_DB_PATH"]) as conn:
        return conn.execute(sql).fetchall()


def shopper(index, base, items, path):
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    opener.open(base + "/market/", timeout=30).read()
    csrf = next(c.value for c in jar if c.name == "csrftoken")
    buyer = ["alice", "bob", "carol"][index % 3]
    plan = [name for name in INITIAL for _ in range(4)]
    random.Random(index).shuffle(plan)
    statuses = []
    for name in plan:
        request = urllib.request.Request(
            f"{base}/market/{path}/{items[name]}/",
            data=f"buyer={buyer}".encode(),
            headers={"X-CSRFToken": csrf, "Referer": base + "/market/"},
        )
        try:
            statuses.append(opener.open(request, timeout=60).status)
        except urllib.error.HTTPError as exc:
            statuses.append(exc.code)
    return statuses


def _invariants(env):
    stock = dict(_db(env, "select name, stock from demo_item"))
    funds = dict(
        _db(
            env,
            "select u.username, a.funds from demo_account a join auth_user u on u.id = a.user_id",
        )
    )
    sold = dict(
        _db(
            env,
            "select i.name, count(*) from demo_purchase p join demo_item i on i.id = p.item_id "
            "group by i.name",
        )
    )
    return stock, funds, sold


def test_locked_buy_never_oversells_or_overdraws(market):
    base, env, items = market
    results = multiproc.run_in_processes(shopper, 6, base, items, "buy", timeout=180)
    statuses = [s for r in results for s in r]
    assert set(statuses) <= {200, 402, 409}, statuses
    stock, funds, sold = _invariants(env)
    assert all(v >= 0 for v in stock.values()), stock
    assert all(v >= 0 for v in funds.values()), funds
    assert sum(funds.values()) == TOTAL_FUNDS, funds
    for name, initial in INITIAL.items():
        assert sold.get(name, 0) == initial - stock[name]
    assert statuses.count(200) == sum(sold.values()) > 0
    for item_id in items.values():
        fences = [
            f
            for (f,) in _db(
                env, f"select fence from demo_purchase where item_id = {item_id} order by id"
            )
        ]
        assert fences == sorted(set(fences)), (
            f"fencing tokens of one item must strictly increase: {fences}"
        )


def test_negative_control_unlocked_buy_breaks_the_invariants(market):
    base, env, items = market
    multiproc.run_in_processes(shopper, 6, base, items, "buy-unlocked", timeout=180)
    stock, funds, sold = _invariants(env)
    broken = (
        any(v < 0 for v in stock.values())
        or any(v < 0 for v in funds.values())
        or sum(funds.values()) != TOTAL_FUNDS
        or any(sold.get(n, 0) != INITIAL[n] - stock[n] for n in INITIAL)
    )
    assert broken, f"no race observed without the lock: stock={stock} funds={funds} sold={sold}"


# -- the page's promises ---------------------------------------------------------------


def _item_rows(html):
    return dict(re.findall(r'<tr id="item-(\d+)">(.*?)</tr>', html, re.S))


@pytest.mark.django_db
def test_sold_out_item_shows_no_buy_buttons(client):
    from testproject.demo.models import Item

    call_command("demo_setup", stdout=io.StringIO())
    Item.objects.filter(name="Chair").update(stock=0)
    chair, lamp = Item.objects.get(name="Chair"), Item.objects.get(name="Lamp")
    rows = _item_rows(client.get("/market/").content.decode())
    assert "Sold out" in rows[str(chair.pk)]
    assert "<button" not in rows[str(chair.pk)], rows[str(chair.pk)]
    for action in ("buy", "buy-unlocked", "stampede"):
        assert f"/market/{action}/{lamp.pk}/" in rows[str(lamp.pk)]
    assert "Sold out" not in rows[str(lamp.pk)]


@pytest.mark.django_db
def test_page_shows_an_oversell_in_red(client):
    from testproject.demo.models import Item, Purchase

    call_command("demo_setup", stdout=io.StringIO())
    chair = Item.objects.get(name="Chair")  # listed 2
    buyer = get_user_model().objects.get(username="alice")
    Purchase.objects.bulk_create(
        Purchase(item=chair, buyer=buyer, price=45, fence=0) for _ in range(5)
    )
    Item.objects.filter(pk=chair.pk).update(stock=1)  # lost writes: 5 sales, one decrement
    row = _item_rows(client.get("/market/").content.decode())[str(chair.pk)]
    assert '<span class="oversold">sold 5 of 2 — oversold by 3</span>' in row, row
    assert "the stock says 1 left: 4 sales never reached it" in row, row


def _violations(env):
    """The safety checker: every way the market's numbers can be wrong."""
    found = []
    rows = _db(
        env,
        "select i.name, i.listed, i.stock, count(p.id) from demo_item i "
        "left join demo_purchase p on p.item_id = i.id group by i.id",
    )
    for name, listed, stock, sold in rows:
        if sold > listed:
            found.append(f"{name} oversold: {sold} sold of {listed}")
        if stock != listed - sold:
            found.append(f"{name} stock {stock}, should be {listed - sold}")
    funds = dict(
        _db(
            env,
            "select u.username, a.funds from demo_account a join auth_user u on u.id = a.user_id",
        )
    )
    if any(v < 0 for v in funds.values()) or sum(funds.values()) != TOTAL_FUNDS:
        found.append(f"funds {funds}, total should be {TOTAL_FUNDS}")
    return found


def _burst(base, path, item_id, n):
    """n threads POST one purchase each at the same instant; their statuses."""
    jar = http.cookiejar.CookieJar()
    urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar)).open(
        base + "/market/", timeout=30
    ).read()
    csrf = next(c.value for c in jar if c.name == "csrftoken")
    start = threading.Barrier(n)
    statuses = [None] * n

    def one(i):
        request = urllib.request.Request(
            f"{base}/market/{path}/{item_id}/",
            data=f"buyer={['alice', 'bob', 'carol'][i % 3]}".encode(),
            headers={
                "X-CSRFToken": csrf,
                "Cookie": f"csrftoken={csrf}",
                "Referer": base + "/market/",
            },
        )
        start.wait(10)
        try:
            statuses[i] = urllib.request.urlopen(request, timeout=60).status
        except urllib.error.HTTPError as exc:
            statuses[i] = exc.code

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return statuses


class Page:
    """A browser's view of the market: cookies, CSRF, forms posted with from=page, redirects
    followed."""

    def __init__(self, base):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.html = self.get("/market/")

    def get(self, path):
        with self.opener.open(self.base + path, timeout=30) as response:
            return response.read().decode()

    def post(self, path, **fields):
        csrf = next(c.value for c in self.jar if c.name == "csrftoken")
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": csrf, **fields}).encode()
        request = urllib.request.Request(
            self.base + path, data=data, headers={"Referer": self.base + "/market/"}
        )
        with self.opener.open(request, timeout=60) as response:
            self.url, self.html = response.url, response.read().decode()
        return self.html


# A pause between check and write long enough that every buyer of a burst
# reads before anyone writes: the unlocked race is certain, not likely.
SLOW = {"DEMO_MARKET_THINK_TIME": "0.2"}


def test_locked_buttons_hammered_at_once_never_oversell(serve_market):
    base, env, items = serve_market(**SLOW)
    statuses = _burst(base, "buy", items["Chair"], 8)
    assert statuses.count(200) == 2 and set(statuses) <= {200, 402, 409}, (
        statuses
    )  # 402: carol is out of funds
    html = Page(base).post(f"/market/stampede/{items['Lamp']}/", lock="yes")
    message = re.search(
        r'class="message success">'
        r"(Stampede: 10 buyers at once on Lamp through @with_lock: .*?)</p>",
        html,
    )
    assert message, html
    assert ": 3 bought, " in message[1] and message[1].endswith("Sold 3 of 3, never more."), (
        message[1]
    )  # the rest: sold out or broke
    assert _violations(env) == []
    for name in ("Chair", "Lamp"):
        assert "Sold out" in _item_rows(html)[str(items[name])]


def test_negative_control_unlocked_buttons_hammered_at_once_oversell(serve_market):
    base, env, items = serve_market(**SLOW)
    statuses = _burst(base, "buy-unlocked", items["Chair"], 8)
    assert statuses.count(200) > 2, statuses
    found = _violations(env)
    assert any(v.startswith("Chair oversold") for v in found), (
        f"the checker saw no oversell: {found}"
    )
    html = Page(base).post(f"/market/stampede/{items['Lamp']}/", lock="no")
    assert re.search(
        r'class="message error">Stampede: 10 buyers at once on Lamp without a lock: .* '
        r"Sold \d+ of 3 — oversold by \d+",
        html,
    ), html
    chair_row = _item_rows(html)[str(items["Chair"])]
    assert re.search(
        rf'<span class="oversold">sold {statuses.count(200)} of 2 — oversold by \d+</span>',
        chair_row,
    ), chair_row


def test_busy_lock_sends_the_page_back_with_a_message(serve_market, redis_client):
    base, env, items = serve_market(DEMO_MARKET_LOCK_WAIT="0.3")
    lamp = items["Lamp"]
    page = Page(base)
    with Lock(f"market:item:{lamp}", ttl=30, wait=0, client=redis_client, prefix="demo"):
        html = page.post(f"/market/buy/{lamp}/", buyer="alice", **{"from": "page"})
        assert page.url == base + "/market/"
        assert "Someone else is buying this item right now — try again." in html, html
        with pytest.raises(
            urllib.error.HTTPError
        ) as busy:  # scripts still get the 409 with Retry-After
            page.post(f"/market/buy/{lamp}/", buyer="alice")
        assert busy.value.code == 409 and busy.value.headers["Retry-After"]
    with Lock("market:funds:alice", ttl=30, wait=0, client=redis_client, prefix="demo"):
        html = page.post(f"/market/buy/{lamp}/", buyer="alice", **{"from": "page"})
        assert "Another purchase by alice is in progress — try again." in html, html
    assert _violations(env) == [] and _db(env, "select count(*) from demo_purchase") == [(0,)]
    html = page.post(f"/market/buy/{lamp}/", buyer="alice", **{"from": "page"})
    assert "alice bought Lamp" in html and "try again" not in html

"""The demo market under concurrent buyers in several OS processes.

A real ``manage.py runserver`` (threaded) serves the demo on a free port with
a file SQLite database; buyer processes POST purchases at once. With
``@with_lock`` nothing is oversold and no funds go negative; the same
purchase without the lock (negative control) breaks those invariants.
"""

import http.cookiejar
import os
import random
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from . import multiproc
from .redis_servers import free_port

ROOT = Path(__file__).resolve().parent.parent
INITIAL = {"Lamp": 3, "Chair": 2, "Book": 5}
TOTAL_FUNDS = 100 + 100 + 50


@pytest.fixture
def market(tmp_path, redis_url):
    env = {
        **os.environ,
        "DEMO_DB_PATH": str(tmp_path / "market.sqlite3"),
        "REDCOORD_REDIS_URL": redis_url,
        "DEMO_MARKET_THINK_TIME": "0.02",
        "DJANGO_SETTINGS_MODULE": "testproject.settings",
    }
    for args in (["migrate", "--noinput", "-v", "0"], ["demo_setup"]):
        subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 20
    while True:
        try:
            urllib.request.urlopen(base + "/market/", timeout=2)
            break
        except (urllib.error.URLError, ConnectionError):
            assert time.monotonic() < deadline and server.poll() is None, "runserver did not start"
            time.sleep(0.1)
    items = dict(_db(env, "select name, id from demo_item"))
    yield base, env, items
    server.terminate()
    server.wait(10)


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
    funds = dict(_db(env, "select u.username, a.funds from demo_account a join auth_user u on u.id = a.user_id"))
    sold = dict(_db(env, "select i.name, count(*) from demo_purchase p join demo_item i on i.id = p.item_id group by i.name"))
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
        fences = [f for (f,) in _db(env, f"select fence from demo_purchase where item_id = {item_id} order by id")]
        assert fences == sorted(set(fences)), f"fencing tokens of one item must strictly increase: {fences}"


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

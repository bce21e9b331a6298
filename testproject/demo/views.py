"""Demo views: the home page and the market (buy with and without a lock, and a stampede of
both)."""

import io
import logging
import os
import threading
import time
from collections import Counter

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.db import connections, transaction
from django.db.models import Count, F
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.test import RequestFactory
from django.views.decorators.http import require_POST

from django_redcoord import Lock, LockNotAcquired, with_lock
from django_redcoord.decorators import busy_response

from .models import Account, Item, Purchase
from .tasks import send_receipt

log = logging.getLogger(__name__)

#: Seconds a locked purchase waits for the item's lock (then the buyer's funds
#: lock) before it is turned away as busy (DEMO_MARKET_LOCK_WAIT; the tests shorten it).
LOCK_WAIT = float(os.environ.get("DEMO_MARKET_LOCK_WAIT", "10"))
#: Buyers the stampede button sends at once.
STAMPEDE_BUYERS = 10
ITEM_BUSY = "Someone else is buying this item right now — try again."
FUNDS_BUSY = "Another purchase by {buyer} is in progress — try again."


def home(request):
    return render(request, "demo/home.html")


def market(request):
    items = list(
        Item.objects.select_related("seller").annotate(sold=Count("purchases")).order_by("pk")
    )
    for item in items:
        # What the locks guarantee: never more sold than listed, and the stock
        # counter agrees with the sales. Without the lock both break.
        item.oversold = max(0, item.sold - item.listed)
        item.lost_writes = item.stock - (item.listed - item.sold)
    accounts = list(Account.objects.select_related("user").order_by("user__username"))
    for item in items:
        item.buyers = [
            account.user.username for account in accounts if account.user_id != item.seller_id
        ]
    purchases = list(Purchase.objects.select_related("item", "buyer").order_by("-pk")[:10])
    for purchase in purchases:
        purchase.receipt_status = _receipt_status(purchase)
    context = {
        "items": items,
        "accounts": accounts,
        "purchases": purchases,
        "stampede_buyers": STAMPEDE_BUYERS,
        "think_ms": round(settings.DEMO_MARKET_THINK_TIME * 1000),
    }
    return render(request, "demo/market.html", context)


def _receipt_status(purchase):
    if not purchase.receipt_task:
        return ""
    try:
        return str(send_receipt.get_result(purchase.receipt_task).status)
    except Exception as exc:  # expired, or Redis unreachable: show it, don't fail the page
        return f"unknown ({type(exc).__name__})"


def _from_page(request):
    return request.POST.get("from") == "page"


def _answer(request, text, status):
    """Plain text with a status for scripts; for the page's forms, a message and back to the
    market."""
    if _from_page(request):
        messages.add_message(request, messages.SUCCESS if status == 200 else messages.WARNING, text)
        return redirect("market")
    return HttpResponse(text + "\n", status=status, content_type="text/plain")


def _busy(request, exc, text=ITEM_BUSY):
    """``on_busy`` of the buy view: the page gets a message, scripts the default 409 +
    Retry-After."""
    if _from_page(request):
        messages.warning(request, text)
        return redirect("market")
    return busy_response(request, exc)


def _purchase(request, item_id, fence):
    """Read, check, think, write: correct only while the caller holds the locks."""
    buyer = get_object_or_404(get_user_model(), username=request.POST.get("buyer", ""))
    item = get_object_or_404(Item, pk=item_id)
    account = Account.objects.get(user=buyer)
    if item.stock <= 0:
        return _answer(request, f"{item.name} is sold out", 409)
    if account.funds < item.price:
        return _answer(request, f"{buyer.username} cannot afford {item.name}", 402)
    time.sleep(settings.DEMO_MARKET_THINK_TIME)  # e.g. a call to a payment service
    with transaction.atomic():
        # The fencing token guards the write: a buyer whose lock expired during
        # the think time (and whose successor already wrote) is refused here.
        if fence is not None:
            written = Item.objects.filter(pk=item.pk, fence__lt=fence).update(
                stock=item.stock - 1, fence=fence
            )
            if not written:
                return _answer(request, "lock lost before the write; nothing was changed", 409)
        else:
            Item.objects.filter(pk=item.pk).update(stock=item.stock - 1)
        account.funds -= item.price
        account.save(update_fields=["funds"])
        Account.objects.filter(user=item.seller).update(funds=F("funds") + item.price)
        purchase = Purchase.objects.create(
            item=item, buyer=buyer, price=item.price, fence=fence or 0
        )
        # Sent to the workers only if this transaction commits.
        result = send_receipt.enqueue(purchase_id=purchase.pk)
        purchase.receipt_task = result.id
        purchase.save(update_fields=["receipt_task"])
    return _answer(request, f"{buyer.username} bought {item.name}", 200)


@require_POST
@with_lock("market:item:{item_id}", ttl=10, wait=LOCK_WAIT, on_busy=_busy)
def buy(request, item_id):
    """Buy one unit: the item's lock, then the buyer's funds lock (always this order)."""
    buyer = request.POST.get("buyer", "")
    try:
        with Lock(f"market:funds:{buyer}" if buyer else "market:funds", ttl=10, wait=LOCK_WAIT):
            return _purchase(request, item_id, request.redcoord_lock.token)
    except LockNotAcquired as exc:
        return _busy(request, exc, FUNDS_BUSY.format(buyer=buyer or "this buyer"))


@require_POST
def buy_unlocked(request, item_id):
    """The same purchase with no lock: concurrent buyers oversell and overdraw."""
    return _purchase(request, item_id, None)


@require_POST
def stampede(request, item_id):
    """STAMPEDE_BUYERS threads of this process call ``buy`` (or ``buy_unlocked``) at the same
    instant.

    The same views the buttons post to, called as the server's own threads
    would call them for that many simultaneous requests (no browser limits
    the concurrency): the unlocked ones oversell, the locked ones queue.
    """
    item = get_object_or_404(Item.objects.select_related("seller"), pk=item_id)
    locked = request.POST.get("lock") != "no"
    view, path = (buy, "buy") if locked else (buy_unlocked, "buy-unlocked")
    names = list(
        Account.objects.exclude(user=item.seller)
        .order_by("user__username")
        .values_list("user__username", flat=True)
    )
    if not names:
        messages.warning(
            request, "Nobody to buy: the demo has no buyers (run manage.py demo_setup)."
        )
        return redirect("market")
    factory = RequestFactory()
    calls = [
        factory.post(f"/market/{path}/{item.pk}/", {"buyer": names[i % len(names)]})
        for i in range(STAMPEDE_BUYERS)
    ]
    start = threading.Barrier(STAMPEDE_BUYERS)
    outcomes = [""] * STAMPEDE_BUYERS

    def one(index):
        try:
            start.wait(10)
            response = view(calls[index], item_id=item.pk)
            text = response.content.decode(errors="replace")
            outcomes[index] = (
                "bought" if response.status_code == 200
                else "sold out" if "sold out" in text
                else "could not afford it" if response.status_code == 402
                else "busy" if response.status_code == 409
                else f"HTTP {response.status_code}"
            )  # fmt: skip
        except Exception as exc:
            log.exception("stampede buyer %d failed", index)
            outcomes[index] = f"failed ({type(exc).__name__})"
        finally:
            connections.close_all()  # this thread's own database connections

    threads = [
        threading.Thread(target=one, args=(i,), name=f"stampede-{i}")
        for i in range(STAMPEDE_BUYERS)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    counts = Counter(outcomes)
    order = ["bought", "sold out", "could not afford it", "busy", *sorted(counts)]
    tally = ", ".join(f"{counts.pop(what)} {what}" for what in order if what in counts)
    how = "through @with_lock" if locked else "without a lock"
    item = Item.objects.annotate(sold=Count("purchases")).get(pk=item.pk)
    summary = (
        f"Stampede: {STAMPEDE_BUYERS} buyers at once on {item.name} {how}: {tally}. Sold "
        f"{item.sold} of {item.listed}"
    )
    if item.sold > item.listed:
        messages.error(request, f"{summary} — oversold by {item.sold - item.listed}.")
    else:
        messages.success(request, f"{summary}, never more.")
    return redirect("market")


@require_POST
def reset(request):
    """Back to the market's first state: funds, stock, no purchases."""
    call_command("demo_setup", reset=True, stdout=io.StringIO())
    messages.info(request, "The market was reset: funds and stock as at the start, no purchases.")
    return redirect("market")

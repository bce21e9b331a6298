"""Demo views: the home page and the market (buy with and without a lock)."""

import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from django_redcoord import Lock, with_lock

from .models import Account, Item, Purchase
from .tasks import send_receipt


def home(request):
    return render(request, "demo/home.html")


def market(request):
    purchases = list(Purchase.objects.select_related("item", "buyer").order_by("-pk")[:10])
    for purchase in purchases:
        purchase.receipt_status = _receipt_status(purchase)
    context = {
        "items": Item.objects.select_related("seller").order_by("pk"),
        "accounts": Account.objects.select_related("user").order_by("user__username"),
        "purchases": purchases,
        "message": request.GET.get("message", ""),
    }
    return render(request, "demo/market.html", context)


def _receipt_status(purchase):
    if not purchase.receipt_task:
        return ""
    try:
        return str(send_receipt.get_result(purchase.receipt_task).status)
    except Exception as exc:  # expired, or Redis unreachable: show it, don't fail the page
        return f"unknown ({type(exc).__name__})"


def _answer(request, text, status):
    if request.POST.get("from") == "page":
        return redirect(f"/market/?message={text}")
    return HttpResponse(text + "\n", status=status, content_type="text/plain")


def _purchase(request, item_id, fence):
    """Read, think, write: correct only while the caller holds the locks."""
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
            written = Item.objects.filter(pk=item.pk, fence__lt=fence).update(stock=item.stock - 1, fence=fence)
            if not written:
                return _answer(request, "lock lost before the write; nothing was changed", 409)
        else:
            Item.objects.filter(pk=item.pk).update(stock=item.stock - 1)
        account.funds -= item.price
        account.save(update_fields=["funds"])
        Account.objects.filter(user=item.seller).update(funds=F("funds") + item.price)
        purchase = Purchase.objects.create(item=item, buyer=buyer, price=item.price, fence=fence or 0)
        # Sent to the workers only if this transaction commits.
        result = send_receipt.enqueue(purchase_id=purchase.pk)
        purchase.receipt_task = result.id
        purchase.save(update_fields=["receipt_task"])
    return _answer(request, f"{buyer.username} bought {item.name}", 200)


@require_POST
@with_lock("market:item:{item_id}", ttl=10, wait=10)
def buy(request, item_id):
    """Buy one unit: the item's lock, then the buyer's funds lock (always this order)."""
    buyer = request.POST.get("buyer", "")
    with Lock(f"market:funds:{buyer}" if buyer else "market:funds", ttl=10, wait=10):
        return _purchase(request, item_id, request.redcoord_lock.token)


@require_POST
def buy_unlocked(request, item_id):
    """The same purchase with no lock: concurrent buyers oversell and overdraw."""
    return _purchase(request, item_id, None)

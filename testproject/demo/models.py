"""The market of the classic "purchase an item with a lock" example.

Users have funds; sellers list items with a stock; a purchase moves one unit
to the buyer and the price from the buyer to the seller. Nothing in the
database stops an oversell or an overdraft (no constraints, plain
read-modify-write): the lock is what keeps it right, and the tests show it.
"""

from django.conf import settings
from django.db import models


class Account(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="account"
    )
    funds = models.IntegerField(
        default=0, help_text="whole coins; deliberately allowed to go negative"
    )

    def __str__(self) -> str:
        return f"{self.user.username}: {self.funds}"


class Item(models.Model):
    name = models.CharField(max_length=100)
    seller = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="listings"
    )
    price = models.IntegerField()
    stock = models.IntegerField(help_text="deliberately allowed to go negative")
    listed = models.IntegerField(
        default=0, help_text="units the seller listed: sold + stock, while nothing races"
    )
    fence = models.BigIntegerField(
        default=0, help_text="highest lock fencing token that wrote this row"
    )

    def __str__(self) -> str:
        return f"{self.name} ({self.stock} left at {self.price})"


class Purchase(models.Model):
    item = models.ForeignKey(Item, on_delete=models.CASCADE, related_name="purchases")
    buyer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="purchases"
    )
    price = models.IntegerField()
    fence = models.BigIntegerField()
    created = models.DateTimeField(auto_now_add=True)
    receipt_task = models.CharField(
        max_length=64, blank=True, help_text="id of the receipt task's result"
    )
    receipt = models.TextField(blank=True, help_text="written by the receipt task on a worker")

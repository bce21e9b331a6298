"""Create the demo superuser and a small market (idempotent)."""

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from testproject.demo.models import Account, Item, Purchase

DEMO_ADMIN = ("admin", "admin")


class Command(BaseCommand):
    help = "Create the demo superuser (admin/admin, demo only) and the market's users and items."

    def add_arguments(self, parser):
        parser.add_argument(
            "--reset", action="store_true", help="reset funds and stock, and forget the purchases"
        )

    def handle(self, *args, reset=False, **options):
        User = get_user_model()
        username, password = DEMO_ADMIN
        if not User.objects.filter(username=username).exists():
            User.objects.create_superuser(username, "admin@example.com", password)
        for name, funds in (("alice", 100), ("bob", 100), ("carol", 50), ("seller", 0)):
            user, _ = User.objects.get_or_create(username=name)
            account, created = Account.objects.get_or_create(user=user, defaults={"funds": funds})
            if reset and not created:
                account.funds = funds
                account.save()
        seller = User.objects.get(username="seller")
        if reset:
            Purchase.objects.filter(item__seller=seller).delete()
        for name, price, stock in (("Lamp", 30, 3), ("Chair", 45, 2), ("Book", 10, 5)):
            item, created = Item.objects.get_or_create(
                name=name, seller=seller, defaults={"price": price, "stock": stock, "listed": stock}
            )
            if reset and not created:
                item.stock, item.listed, item.price = stock, stock, price
                item.save()
        self.stdout.write(f"demo superuser: {username} / {password} (demo only)")

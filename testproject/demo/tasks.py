"""Demo tasks, run by `manage.py run_worker` through the Redis Tasks backend."""

try:
    from django.tasks import task
except ImportError:
    from django_tasks import task


@task(queue_name="receipts")
def send_receipt(purchase_id):
    """Write the receipt of a purchase (stands in for an e-mail)."""
    from .models import Purchase

    purchase = Purchase.objects.select_related("item", "buyer").get(pk=purchase_id)
    purchase.receipt = (
        f"Receipt: {purchase.buyer.username} paid {purchase.price} for {purchase.item.name}."
    )
    purchase.save(update_fields=["receipt"])
    return purchase.receipt

import pytest

from django_redcoord.core.queues import Queue
from django_redcoord.core.queues.groups import Group

from .cells_cluster import _run


class Variant:
    what = "the act"

    def __init__(self, how):
        self.how = how

    def setup(self, ctx):
        q = Queue("m", client=ctx.client(), prefix=ctx.prefix)
        return q, [q.push(i) for i in range(5)] + q.push_many([7, 8], group=Group("A", concurrency=1))

    def act(self, state):
        q = state[0]
        if self.how == "push":
            q.push("x")
        elif self.how == "push-grouped":
            q.push("x", group="A")
        elif self.how == "push_many":
            q.push_many(["x"])
        elif self.how == "push_many-grouped":
            q.push_many(["x"], group="A")

    def verify(self, state):
        return []


@pytest.mark.parametrize("how", ["push", "push-grouped", "push_many", "push_many-grouped"])
def test_variant(cluster_ctx, how):
    found = _run(cluster_ctx, Variant(how), "cluster-slot-migration")
    print(how, [f[-200:] for f in found])
    assert not found

import pytest

from . import cells_groups as cg

CASES = {
    "restart-with-data": lambda ctx: cg.group_restart_with_data(ctx, limits={}),
    "restart-without-data": lambda ctx: cg.group_data_loss(ctx, limits={}),
    "connection-kill": lambda ctx: cg.group_connection_kill(ctx, limits={}),
    "paused-server": lambda ctx: cg.group_paused(ctx, limits={}),
    "holder-sigkill": lambda ctx: cg.group_holder(ctx, stop=False, limits={}),
    "holder-sigstop": lambda ctx: cg.group_holder(ctx, stop=True, limits={}),
    "pool-exhaustion": lambda ctx: cg.group_pool(ctx, limits={}),
    "hostile-names": lambda ctx: cg.group_names(ctx, limits={}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_unlimited(ctx, name):
    found = CASES[name](ctx)
    print(f"\n== {name}: {len(found)} violation(s)")
    for v in found[:6]:
        print("   ", v[:300])
    assert found, "not caught"

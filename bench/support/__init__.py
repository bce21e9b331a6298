"""What the benchmarks share, one module per concern (issue 25, item 7).

* ``processes``: programs we start that die with us, forked children, ``run_main``;
* ``servers``: throwaway redis-servers (plain, replica, sentinel) on free ports;
* ``sentinel``, ``cluster``: the topologies built of them;
* ``contenders``: N forked processes on one resource, started together, and what
  their records say (rate, fairness, starvation, overlaps);
* ``ledgers``: what a failover benchmark keeps: fencing tokens, probes, pushes;
* ``tables``: markdown tables, ratios over rounds, percentiles, the header line;
* ``cli``: ``--quick`` and the options whose default it shrinks;
* ``tasks``: Django configured for the Tasks backend, without a project.

The scripts run as ``python bench/bench_<name>.py``, so bench/ is ``sys.path[0]``
and they import this package as ``support``; its modules import one another
relatively. Nothing here starts a process or connects at import.
"""

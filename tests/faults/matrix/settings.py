"""Settings of the long-running commands of the matrix (run_worker, run_leader) on every topology.

tests/faults/settings.py, with ``REDCOORD`` pointed at a Sentinel or a Cluster when
``FAULTS_TOPOLOGY`` (JSON) says so: ``{"SENTINEL": {...}}`` or ``{"CLUSTER": {"NODES": [...]}}``.
"""

import json
import os

from tests.faults.settings import *  # noqa: F403
from tests.faults.settings import REDCOORD

_topology = json.loads(os.environ.get("FAULTS_TOPOLOGY") or "{}")
if _topology:
    REDCOORD = {**{k: v for k, v in REDCOORD.items() if k != "URL"}, **_topology}

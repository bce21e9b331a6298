"""``django_redcoord.metrics`` is :mod:`django_redcoord.contrib.metrics` (the Prometheus
exporter: ``metrics_view``, ``process_metrics()``, ``--metrics-port``), under the path the
documentation, ``urls.py`` files and the ``django_redcoord.metrics`` logger have always used.

The module is the same object under both names (not a copy of its names), so patching or
configuring one is patching or configuring the other.
"""

import sys

from .contrib import metrics as _metrics

sys.modules[__name__] = _metrics

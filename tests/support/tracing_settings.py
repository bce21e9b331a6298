"""Settings of the run_worker subprocesses of tests/django/test_tracing.py: tracing on, spans to
a file.

The OpenTelemetry SDK is set up here (a test settings module may: the
package itself never configures a provider): every span the worker ends is
written as one JSON line to ``REDCOORD_TEST_SPANS``, which the test reads back.
"""

import os

from tests.support.worker_settings import *  # noqa: F403
from tests.support.worker_settings import REDCOORD as _BASE

REDCOORD = {**_BASE, "TRACING": True}

_SPANS = os.environ.get("REDCOORD_TEST_SPANS")
if _SPANS:
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

    class JsonLinesExporter(SpanExporter):
        """Each span as one JSON line (``ReadableSpan.to_json``), appended as it ends."""

        def __init__(self, path: str) -> None:
            self.path = path

        def export(self, spans):
            with open(self.path, "a") as fh:
                for span in spans:
                    fh.write(span.to_json(indent=None) + "\n")
            return SpanExportResult.SUCCESS

    _provider = TracerProvider()
    _provider.add_span_processor(SimpleSpanProcessor(JsonLinesExporter(_SPANS)))
    trace.set_tracer_provider(_provider)

"""Send log records to engage with the official OpenTelemetry Python SDK, unchanged.

    python3 -m pip install 'opentelemetry-sdk>=1.30' 'opentelemetry-exporter-otlp-proto-http>=1.30'
    python3 examples/otlp_emitter.py                     # engage on http://localhost:8080
    SERVER=http://127.0.0.1:9000 python3 examples/otlp_emitter.py

The exporter is configured the standard way, by its endpoint alone; the resource attributes name
the LogEvent's service, product, version and environment (docs/otlp.md maps every field). It
prints what engage answered; then `engage logs tail /logs/org/edge/checkout --since 10m` shows the
three records.
"""

import logging
import os
import sys

from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource

base = os.environ.get("SERVER", "http://localhost:8080").rstrip("/")
endpoint = f"{base}/otlp/v1/logs"


class Counting(OTLPLogExporter):
    """The SDK's exporter, counting what it sent and how it went."""

    results = []

    def export(self, batch):
        result = super().export(batch)
        Counting.results.append(result.name)
        return result


resource = Resource.create({"service.name": "checkout", "product": "edge", "service.version": "1.4.2",
                            "deployment.environment": "prod"})
provider = LoggerProvider(resource=resource)
provider.add_log_record_processor(SimpleLogRecordProcessor(Counting(endpoint=endpoint)))
logger = logging.getLogger("checkout.api")
logger.propagate = False
logger.setLevel(logging.INFO)
logger.addHandler(LoggingHandler(level=logging.INFO, logger_provider=provider))

logger.info("order placed", extra={"order_id": "A-1001", "amount": 80})
logger.warning("payment slow", extra={"order_id": "A-1001", "wait_ms": 2400})
logger.error("payment failed", extra={"order_id": "A-1002", "error.code": "PAY_TIMEOUT"})
provider.shutdown()

sent = len(Counting.results)
ok = Counting.results.count("SUCCESS")
print(f"exported {sent} records to {endpoint}: {ok} SUCCESS")
print("read them back: engage logs tail /logs/org/edge/checkout --since 10m")
sys.exit(0 if sent and ok == sent else 1)

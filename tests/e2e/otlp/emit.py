"""Emits log records with the official OpenTelemetry Python SDK, unmodified: an OTLPLogExporter
(opentelemetry-exporter-otlp-proto-http) configured only by the environment
(OTEL_EXPORTER_OTLP_LOGS_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS,
OTEL_EXPORTER_OTLP_COMPRESSION), fed by the SDK's LoggingHandler from Python's `logging`.

Reads a JSON spec on stdin:
    {"resource": {...attributes...}, "logger": "checkout.api",
     "records": [{"level": "info", "message": "...", "attributes": {...}, "traced": true}]}
Prints one JSON line: {"results": ["SUCCESS", ...], "responses": [{"status": 200,
"rejected": N, "message": "..."}], "trace_ids": ["<hex of each traced record>" or null]}.
The responses are what the exporter received (read by a `requests` response hook on the session
handed to it, decoded with the OTLP protobuf classes the exporter ships with).
"""

import json
import logging
import sys

import requests
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceResponse
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider

spec = json.load(sys.stdin)
responses = []


def seen(response, *args, **kwargs):
    entry = {"status": response.status_code}
    if response.status_code == 200 and response.headers.get("content-type", "").startswith("application/x-protobuf"):
        decoded = ExportLogsServiceResponse.FromString(response.content)
        entry["rejected"] = decoded.partial_success.rejected_log_records
        entry["message"] = decoded.partial_success.error_message
    else:
        entry["body"] = response.content.decode("utf-8", "replace")
    responses.append(entry)


session = requests.Session()
session.hooks["response"].append(seen)


class Recording(OTLPLogExporter):
    results = []

    def export(self, batch):
        result = super().export(batch)
        Recording.results.append(result.name)
        return result


provider = LoggerProvider(resource=Resource.create(spec.get("resource", {})))
provider.add_log_record_processor(SimpleLogRecordProcessor(Recording(session=session)))
logger = logging.getLogger(spec.get("logger", "checkout.api"))
logger.propagate = False
logger.setLevel(logging.DEBUG)
logger.addHandler(LoggingHandler(level=logging.DEBUG, logger_provider=provider))
tracer = TracerProvider().get_tracer("emit")
levels = {"debug": logging.DEBUG, "info": logging.INFO, "warning": logging.WARNING, "error": logging.ERROR,
          "critical": logging.CRITICAL}
trace_ids = []
for record in spec["records"]:
    level = levels[record.get("level", "info")]
    if record.get("traced"):
        with tracer.start_as_current_span("work") as span:
            trace_ids.append(format(span.get_span_context().trace_id, "032x"))
            logger.log(level, record["message"], extra=record.get("attributes", {}))
    else:
        trace_ids.append(None)
        logger.log(level, record["message"], extra=record.get("attributes", {}))
provider.shutdown()
print(json.dumps({"results": Recording.results, "responses": responses, "trace_ids": trace_ids}))

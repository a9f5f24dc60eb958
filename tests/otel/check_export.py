#!/usr/bin/env python3
"""Independent check of Tether's OTLP export.

Reads the raw OTLP/HTTP protobuf bodies the Rust test
`tests/tests/otel_export.rs` captured (target/tether-otel-capture/*.pb),
decodes them with the official Python `opentelemetry-proto` package (not the
Rust types that produced them), and checks every name against lists taken
from the MCP semantic conventions:

  open-telemetry/semantic-conventions-genai, model/mcp/spans.yaml,
  model/mcp/metrics.yaml and docs/gen-ai/mcp.md (status: Development)

plus Tether's own documented names (docs/OPENTELEMETRY.md).

Usage: check_export.py CAPTURE_DIR
"""

import pathlib
import sys

from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.trace.v1.trace_pb2 import Span, Status

# Attributes the conventions define for MCP server spans (spans.yaml:
# mcp.common.attributes, trace.mcp.common.attributes, span.mcp.server).
MCP_SPAN_ATTRIBUTES = {
    "mcp.method.name",
    "mcp.protocol.version",
    "mcp.session.id",
    "mcp.resource.uri",
    "jsonrpc.request.id",
    "jsonrpc.protocol.version",
    "gen_ai.tool.name",
    "gen_ai.prompt.name",
    "gen_ai.operation.name",
    "error.type",
    "rpc.response.status_code",
    "network.transport",
    "network.protocol.name",
    "network.protocol.version",
    "client.address",
    "client.port",
}
# Opt-in in the conventions; Tether is metadata-only and never sets them.
NEVER = {"gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}
# Tether's own span attributes (docs/OPENTELEMETRY.md).
TETHER_SPAN_ATTRIBUTES = {"tether.server.name", "tether.session.id", "tether.attempt.id"}

# metrics.yaml: the two server histograms, their unit, bucket advice and attributes.
BUCKETS = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]
MCP_METRICS = {
    "mcp.server.operation.duration": {
        "mcp.method.name",
        "error.type",
        "gen_ai.tool.name",
        "gen_ai.prompt.name",
        "gen_ai.operation.name",
        "mcp.resource.uri",
        "mcp.protocol.version",
        "rpc.response.status_code",
        "network.transport",
        "network.protocol.name",
        "network.protocol.version",
    },
    "mcp.server.session.duration": {
        "error.type",
        "mcp.protocol.version",
        "network.transport",
        "network.protocol.name",
        "network.protocol.version",
    },
}
# Tether's own metrics and their only attributes (all low cardinality).
TETHER_METRICS = {
    "tether.server.status": {"tether.display_status", "tether.reason_code", "tether.agent.kind"},
    "tether.attempts": {"tether.trigger", "tether.agent.kind"},
    "tether.evidence.dropped": {"tether.drop.site"},
    "tether.evidence.unattributed": set(),
    "tether.probe.verdicts": {"tether.probe.verdict", "tether.agent.kind"},
    # A store-writing hub's counters: no attributes at all.
    "tether.store.write.failures": set(),
    "tether.store.write.stale": set(),
    "tether.store.sessions.behind": set(),
}
TETHER_LOG_ATTRIBUTES = {
    "tether.evidence.kind",
    "tether.provenance",
    "tether.task.id",
    "tether.session.id",
    "tether.execution.id",
    "tether.attempt.id",
    "tether.agent.kind",
    "tether.server.name",
    "tether.connection.id",
    "tether.reason_code",
    "tether.summary",
    "tether.tool.count",
    "gen_ai.tool.name",
    "tether.tool.ok",
    "tether.tool.outcome",
    "tether.tool.refused_calls",
    "tether.client.name",
    "tether.client.version",
    "mcp.protocol.version",
    "tether.reported_status",
    "tether.endpoint_test.succeeded",
}
# JSON-RPC codes that are the client's fault: error.type, but not span status ERROR.
CLIENT_CODES = {"-32700", "-32600", "-32601", "-32602", "-32002"}
STATELESS = "2026-07-28"

failures = []


def fail(message):
    failures.append(message)


def value(any_value):
    kind = any_value.WhichOneof("value")
    return getattr(any_value, kind) if kind else None


def attributes(key_values):
    return {kv.key: value(kv.value) for kv in key_values}


def load(directory, signal, message_type):
    out = []
    for path in sorted(directory.glob(f"{signal}-*.pb")):
        message = message_type()
        message.ParseFromString(path.read_bytes())
        out.append(message)
    return out


def check_spans(requests):
    spans = [
        span
        for request in requests
        for resource_spans in request.resource_spans
        for scope_spans in resource_spans.scope_spans
        for span in scope_spans.spans
    ]
    if not spans:
        fail("no spans were captured")
    for span in spans:
        a = attributes(span.attributes)
        where = f"span {span.name!r}"
        if span.kind != Span.SPAN_KIND_SERVER:
            fail(f"{where}: kind {span.kind} is not SERVER")
        method = a.get("mcp.method.name")
        if not method:
            fail(f"{where}: mcp.method.name is required")
            continue
        expected = f"{method} {a['gen_ai.tool.name']}" if "gen_ai.tool.name" in a else method
        if span.name != expected:
            fail(f"{where}: name should be {expected!r}")
        for key in a:
            if key in NEVER:
                fail(f"{where}: {key} must never be exported")
            elif key not in MCP_SPAN_ATTRIBUTES | TETHER_SPAN_ATTRIBUTES:
                fail(f"{where}: attribute {key} is not in the conventions or Tether's documented list")
        if method == "tools/call" and a.get("gen_ai.operation.name") != "execute_tool":
            fail(f"{where}: gen_ai.operation.name must be execute_tool")
        if a.get("mcp.protocol.version") == STATELESS and "mcp.session.id" in a:
            fail(f"{where}: mcp.session.id must not be set for {STATELESS}")
        if a.get("network.transport") not in {"pipe", "tcp"}:
            fail(f"{where}: network.transport {a.get('network.transport')!r}")
        error_type = a.get("error.type")
        is_error = span.status.code == Status.STATUS_CODE_ERROR
        should_error = error_type is not None and error_type not in CLIENT_CODES
        if is_error != should_error:
            fail(f"{where}: status ERROR={is_error} but error.type={error_type!r}")
    return len(spans)


def check_metrics(requests):
    seen = set()
    for request in requests:
        for resource_metrics in request.resource_metrics:
            for scope_metrics in resource_metrics.scope_metrics:
                for metric in scope_metrics.metrics:
                    seen.add(metric.name)
                    where = f"metric {metric.name}"
                    allowed = MCP_METRICS.get(metric.name) or TETHER_METRICS.get(metric.name)
                    if allowed is None:
                        fail(f"{where}: not a documented metric")
                        continue
                    kind = metric.WhichOneof("data")
                    points = getattr(metric, kind).data_points
                    if metric.name in MCP_METRICS:
                        if metric.unit != "s":
                            fail(f"{where}: unit {metric.unit!r} is not 's'")
                        if kind != "histogram":
                            fail(f"{where}: is a {kind}, not a histogram")
                        for point in points:
                            if list(point.explicit_bounds) != BUCKETS:
                                fail(f"{where}: buckets {list(point.explicit_bounds)}")
                    for point in points:
                        for key in attributes(point.attributes):
                            if key not in allowed:
                                fail(f"{where}: attribute {key} is not allowed here")
    for name in list(MCP_METRICS) + list(TETHER_METRICS):
        if name not in seen:
            fail(f"metric {name} was not exported")
    return len(seen)


def check_logs(requests):
    count = 0
    for request in requests:
        for resource_logs in request.resource_logs:
            resource = attributes(resource_logs.resource.attributes)
            if not resource.get("service.name"):
                fail("log resource has no service.name")
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    count += 1
                    if record.event_name != "tether.evidence":
                        fail(f"log event name {record.event_name!r}")
                    for key in attributes(record.attributes):
                        if key not in TETHER_LOG_ATTRIBUTES:
                            fail(f"log attribute {key} is not documented")
    if count == 0:
        fail("no log records were captured")
    return count


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    directory = pathlib.Path(sys.argv[1])
    if not any(directory.glob("*.pb")):
        print(f"no captured export in {directory}: run the otel_export test first", file=sys.stderr)
        return 1
    spans = check_spans(load(directory, "traces", ExportTraceServiceRequest))
    metrics = check_metrics(load(directory, "metrics", ExportMetricsServiceRequest))
    logs = check_logs(load(directory, "logs", ExportLogsServiceRequest))
    if failures:
        for message in failures:
            print(f"FAIL: {message}", file=sys.stderr)
        return 1
    print(f"OTLP export OK: {spans} spans, {metrics} metrics, {logs} log records, every name checked")
    return 0


if __name__ == "__main__":
    sys.exit(main())

//! What a body would decode into, known before it is decoded.
//!
//! The decompression cap bounds bytes, not what the bytes become: an empty
//! OTLP log record is two bytes on the wire and a few hundred in memory, so
//! 8 MiB of them is 4 million records and most of a gigabyte. [`estimate`]
//! walks the body once without allocating (the protobuf wire format, or
//! JSON through serde with a visitor that keeps nothing) and adds up, for
//! every message it holds, the memory its decoded form takes (the Rust
//! type's size, doubled for a vector's slack), every string's and byte
//! string's length, and eight bytes (doubled) for every scalar of a repeated
//! field. The receiver refuses a body whose estimate passes its cap before
//! decoding it, and reserves the estimate, not the body's size, in its
//! queue's budget.
//!
//! The walk knows the OTLP schema's message fields, for logs, traces and
//! metrics (every field whose decoded form allocates); a field it does not
//! know is one the decoder skips too. It follows nesting to the decoder's
//! own depth limit (100), and refuses a body nested deeper.

use std::mem::size_of;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    AnyValue, ArrayValue, EntityRef, InstrumentationScope, KeyValue, KeyValueList,
};
use opentelemetry_proto::tonic::logs::v1::{LogRecord, ResourceLogs, ScopeLogs};
use opentelemetry_proto::tonic::metrics::v1::{
    Exemplar, ExponentialHistogram, ExponentialHistogramDataPoint, Gauge, Histogram,
    HistogramDataPoint, Metric, NumberDataPoint, ResourceMetrics, ScopeMetrics, Sum, Summary,
    SummaryDataPoint, exponential_histogram_data_point::Buckets,
    summary_data_point::ValueAtQuantile,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use opentelemetry_proto::tonic::trace::v1::{
    ResourceSpans, ScopeSpans, Span, Status, span::Event as SpanEvent, span::Link as SpanLink,
};

use crate::decode::{Encoding, Signal};

/// The decoder's own nesting limit (prost's and serde_json's are 100 and
/// 128); deeper is refused.
pub const MAX_DEPTH: usize = 100;

/// What a body would decode into.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Estimate {
    /// Bytes its decoded form would take, at most (an upper estimate).
    pub bytes: usize,
    /// Messages it holds, of every type.
    pub messages: u64,
    /// Log records, spans, metrics and data points.
    pub items: u64,
}

/// Why a body has no estimate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EstimateError {
    /// Its estimate passes `cap` (the walk stopped there).
    #[error(
        "the body would decode into more than {cap} bytes ({messages} messages, {items} records, spans or data points before the walk stopped)"
    )]
    OverCap {
        /// The cap.
        cap: usize,
        /// Messages seen before the walk stopped.
        messages: u64,
        /// Items seen before it stopped.
        items: u64,
    },
    /// Nested deeper than [`MAX_DEPTH`].
    #[error("the body is nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// Not well-formed (the decoder would refuse it too).
    #[error("the body is not well-formed: {0}")]
    Malformed(String),
}

/// The OTLP messages whose decoded form allocates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Msg {
    LogsRequest,
    ResourceLogs,
    ScopeLogs,
    LogRecord,
    TraceRequest,
    ResourceSpans,
    ScopeSpans,
    Span,
    SpanEvent,
    SpanLink,
    SpanStatus,
    MetricsRequest,
    ResourceMetrics,
    ScopeMetrics,
    Metric,
    Gauge,
    Sum,
    Histogram,
    ExponentialHistogram,
    Summary,
    NumberDataPoint,
    HistogramDataPoint,
    ExponentialHistogramDataPoint,
    Buckets,
    SummaryDataPoint,
    ValueAtQuantile,
    Exemplar,
    Resource,
    Scope,
    EntityRef,
    KeyValue,
    AnyValue,
    ArrayValue,
    KeyValueList,
}

/// What a field holds, as far as memory goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A nested message (one, optional or repeated).
    Message(Msg),
    /// A string or byte string: its length.
    Text,
    /// A repeated scalar (packed or not): eight bytes an element.
    Scalars,
    /// A scalar inside the message's own struct, or a field the decoder
    /// skips: nothing more.
    Inline,
}

impl Msg {
    /// The memory one decoded message takes in place.
    fn size(self) -> usize {
        match self {
            Msg::LogsRequest => size_of::<ExportLogsServiceRequest>(),
            Msg::ResourceLogs => size_of::<ResourceLogs>(),
            Msg::ScopeLogs => size_of::<ScopeLogs>(),
            Msg::LogRecord => size_of::<LogRecord>(),
            Msg::TraceRequest => size_of::<ExportTraceServiceRequest>(),
            Msg::ResourceSpans => size_of::<ResourceSpans>(),
            Msg::ScopeSpans => size_of::<ScopeSpans>(),
            Msg::Span => size_of::<Span>(),
            Msg::SpanEvent => size_of::<SpanEvent>(),
            Msg::SpanLink => size_of::<SpanLink>(),
            Msg::SpanStatus => size_of::<Status>(),
            Msg::MetricsRequest => size_of::<ExportMetricsServiceRequest>(),
            Msg::ResourceMetrics => size_of::<ResourceMetrics>(),
            Msg::ScopeMetrics => size_of::<ScopeMetrics>(),
            Msg::Metric => size_of::<Metric>(),
            Msg::Gauge => size_of::<Gauge>(),
            Msg::Sum => size_of::<Sum>(),
            Msg::Histogram => size_of::<Histogram>(),
            Msg::ExponentialHistogram => size_of::<ExponentialHistogram>(),
            Msg::Summary => size_of::<Summary>(),
            Msg::NumberDataPoint => size_of::<NumberDataPoint>(),
            Msg::HistogramDataPoint => size_of::<HistogramDataPoint>(),
            Msg::ExponentialHistogramDataPoint => size_of::<ExponentialHistogramDataPoint>(),
            Msg::Buckets => size_of::<Buckets>(),
            Msg::SummaryDataPoint => size_of::<SummaryDataPoint>(),
            Msg::ValueAtQuantile => size_of::<ValueAtQuantile>(),
            Msg::Exemplar => size_of::<Exemplar>(),
            Msg::Resource => size_of::<Resource>(),
            Msg::Scope => size_of::<InstrumentationScope>(),
            Msg::EntityRef => size_of::<EntityRef>(),
            Msg::KeyValue => size_of::<KeyValue>(),
            Msg::AnyValue => size_of::<AnyValue>(),
            Msg::ArrayValue => size_of::<ArrayValue>(),
            Msg::KeyValueList => size_of::<KeyValueList>(),
        }
    }

    /// Whether it is an item a partial success would count.
    fn is_item(self) -> bool {
        matches!(
            self,
            Msg::LogRecord
                | Msg::Span
                | Msg::Metric
                | Msg::NumberDataPoint
                | Msg::HistogramDataPoint
                | Msg::ExponentialHistogramDataPoint
                | Msg::SummaryDataPoint
        )
    }

    /// What field `tag` holds (the OTLP protobuf schema).
    fn field(self, tag: u32) -> Kind {
        use Kind::{Inline, Message as M, Scalars, Text};
        match (self, tag) {
            (Msg::LogsRequest, 1) => M(Msg::ResourceLogs),
            (Msg::ResourceLogs, 1) => M(Msg::Resource),
            (Msg::ResourceLogs, 2) => M(Msg::ScopeLogs),
            (Msg::ScopeLogs, 1) => M(Msg::Scope),
            (Msg::ScopeLogs, 2) => M(Msg::LogRecord),
            (Msg::LogRecord, 5) => M(Msg::AnyValue),
            (Msg::LogRecord, 6) => M(Msg::KeyValue),
            (Msg::LogRecord, 3 | 9 | 10 | 12) => Text,

            (Msg::TraceRequest, 1) => M(Msg::ResourceSpans),
            (Msg::ResourceSpans, 1) => M(Msg::Resource),
            (Msg::ResourceSpans, 2) => M(Msg::ScopeSpans),
            (Msg::ScopeSpans, 1) => M(Msg::Scope),
            (Msg::ScopeSpans, 2) => M(Msg::Span),
            (Msg::Span, 9) => M(Msg::KeyValue),
            (Msg::Span, 11) => M(Msg::SpanEvent),
            (Msg::Span, 13) => M(Msg::SpanLink),
            (Msg::Span, 15) => M(Msg::SpanStatus),
            (Msg::Span, 1..=5) => Text,
            (Msg::SpanEvent, 3) => M(Msg::KeyValue),
            (Msg::SpanEvent, 2) => Text,
            (Msg::SpanLink, 4) => M(Msg::KeyValue),
            (Msg::SpanLink, 1..=3) => Text,
            (Msg::SpanStatus, 2) => Text,

            (Msg::MetricsRequest, 1) => M(Msg::ResourceMetrics),
            (Msg::ResourceMetrics, 1) => M(Msg::Resource),
            (Msg::ResourceMetrics, 2) => M(Msg::ScopeMetrics),
            (Msg::ScopeMetrics, 1) => M(Msg::Scope),
            (Msg::ScopeMetrics, 2) => M(Msg::Metric),
            (Msg::Metric, 1..=3) => Text,
            (Msg::Metric, 5) => M(Msg::Gauge),
            (Msg::Metric, 7) => M(Msg::Sum),
            (Msg::Metric, 9) => M(Msg::Histogram),
            (Msg::Metric, 10) => M(Msg::ExponentialHistogram),
            (Msg::Metric, 11) => M(Msg::Summary),
            (Msg::Metric, 12) => M(Msg::KeyValue),
            (Msg::Gauge | Msg::Sum, 1) => M(Msg::NumberDataPoint),
            (Msg::Histogram, 1) => M(Msg::HistogramDataPoint),
            (Msg::ExponentialHistogram, 1) => M(Msg::ExponentialHistogramDataPoint),
            (Msg::Summary, 1) => M(Msg::SummaryDataPoint),
            (Msg::NumberDataPoint, 7) => M(Msg::KeyValue),
            (Msg::NumberDataPoint, 5) => M(Msg::Exemplar),
            (Msg::HistogramDataPoint, 9) => M(Msg::KeyValue),
            (Msg::HistogramDataPoint, 8) => M(Msg::Exemplar),
            (Msg::HistogramDataPoint, 6 | 7) => Scalars,
            (Msg::ExponentialHistogramDataPoint, 1) => M(Msg::KeyValue),
            (Msg::ExponentialHistogramDataPoint, 8 | 9) => M(Msg::Buckets),
            (Msg::ExponentialHistogramDataPoint, 11) => M(Msg::Exemplar),
            (Msg::Buckets, 2) => Scalars,
            (Msg::SummaryDataPoint, 7) => M(Msg::KeyValue),
            (Msg::SummaryDataPoint, 6) => M(Msg::ValueAtQuantile),
            (Msg::Exemplar, 7) => M(Msg::KeyValue),
            (Msg::Exemplar, 4 | 5) => Text,

            (Msg::Resource, 1) => M(Msg::KeyValue),
            (Msg::Resource, 3) => M(Msg::EntityRef),
            (Msg::Scope, 1 | 2) => Text,
            (Msg::Scope, 3) => M(Msg::KeyValue),
            (Msg::EntityRef, 1..=4) => Text,
            (Msg::KeyValue, 1) => Text,
            (Msg::KeyValue, 2) => M(Msg::AnyValue),
            (Msg::AnyValue, 1 | 7) => Text,
            (Msg::AnyValue, 5) => M(Msg::ArrayValue),
            (Msg::AnyValue, 6) => M(Msg::KeyValueList),
            (Msg::ArrayValue, 1) => M(Msg::AnyValue),
            (Msg::KeyValueList, 1) => M(Msg::KeyValue),
            _ => Inline,
        }
    }

    /// What the JSON field `name` holds (the OTLP JSON mapping's camelCase
    /// names; the proto names too, which only ever overestimates).
    fn json_field(self, name: &str) -> Kind {
        let tag = match (self, name) {
            (Msg::LogsRequest, "resourceLogs" | "resource_logs") => 1,
            (Msg::TraceRequest, "resourceSpans" | "resource_spans") => 1,
            (Msg::MetricsRequest, "resourceMetrics" | "resource_metrics") => 1,
            (Msg::ResourceLogs | Msg::ResourceSpans | Msg::ResourceMetrics, "resource") => 1,
            (Msg::ResourceLogs, "scopeLogs" | "scope_logs") => 2,
            (Msg::ResourceSpans, "scopeSpans" | "scope_spans") => 2,
            (Msg::ResourceMetrics, "scopeMetrics" | "scope_metrics") => 2,
            (Msg::ScopeLogs | Msg::ScopeSpans | Msg::ScopeMetrics, "scope") => 1,
            (Msg::ScopeLogs, "logRecords" | "log_records") => 2,
            (Msg::ScopeSpans, "spans") => 2,
            (Msg::ScopeMetrics, "metrics") => 2,
            (Msg::LogRecord, "severityText" | "severity_text") => 3,
            (Msg::LogRecord, "body") => 5,
            (Msg::LogRecord, "attributes") => 6,
            (Msg::LogRecord, "traceId" | "trace_id") => 9,
            (Msg::LogRecord, "spanId" | "span_id") => 10,
            (Msg::LogRecord, "eventName" | "event_name") => 12,
            (Msg::Span, "traceId" | "trace_id") => 1,
            (Msg::Span, "spanId" | "span_id") => 2,
            (Msg::Span, "traceState" | "trace_state") => 3,
            (Msg::Span, "parentSpanId" | "parent_span_id") => 4,
            (Msg::Span, "name") => 5,
            (Msg::Span, "attributes") => 9,
            (Msg::Span, "events") => 11,
            (Msg::Span, "links") => 13,
            (Msg::Span, "status") => 15,
            (Msg::SpanEvent, "name") => 2,
            (Msg::SpanEvent, "attributes") => 3,
            (Msg::SpanLink, "traceId" | "trace_id") => 1,
            (Msg::SpanLink, "spanId" | "span_id") => 2,
            (Msg::SpanLink, "traceState" | "trace_state") => 3,
            (Msg::SpanLink, "attributes") => 4,
            (Msg::SpanStatus, "message") => 2,
            (Msg::Metric, "name") => 1,
            (Msg::Metric, "description") => 2,
            (Msg::Metric, "unit") => 3,
            (Msg::Metric, "gauge") => 5,
            (Msg::Metric, "sum") => 7,
            (Msg::Metric, "histogram") => 9,
            (Msg::Metric, "exponentialHistogram" | "exponential_histogram") => 10,
            (Msg::Metric, "summary") => 11,
            (Msg::Metric, "metadata") => 12,
            (
                Msg::Gauge | Msg::Sum | Msg::Histogram | Msg::ExponentialHistogram | Msg::Summary,
                "dataPoints" | "data_points",
            ) => 1,
            (Msg::NumberDataPoint, "attributes") => 7,
            (Msg::NumberDataPoint, "exemplars") => 5,
            (Msg::HistogramDataPoint, "attributes") => 9,
            (Msg::HistogramDataPoint, "exemplars") => 8,
            (Msg::HistogramDataPoint, "bucketCounts" | "bucket_counts") => 6,
            (Msg::HistogramDataPoint, "explicitBounds" | "explicit_bounds") => 7,
            (Msg::ExponentialHistogramDataPoint, "attributes") => 1,
            (Msg::ExponentialHistogramDataPoint, "positive") => 8,
            (Msg::ExponentialHistogramDataPoint, "negative") => 9,
            (Msg::ExponentialHistogramDataPoint, "exemplars") => 11,
            (Msg::Buckets, "bucketCounts" | "bucket_counts") => 2,
            (Msg::SummaryDataPoint, "attributes") => 7,
            (Msg::SummaryDataPoint, "quantileValues" | "quantile_values") => 6,
            (Msg::Exemplar, "filteredAttributes" | "filtered_attributes") => 7,
            (Msg::Exemplar, "spanId" | "span_id") => 4,
            (Msg::Exemplar, "traceId" | "trace_id") => 5,
            (Msg::Resource, "attributes") => 1,
            (Msg::Resource, "entityRefs" | "entity_refs") => 3,
            (Msg::Scope, "name") => 1,
            (Msg::Scope, "version") => 2,
            (Msg::Scope, "attributes") => 3,
            (Msg::EntityRef, "schemaUrl" | "schema_url") => 1,
            (Msg::EntityRef, "type") => 2,
            (Msg::EntityRef, "idKeys" | "id_keys") => 3,
            (Msg::EntityRef, "descriptionKeys" | "description_keys") => 4,
            (Msg::KeyValue, "key") => 1,
            (Msg::KeyValue, "value") => 2,
            (Msg::AnyValue, "stringValue" | "string_value") => 1,
            (Msg::AnyValue, "arrayValue" | "array_value") => 5,
            (Msg::AnyValue, "kvlistValue" | "kvlist_value") => 6,
            (Msg::AnyValue, "bytesValue" | "bytes_value") => 7,
            (Msg::ArrayValue | Msg::KeyValueList, "values") => 1,
            (_, "schemaUrl" | "schema_url") => return Kind::Text,
            _ => return Kind::Inline,
        };
        self.field(tag)
    }
}

/// The running total, stopping at the cap.
struct Tally {
    cap: usize,
    estimate: Estimate,
}

impl Tally {
    fn add(&mut self, bytes: usize) -> Result<(), EstimateError> {
        self.estimate.bytes = self.estimate.bytes.saturating_add(bytes);
        if self.estimate.bytes > self.cap {
            return Err(EstimateError::OverCap {
                cap: self.cap,
                messages: self.estimate.messages,
                items: self.estimate.items,
            });
        }
        Ok(())
    }

    fn message(&mut self, msg: Msg) -> Result<(), EstimateError> {
        self.estimate.messages += 1;
        if msg.is_item() {
            self.estimate.items += 1;
        }
        // Doubled: a vector's spare capacity, or the box around it.
        self.add(2 * msg.size())
    }

    fn text(&mut self, len: usize) -> Result<(), EstimateError> {
        self.add(len)
    }

    fn scalars(&mut self, count: usize) -> Result<(), EstimateError> {
        self.add(count.saturating_mul(16))
    }
}

/// What `body` (plain, not compressed) would decode into, as `signal`'s
/// request in `encoding`; an error past `cap` bytes, past [`MAX_DEPTH`],
/// or for a body the decoder would refuse.
pub fn estimate(
    signal: Signal,
    encoding: Encoding,
    body: &[u8],
    cap: usize,
) -> Result<Estimate, EstimateError> {
    let root = match signal {
        Signal::Logs => Msg::LogsRequest,
        Signal::Traces => Msg::TraceRequest,
        Signal::Metrics => Msg::MetricsRequest,
    };
    let mut tally = Tally {
        cap,
        estimate: Estimate::default(),
    };
    tally.message(root)?;
    match encoding {
        Encoding::Protobuf => wire::walk(root, body, 0, &mut tally)?,
        Encoding::Json => json::walk(root, body, &mut tally)?,
    }
    Ok(tally.estimate)
}

/// The protobuf wire format, walked without allocating.
mod wire {
    use super::{EstimateError, Kind, MAX_DEPTH, Msg, Tally};

    fn malformed(why: &str) -> EstimateError {
        EstimateError::Malformed(why.to_owned())
    }

    fn varint(bytes: &[u8], at: &mut usize) -> Result<u64, EstimateError> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let Some(byte) = bytes.get(*at) else {
                return Err(malformed("a varint is cut short"));
            };
            *at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(malformed("a varint is too long"))
    }

    pub(super) fn walk(
        msg: Msg,
        bytes: &[u8],
        depth: usize,
        tally: &mut Tally,
    ) -> Result<(), EstimateError> {
        if depth > MAX_DEPTH {
            return Err(EstimateError::TooDeep);
        }
        let mut at = 0;
        while at < bytes.len() {
            let key = varint(bytes, &mut at)?;
            let tag =
                u32::try_from(key >> 3).map_err(|_| malformed("a field number is too large"))?;
            if tag == 0 {
                return Err(malformed("field number 0"));
            }
            let kind = msg.field(tag);
            match key & 7 {
                0 => {
                    varint(bytes, &mut at)?;
                    if kind == Kind::Scalars {
                        tally.scalars(1)?;
                    }
                }
                1 | 5 => {
                    let width = if key & 7 == 1 { 8 } else { 4 };
                    at = at
                        .checked_add(width)
                        .filter(|end| *end <= bytes.len())
                        .ok_or_else(|| malformed("a fixed-width value is cut short"))?;
                    if kind == Kind::Scalars {
                        tally.scalars(1)?;
                    }
                }
                2 => {
                    let len = usize::try_from(varint(bytes, &mut at)?)
                        .map_err(|_| malformed("a length is too large"))?;
                    let end = at
                        .checked_add(len)
                        .filter(|end| *end <= bytes.len())
                        .ok_or_else(|| malformed("a length-delimited field is cut short"))?;
                    let inner = &bytes[at..end];
                    match kind {
                        Kind::Message(sub) => {
                            tally.message(sub)?;
                            walk(sub, inner, depth + 1, tally)?;
                        }
                        Kind::Text => tally.text(len)?,
                        // Packed: at most one element a byte.
                        Kind::Scalars => tally.scalars(len)?,
                        Kind::Inline => {}
                    }
                    at = end;
                }
                _ => return Err(malformed("a group or an unknown wire type")),
            }
        }
        Ok(())
    }
}

/// JSON, walked through serde with a visitor that keeps nothing but the
/// tally (serde_json's own nesting limit applies as well).
mod json {
    use std::fmt;

    use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

    use super::{EstimateError, Kind, MAX_DEPTH, Msg, Tally};

    pub(super) fn walk(root: Msg, body: &[u8], tally: &mut Tally) -> Result<(), EstimateError> {
        let mut failure = None;
        let mut de = serde_json::Deserializer::from_slice(body);
        let seed = Value {
            kind: Kind::Message(root),
            top: true,
            depth: 0,
            tally,
            failure: &mut failure,
        };
        let walked = seed.deserialize(&mut de).and_then(|()| de.end());
        match (failure, walked) {
            (Some(err), _) => Err(err),
            (None, Ok(())) => Ok(()),
            (None, Err(e)) => Err(EstimateError::Malformed(format!(
                "JSON at {}:{}",
                e.line(),
                e.column()
            ))),
        }
    }

    /// One JSON value of a known kind. `top` says the root's own message
    /// was already counted.
    struct Value<'a> {
        kind: Kind,
        top: bool,
        depth: usize,
        tally: &'a mut Tally,
        failure: &'a mut Option<EstimateError>,
    }

    impl Value<'_> {
        fn stop<E: serde::de::Error>(&mut self, err: EstimateError) -> E {
            *self.failure = Some(err);
            E::custom("stopped")
        }

        fn charge<E: serde::de::Error>(
            &mut self,
            result: Result<(), EstimateError>,
        ) -> Result<(), E> {
            result.map_err(|err| self.stop(err))
        }
    }

    impl<'de> DeserializeSeed<'de> for Value<'_> {
        type Value = ();

        fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<(), D::Error> {
            de.deserialize_any(self)
        }
    }

    impl<'de> Visitor<'de> for Value<'_> {
        type Value = ();

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("an OTLP JSON value")
        }

        fn visit_bool<E>(self, _: bool) -> Result<(), E> {
            Ok(())
        }

        fn visit_i64<E>(self, _: i64) -> Result<(), E> {
            Ok(())
        }

        fn visit_u64<E>(self, _: u64) -> Result<(), E> {
            Ok(())
        }

        fn visit_f64<E>(self, _: f64) -> Result<(), E> {
            Ok(())
        }

        fn visit_unit<E>(self) -> Result<(), E> {
            Ok(())
        }

        fn visit_str<E: serde::de::Error>(mut self, text: &str) -> Result<(), E> {
            let charged = match self.kind {
                Kind::Text => self.tally.text(text.len()),
                Kind::Scalars => self.tally.scalars(1),
                Kind::Message(_) | Kind::Inline => Ok(()),
            };
            self.charge(charged)
        }

        fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
            let Kind::Message(msg) = self.kind else {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                return Ok(());
            };
            if self.depth > MAX_DEPTH {
                return Err(self.stop(EstimateError::TooDeep));
            }
            if !self.top {
                let charged = self.tally.message(msg);
                self.charge(charged)?;
            }
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                let kind = msg.json_field(&key);
                map.next_value_seed(Value {
                    kind,
                    top: false,
                    depth: self.depth + 1,
                    tally: self.tally,
                    failure: self.failure,
                })?;
            }
            Ok(())
        }

        fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
            if self.depth > MAX_DEPTH {
                return Err(self.stop(EstimateError::TooDeep));
            }
            match self.kind {
                Kind::Inline => while seq.next_element::<IgnoredAny>()?.is_some() {},
                Kind::Scalars => {
                    while seq.next_element::<IgnoredAny>()?.is_some() {
                        let charged = self.tally.scalars(1);
                        self.charge(charged)?;
                    }
                }
                kind => {
                    while seq
                        .next_element_seed(Value {
                            kind,
                            top: false,
                            depth: self.depth + 1,
                            tally: self.tally,
                            failure: self.failure,
                        })?
                        .is_some()
                    {}
                }
            }
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::logs::v1::LogRecord;
    use prost::Message;

    const CAP: usize = 64 * 1024 * 1024;

    /// A logs request of `n` empty log records: two bytes each on the wire.
    fn empty_records(n: usize) -> Vec<u8> {
        ExportLogsServiceRequest {
            resource_logs: vec![ResourceLogs {
                scope_logs: vec![ScopeLogs {
                    log_records: vec![LogRecord::default(); n],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        }
        .encode_to_vec()
    }

    #[test]
    fn empty_records_cost_their_decoded_size_not_their_two_bytes() {
        let body = empty_records(100_000);
        assert!(body.len() < 210_000);
        let estimate = estimate(Signal::Logs, Encoding::Protobuf, &body, CAP).expect("fits");
        assert_eq!(estimate.items, 100_000);
        assert!(estimate.bytes >= 100_000 * size_of::<LogRecord>());
        // The real decode, for comparison: what the estimate bounds.
        let decoded = ExportLogsServiceRequest::decode(body.as_slice()).expect("decodes");
        let records: usize = decoded.resource_logs[0].scope_logs[0].log_records.len();
        assert_eq!(records, 100_000);
        assert!(estimate.bytes >= records * size_of::<LogRecord>());
        // Under a cap of a few MiB, they pass it long before the end.
        assert!(matches!(
            super::estimate(Signal::Logs, Encoding::Protobuf, &body, 4 * 1024 * 1024),
            Err(EstimateError::OverCap { items, .. }) if items < 100_000
        ));
    }

    #[test]
    fn json_empty_objects_and_long_number_arrays_are_counted() {
        let records = vec!["{}"; 50_000].join(",");
        let body =
            format!(r#"{{"resourceLogs":[{{"scopeLogs":[{{"logRecords":[{records}]}}]}}]}}"#);
        let records_seen =
            estimate(Signal::Logs, Encoding::Json, body.as_bytes(), CAP).expect("fits");
        assert_eq!(records_seen.items, 50_000);
        assert!(records_seen.bytes >= 50_000 * size_of::<LogRecord>());
        let counts = vec!["0"; 100_000].join(",");
        let body = format!(
            r#"{{"resourceMetrics":[{{"scopeMetrics":[{{"metrics":[{{"histogram":{{"dataPoints":[{{"bucketCounts":[{counts}]}}]}}}}]}}]}}]}}"#
        );
        let counted =
            estimate(Signal::Metrics, Encoding::Json, body.as_bytes(), CAP).expect("fits");
        assert!(counted.bytes >= 100_000 * 8, "{counted:?}");
    }

    #[test]
    fn packed_varints_count_eight_bytes_each() {
        // Buckets{bucket_counts: packed, 1,000,000 zero varints}.
        let mut buckets = vec![0x12];
        prost::encoding::encode_varint(1_000_000, &mut buckets);
        buckets.extend(std::iter::repeat_n(0u8, 1_000_000));
        let estimate = {
            let mut tally = Tally {
                cap: CAP,
                estimate: Estimate::default(),
            };
            wire::walk(Msg::Buckets, &buckets, 0, &mut tally).expect("fits");
            tally.estimate
        };
        assert!(estimate.bytes >= 8_000_000, "{estimate:?}");
    }

    #[test]
    fn nesting_past_the_decoders_limit_is_refused_and_truncation_is_malformed() {
        // AnyValue{array_value{values:[AnyValue{array_value{...}}]}} 200 deep.
        let mut inner: Vec<u8> = Vec::new();
        for _ in 0..200 {
            let mut array = vec![0x0a];
            prost::encoding::encode_varint(inner.len() as u64, &mut array);
            array.extend_from_slice(&inner);
            let mut value = vec![0x2a];
            prost::encoding::encode_varint(array.len() as u64, &mut value);
            value.extend_from_slice(&array);
            inner = value;
        }
        let mut tally = Tally {
            cap: CAP,
            estimate: Estimate::default(),
        };
        assert_eq!(
            wire::walk(Msg::AnyValue, &inner, 0, &mut tally),
            Err(EstimateError::TooDeep)
        );
        let cut = &empty_records(10)[..5];
        assert!(matches!(
            estimate(Signal::Logs, Encoding::Protobuf, cut, CAP),
            Err(EstimateError::Malformed(_))
        ));
        assert!(matches!(
            estimate(Signal::Logs, Encoding::Json, b"{\"resourceLogs\":[", CAP),
            Err(EstimateError::Malformed(_))
        ));
    }

    /// A real request's estimate bounds what decoding it really takes, and
    /// stays within a small multiple of the wire size for ordinary content.
    #[test]
    fn an_ordinary_batch_is_estimated_within_a_small_multiple_of_its_size() {
        use opentelemetry_proto::tonic::common::v1::any_value::Value as V;
        let attribute = |k: &str, v: &str| KeyValue {
            key: k.into(),
            value: Some(AnyValue {
                value: Some(V::StringValue(v.into())),
            }),
            ..Default::default()
        };
        let record = LogRecord {
            time_unix_nano: 1,
            event_name: "claude_code.tool_result".into(),
            attributes: (0..20)
                .map(|i| attribute(&format!("attribute.name.{i}"), "a value of some length"))
                .collect(),
            ..Default::default()
        };
        let request = ExportLogsServiceRequest {
            resource_logs: vec![ResourceLogs {
                scope_logs: vec![ScopeLogs {
                    log_records: vec![record; 500],
                    ..Default::default()
                }],
                ..Default::default()
            }],
        };
        let body = request.encode_to_vec();
        let estimate = estimate(Signal::Logs, Encoding::Protobuf, &body, CAP).expect("fits");
        assert_eq!(estimate.items, 500);
        assert!(
            estimate.bytes < 8 * body.len(),
            "{} for {} bytes",
            estimate.bytes,
            body.len()
        );
        let json = serde_json::to_vec(&request).expect("json");
        let from_json = super::estimate(Signal::Logs, Encoding::Json, &json, CAP).expect("fits");
        assert_eq!(from_json.items, 500);
        assert_eq!(
            from_json.messages, estimate.messages,
            "both walks see the same messages"
        );
    }
}

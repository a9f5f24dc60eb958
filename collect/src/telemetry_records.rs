//! From a decoded batch to [`TelemetryRecord`]s: each log record, span, span
//! event and metric data point, flattened (its name, its attributes and its
//! resource's), so a plugin's mapping reads plain data and never the
//! OpenTelemetry types. Bounded per record (see
//! [`tether_core::telemetry::MAX_RECORD_ATTRIBUTES`]); what does not fit is
//! counted, never kept.
//!
//! (OTLP records, not session records): a batch as `TelemetryRecord`s
//! (`for_each_record`): names, scalar attributes (arrays as text lists; maps
//! and bytes left out, counted), the resource's, a span's status, a metric
//! point's value.

use std::collections::BTreeMap;

use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue, any_value};
use opentelemetry_proto::tonic::metrics::v1::{metric, number_data_point};
use opentelemetry_proto::tonic::resource::v1::Resource;
use tether_core::model::Timestamp;
use tether_core::telemetry::{
    TelemetryRecord, TelemetrySignal, TelemetryStatus, TelemetryValue, fits,
};

use crate::decode::Batch;

/// The most characters of a log's string body taken as its name (when it
/// has no event name): a body longer than that is a message, not a name.
const BODY_NAME_MAX: usize = 128;

/// Calls `each` with every record in `batch`, in order.
pub fn for_each_record(batch: &Batch, mut each: impl FnMut(TelemetryRecord)) {
    match batch {
        Batch::Logs(request) => {
            for resource_logs in &request.resource_logs {
                let resource = flatten_resource(resource_logs.resource.as_ref());
                for scope in &resource_logs.scope_logs {
                    for log in &scope.log_records {
                        let mut record = TelemetryRecord::new(
                            TelemetrySignal::Log,
                            String::new(),
                            at(log.time_unix_nano.max(log.observed_time_unix_nano)),
                        );
                        record.resource.clone_from(&resource.0);
                        record.dropped_attributes = resource.1;
                        add_all(&mut record, &log.attributes);
                        if let Some(any_value::Value::KvlistValue(map)) =
                            log.body.as_ref().and_then(|b| b.value.as_ref())
                        {
                            add_body(&mut record, &map.values);
                        }
                        record.name = log_name(&log.event_name, log.body.as_ref(), &record);
                        each(record);
                    }
                }
            }
        }
        Batch::Traces(request) => {
            for resource_spans in &request.resource_spans {
                let resource = flatten_resource(resource_spans.resource.as_ref());
                for scope in &resource_spans.scope_spans {
                    for span in &scope.spans {
                        let mut record = TelemetryRecord::new(
                            TelemetrySignal::Span,
                            span.name.clone(),
                            at(span.end_time_unix_nano.max(span.start_time_unix_nano)),
                        );
                        record.resource.clone_from(&resource.0);
                        record.dropped_attributes = resource.1;
                        add_all(&mut record, &span.attributes);
                        record.status = span.status.as_ref().map(|s| TelemetryStatus {
                            // STATUS_CODE_ERROR is 2.
                            error: s.code == 2,
                            message: (!s.message.is_empty()).then(|| s.message.clone()),
                        });
                        for event in &span.events {
                            let mut inner = TelemetryRecord::new(
                                TelemetrySignal::SpanEvent,
                                event.name.clone(),
                                at(event.time_unix_nano),
                            );
                            inner.span_name = Some(span.name.clone());
                            inner.resource.clone_from(&resource.0);
                            inner.dropped_attributes = resource.1;
                            add_all(&mut inner, &event.attributes);
                            for (key, value) in &record.attributes {
                                if !inner.attributes.contains_key(key)
                                    && fits(&inner.attributes, key, value)
                                {
                                    inner.attributes.insert(key.clone(), value.clone());
                                }
                            }
                            each(inner);
                        }
                        each(record);
                    }
                }
            }
        }
        Batch::Metrics(request) => {
            for resource_metrics in &request.resource_metrics {
                let resource = flatten_resource(resource_metrics.resource.as_ref());
                for scope in &resource_metrics.scope_metrics {
                    for m in &scope.metrics {
                        let points = points(m.data.as_ref());
                        for (attributes, time, value) in points {
                            let mut record = TelemetryRecord::new(
                                TelemetrySignal::Metric,
                                m.name.clone(),
                                at(time),
                            );
                            record.resource.clone_from(&resource.0);
                            record.dropped_attributes = resource.1;
                            add_all(&mut record, attributes);
                            record.value = value;
                            each(record);
                        }
                    }
                }
            }
        }
    }
}

/// Every record in `batch`.
pub fn records(batch: &Batch) -> Vec<TelemetryRecord> {
    let mut all = Vec::new();
    for_each_record(batch, |r| all.push(r));
    all
}

/// A metric's data points: attributes, time, value.
fn points(data: Option<&metric::Data>) -> Vec<(&[KeyValue], u64, Option<f64>)> {
    let number = |v: Option<&number_data_point::Value>| {
        v.map(|v| match v {
            number_data_point::Value::AsDouble(d) => *d,
            number_data_point::Value::AsInt(i) => *i as f64,
        })
    };
    match data {
        Some(metric::Data::Sum(sum)) => sum
            .data_points
            .iter()
            .map(|p| {
                (
                    p.attributes.as_slice(),
                    p.time_unix_nano,
                    number(p.value.as_ref()),
                )
            })
            .collect(),
        Some(metric::Data::Gauge(gauge)) => gauge
            .data_points
            .iter()
            .map(|p| {
                (
                    p.attributes.as_slice(),
                    p.time_unix_nano,
                    number(p.value.as_ref()),
                )
            })
            .collect(),
        Some(metric::Data::Histogram(h)) => h
            .data_points
            .iter()
            .map(|p| {
                (
                    p.attributes.as_slice(),
                    p.time_unix_nano,
                    Some(p.count as f64),
                )
            })
            .collect(),
        Some(metric::Data::ExponentialHistogram(h)) => h
            .data_points
            .iter()
            .map(|p| {
                (
                    p.attributes.as_slice(),
                    p.time_unix_nano,
                    Some(p.count as f64),
                )
            })
            .collect(),
        Some(metric::Data::Summary(s)) => s
            .data_points
            .iter()
            .map(|p| {
                (
                    p.attributes.as_slice(),
                    p.time_unix_nano,
                    Some(p.count as f64),
                )
            })
            .collect(),
        None => Vec::new(),
    }
}

fn at(unix_nano: u64) -> Timestamp {
    Timestamp(unix_nano / 1_000_000)
}

/// A log's name: its `event.name` attribute (the semantic convention, which
/// some harnesses set while their event name field holds a source location),
/// else its event name field, else a short string body (or a map body's
/// short `message`).
fn log_name(event_name: &str, body: Option<&AnyValue>, record: &TelemetryRecord) -> String {
    if let Some(TelemetryValue::Text(name)) = record.attributes.get("event.name") {
        return name.clone();
    }
    if !event_name.is_empty() {
        return event_name.to_owned();
    }
    let short = |s: &str| (s.chars().count() <= BODY_NAME_MAX).then(|| s.to_owned());
    match body.and_then(|b| b.value.as_ref()) {
        Some(any_value::Value::StringValue(s)) => short(s).unwrap_or_default(),
        Some(any_value::Value::KvlistValue(_)) => ["message", "msg"]
            .iter()
            .find_map(|k| match record.attributes.get(*k) {
                Some(TelemetryValue::Text(s)) => short(s),
                _ => None,
            })
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// A map body's scalar entries, as attributes (where the record has none of
/// that key): some harnesses log their fields there.
fn add_body(record: &mut TelemetryRecord, entries: &[KeyValue]) {
    for kv in entries {
        if record.attributes.contains_key(&kv.key) {
            continue;
        }
        let fitting =
            flatten(kv.value.as_ref()).filter(|value| fits(&record.attributes, &kv.key, value));
        match fitting {
            Some(value) => {
                record.attributes.insert(kv.key.clone(), value);
            }
            None => record.dropped_attributes = record.dropped_attributes.saturating_add(1),
        }
    }
}

fn flatten_resource(resource: Option<&Resource>) -> (BTreeMap<String, TelemetryValue>, u32) {
    let mut record = TelemetryRecord::new(TelemetrySignal::Log, "", Timestamp(0));
    if let Some(resource) = resource {
        for kv in &resource.attributes {
            match flatten(kv.value.as_ref()) {
                Some(value) => record = record.with_resource(kv.key.clone(), value),
                None => record.dropped_attributes = record.dropped_attributes.saturating_add(1),
            }
        }
    }
    (record.resource, record.dropped_attributes)
}

fn add_all(record: &mut TelemetryRecord, attributes: &[KeyValue]) {
    for kv in attributes {
        let fitting =
            flatten(kv.value.as_ref()).filter(|value| fits(&record.attributes, &kv.key, value));
        match fitting {
            Some(value) => {
                record.attributes.insert(kv.key.clone(), value);
            }
            None => record.dropped_attributes = record.dropped_attributes.saturating_add(1),
        }
    }
}

/// One value, flattened: scalars as themselves, arrays of scalars as text;
/// maps, bytes and nested arrays are left out.
fn flatten(value: Option<&AnyValue>) -> Option<TelemetryValue> {
    match value?.value.as_ref()? {
        any_value::Value::StringValue(s) => Some(TelemetryValue::Text(s.clone())),
        any_value::Value::BoolValue(b) => Some(TelemetryValue::Bool(*b)),
        any_value::Value::IntValue(i) => Some(TelemetryValue::Int(*i)),
        any_value::Value::DoubleValue(d) => Some(TelemetryValue::Float(*d)),
        any_value::Value::ArrayValue(array) => {
            let items = array
                .values
                .iter()
                .take(tether_core::telemetry::MAX_RECORD_ATTRIBUTES)
                .filter_map(|v| match flatten(Some(v))? {
                    TelemetryValue::List(_) => None,
                    scalar => scalar.text().map(|t| t.into_owned()),
                })
                .collect();
            Some(TelemetryValue::List(items))
        }
        _ => None,
    }
}

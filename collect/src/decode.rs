//! From an OTLP/HTTP request body to the OpenTelemetry project's own
//! request types: protobuf (`prost`) or JSON (the proto crate's serde
//! mapping), gzip or plain, with the decompressed size capped before it is
//! reached, so a gzip bomb costs at most the cap.

use std::io::Read;

use opentelemetry_proto::tonic::collector::logs::v1::ExportLogsServiceRequest;
use opentelemetry_proto::tonic::collector::metrics::v1::ExportMetricsServiceRequest;
use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;

/// The three OTLP signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Signal {
    /// `/v1/logs`.
    Logs,
    /// `/v1/traces`.
    Traces,
    /// `/v1/metrics`.
    Metrics,
}

impl Signal {
    /// The standard path.
    pub fn path(self) -> &'static str {
        match self {
            Signal::Logs => "/v1/logs",
            Signal::Traces => "/v1/traces",
            Signal::Metrics => "/v1/metrics",
        }
    }

    /// The word for it in counters and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Signal::Logs => "logs",
            Signal::Traces => "traces",
            Signal::Metrics => "metrics",
        }
    }
}

/// How a body is encoded (`Content-Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// `application/x-protobuf`.
    Protobuf,
    /// `application/json`.
    Json,
}

impl Encoding {
    /// The encoding a `Content-Type` names (parameters ignored), if OTLP has it.
    pub fn from_content_type(value: &str) -> Option<Encoding> {
        let essence = value.split(';').next().unwrap_or("").trim();
        if essence.eq_ignore_ascii_case("application/x-protobuf") {
            Some(Encoding::Protobuf)
        } else if essence.eq_ignore_ascii_case("application/json") {
            Some(Encoding::Json)
        } else {
            None
        }
    }

    /// The `Content-Type` an answer in this encoding carries.
    pub fn content_type(self) -> &'static str {
        match self {
            Encoding::Protobuf => "application/x-protobuf",
            Encoding::Json => "application/json",
        }
    }
}

/// One decoded export request.
#[derive(Debug, Clone, PartialEq)]
pub enum Batch {
    /// Log records.
    Logs(ExportLogsServiceRequest),
    /// Spans.
    Traces(ExportTraceServiceRequest),
    /// Metric points.
    Metrics(ExportMetricsServiceRequest),
}

impl Batch {
    /// Its signal.
    pub fn signal(&self) -> Signal {
        match self {
            Batch::Logs(_) => Signal::Logs,
            Batch::Traces(_) => Signal::Traces,
            Batch::Metrics(_) => Signal::Metrics,
        }
    }

    /// Log records, spans or metrics it holds: what a partial success
    /// counts as rejected.
    pub fn items(&self) -> u64 {
        self.per_resource().iter().map(|(_, n)| n).sum()
    }

    /// Each resource it carries (the sending service, say), with the log
    /// records, spans or metrics under it.
    pub fn per_resource(&self) -> Vec<(Option<&Resource>, u64)> {
        let n = |len: usize| u64::try_from(len).unwrap_or(u64::MAX);
        match self {
            Batch::Logs(r) => r
                .resource_logs
                .iter()
                .map(|r| {
                    let items = r.scope_logs.iter().map(|s| s.log_records.len()).sum();
                    (r.resource.as_ref(), n(items))
                })
                .collect(),
            Batch::Traces(r) => r
                .resource_spans
                .iter()
                .map(|r| {
                    let items = r.scope_spans.iter().map(|s| s.spans.len()).sum();
                    (r.resource.as_ref(), n(items))
                })
                .collect(),
            Batch::Metrics(r) => r
                .resource_metrics
                .iter()
                .map(|r| {
                    let items = r.scope_metrics.iter().map(|s| s.metrics.len()).sum();
                    (r.resource.as_ref(), n(items))
                })
                .collect(),
        }
    }
}

/// Why a body could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Decompressed, it would pass the cap.
    #[error("the decompressed body is over {0} bytes")]
    TooLarge(usize),
    /// A `Content-Encoding` other than gzip or identity.
    #[error("content encoding {0:?} is not supported (gzip or none)")]
    UnsupportedEncoding(String),
    /// Not gzip, though it said so.
    #[error("the body is not valid gzip")]
    BadGzip,
    /// Not the message the path names.
    #[error("the body is not a valid OTLP {signal} request: {why}")]
    Malformed {
        /// The signal.
        signal: &'static str,
        /// What the decoder said (no payload).
        why: String,
    },
}

/// Undoes `Content-Encoding` (gzip or none), refusing to go past `max` bytes.
pub fn decompress(
    content_encoding: Option<&str>,
    body: &[u8],
    max: usize,
) -> Result<Vec<u8>, DecodeError> {
    match content_encoding.map(str::trim) {
        None | Some("") => {
            if body.len() > max {
                return Err(DecodeError::TooLarge(max));
            }
            Ok(body.to_vec())
        }
        Some(e) if e.eq_ignore_ascii_case("identity") => decompress(None, body, max),
        Some(e) if e.eq_ignore_ascii_case("gzip") => {
            let mut out = Vec::with_capacity(body.len().saturating_mul(4).min(max));
            // One byte past the cap tells "too large" from "exactly the cap".
            let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
            flate2::read::GzDecoder::new(body)
                .take(limit)
                .read_to_end(&mut out)
                .map_err(|_| DecodeError::BadGzip)?;
            if out.len() > max {
                return Err(DecodeError::TooLarge(max));
            }
            Ok(out)
        }
        Some(other) => Err(DecodeError::UnsupportedEncoding(
            other.chars().take(32).collect(),
        )),
    }
}

/// Decodes one export request of `signal` from plain bytes.
pub fn decode(signal: Signal, encoding: Encoding, bytes: &[u8]) -> Result<Batch, DecodeError> {
    let malformed = |why: String| DecodeError::Malformed {
        signal: signal.as_str(),
        why,
    };
    match encoding {
        Encoding::Protobuf => {
            let proto = |e: prost::DecodeError| malformed(e.to_string());
            Ok(match signal {
                Signal::Logs => {
                    Batch::Logs(ExportLogsServiceRequest::decode(bytes).map_err(proto)?)
                }
                Signal::Traces => {
                    Batch::Traces(ExportTraceServiceRequest::decode(bytes).map_err(proto)?)
                }
                Signal::Metrics => {
                    Batch::Metrics(ExportMetricsServiceRequest::decode(bytes).map_err(proto)?)
                }
            })
        }
        Encoding::Json => {
            // serde_json's message names a line and column, never the text.
            let json = |e: serde_json::Error| {
                malformed(format!("{} at {}:{}", kind(&e), e.line(), e.column()))
            };
            Ok(match signal {
                Signal::Logs => Batch::Logs(serde_json::from_slice(bytes).map_err(json)?),
                Signal::Traces => Batch::Traces(serde_json::from_slice(bytes).map_err(json)?),
                Signal::Metrics => Batch::Metrics(serde_json::from_slice(bytes).map_err(json)?),
            })
        }
    }
}

fn kind(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Io => "unreadable",
        serde_json::error::Category::Syntax => "not JSON",
        serde_json::error::Category::Data => "not an OTLP request",
        serde_json::error::Category::Eof => "cut short",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(bytes).expect("gzip");
        e.finish().expect("gzip")
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_cap() {
        let bomb = gzip(&vec![0u8; 64 * 1024 * 1024]);
        assert!(bomb.len() < 200 * 1024, "{}", bomb.len());
        assert_eq!(
            decompress(Some("gzip"), &bomb, 1024 * 1024),
            Err(DecodeError::TooLarge(1024 * 1024))
        );
        assert_eq!(
            decompress(Some("GZIP"), &gzip(b"ok"), 2).as_deref(),
            Ok(&b"ok"[..])
        );
        assert_eq!(
            decompress(Some("gzip"), b"not gzip", 64),
            Err(DecodeError::BadGzip)
        );
        assert!(matches!(
            decompress(Some("br"), b"x", 64),
            Err(DecodeError::UnsupportedEncoding(_))
        ));
        assert_eq!(decompress(None, b"abc", 2), Err(DecodeError::TooLarge(2)));
    }

    #[test]
    fn both_encodings_decode_and_garbage_is_malformed_without_echoing_it() {
        let request = ExportLogsServiceRequest::default();
        let proto = request.encode_to_vec();
        assert_eq!(
            decode(Signal::Logs, Encoding::Protobuf, &proto),
            Ok(Batch::Logs(request))
        );
        let json = br#"{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"timeUnixNano":"1","body":{"stringValue":"x"}}]}]}]}"#;
        let batch = decode(Signal::Logs, Encoding::Json, json).expect("json");
        assert_eq!(batch.items(), 1);
        let secret = b"\xff\xffsk-planted-secret";
        for encoding in [Encoding::Protobuf, Encoding::Json] {
            let err = decode(Signal::Traces, encoding, secret).expect_err("garbage");
            assert!(!err.to_string().contains("planted"), "{err}");
        }
        assert_eq!(
            Encoding::from_content_type("application/x-protobuf; charset=binary"),
            Some(Encoding::Protobuf)
        );
        assert_eq!(Encoding::from_content_type("text/plain"), None);
    }
}

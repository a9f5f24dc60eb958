//! When export is on, and where it goes: the host's settings and the
//! standard `OTEL_*` environment.

use std::time::Duration;

/// `OTEL_EXPORTER_OTLP_ENDPOINT`: the base URL; `/v1/traces`, `/v1/metrics`
/// and `/v1/logs` are appended.
pub const ENV_ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
/// `OTEL_SDK_DISABLED=true` turns export off whatever else is set.
pub const ENV_SDK_DISABLED: &str = "OTEL_SDK_DISABLED";
/// Per-signal endpoints, used as given (the OpenTelemetry SDK reads them).
pub const ENV_SIGNAL_ENDPOINTS: [&str; 3] = [
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT",
];
/// `OTEL_SERVICE_NAME`: overrides the host's default service name.
pub const ENV_SERVICE_NAME: &str = "OTEL_SERVICE_NAME";

/// What export needs. Off unless an endpoint is configured (here, or in the
/// environment) and `OTEL_SDK_DISABLED` is not `true`.
///
/// `OTEL_EXPORTER_OTLP_HEADERS` (and the per-signal header variables) and
/// `OTEL_RESOURCE_ATTRIBUTES` are read by the OpenTelemetry SDK itself.
/// Header values are secrets: `Debug` shows their names only, and no error
/// or log line carries them.
#[derive(Clone)]
pub struct OtelConfig {
    /// The OTLP/HTTP base URL (`http://collector:4318`), when the host or
    /// `--otlp` gave one; otherwise the environment decides.
    pub endpoint: Option<String>,
    /// Extra headers on every export request (beside the environment's).
    pub headers: Vec<(String, String)>,
    /// `service.name` unless `OTEL_SERVICE_NAME` is set: names the host.
    pub service_name: String,
    /// Requests, sessions and evidence queued for export at most; beyond it
    /// they are dropped and counted (`tether.evidence.dropped`, site `export`).
    pub queue_capacity: usize,
    /// Bound on one export request.
    pub export_timeout: Duration,
    /// How often metrics are exported.
    pub metric_interval: Duration,
    env_endpoint: bool,
    disabled: bool,
}

impl std::fmt::Debug for OtelConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let header_names: Vec<&str> = self.headers.iter().map(|(k, _)| k.as_str()).collect();
        f.debug_struct("OtelConfig")
            .field(
                "endpoint",
                &self
                    .endpoint
                    .as_deref()
                    .map(tether_core::sanitize::network_target),
            )
            .field("headers", &header_names)
            .field("service_name", &self.service_name)
            .field("enabled", &self.enabled())
            .finish_non_exhaustive()
    }
}

impl OtelConfig {
    /// Export off, with `service_name` as the default service name.
    pub fn new(service_name: impl Into<String>) -> Self {
        OtelConfig {
            endpoint: None,
            headers: Vec::new(),
            service_name: service_name.into(),
            queue_capacity: 8192,
            export_timeout: Duration::from_secs(10),
            metric_interval: Duration::from_secs(30),
            env_endpoint: false,
            disabled: false,
        }
    }

    /// Reads the standard environment: on when `OTEL_EXPORTER_OTLP_ENDPOINT`
    /// (or a per-signal endpoint) is set, off when `OTEL_SDK_DISABLED=true`.
    pub fn from_env(service_name: impl Into<String>) -> Self {
        let set = |name: &str| std::env::var(name).is_ok_and(|v| !v.trim().is_empty());
        let mut config = OtelConfig::new(service_name);
        config.env_endpoint = set(ENV_ENDPOINT) || ENV_SIGNAL_ENDPOINTS.iter().any(|n| set(n));
        config.disabled =
            std::env::var(ENV_SDK_DISABLED).is_ok_and(|v| v.trim().eq_ignore_ascii_case("true"));
        config
    }

    /// Exports to this OTLP/HTTP base URL (`--otlp`), whatever the environment says.
    pub fn with_endpoint(mut self, url: impl Into<String>) -> Self {
        self.endpoint = Some(url.into());
        self
    }

    /// Adds a header to every export request.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Whether export is on.
    pub fn enabled(&self) -> bool {
        !self.disabled && (self.endpoint.is_some() || self.env_endpoint)
    }

    /// Whether `OTEL_SDK_DISABLED=true` turned it off.
    pub fn disabled_by_env(&self) -> bool {
        self.disabled
    }

    /// The signal's URL when the host gave a base URL (`None`: the SDK
    /// resolves it from the environment).
    pub(crate) fn signal_url(&self, signal: &str) -> Option<String> {
        self.endpoint
            .as_deref()
            .map(|base| format!("{}/v1/{signal}", base.trim_end_matches('/')))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_unless_configured() {
        let config = OtelConfig::new("host");
        assert!(!config.enabled());
        assert!(config.with_endpoint("http://127.0.0.1:4318").enabled());
    }

    #[test]
    fn disabled_wins_over_an_endpoint() {
        let mut config = OtelConfig::new("host").with_endpoint("http://127.0.0.1:4318");
        config.disabled = true;
        assert!(!config.enabled());
    }

    #[test]
    fn signal_urls_append_the_signal_path() {
        let config = OtelConfig::new("host").with_endpoint("http://127.0.0.1:4318/");
        assert_eq!(
            config.signal_url("traces").as_deref(),
            Some("http://127.0.0.1:4318/v1/traces")
        );
        assert_eq!(OtelConfig::new("h").signal_url("logs"), None);
    }

    #[test]
    fn debug_never_shows_header_values_or_userinfo() {
        let config = OtelConfig::new("host")
            .with_endpoint("http://user:hunter2-secret@collector.example:4318/x?k=tok-secret")
            .with_header("authorization", "Bearer sk-planted-secret");
        let shown = format!("{config:?}");
        assert!(shown.contains("authorization"), "{shown}");
        for secret in ["sk-planted-secret", "hunter2-secret", "tok-secret"] {
            assert!(!shown.contains(secret), "{shown}");
        }
    }
}

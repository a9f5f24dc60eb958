//! The optional forward (`tether collect --forward URL`): every request the
//! receiver admits is also passed, unchanged (its signal's path, body,
//! `Content-Type` and `Content-Encoding`), to the user's own collector, so
//! pointing a harness at Tether costs them nothing they already had.
//!
//! The forward never delays the answer: the receiver hands each request to
//! a bounded queue without waiting (a full queue drops it, counted), and
//! one thread of its own posts them, each bounded by a timeout. The
//! receiver's token is never forwarded; the user's collector gets only the
//! headers given for it (`--forward-header`), which are secrets: never
//! printed, hidden from `Debug`.
//!
//! A target that names the receiver's own address is refused as a loop.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::Duration;

use axum::body::Bytes;

use crate::decode::Signal;

/// Where to forward, and with which headers.
#[derive(Clone)]
pub struct ForwardTarget {
    /// The collector's OTLP/HTTP base URL (`https://collector:4318`); the
    /// signal's path follows it.
    pub base: String,
    /// Headers its collector wants (`Authorization`, say): secrets.
    pub headers: Vec<(String, String)>,
    /// Each post's bound.
    pub timeout: Duration,
    /// Requests waiting to be forwarded, at most.
    pub queue: usize,
    /// Bytes of bodies waiting to be forwarded, at most.
    pub queue_bytes: usize,
}

impl std::fmt::Debug for ForwardTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ForwardTarget")
            .field("base", &crate::forward::shown_url(&self.base))
            .field(
                "headers",
                &self.headers.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl ForwardTarget {
    /// A target at `base`, with no headers and the default bounds (10 s a
    /// post, 256 requests or 32 MiB waiting).
    pub fn new(base: impl Into<String>) -> Self {
        ForwardTarget {
            base: base.into().trim_end_matches('/').to_owned(),
            headers: Vec::new(),
            timeout: Duration::from_secs(10),
            queue: 256,
            queue_bytes: 32 * 1024 * 1024,
        }
    }
}

/// The URL as it may be shown: scheme, host and port, never userinfo, path
/// or query.
pub fn shown_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(u) => format!(
            "{}://{}{}",
            u.scheme(),
            u.host_str().unwrap_or("?"),
            u.port().map(|p| format!(":{p}")).unwrap_or_default()
        ),
        Err(_) => "(not a URL)".into(),
    }
}

/// Whether `url` reaches `addr`: the same port, and a host that connects to
/// the socket bound there. A forward or export to it would loop back to the
/// receiver.
///
/// A host reaches a loopback listener when it is any loopback address
/// (`127.0.0.2`, `[::1]`, the IPv4-mapped forms), the unspecified address
/// (`0.0.0.0` and `[::]` connect to this machine) or a name that resolves to
/// one of those (`localhost`). A listener on the unspecified address is also
/// reached through every address of this machine's own interfaces.
pub fn names_addr(url: &str, addr: std::net::SocketAddr) -> bool {
    let Ok(url) = url::Url::parse(url) else {
        return false;
    };
    let Some(port) = url.port_or_known_default() else {
        return false;
    };
    if port != addr.port() {
        return false;
    }
    let ips: Vec<std::net::IpAddr> = match url.host() {
        Some(url::Host::Ipv4(ip)) => vec![ip.into()],
        Some(url::Host::Ipv6(ip)) => vec![ip.into()],
        Some(url::Host::Domain(name)) => {
            if name.eq_ignore_ascii_case("localhost")
                || name.to_ascii_lowercase().ends_with(".localhost")
            {
                // RFC 6761: always loopback, whatever a resolver says.
                vec![std::net::Ipv4Addr::LOCALHOST.into()]
            } else {
                use std::net::ToSocketAddrs;
                (name, port)
                    .to_socket_addrs()
                    .map(|addrs| addrs.map(|a| a.ip()).collect())
                    .unwrap_or_default()
            }
        }
        None => Vec::new(),
    };
    ips.into_iter().any(|ip| ip_reaches(ip, addr.ip()))
}

/// Whether a connection to `ip` reaches a socket bound to `bound` (same port).
fn ip_reaches(ip: std::net::IpAddr, bound: std::net::IpAddr) -> bool {
    let (ip, bound) = (ip.to_canonical(), bound.to_canonical());
    // Connecting to the unspecified address connects to this machine.
    let this_machine = ip.is_loopback() || ip.is_unspecified();
    if bound.is_unspecified() {
        this_machine || is_own_address(ip)
    } else if bound.is_loopback() {
        this_machine
    } else {
        ip == bound || ip.is_unspecified()
    }
}

/// Whether `ip` is one of this machine's own addresses: only those can be
/// bound.
fn is_own_address(ip: std::net::IpAddr) -> bool {
    std::net::UdpSocket::bind((ip, 0)).is_ok()
}

/// Why a forward target was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForwardError {
    /// Not an http(s) URL.
    #[error("--forward needs an http:// or https:// URL")]
    NotHttp,
    /// It names the receiver itself: a loop.
    #[error("--forward names this receiver's own address: that would loop")]
    Loop,
    /// The HTTP client could not be built.
    #[error("the forward's HTTP client could not start: {0}")]
    Client(String),
}

/// What the forward has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ForwardStats {
    /// Requests the collector answered with a success.
    pub forwarded: u64,
    /// Requests it refused, or that failed or timed out on the way.
    pub failed: u64,
    /// Requests dropped because the forward's queue was full.
    pub dropped: u64,
}

#[derive(Default)]
struct Counters {
    forwarded: AtomicU64,
    failed: AtomicU64,
    dropped: AtomicU64,
}

struct Item {
    signal: Signal,
    content_type: String,
    content_encoding: Option<String>,
    body: Bytes,
}

/// The receiving side's handle on the forward thread. Cheap to clone.
#[derive(Clone)]
pub struct Forwarder {
    tx: SyncSender<Item>,
    waiting: Arc<AtomicUsize>,
    budget: usize,
    counters: Arc<Counters>,
}

impl std::fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forwarder")
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl Forwarder {
    /// Starts the forward thread for `target`; refuses a target that is not
    /// http(s) or that names `own` (the receiver's own address).
    pub fn start(
        target: ForwardTarget,
        own: Option<std::net::SocketAddr>,
    ) -> Result<Self, ForwardError> {
        let url = url::Url::parse(&target.base).map_err(|_| ForwardError::NotHttp)?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ForwardError::NotHttp);
        }
        if own.is_some_and(|own| names_addr(&target.base, own)) {
            return Err(ForwardError::Loop);
        }
        let (tx, rx) = std::sync::mpsc::sync_channel::<Item>(target.queue.max(1));
        let waiting = Arc::new(AtomicUsize::new(0));
        let counters = Arc::new(Counters::default());
        let forwarder = Forwarder {
            tx,
            waiting: Arc::clone(&waiting),
            budget: target.queue_bytes,
            counters: Arc::clone(&counters),
        };
        let base = target.base.clone();
        let headers = target.headers.clone();
        let timeout = target.timeout;
        let (ready_tx, ready_rx) = std::sync::mpsc::sync_channel::<Result<(), String>>(1);
        std::thread::Builder::new()
            .name("tether-collect-forward".into())
            .spawn(move || {
                // The blocking client lives (and is dropped) on this thread,
                // never on an async runtime's.
                let client = match reqwest::blocking::Client::builder()
                    .timeout(timeout)
                    .redirect(reqwest::redirect::Policy::none())
                    .build()
                {
                    Ok(client) => {
                        let _ = ready_tx.send(Ok(()));
                        client
                    }
                    Err(err) => {
                        let _ = ready_tx.send(Err(err.to_string()));
                        return;
                    }
                };
                // Ends when every Forwarder (the receiver's) is gone.
                for item in rx {
                    waiting.fetch_sub(item.body.len(), Ordering::AcqRel);
                    let mut request = client
                        .post(format!("{base}{}", item.signal.path()))
                        .header(reqwest::header::CONTENT_TYPE, &item.content_type);
                    if let Some(encoding) = &item.content_encoding {
                        request = request.header(reqwest::header::CONTENT_ENCODING, encoding);
                    }
                    for (name, value) in &headers {
                        request = request.header(name, value);
                    }
                    let ok = request
                        .body(item.body.to_vec())
                        .send()
                        .is_ok_and(|r| r.status().is_success());
                    let counter = if ok {
                        &counters.forwarded
                    } else {
                        &counters.failed
                    };
                    counter.fetch_add(1, Ordering::Relaxed);
                }
            })
            .map_err(|e| ForwardError::Client(e.to_string()))?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(forwarder),
            Ok(Err(err)) => Err(ForwardError::Client(err)),
            Err(_) => Err(ForwardError::Client("the forward thread ended".into())),
        }
    }

    /// Hands one admitted request to the forward, without waiting; a full
    /// queue (by count or bytes) drops it, counted.
    pub fn offer(
        &self,
        signal: Signal,
        content_type: &str,
        content_encoding: Option<&str>,
        body: Bytes,
    ) {
        let size = body.len();
        let reserved = self
            .waiting
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |w| {
                (w.saturating_add(size) <= self.budget).then(|| w + size)
            })
            .is_ok();
        if !reserved {
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let item = Item {
            signal,
            content_type: content_type.to_owned(),
            content_encoding: content_encoding.map(str::to_owned),
            body,
        };
        if let Err(TrySendError::Full(item) | TrySendError::Disconnected(item)) =
            self.tx.try_send(item)
        {
            self.waiting.fetch_sub(item.body.len(), Ordering::AcqRel);
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// What it has done so far.
    pub fn stats(&self) -> ForwardStats {
        let get = |c: &AtomicU64| c.load(Ordering::Relaxed);
        ForwardStats {
            forwarded: get(&self.counters.forwarded),
            failed: get(&self.counters.failed),
            dropped: get(&self.counters.dropped),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_form_of_the_receivers_own_address_is_a_loop() {
        let own: std::net::SocketAddr = "127.0.0.1:4318".parse().expect("addr");
        for url in [
            "http://127.0.0.1:4318",
            "http://localhost:4318",
            "http://LOCALHOST:4318/",
            "http://foo.localhost:4318",
            "http://[::1]:4318",
            "http://127.0.0.2:4318",
            "http://127.1:4318",
            "http://2130706433:4318",
            "http://0x7f000001:4318",
            "http://0.0.0.0:4318",
            "http://0:4318",
            "http://[::]:4318",
            "http://[::ffff:127.0.0.1]:4318",
            "https://127.0.0.1:4318",
        ] {
            assert!(names_addr(url, own), "{url} reaches {own}");
        }
        for url in [
            "http://127.0.0.1:4319",
            "http://127.0.0.1",
            "http://192.0.2.1:4318",
            "not a url",
        ] {
            assert!(!names_addr(url, own), "{url} does not reach {own}");
        }
        let any: std::net::SocketAddr = "0.0.0.0:4318".parse().expect("addr");
        assert!(names_addr("http://127.0.0.1:4318", any));
        assert!(names_addr("http://0.0.0.0:4318", any));
        assert!(!names_addr("http://192.0.2.1:4318", any), "not ours");
        let own_v6: std::net::SocketAddr = "[::1]:9".parse().expect("addr");
        assert!(names_addr("http://127.0.0.1:9", own_v6));
    }
}

//! TLS to PostgreSQL with libpq's `sslmode` meanings, over rustls.
//!
//! | `sslmode` | TLS | the server's certificate |
//! |---|---|---|
//! | `disable` | never | — |
//! | `allow`, `prefer` (the default) | when the server offers it; after a failed handshake, a plain attempt | not checked (encryption only) |
//! | `require` | always | not checked, unless a root certificate is given: then as `verify-ca` |
//! | `verify-ca` | always | chains to the root certificate |
//! | `verify-full` | always | chains to the root certificate and names the host |
//!
//! Root certificates come from `sslrootcert` (`PGSSLROOTCERT`), else
//! `~/.postgresql/root.crt`; `sslrootcert=system` takes the operating
//! system's bundle and, as in libpq, needs `verify-full`. A client
//! certificate comes from `sslcert`/`sslkey` (`PGSSLCERT`/`PGSSLKEY`), else
//! `~/.postgresql/postgresql.crt` and `.key` when both exist; a key file
//! others can read is refused, as libpq does. Unix sockets never use TLS.
//! Over TLS, SCRAM is bound to the server's certificate
//! (`SCRAM-SHA-256-PLUS`, `tls-server-end-point`) when its signature names
//! one hash; `channel_binding=require` insists on it.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tether_core::store::StoreError;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::Socket;
use tokio_postgres::config::SslMode as DriverSslMode;
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect, TlsStream};

/// The connection-string keys this module reads (the driver knows none but `sslmode`).
const KEYS: [&str; 4] = ["sslmode", "sslrootcert", "sslcert", "sslkey"];

/// libpq's `sslmode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SslMode {
    /// Never TLS.
    Disable,
    /// TLS when the server offers it, unchecked (libpq's `allow` and `prefer`).
    Prefer,
    /// TLS always; the certificate unchecked unless a root certificate is given.
    Require,
    /// TLS always; the certificate chains to a trusted root.
    VerifyCa,
    /// TLS always; the certificate chains to a trusted root and names the host.
    VerifyFull,
}

impl SslMode {
    fn parse(word: &str) -> Result<SslMode, StoreError> {
        Ok(match word {
            "disable" => SslMode::Disable,
            "allow" | "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            // The value is not echoed: a mistyped string may have put anything here.
            _ => {
                return Err(StoreError::Backend(
                    "sslmode must be disable, allow, prefer, require, verify-ca or verify-full"
                        .into(),
                ));
            }
        })
    }

    /// The word libpq uses.
    pub fn word(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    /// What the driver is told: whether to ask for TLS, and whether to insist.
    pub(crate) fn driver(self) -> DriverSslMode {
        match self {
            SslMode::Disable => DriverSslMode::Disable,
            SslMode::Prefer => DriverSslMode::Prefer,
            _ => DriverSslMode::Require,
        }
    }
}

/// The TLS settings a connection string (or the environment) gave, before
/// any file is read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    pub mode: Option<String>,
    pub root_cert: Option<String>,
    pub cert: Option<String>,
    pub key: Option<String>,
}

impl TlsSettings {
    fn set(&mut self, key: &str, value: String) {
        match key {
            "sslmode" => self.mode = Some(value),
            "sslrootcert" => self.root_cert = Some(value),
            "sslcert" => self.cert = Some(value),
            _ => self.key = Some(value),
        }
    }

    /// Fills what the string left out from `PGSSLMODE`, `PGSSLROOTCERT`,
    /// `PGSSLCERT` and `PGSSLKEY`.
    pub fn with_env(mut self, env: impl Fn(&str) -> Option<String>) -> Self {
        self.mode = self.mode.or_else(|| env("PGSSLMODE"));
        self.root_cert = self.root_cert.or_else(|| env("PGSSLROOTCERT"));
        self.cert = self.cert.or_else(|| env("PGSSLCERT"));
        self.key = self.key.or_else(|| env("PGSSLKEY"));
        self
    }
}

/// Takes the TLS keys out of a connection string, which the driver would
/// refuse, and returns the rest for the driver. Both forms: a
/// `postgres://` URL (the keys in its query) and `key=value` words.
pub(crate) fn take_tls_settings(spec: &str) -> Result<(String, TlsSettings), StoreError> {
    let mut settings = TlsSettings::default();
    if spec.starts_with("postgres://") || spec.starts_with("postgresql://") {
        let Some((base, query)) = spec.split_once('?') else {
            return Ok((spec.to_owned(), settings));
        };
        let mut kept = Vec::new();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let key_plain = percent_decode(key)?;
            if KEYS.contains(&key_plain.as_str()) {
                settings.set(&key_plain, percent_decode(value)?);
            } else {
                kept.push(pair);
            }
        }
        let rest = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        return Ok((rest, settings));
    }
    let mut kept = Vec::new();
    for (key, value) in key_value_words(spec)? {
        if KEYS.contains(&key.as_str()) {
            settings.set(&key, value);
        } else {
            let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
            kept.push(format!("{key}='{quoted}'"));
        }
    }
    Ok((kept.join(" "), settings))
}

fn percent_decode(text: &str) -> Result<String, StoreError> {
    let bad = || StoreError::Backend("the connection string has a bad %-escape".into());
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3).ok_or_else(bad)?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

/// libpq's `key = value` words: values may be single-quoted, and `\`
/// escapes the next character.
fn key_value_words(spec: &str) -> Result<Vec<(String, String)>, StoreError> {
    let bad = |why: &str| StoreError::Backend(format!("not a PostgreSQL connection string: {why}"));
    let mut words = Vec::new();
    let mut chars = spec.chars().peekable();
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            return Ok(words);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') {
            return Err(bad("a key without '='"));
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\\') => value.push(chars.next().ok_or_else(|| bad("a dangling '\\'"))?),
                    Some('\'') => break,
                    Some(c) => value.push(c),
                    None => return Err(bad("an unclosed quote")),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.push(chars.next().ok_or_else(|| bad("a dangling '\\'"))?);
                } else {
                    value.push(c);
                }
            }
        }
        words.push((key, value));
    }
}

/// The resolved TLS policy: what the driver is told and the rustls client
/// configuration (certificates read once, at resolve time).
#[derive(Clone)]
pub struct PgTls {
    mode: SslMode,
    config: Arc<rustls::ClientConfig>,
}

impl std::fmt::Debug for PgTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PgTls({})", self.mode.word())
    }
}

impl PgTls {
    /// Resolves `settings` against the files they name. `home` is where
    /// `~/.postgresql` lives; `only_unix_sockets` turns TLS off (libpq
    /// never uses it on a Unix socket).
    pub(crate) fn resolve(
        settings: &TlsSettings,
        home: Option<&Path>,
        only_unix_sockets: bool,
    ) -> Result<PgTls, StoreError> {
        let asked = settings
            .mode
            .as_deref()
            .map(SslMode::parse)
            .transpose()?
            .unwrap_or(SslMode::Prefer);
        let default_file = |name: &str| {
            home.map(|h| h.join(".postgresql").join(name))
                .filter(|p| p.is_file())
        };
        let explicit_root = settings.root_cert.as_deref().filter(|r| !r.is_empty());
        let mut mode = asked;
        let roots = match explicit_root {
            Some("system") => {
                if asked != SslMode::VerifyFull {
                    return Err(StoreError::Backend(format!(
                        "sslrootcert=system needs sslmode=verify-full, not {}",
                        asked.word()
                    )));
                }
                Some(system_roots()?)
            }
            Some(path) if asked >= SslMode::Require => {
                Some(roots_from(Path::new(path), ROOT_FILE)?)
            }
            Some(_) => None,
            None if asked >= SslMode::Require => match default_file("root.crt") {
                Some(path) => Some(roots_from(&path, ROOT_FILE)?),
                None if asked >= SslMode::VerifyCa => {
                    return Err(StoreError::Backend(format!(
                        "sslmode={} needs a root certificate: set sslrootcert=FILE (or PGSSLROOTCERT), or put it in ~/.postgresql/root.crt",
                        asked.word()
                    )));
                }
                None => None,
            },
            None => None,
        };
        // libpq: `require` with a root certificate checks the chain.
        if mode == SslMode::Require && roots.is_some() {
            mode = SslMode::VerifyCa;
        }
        if only_unix_sockets {
            mode = SslMode::Disable;
        }

        let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
        let builder = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(|e| StoreError::Backend(format!("TLS set-up failed: {e}")))?;
        let verifier: Arc<dyn ServerCertVerifier> = match roots {
            Some(roots) if mode >= SslMode::VerifyCa => {
                let webpki =
                    WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                        .build()
                        .map_err(|e| {
                            StoreError::Backend(format!("the root certificates are unusable: {e}"))
                        })?;
                if mode == SslMode::VerifyFull {
                    webpki
                } else {
                    Arc::new(ChainOnly(webpki))
                }
            }
            _ => Arc::new(Unchecked(provider)),
        };
        let builder = builder
            .dangerous()
            .with_custom_certificate_verifier(verifier);
        let client_files = match (settings.cert.as_deref(), settings.key.as_deref()) {
            (Some(cert), Some(key)) => Some((PathBuf::from(cert), PathBuf::from(key))),
            (Some(_), None) | (None, Some(_)) => {
                return Err(StoreError::Backend(
                    "a client certificate needs both sslcert and sslkey".into(),
                ));
            }
            (None, None) => default_file("postgresql.crt").zip(default_file("postgresql.key")),
        };
        let mut config = match client_files {
            Some((cert, key)) if mode != SslMode::Disable => {
                let chain = certificates_from(&cert, CERT_FILE)?;
                let key = private_key_from(&key)?;
                builder.with_client_auth_cert(chain, key).map_err(|e| {
                    StoreError::Backend(format!("the client certificate is unusable: {e}"))
                })?
            }
            _ => builder.with_no_client_auth(),
        };
        config.alpn_protocols = vec![b"postgresql".to_vec()];
        Ok(PgTls {
            mode,
            config: Arc::new(config),
        })
    }

    /// The mode in force.
    pub fn mode(&self) -> SslMode {
        self.mode
    }
}

/// What each file is called in errors: the setting that names it, never its
/// path (paths are not printed).
const ROOT_FILE: &str = "root certificate file (sslrootcert)";
const CERT_FILE: &str = "client certificate file (sslcert)";
const KEY_FILE: &str = "client key file (sslkey)";
const SYSTEM_FILE: &str = "system certificate bundle";

fn read_file(path: &Path, what: &str) -> Result<Vec<u8>, StoreError> {
    std::fs::read(path)
        .map_err(|e| StoreError::Backend(format!("cannot read the {what}: {}", e.kind())))
}

fn certificates_from(path: &Path, what: &str) -> Result<Vec<CertificateDer<'static>>, StoreError> {
    let pem = read_file(path, what)?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| StoreError::Backend(format!("the {what} is not PEM: {e}")))?;
    if certs.is_empty() {
        return Err(StoreError::Backend(format!("no certificate in the {what}")));
    }
    Ok(certs)
}

fn roots_from(path: &Path, what: &str) -> Result<RootCertStore, StoreError> {
    let mut roots = RootCertStore::empty();
    let (added, _ignored) = roots.add_parsable_certificates(certificates_from(path, what)?);
    if added == 0 {
        return Err(StoreError::Backend(format!(
            "the {what} holds no usable certificate"
        )));
    }
    Ok(roots)
}

/// The operating system's bundle: `SSL_CERT_FILE`, else the usual places.
fn system_roots() -> Result<RootCertStore, StoreError> {
    let candidates = std::env::var_os("SSL_CERT_FILE")
        .map(PathBuf::from)
        .into_iter()
        .chain(
            [
                "/etc/ssl/certs/ca-certificates.crt",
                "/etc/pki/tls/certs/ca-bundle.crt",
                "/etc/ssl/cert.pem",
            ]
            .map(PathBuf::from),
        );
    for path in candidates {
        if path.is_file() {
            return roots_from(&path, SYSTEM_FILE);
        }
    }
    Err(StoreError::Backend(
        "sslrootcert=system, but no system certificate bundle was found (set SSL_CERT_FILE)".into(),
    ))
}

fn private_key_from(path: &Path) -> Result<PrivateKeyDer<'static>, StoreError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let meta = std::fs::metadata(path).map_err(|e| {
            StoreError::Backend(format!("cannot read the {KEY_FILE}: {}", e.kind()))
        })?;
        // libpq's rule: 0600 or stricter, or 0640 when root owns it.
        let loose = if meta.uid() == 0 {
            meta.mode() & 0o037
        } else {
            meta.mode() & 0o077
        };
        if loose != 0 {
            return Err(StoreError::Backend(
                "the client key file (sslkey) can be read by others; make it 0600 (chmod 600)"
                    .into(),
            ));
        }
    }
    let pem = read_file(path, KEY_FILE)?;
    PrivateKeyDer::from_pem_slice(&pem)
        .map_err(|_| StoreError::Backend(format!("the {KEY_FILE} is not a PEM private key")))
}

/// `verify-ca`: the chain must reach a trusted root; the name is not checked.
#[derive(Debug)]
struct ChainOnly(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        // webpki checks the chain before the name, so a name error means the chain held.
        match self
            .0
            .verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
        {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// `prefer`/`require` without a root: encrypted, the certificate unchecked
/// (libpq's meaning). The handshake's signatures are still verified.
#[derive(Debug)]
struct Unchecked(Arc<CryptoProvider>);

impl ServerCertVerifier for Unchecked {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

impl MakeTlsConnect<Socket> for PgTls {
    type Stream = PgTlsStream;
    type TlsConnect = PgTlsConnect;
    type Error = io::Error;

    fn make_tls_connect(&mut self, domain: &str) -> Result<PgTlsConnect, io::Error> {
        // An empty name is a Unix socket, where TLS is never asked for.
        let name = ServerName::try_from(domain.to_owned()).ok();
        Ok(PgTlsConnect {
            config: Arc::clone(&self.config),
            name,
        })
    }
}

/// One connection's handshake.
pub struct PgTlsConnect {
    config: Arc<rustls::ClientConfig>,
    name: Option<ServerName<'static>>,
}

impl TlsConnect<Socket> for PgTlsConnect {
    type Stream = PgTlsStream;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<PgTlsStream>> + Send>>;

    fn connect(self, stream: Socket) -> Self::Future {
        Box::pin(async move {
            let name = self.name.ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "no host name to check TLS against",
                )
            })?;
            let stream = tokio_rustls::TlsConnector::from(self.config)
                .connect(name, stream)
                .await?;
            let end_point = stream
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| chain.first())
                .and_then(|cert| tls_server_end_point(cert));
            Ok(PgTlsStream {
                stream: Box::new(stream),
                end_point,
            })
        })
    }
}

/// A TLS connection to the server.
pub struct PgTlsStream {
    stream: Box<tokio_rustls::client::TlsStream<Socket>>,
    /// The server certificate's `tls-server-end-point` binding, when it has one.
    end_point: Option<Vec<u8>>,
}

/// RFC 5929's `tls-server-end-point`: the server certificate hashed with the
/// hash its signature uses (SHA-256 for MD5 and SHA-1). `None` when the
/// signature names no single hash (Ed25519, RSASSA-PSS), as in PostgreSQL.
fn tls_server_end_point(cert: &[u8]) -> Option<Vec<u8>> {
    use sha2::Digest;
    const RSA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01];
    const ECDSA: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04];
    let oid = signature_algorithm(cert)?;
    let (family, last) = oid.split_at(oid.len().checked_sub(1)?);
    let hash = match (family, last[0]) {
        // md5, sha1 → sha256; then sha256, sha384, sha512, sha224 (RSA)
        (RSA, 0x04 | 0x05 | 0x0b) => 256,
        (RSA, 0x0c) => 384,
        (RSA, 0x0d) => 512,
        (RSA, 0x0e) => 224,
        // ecdsa-with-SHA1 is 1.2.840.10045.4.1
        (ECDSA, 0x01) => 256,
        _ if oid.len() == 8 && oid.starts_with(&[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03]) => {
            match oid[7] {
                0x01 => 224,
                0x02 => 256,
                0x03 => 384,
                0x04 => 512,
                _ => return None,
            }
        }
        _ => return None,
    };
    Some(match hash {
        224 => sha2::Sha224::digest(cert).to_vec(),
        256 => sha2::Sha256::digest(cert).to_vec(),
        384 => sha2::Sha384::digest(cert).to_vec(),
        _ => sha2::Sha512::digest(cert).to_vec(),
    })
}

/// The certificate's `signatureAlgorithm` OID (its content bytes): the
/// second element of the outer `SEQUENCE`, after `tbsCertificate`.
fn signature_algorithm(cert: &[u8]) -> Option<&[u8]> {
    let outer = der_content(cert, 0x30)?.0;
    let (_, after_tbs) = der_content(outer, 0x30)?;
    let algorithm = der_content(after_tbs, 0x30)?.0;
    Some(der_content(algorithm, 0x06)?.0)
}

/// One DER element with tag `tag` at the start of `bytes`: (its content, what follows).
fn der_content(bytes: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    if *bytes.first()? != tag {
        return None;
    }
    let first = *bytes.get(1)?;
    let (header, len) = if first < 0x80 {
        (2, usize::from(first))
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = (len << 8) | usize::from(*bytes.get(2 + i)?);
        }
        (2 + n, len)
    };
    let end = header.checked_add(len)?;
    Some((bytes.get(header..end)?, bytes.get(end..)?))
}

impl AsyncRead for PgTlsStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for PgTlsStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut *self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut *self.stream).poll_shutdown(cx)
    }
}

impl TlsStream for PgTlsStream {
    fn channel_binding(&self) -> ChannelBinding {
        match &self.end_point {
            Some(hash) => ChannelBinding::tls_server_end_point(hash.clone()),
            None => ChannelBinding::none(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;

    #[test]
    fn tls_keys_leave_a_url_and_the_rest_stays() {
        let (rest, s) = take_tls_settings(
            "postgres://u:pw@db:5432/fleet?sslmode=verify-full&application_name=x&sslrootcert=%2Fetc%2Fca.pem",
        )
        .expect("parse");
        assert_eq!(rest, "postgres://u:pw@db:5432/fleet?application_name=x");
        assert_eq!(s.mode.as_deref(), Some("verify-full"));
        assert_eq!(s.root_cert.as_deref(), Some("/etc/ca.pem"));
        let (rest, s) = take_tls_settings("postgres://db/x?sslmode=require").expect("parse");
        assert_eq!(rest, "postgres://db/x");
        assert_eq!(s.mode.as_deref(), Some("require"));
    }

    #[test]
    fn tls_keys_leave_key_value_words_and_quoting_survives() {
        let (rest, s) = take_tls_settings(
            r"host=db  password='it s' dbname = fleet sslmode=verify-ca sslcert='/a b/c.crt' sslkey=/k\ ey",
        )
        .expect("parse");
        assert_eq!(rest, "host='db' password='it s' dbname='fleet'");
        assert_eq!(s.mode.as_deref(), Some("verify-ca"));
        assert_eq!(s.cert.as_deref(), Some("/a b/c.crt"));
        assert_eq!(s.key.as_deref(), Some("/k ey"));
        let (rest, _) = take_tls_settings(r"host=db password='p\'w' user=u").expect("parse");
        assert_eq!(rest, r"host='db' password='p\'w' user='u'");
        assert!(take_tls_settings("host=db password='open").is_err());
        assert!(take_tls_settings("host").is_err());
    }

    proptest::proptest! {
        /// GIVEN a `key=value` string whose password holds anything (quotes,
        /// backslashes, spaces, `=`) and TLS keys around it WHEN the TLS keys
        /// are taken out THEN the driver reads back the very same password,
        /// user and database, and the TLS values are the ones given.
        #[test]
        fn taking_tls_keys_never_changes_another_value(
            password in "[ -~]{1,24}",
            user in "[a-z_][a-z0-9_]{0,8}",
            root in "/[a-z/ ]{1,16}",
        ) {
            let quote = |v: &str| format!("'{}'", v.replace('\\', "\\\\").replace('\'', "\\'"));
            let spec = format!(
                "host=db user={user} sslmode=verify-full password={} sslrootcert={} dbname=fleet",
                quote(&password),
                quote(&root)
            );
            let (rest, tls) = take_tls_settings(&spec).expect("parse");
            let config = tokio_postgres::Config::from_str(&rest).expect("the driver reads the rest");
            proptest::prop_assert_eq!(config.get_password(), Some(password.as_bytes()));
            proptest::prop_assert_eq!(config.get_user(), Some(user.as_str()));
            proptest::prop_assert_eq!(config.get_dbname(), Some("fleet"));
            proptest::prop_assert_eq!(tls.mode.as_deref(), Some("verify-full"));
            proptest::prop_assert_eq!(tls.root_cert.as_deref(), Some(root.as_str()));
        }
    }

    #[test]
    fn modes_follow_libpq() {
        let resolve = |mode: &str, root: Option<&str>| {
            PgTls::resolve(
                &TlsSettings {
                    mode: Some(mode.into()),
                    root_cert: root.map(str::to_owned),
                    ..TlsSettings::default()
                },
                None,
                false,
            )
        };
        assert_eq!(
            resolve("disable", None).expect("ok").mode(),
            SslMode::Disable
        );
        assert_eq!(resolve("allow", None).expect("ok").mode(), SslMode::Prefer);
        assert_eq!(
            resolve("require", None).expect("ok").mode(),
            SslMode::Require
        );
        let err = resolve("verify-full", None).expect_err("no root");
        assert!(
            err.to_string().contains("needs a root certificate"),
            "{err}"
        );
        let err =
            resolve("verify-ca", Some("/nonexistent/sk-path-planted/ca.pem")).expect_err("no file");
        assert!(
            err.to_string()
                .contains("cannot read the root certificate file (sslrootcert)"),
            "{err}"
        );
        assert!(
            !err.to_string().contains("sk-path-planted") && !err.to_string().contains("ca.pem")
        );
        let err = resolve("require", Some("system")).expect_err("weak with system");
        assert!(err.to_string().contains("verify-full"), "{err}");
        let err = resolve("verify-everything", None).expect_err("unknown word");
        assert!(err.to_string().contains("sslmode must be"), "{err}");
        // A Unix socket never uses TLS, whatever was asked.
        let unix = PgTls::resolve(
            &TlsSettings {
                mode: Some("require".into()),
                ..TlsSettings::default()
            },
            None,
            true,
        )
        .expect("ok");
        assert_eq!(unix.mode(), SslMode::Disable);
    }

    #[test]
    fn the_end_point_hash_follows_the_signature_algorithm() {
        // A minimal certificate shape: SEQUENCE { tbs SEQUENCE {}, SEQUENCE { OID } , BIT STRING }.
        let cert = |oid: &[u8]| {
            let mut alg = vec![0x06, oid.len() as u8];
            alg.extend_from_slice(oid);
            let mut body = vec![0x30, 0x00, 0x30, alg.len() as u8];
            body.extend_from_slice(&alg);
            body.extend_from_slice(&[0x03, 0x01, 0x00]);
            let mut der = vec![0x30, body.len() as u8];
            der.extend_from_slice(&body);
            der
        };
        let len = |oid: &[u8]| tls_server_end_point(&cert(oid)).map(|h| h.len());
        let rsa = |last| [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, last];
        assert_eq!(len(&rsa(0x0b)), Some(32), "sha256WithRSAEncryption");
        assert_eq!(len(&rsa(0x05)), Some(32), "sha1WithRSAEncryption → SHA-256");
        assert_eq!(len(&rsa(0x0c)), Some(48), "sha384WithRSAEncryption");
        assert_eq!(len(&rsa(0x0d)), Some(64), "sha512WithRSAEncryption");
        assert_eq!(len(&rsa(0x0a)), None, "RSASSA-PSS names its hash elsewhere");
        let ecdsa = |last| [0x2a, 0x86, 0x48, 0xce, 0x3d, 0x04, 0x03, last];
        assert_eq!(len(&ecdsa(0x02)), Some(32), "ecdsa-with-SHA256");
        assert_eq!(len(&ecdsa(0x03)), Some(48), "ecdsa-with-SHA384");
        assert_eq!(len(&[0x2b, 0x65, 0x70]), None, "Ed25519");
        let c = cert(&rsa(0x0b));
        assert_eq!(
            tls_server_end_point(&c),
            Some(<sha2::Sha256 as sha2::Digest>::digest(&c).to_vec())
        );
        // Truncated or hostile DER is no binding, never a panic.
        for cut in 0..c.len() {
            let _ = tls_server_end_point(&c[..cut]);
        }
        assert_eq!(
            tls_server_end_point(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]),
            None
        );
    }

    #[test]
    fn environment_fills_only_what_the_string_left_out() {
        let s = TlsSettings {
            mode: Some("disable".into()),
            ..TlsSettings::default()
        }
        .with_env(|name| match name {
            "PGSSLMODE" => Some("verify-full".into()),
            "PGSSLROOTCERT" => Some("/ca.pem".into()),
            _ => None,
        });
        assert_eq!(s.mode.as_deref(), Some("disable"));
        assert_eq!(s.root_cert.as_deref(), Some("/ca.pem"));
        assert_eq!(s.cert, None);
    }
}

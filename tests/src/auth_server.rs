//! An MCP endpoint on 127.0.0.1 that wants auth, as servers answer, for the
//! everyday auth failures (`tests/tests/everyday_failures.rs` against
//! Tether's endpoint check, Claude Code and Codex;
//! `tests/tests/copilot_everyday_live.rs` against Copilot):
//!
//! - `/mcp` answers a request with no `Authorization` with 401 and a
//!   challenge naming its OAuth protected-resource metadata, and one with a
//!   token with 401 `Bearer error="invalid_token"`;
//! - `/sse` answers 401 with no challenge (its OAuth metadata only at the
//!   well-known path);
//! - `/plain/mcp` answers 401 with no challenge and publishes no metadata;
//! - `/scoped/mcp` refuses a token with 403 `insufficient_scope`;
//! - the protected-resource metadata of `/mcp` and `/sse`, and the
//!   authorization server's own metadata and registration, as an OAuth
//!   login needs them (a harness checks them before it says a login is
//!   wanted).
//!
//! [`AuthServer::watching`] also records whether any request carried a
//! given text in its `Authorization` header (a variable's reference sent
//! unexpanded); only that it was seen is kept, never the header's value.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::{any, get, post};

/// A running auth-wanting endpoint (served until the test's runtime ends).
pub struct AuthServer {
    /// Where it listens (127.0.0.1 only).
    pub addr: SocketAddr,
    seen: Arc<AtomicBool>,
}

impl AuthServer {
    /// Starts one on a free port of 127.0.0.1.
    pub async fn start() -> Self {
        Self::serve(None).await
    }

    /// Starts one that notes whether a request's `Authorization` header
    /// held `text` ([`AuthServer::saw`]).
    pub async fn watching(text: &str) -> Self {
        Self::serve(Some(text.to_owned())).await
    }

    /// Whether a request's `Authorization` header held the watched text.
    pub fn saw(&self) -> bool {
        self.seen.load(Ordering::Relaxed)
    }

    async fn serve(watched: Option<String>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let addr = listener.local_addr().expect("addr");
        let base = format!("http://{addr}");
        let seen = Arc::new(AtomicBool::new(false));
        // Whether a request carries credentials; notes the watched text.
        let look = {
            let seen = seen.clone();
            move |headers: &HeaderMap| {
                let value = headers.get(header::AUTHORIZATION);
                if let (Some(watched), Some(value)) = (&watched, value)
                    && value.to_str().is_ok_and(|v| v.contains(watched.as_str()))
                {
                    seen.store(true, Ordering::Relaxed);
                }
                value.is_some()
            }
        };
        let metadata = {
            let base = base.clone();
            move || {
                let base = base.clone();
                async move {
                    axum::Json(serde_json::json!({
                        "resource": format!("{base}/mcp"),
                        "authorization_servers": [base],
                    }))
                }
            }
        };
        let oauth = {
            let base = base.clone();
            let look = look.clone();
            move |headers: HeaderMap| {
                let challenge = if look(&headers) {
                    "Bearer error=\"invalid_token\"".to_owned()
                } else {
                    format!(
                        "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
                    )
                };
                async move {
                    (
                        StatusCode::UNAUTHORIZED,
                        [(header::WWW_AUTHENTICATE, challenge)],
                        "{\"error\":\"invalid_token\"}",
                    )
                        .into_response()
                }
            }
        };
        let bare = move |headers: HeaderMap| {
            look(&headers);
            async { StatusCode::UNAUTHORIZED.into_response() }
        };
        let issuer = {
            let base = base.clone();
            move || {
                let base = base.clone();
                async move {
                    axum::Json(serde_json::json!({
                        "issuer": base,
                        "authorization_endpoint": format!("{base}/authorize"),
                        "token_endpoint": format!("{base}/token"),
                        "registration_endpoint": format!("{base}/register"),
                        "response_types_supported": ["code"],
                        "grant_types_supported": ["authorization_code", "refresh_token"],
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported": ["none"],
                    }))
                }
            }
        };
        let register = |body: axum::body::Bytes| async move {
            let mut client: serde_json::Value =
                serde_json::from_slice(&body).unwrap_or_else(|_| serde_json::json!({}));
            client["client_id"] = "test-client".into();
            client["token_endpoint_auth_method"] = "none".into();
            (StatusCode::CREATED, axum::Json(client))
        };
        let router = axum::Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                get(issuer.clone()),
            )
            .route("/.well-known/openid-configuration", get(issuer))
            .route("/register", post(register))
            .route("/mcp", any(oauth))
            .route("/sse", any(bare.clone()))
            .route(
                "/.well-known/oauth-protected-resource/mcp",
                get(metadata.clone()),
            )
            .route("/.well-known/oauth-protected-resource/sse", get(metadata))
            .route("/plain/mcp", any(bare))
            .route(
                "/scoped/mcp",
                any(|| async {
                    (
                        StatusCode::FORBIDDEN,
                        [(
                            header::WWW_AUTHENTICATE,
                            "Bearer error=\"insufficient_scope\", scope=\"repo\"",
                        )],
                    )
                        .into_response()
                }),
            );
        tokio::spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Self { addr, seen }
    }
}

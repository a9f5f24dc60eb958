//! Body caps: a listener never holds more of a request than it allows.

use axum::body::{Body, Bytes};
use axum::extract::Request;

use crate::Refusal;

/// A hard bound on a request body, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BodyCap(pub usize);

impl BodyCap {
    /// Reads a whole body, refusing it as soon as it passes the cap (the rest
    /// is never read).
    /// A body that did not arrive in time ([`crate::serve`](mod@crate::serve)'s deadline) is
    /// [`Refusal::TimedOut`].
    pub async fn read(self, body: Body) -> Result<Bytes, Refusal> {
        axum::body::to_bytes(body, self.0)
            .await
            .map_err(|err| refusal_for(&err))
    }

    /// Wraps a request's body so that whoever reads it (a handler, rmcp's
    /// service) gets an error past the cap instead of more bytes.
    pub fn limit(self, request: Request) -> Request {
        request.map(|body| Body::new(http_body_util::Limited::new(body, self.0)))
    }
}

/// What a failed body read means: too slow if the deadline stopped it,
/// too large otherwise.
fn refusal_for(err: &(dyn std::error::Error + 'static)) -> Refusal {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(err);
    while let Some(e) = cause {
        if e.downcast_ref::<crate::serve::BodyTimeout>().is_some() {
            return Refusal::TimedOut;
        }
        cause = e.source();
    }
    Refusal::TooLarge
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bodies_past_the_cap_are_refused() {
        let cap = BodyCap(8);
        assert_eq!(
            cap.read(Body::from("12345678")).await.as_deref(),
            Ok(&b"12345678"[..])
        );
        assert_eq!(
            cap.read(Body::from("123456789")).await,
            Err(Refusal::TooLarge)
        );
        let limited = cap.limit(Request::new(Body::from(vec![0u8; 64])));
        assert!(
            axum::body::to_bytes(limited.into_body(), usize::MAX)
                .await
                .is_err()
        );
        let small = cap.limit(Request::new(Body::from("ok")));
        let read = axum::body::to_bytes(small.into_body(), usize::MAX).await;
        assert_eq!(read.ok().as_deref(), Some(&b"ok"[..]));
    }
}

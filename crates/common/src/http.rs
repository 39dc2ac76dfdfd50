//! The HTTP connection loop shared by the NameNode's and the DataNodes' web
//! servers (WebHDFS, the web UI, `/jmx`, `/prom`): an axum router served
//! over HTTP/1.1 with the limits that keep one hostile or slow client from
//! hurting the others.
//!
//! - at most `max_connections` connections at once (more wait in the
//!   listen backlog rather than using memory);
//! - the request head (request line and headers) must arrive within
//!   `head_timeout` and fit in `max_head_bytes` (Hadoop's
//!   `hadoop.http.max.request.header.size` is 64 KiB); a longer URL or
//!   header is answered 431 and the connection closed;
//! - on shutdown, connections finish the request in flight and close.
//!
//! Bodies (WebHDFS CREATE/APPEND data) are streamed by the handlers, which
//! set their own limits.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::ConnectInfo;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::http_path::Routed;

/// Limits of one HTTP server.
#[derive(Debug, Clone)]
pub struct HttpLimits {
    pub max_connections: usize,
    pub head_timeout: Duration,
    pub max_head_bytes: usize,
}

impl Default for HttpLimits {
    fn default() -> Self {
        HttpLimits {
            max_connections: 256,
            head_timeout: Duration::from_secs(30),
            max_head_bytes: 64 * 1024,
        }
    }
}

/// Whether a request comes with a body (WebHDFS CREATE or APPEND data).
fn declares_body(headers: &hyper::HeaderMap) -> bool {
    headers.contains_key(hyper::header::TRANSFER_ENCODING)
        || headers
            .get(hyper::header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.trim() != "0")
}

/// An answer given before the request's body was read (an error, a
/// redirect) ends the connection, and says so: hyper closes a connection
/// whose request body is left unread, and a client that was not told keeps
/// it for its next request, which then finds it dead ("Unexpected end of
/// file from server" in Java's HttpURLConnection, which does not retry a
/// streamed PUT). HDFS's DataNodes close after such answers too.
fn close_after(resp: &mut axum::response::Response) {
    resp.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
}

/// Routes a request whose path has dot segments by the path they resolve
/// to ([`crate::http_path`]); a path climbing above the root is answered
/// 400, as HDFS's web server answers it, and the connection closed: that
/// answer, if so.
fn route_dot_segments<B>(req: &mut hyper::Request<B>) -> Option<axum::response::Response> {
    use axum::response::IntoResponse;
    match crate::http_path::route(req.uri().path()) {
        Routed::AsSent => None,
        Routed::Resolved(path) => {
            let path_and_query = match req.uri().query() {
                Some(q) => format!("{path}?{q}"),
                None => path,
            };
            let mut parts = req.uri().clone().into_parts();
            // The resolved path is made of the sent path's own segments.
            if let Ok(pq) = path_and_query.parse() {
                parts.path_and_query = Some(pq);
                if let Ok(uri) = hyper::Uri::from_parts(parts) {
                    *req.uri_mut() = uri;
                }
            }
            None
        }
        Routed::AboveRoot => {
            let mut resp = (
                hyper::StatusCode::BAD_REQUEST,
                [(hyper::header::CONTENT_TYPE, "text/html;charset=iso-8859-1")],
                "<h1>Bad Message 400</h1><pre>reason: Bad Request</pre>",
            )
                .into_response();
            close_after(&mut resp);
            Some(resp)
        }
    }
}

/// Serves `router` on `listener` until `shutdown` is cancelled.
///
/// # Cancel safety
/// Cancel through `shutdown`.
pub async fn serve(
    listener: TcpListener,
    router: axum::Router,
    limits: HttpLimits,
    shutdown: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    // hyper refuses buffers under 8 KiB.
    let max_buf = limits.max_head_bytes.max(8192);
    loop {
        let permit = tokio::select! {
            _ = shutdown.cancelled() => return,
            p = permits.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => return },
        };
        let (stream, peer) = tokio::select! {
            _ = shutdown.cancelled() => return,
            r = listener.accept() => match r {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, usually: back off instead of spinning.
                    debug!(error = %e, "http accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        // Handlers see the peer as axum's `ConnectInfo`.
        let router = router.clone();
        let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo(peer));
            let has_body = declares_body(req.headers());
            let mut router = router.clone();
            let refused = route_dot_segments(&mut req);
            async move {
                if let Some(resp) = refused {
                    return Ok(resp);
                }
                let mut resp = tower_service::Service::call(&mut router, req).await?;
                if has_body && !resp.status().is_success() {
                    close_after(&mut resp);
                }
                Ok::<_, std::convert::Infallible>(resp)
            }
        });
        let shutdown = shutdown.clone();
        let head_timeout = limits.head_timeout;
        tokio::spawn(async move {
            let _permit = permit;
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(head_timeout)
                .max_buf_size(max_buf)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            let result = tokio::select! {
                r = conn.as_mut() => r,
                _ = shutdown.cancelled() => {
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(e) = result {
                debug!(error = %e, "http connection ended with an error");
            }
        });
    }
}

//! A minimal HTTP/1.1 responder on the DataNode's HTTP address: `GET
//! /metrics` returns [`crate::metrics::Metrics`] as JSON, anything else 404.
//! One request per connection; the request head is capped at 8 KiB and must
//! arrive within 10 s. Hand-written rather than a framework: one route, and
//! the DataNode builds faster without hyper's dependency tree.

use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tracing::debug;

use crate::metrics::Metrics;

/// Largest request head read.
const MAX_HEAD_BYTES: usize = 8 * 1024;
/// Time to send the request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once.
const MAX_CONNECTIONS: usize = 64;

/// Serves until `shutdown`.
///
/// # Cancel safety
/// Cancel through `shutdown`.
pub(crate) async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    shutdown: CancellationToken,
) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let permit = tokio::select! {
            _ = shutdown.cancelled() => return,
            p = permits.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => return },
        };
        let stream = tokio::select! {
            _ = shutdown.cancelled() => return,
            r = listener.accept() => match r {
                Ok((s, _)) => s,
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let _permit = permit;
            if let Err(e) = tokio::time::timeout(HEAD_TIMEOUT, respond(stream, &metrics)).await {
                debug!(error = %e, "http request timed out");
            }
        });
    }
}

async fn respond(mut stream: TcpStream, metrics: &Metrics) {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    loop {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.windows(4).any(|w| w == b"\r\n\r\n") || head.windows(2).any(|w| w == b"\n\n") {
            break;
        }
        if head.len() > MAX_HEAD_BYTES {
            let _ = stream
                .write_all(b"HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                .await;
            return;
        }
    }
    let line = head.split(|b| *b == b'\n').next().unwrap_or_default();
    let line = String::from_utf8_lossy(line);
    let mut parts = line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, ctype, body) = match (method, path) {
        ("GET", "/metrics") => ("200 OK", "application/json", metrics.to_json()),
        ("GET", _) => ("404 Not Found", "text/plain", "not found\n".to_string()),
        _ => (
            "405 Method Not Allowed",
            "text/plain",
            "method not allowed\n".to_string(),
        ),
    };
    let resp = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(resp.as_bytes()).await;
    let _ = stream.shutdown().await;
}

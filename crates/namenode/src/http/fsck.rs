//! `/fsck` (HDFS's `FsckServlet`): runs [`crate::fsck::fsck`] as the
//! request's caller and streams its text report as it is written, so a
//! long walk shows progress and a client that goes away stops it.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{ConnectInfo, State};
use axum::http::{header, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use tokio::sync::mpsc;

use crate::fsck::{FsckRequest, Output};
use crate::service::NameNodeState;

/// Chunks of the report waiting for the client.
const QUEUED_CHUNKS: usize = 16;

/// `GET /fsck?ugi=...&path=...&files=1...`.
pub async fn handle(
    State(state): State<Arc<NameNodeState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    uri: Uri,
) -> Response {
    let req = FsckRequest::from_query(uri.query().unwrap_or(""), Some(peer.ip()));
    let (tx, rx) = mpsc::channel::<Bytes>(QUEUED_CHUNKS);
    tokio::spawn(async move {
        let mut out = Output::new(tx);
        crate::fsck::fsck(state, req, &mut out).await;
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move {
        rx.recv()
            .await
            .map(|chunk| (Ok::<Bytes, std::io::Error>(chunk), rx))
    });
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        Body::from_stream(stream),
    )
        .into_response()
}

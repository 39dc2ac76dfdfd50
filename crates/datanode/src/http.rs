//! The DataNode's HTTP server (`dfs.datanode.http.address`, HDFS's port
//! 9864): `GET /metrics` is [`crate::metrics::Metrics`] as JSON;
//! `/webhdfs/v1` is WebHDFS's data half ([`crate::webhdfs`]); the status
//! page and HDFS's servlets are [`crate::web`]'s. The connection loop and
//! its limits are [`cairn_common::http::serve`]'s.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;

/// The routes of the DataNode's HTTP server.
fn router(metrics: Arc<Metrics>, web: crate::web::Web) -> Router {
    Router::new()
        .route("/metrics", get(metrics_json))
        .fallback(|| async { (StatusCode::NOT_FOUND, "not found\n") })
        .with_state(metrics)
        .merge(crate::webhdfs::routes())
        .merge(crate::web::routes(web))
}

async fn metrics_json(State(metrics): State<Arc<Metrics>>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        metrics.to_json(),
    )
}

/// Serves until `shutdown`.
///
/// # Cancel safety
/// Cancel through `shutdown`.
pub(crate) async fn serve(
    listener: TcpListener,
    metrics: Arc<Metrics>,
    web: crate::web::Web,
    shutdown: CancellationToken,
) {
    let limits = cairn_common::http::HttpLimits::default();
    cairn_common::http::serve(listener, router(metrics, web), limits, shutdown).await;
}

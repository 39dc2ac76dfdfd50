//! The NameNode's HTTP server (`dfs.namenode.http-address`, HDFS's port
//! 9870): WebHDFS under `/webhdfs/v1`; fsck on `/fsck`; the web UI (`/`,
//! `/datanodes`, `/explorer`); HDFS's servlets `/jmx`, `/prom`, `/conf`,
//! `/stacks`, `/logLevel` and `/startupProgress`; `/imagetransfer` for
//! `dfsadmin -fetchImage`. The connection loop and its limits are
//! [`cairn_common::http::serve`]'s.

pub mod fsck;
pub mod image_transfer;
pub mod jmx;
mod jmx_state;
pub mod prom;
pub mod status;
pub mod ui;
pub mod webhdfs;

use std::sync::Arc;

use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::service::NameNodeState;

/// The routes of the NameNode's HTTP server.
pub fn router(state: Arc<NameNodeState>) -> Router {
    Router::new()
        .route("/fsck", axum::routing::get(fsck::handle))
        .route("/webhdfs/v1", axum::routing::any(webhdfs::handle))
        .route("/webhdfs/v1/", axum::routing::any(webhdfs::handle))
        .route("/webhdfs/v1/{*path}", axum::routing::any(webhdfs::handle))
        .route("/jmx", get(jmx::handle))
        .route("/prom", get(prom::handle))
        .route("/imagetransfer", get(image_transfer::handle))
        .route("/startupProgress", get(startup_progress))
        .merge(ui::routes())
        .fallback(not_found)
        .with_state(state)
}

/// `GET /startupProgress`: HDFS's startup phases as JSON (the web UI's
/// "Startup Progress" tab, and scripts that wait for a restart).
async fn startup_progress(
    axum::extract::State(state): axum::extract::State<Arc<NameNodeState>>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let body = state
        .startup_progress
        .to_json(&state.startup_safe_mode, std::time::Instant::now());
    (
        [
            (
                axum::http::header::CONTENT_TYPE,
                "application/json;charset=utf-8",
            ),
            (axum::http::header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}

/// No page at this path: an HTML error page, as HDFS's web server answers.
async fn not_found(uri: axum::http::Uri) -> axum::response::Response {
    use axum::response::IntoResponse;
    let path = cairn_common::web::page::esc(uri.path());
    let page = format!(
        "<html>\n<head>\n<title>Error 404 Not Found</title>\n</head>\n\
         <body><h2>HTTP ERROR 404 Not Found</h2>\n<p>URI: {path}</p>\n</body>\n</html>\n"
    );
    (
        axum::http::StatusCode::NOT_FOUND,
        [(axum::http::header::CONTENT_TYPE, "text/html;charset=utf-8")],
        page,
    )
        .into_response()
}

/// A 500 answer naming what failed.
fn internal_error(message: &str) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        axum::http::StatusCode::INTERNAL_SERVER_ERROR,
        format!("{message}\n"),
    )
        .into_response()
}

/// Serves HTTP on `listener` until `shutdown`.
///
/// # Cancel safety
/// Cancel through `shutdown`.
pub async fn serve(state: Arc<NameNodeState>, listener: TcpListener, shutdown: CancellationToken) {
    let limits = cairn_common::http::HttpLimits::default();
    cairn_common::http::serve(listener, router(state), limits, shutdown).await;
}

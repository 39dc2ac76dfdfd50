//! The NameNode's web UI, server-rendered HTML (no scripts, no external
//! resources): the overview an operator opens first (`/`), the DataNodes
//! (`/datanodes`), the directory browser (`/explorer`, in `browse`), the
//! configuration (`/config`, over HDFS's `/conf`) and the log levels
//! (`/logLevel`). Every figure is read from the NameNode's state when the
//! page is asked for; `/jmx` and the RPC answers show the same numbers.

mod browse;

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use cairn_common::web::page::{self, bytes, esc, html, usage_bar, utc_time};

use super::jmx::version;
use super::status::{self, ClusterStatus};
use crate::service::NameNodeState;

/// The navigation bar of every NameNode page.
pub(crate) const NAV: &[(&str, &str)] = &[
    ("/", "Overview"),
    ("/datanodes", "Datanodes"),
    ("/explorer", "Browse the file system"),
    ("/config", "Configuration"),
    ("/logLevel", "Log level"),
    ("/jmx", "Metrics (JMX)"),
    ("/stacks", "Threads"),
];

const BRAND: &str = "Cairn NameNode";

pub(crate) fn render(title: &str, active: &str, body: &str) -> Response {
    html(page::page(BRAND, title, NAV, active, body))
}

/// The UI's routes and HDFS's servlets that are not metrics.
pub fn routes() -> Router<Arc<NameNodeState>> {
    Router::new()
        .route("/", get(overview))
        .route("/index.html", get(|| async { Redirect::permanent("/") }))
        .route(
            "/dfshealth.html",
            get(|| async { Redirect::permanent("/") }),
        )
        .route("/datanodes", get(datanodes))
        .route("/explorer", get(browse::explorer))
        .route(
            "/explorer.html",
            get(|| async { Redirect::permanent("/explorer") }),
        )
        .route("/isActive", get(is_active))
        .route("/config", get(config_page))
        .route("/conf", get(conf))
        .route("/logLevel", get(log_level))
        .route(
            "/stacks",
            get(|| async { cairn_common::web::stacks::respond("NameNode") }),
        )
}

/// HDFS's `IsActiveServlet` (`/isActive`), which load balancers and
/// proxies poll to find the active NameNode of a nameservice: 200 on the
/// active one, 405 elsewhere.
async fn is_active(State(state): State<Arc<NameNodeState>>) -> Response {
    if state.ha.get() == crate::ha::HaServiceState::Active {
        (StatusCode::OK, "I am Active!").into_response()
    } else {
        (StatusCode::METHOD_NOT_ALLOWED, "I am not Active!").into_response()
    }
}

/// A table of (id, label, HTML value) rows; the ids let tests and
/// scripts find a figure.
fn figures(rows: &[(&str, &str, String)]) -> String {
    let mut out = String::from("<table class=\"kv\">");
    for (id, label, v) in rows {
        let _ = write!(
            out,
            "<tr><th>{}</th><td id=\"{id}\">{v}</td></tr>",
            esc(label)
        );
    }
    out.push_str("</table>");
    out
}

/// A count that is bad when not zero.
fn alarm(n: u64) -> String {
    if n == 0 {
        "0".to_string()
    } else {
        format!("<span class=\"bad\">{n}</span>")
    }
}

fn millis(us: f64) -> String {
    format!("{:.3} ms", us / 1000.0)
}

async fn overview(State(state): State<Arc<NameNodeState>>) -> Response {
    let s = match status::read(&state) {
        Ok(s) => s,
        Err(e) => return super::internal_error(&e.to_string()),
    };
    let mut body = String::new();
    let safe = if s.safe_mode {
        format!(
            "<span class=\"bad\">ON</span> <span class=\"muted\">{}</span>",
            esc(&s.safe_mode_tip)
        )
    } else {
        "<span class=\"ok\">off</span>".to_string()
    };
    body.push_str(&figures(&[
        ("cluster-id", "Cluster ID", esc(&state.cluster_id)),
        ("block-pool-id", "Block pool ID", esc(&state.block_pool_id)),
        ("version", "Version", esc(&version())),
        ("started", "Started", utc_time(state.started_ms)),
        ("safe-mode", "Safe mode", safe),
        ("security", "Security", "off (simple authentication)".into()),
    ]));
    body.push_str("<h2>Capacity</h2>");
    body.push_str(&figures(&[
        (
            "capacity-total",
            "Configured capacity",
            format!(
                "<span data-bytes=\"{}\">{}</span>",
                s.capacity,
                bytes(s.capacity)
            ),
        ),
        (
            "capacity-used",
            "DFS used",
            format!("{} {}", bytes(s.used), usage_bar(s.used, s.capacity)),
        ),
        ("capacity-non-dfs", "Non DFS used", bytes(s.non_dfs_used)),
        (
            "capacity-remaining",
            "DFS remaining",
            format!("{} ({:.2}%)", bytes(s.remaining), s.percent_remaining()),
        ),
        (
            "block-pool-used",
            "Block pool used",
            bytes(s.block_pool_used),
        ),
    ]));
    body.push_str("<h2>Namespace and blocks</h2>");
    let rd = &s.redundancy;
    body.push_str(&figures(&[
        (
            "files-total",
            "Files and directories",
            s.files_total.to_string(),
        ),
        ("blocks-total", "Blocks", s.blocks_total.to_string()),
        (
            "files-under-construction",
            "Files being written",
            s.files_under_construction.to_string(),
        ),
        (
            "under-replicated",
            "Under-replicated blocks",
            alarm(rd.low_redundancy),
        ),
        (
            "corrupt-blocks",
            "Blocks with corrupt replicas",
            alarm(rd.corrupt),
        ),
        ("missing-blocks", "Missing blocks", alarm(rd.missing)),
        (
            "pending-replication",
            "Blocks being copied",
            s.pending_replication.to_string(),
        ),
        (
            "pending-deletion",
            "Replicas to delete",
            rd.pending_deletion.to_string(),
        ),
    ]));
    body.push_str("<h2>DataNodes</h2>");
    body.push_str(&figures(&[
        (
            "live-nodes",
            "Live",
            format!("<a href=\"/datanodes\">{}</a>", s.live().count()),
        ),
        ("dead-nodes", "Dead", alarm(s.dead().count() as u64)),
        (
            "decommissioning-nodes",
            "Decommissioning",
            s.decommissioning().count().to_string(),
        ),
        (
            "volume-failures",
            "Failed volumes",
            alarm(s.volume_failures()),
        ),
        (
            "total-load",
            "Transfers in progress",
            s.total_load().to_string(),
        ),
    ]));
    body.push_str(&journal_section(&state, &s));
    render("Overview", "/", &body)
}

fn journal_section(state: &NameNodeState, s: &ClusterStatus) -> String {
    let j = &state.config.journal.metrics;
    let sync = j.sync.snapshot();
    let batches = j.batch_edits.snapshot();
    let rpc = &state.rpc_metrics;
    let mut out = String::from("<h2>Journal</h2>");
    out.push_str(&figures(&[
        (
            "current-txid",
            "Current transaction id",
            s.last_txid.to_string(),
        ),
        (
            "checkpoint-txid",
            "Last checkpoint",
            format!(
                "txid {} at {}",
                s.checkpoint_txid,
                utc_time(s.checkpoint_ms)
            ),
        ),
        (
            "txns-since-checkpoint",
            "Transactions since checkpoint",
            s.last_txid.saturating_sub(s.checkpoint_txid).to_string(),
        ),
        (
            "journal-dirs",
            "Edit log directories",
            esc(&state
                .config
                .name_dirs
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")),
        ),
        ("syncs", "Syncs (fdatasync batches)", sync.count.to_string()),
        (
            "sync-latency",
            "Sync latency: mean / p50 / p99",
            format!(
                "{} / {} / {}",
                millis(j.sync.mean()),
                millis(sync.quantile(0.5)),
                millis(sync.quantile(0.99))
            ),
        ),
        (
            "batch-size",
            "Edits per sync: mean / max bucket",
            format!(
                "{:.2} / ≤{}",
                j.batch_edits.mean(),
                batches.buckets.iter().rev().find(|(_, n)| *n > 0).map_or(
                    "0".to_string(),
                    |(b, _)| if *b == u64::MAX {
                        "∞".into()
                    } else {
                        b.to_string()
                    }
                )
            ),
        ),
    ]));
    out.push_str("<h2>RPC</h2>");
    out.push_str(&figures(&[
        (
            "rpc-calls",
            "Calls answered",
            rpc.processing.count().to_string(),
        ),
        (
            "rpc-processing",
            "Processing time: mean",
            millis(rpc.processing.mean()),
        ),
        ("rpc-queue", "Queue time: mean", millis(rpc.queue.mean())),
        (
            "rpc-connections",
            "Open connections",
            rpc.open_connections
                .load(std::sync::atomic::Ordering::Relaxed)
                .to_string(),
        ),
    ]));
    out
}

async fn datanodes(State(state): State<Arc<NameNodeState>>) -> Response {
    let s = match status::read(&state) {
        Ok(s) => s,
        Err(e) => return super::internal_error(&e.to_string()),
    };
    let mut body = format!(
        "<p>{} live, {} dead, {} decommissioning.</p>",
        s.live().count(),
        s.dead().count(),
        s.decommissioning().count()
    );
    body.push_str(
        "<table id=\"datanodes\"><tr><th>Node</th><th>State</th><th>Last contact</th>\
         <th>Capacity</th><th>Used</th><th>Non DFS used</th><th>Remaining</th>\
         <th>Blocks</th><th>Block pool used</th><th>Failed volumes</th><th>Transfers</th></tr>",
    );
    for n in &s.nodes {
        let state_word = if n.alive {
            format!("<span class=\"ok\">{}</span>", n.admin_word())
        } else {
            format!("<span class=\"bad\">Dead</span> ({})", n.admin_word())
        };
        let _ = write!(
            body,
            "<tr data-uuid=\"{}\"><td><a href=\"http://{}/\">{}</a> <span class=\"muted\">({})</span></td>\
             <td>{state_word}</td><td class=\"num\">{} s</td><td class=\"num\">{}</td>\
             <td class=\"num\">{} {}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num blocks\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            esc(&n.uuid),
            esc(&n.info_addr),
            esc(&n.xfer_addr),
            esc(&n.host_name),
            n.last_contact_s,
            bytes(n.capacity),
            bytes(n.dfs_used),
            usage_bar(n.dfs_used, n.capacity),
            bytes(n.non_dfs_used),
            bytes(n.remaining),
            n.blocks,
            bytes(n.block_pool_used),
            alarm(n.failed_volumes),
            n.xceivers,
        );
    }
    body.push_str("</table>");
    let decom: Vec<_> = s.decommissioning().collect();
    body.push_str("<h2>Decommissioning</h2>");
    if decom.is_empty() {
        body.push_str("<p class=\"muted\">No DataNode is being decommissioned.</p>");
    } else {
        body.push_str(
            "<table><tr><th>Node</th><th>Blocks</th><th>Still to copy</th><th>Progress</th></tr>",
        );
        for n in decom {
            let done = n.blocks.saturating_sub(n.blocks_to_copy);
            let _ = write!(
                body,
                "<tr><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(&n.xfer_addr),
                n.blocks,
                n.blocks_to_copy,
                usage_bar(done, n.blocks.max(1))
            );
        }
        body.push_str("</table>");
    }
    render("Datanodes", "/datanodes", &body)
}

async fn conf(
    State(state): State<Arc<NameNodeState>>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    cairn_common::web::conf::respond(&state.config.site, &q, &headers)
}

async fn config_page(State(state): State<Arc<NameNodeState>>) -> Response {
    let mut body = String::from(
        "<p>The properties this NameNode was started with, and those it read at their \
         built-in defaults. Raw: \
         <a href=\"/conf\">/conf</a> (XML), <a href=\"/conf?format=json\">/conf?format=json</a>.</p>\
         <table id=\"config\"><tr><th>Name</th><th>Value</th><th>Source</th></tr>",
    );
    for (k, v, origin) in state.config.site.effective() {
        let source = origin.to_string();
        let _ = write!(
            body,
            "<tr><td><code>{}</code></td><td><code>{}</code></td><td class=\"muted\">{}</td></tr>",
            esc(&k),
            esc(&v),
            esc(&source)
        );
    }
    body.push_str("</table>");
    render("Configuration", "/config", &body)
}

async fn log_level(Query(q): Query<HashMap<String, String>>) -> Response {
    render(
        "Log level",
        "/logLevel",
        &cairn_common::web::loglevel::body(&q),
    )
}

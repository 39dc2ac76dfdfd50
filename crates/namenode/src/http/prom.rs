//! `GET /prom`: the NameNode's metrics2 records in the Prometheus text
//! format, named as HDFS's `PrometheusMetricsSink` names them
//! (`fs_namesystem_capacity_total{context="dfs",hostname=...}`), then
//! Cairn's own figures as histograms: journal sync latency
//! (`cairn_journal_sync_seconds`), group-commit batch sizes
//! (`cairn_journal_batch_edits`), RPC queue time and per-method processing
//! time (`cairn_rpc_processing_seconds{method}`) with quantile estimates
//! (`cairn_rpc_latency_quantile_seconds{method,quantile}`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use cairn_common::metrics::{PromWriter, PROM_CONTENT_TYPE};

use super::jmx::{hostname, records};
use super::status;
use crate::service::NameNodeState;

const MICROS: f64 = 1e6;

/// The whole exposition text.
///
/// # Errors
/// When a lock is poisoned.
pub fn text(state: &NameNodeState) -> Result<String, cairn_rpc::CallError> {
    let s = status::read(state)?;
    let host = hostname();
    let mut w = PromWriter::new();
    for r in records(state, &s, &host) {
        r.write_prom(&mut w);
    }
    let j = &state.config.journal.metrics;
    w.histogram(
        "cairn_journal_sync_seconds",
        "Time to write and fdatasync one group-commit batch of the edit log.",
        &[],
        &j.sync.snapshot(),
        MICROS,
    );
    w.histogram(
        "cairn_journal_batch_edits",
        "Edits per group-commit batch (one fdatasync each).",
        &[],
        &j.batch_edits.snapshot(),
        1.0,
    );
    let rpc = &state.rpc_metrics;
    w.histogram(
        "cairn_rpc_queue_seconds",
        "Time from a call's frame to an RPC handler taking it.",
        &[],
        &rpc.enqueue.snapshot(),
        MICROS,
    );
    // Methods never called are left out: HDFS's detailed record above
    // lists them, and a histogram of nothing for each would make every
    // scrape ten times larger.
    let methods: Vec<_> = rpc
        .methods()
        .into_iter()
        .filter(|m| m.processing.count() > 0)
        .collect();
    for m in &methods {
        w.histogram(
            "cairn_rpc_processing_seconds",
            "Time an RPC handler ran a call, by method.",
            &[("method", &m.name)],
            &m.processing.snapshot(),
            MICROS,
        );
    }
    for m in &methods {
        w.quantiles(
            "cairn_rpc_latency_quantile_seconds",
            "Estimated processing-time quantiles by method (from the histogram).",
            &[("method", &m.name)],
            &m.processing.snapshot(),
            MICROS,
        );
    }
    Ok(w.finish())
}

/// `GET /prom`.
pub async fn handle(State(state): State<Arc<NameNodeState>>) -> Response {
    match text(&state) {
        Ok(t) => ([(header::CONTENT_TYPE, PROM_CONTENT_TYPE)], t).into_response(),
        Err(e) => super::internal_error(&e.to_string()),
    }
}

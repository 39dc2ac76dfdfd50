//! The DataNode's web pages and HDFS's servlets on its HTTP server: a
//! status page (`/`), `/jmx` (`DataNodeActivity-<host>-<port>`,
//! `FSDatasetState`, `DataNodeInfo`, as HDFS names them), `/prom` (the
//! same records plus every Cairn counter of [`crate::metrics`] and the
//! read amplification), `/conf`, `/stacks` and `/logLevel`.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{header, HeaderMap};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use cairn_common::metrics::{PromWriter, PROM_CONTENT_TYPE};
use cairn_common::web::jmx::{self, Bean, Record};
use cairn_common::web::page::{self, bytes, esc, html, kv_table, usage_bar};

use crate::metrics::Metrics;
use crate::storage::Usage;
use crate::Shared;

/// What the pages read.
#[derive(Clone)]
pub(crate) struct Web {
    pub shared: Arc<Shared>,
    /// The bound transfer address (names the activity bean, as in HDFS).
    pub xfer: SocketAddr,
    pub ipc: SocketAddr,
    pub http: SocketAddr,
    /// The IPC server's figures (HDFS's RpcActivity and RpcDetailedActivity).
    pub ipc_metrics: Arc<cairn_rpc::metrics::RpcMetrics>,
}

const NAV: &[(&str, &str)] = &[
    ("/", "Status"),
    ("/logLevel", "Log level"),
    ("/conf", "Configuration"),
    ("/jmx", "Metrics (JMX)"),
    ("/prom", "Prometheus"),
    ("/stacks", "Threads"),
];

/// The routes besides `/metrics`.
pub(crate) fn routes(web: Web) -> Router {
    Router::new()
        .route("/", get(status_page))
        .route("/index.html", get(status_page))
        .route("/jmx", get(jmx_handler))
        .route("/prom", get(prom_handler))
        .route("/conf", get(conf))
        .route(
            "/stacks",
            get(|| async { cairn_common::web::stacks::respond("DataNode") }),
        )
        .route("/logLevel", get(log_level))
        .with_state(web)
}

fn load(c: &std::sync::atomic::AtomicU64) -> u64 {
    Metrics::get(c)
}

/// Bytes sent for each byte readers asked for (1.0 when nothing was read).
fn read_amplification(m: &Metrics) -> f64 {
    let asked = load(&m.read_bytes_requested);
    if asked == 0 {
        1.0
    } else {
        load(&m.read_bytes_sent) as f64 / asked as f64
    }
}

impl Web {
    fn usage(&self) -> Usage {
        self.shared.storage.usage().unwrap_or_default()
    }

    fn records(&self, usage: &Usage, host: &str) -> Vec<Record> {
        let m = &self.shared.metrics;
        let bean = format!("DataNodeActivity-{}-{}", self.xfer.ip(), self.xfer.port());
        let mut a = Record::new(&bean, "DataNodeActivity", "dfs", host).tag("SessionId", "");
        a.counter("BytesWritten", load(&m.write_bytes_received));
        a.counter("BytesRead", load(&m.read_bytes_sent));
        a.counter("BlocksWritten", load(&m.blocks_finalized));
        a.counter("BlocksRead", load(&m.read_ops));
        a.counter("BlocksReplicated", load(&m.blocks_transferred));
        a.counter("BlocksRemoved", load(&m.blocks_deleted));
        a.counter("BlockVerificationFailures", load(&m.read_checksum_errors));
        // HDFS's rates: calls and their mean time.
        for (name, calls, micros) in [
            ("ReadBlockOp", &m.read_ops, &m.read_op_micros),
            ("WriteBlockOp", &m.write_ops, &m.write_op_micros),
            (
                "BlockChecksumOp",
                &m.block_checksum_ops,
                &m.block_checksum_micros,
            ),
            ("Heartbeats", &m.heartbeats_sent, &m.heartbeat_micros),
            (
                "BlockReports",
                &m.block_reports_sent,
                &m.block_report_micros,
            ),
            ("IncrementalBlockReports", &m.ibr_calls, &m.ibr_micros),
        ] {
            a.rate(name, load(calls), load(micros));
        }
        a.counter("FsyncCount", load(&m.fsync_calls));
        a.rate("FsyncNanos", load(&m.fsync_calls), load(&m.fsync_micros));
        a.counter("VolumeFailures", 0);
        a.gauge("DataNodeActiveXceiversCount", load(&m.xceivers_active));
        let mut f = Record::new("FSDatasetState", "FSDatasetState", "FSDatasetState", host).tag(
            "StorageInfo",
            &format!(
                "FSDataset{{dirpath='[{}]'}}",
                self.shared.storage.data_dir().display()
            ),
        );
        f.modeler_type =
            "org.apache.hadoop.hdfs.server.datanode.fsdataset.impl.FsDatasetImpl".into();
        f.gauge("Capacity", usage.capacity);
        f.gauge("DfsUsed", usage.dfs_used);
        f.gauge("Remaining", usage.remaining);
        f.gauge("NumFailedVolumes", 0u64);
        f.gauge("LastVolumeFailureDate", 0u64);
        f.gauge("EstimatedCapacityLostTotal", 0u64);
        f.gauge("CacheUsed", 0u64);
        f.gauge("CacheCapacity", 0u64);
        f.gauge("NumBlocksCached", 0u64);
        vec![
            a,
            f,
            self.ipc_metrics.activity_record(host),
            self.ipc_metrics.detailed_record(host),
        ]
    }

    fn beans(&self) -> Vec<Bean> {
        let usage = self.usage();
        let host = cairn_common::web::hostname();
        let mut beans: Vec<Bean> = self
            .records(&usage, &host)
            .iter()
            .map(|r| r.to_bean("DataNode"))
            .collect();
        // One nameservice: every NameNode serves its one block pool.
        let pool = self
            .shared
            .pools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .first()
            .cloned()
            .unwrap_or_default();
        let nns: serde_json::Map<String, serde_json::Value> = self
            .shared
            .serving()
            .iter()
            .map(|a| (a.to_string(), serde_json::Value::from(pool.as_str())))
            .collect();
        beans.push(
            Bean::new(
                "Hadoop:service=DataNode,name=DataNodeInfo",
                "org.apache.hadoop.hdfs.server.datanode.DataNode",
            )
            .attr("Version", crate::namenode_link::SOFTWARE_VERSION)
            .attr("SoftwareVersion", crate::namenode_link::SOFTWARE_VERSION)
            .attr(
                "DatanodeUuid",
                self.shared.storage.datanode_uuid().to_string(),
            )
            .attr("DatanodeHostname", host.as_str())
            .attr("XceiverCount", load(&self.shared.metrics.xceivers_active))
            .attr("DataPort", self.xfer.port())
            .attr("RpcPort", self.ipc.port().to_string())
            .attr("HttpPort", self.http.port().to_string())
            .attr(
                "NamenodeAddresses",
                serde_json::Value::Object(nns).to_string(),
            )
            .attr(
                "ReadAmplification",
                read_amplification(&self.shared.metrics),
            )
            .attr("DNStartedTimeInMillis", self.started_ms())
            .attr(
                "ActiveTransferThreadCount",
                load(&self.shared.metrics.xceivers_active),
            )
            .attr("VolumeInfo", self.volume_info(&usage))
            .attr("SecurityEnabled", false)
            .attr("SlowDisks", serde_json::Value::Null)
            .attr("SendPacketDownstreamAvgInfo", serde_json::Value::Null)
            // No disk balancer here: never a plan.
            .attr(
                "DiskBalancerStatus",
                r#"{"currentState":[],"result":"NO_PLAN","planID":"","planFile":""}"#,
            ),
        );
        beans
    }

    /// When the DataNode started, milliseconds since the epoch.
    fn started_ms(&self) -> u64 {
        let up = self.shared.started.elapsed().as_millis() as u64;
        cairn_common::clock::now_ms().saturating_sub(up)
    }

    /// HDFS's `VolumeInfo`: the one data directory's figures, as JSON text.
    fn volume_info(&self, usage: &Usage) -> String {
        let storage = &self.shared.storage;
        let volume = serde_json::json!({
            "numBlocks": storage.replica_count(),
            "usedSpace": usage.dfs_used,
            "freeSpace": usage.remaining,
            "reservedSpace": storage.reserved_bytes(),
            "storageType": self.shared.config.storage_type.name(),
            "reservedSpaceForReplicas": 0,
        });
        let mut m = serde_json::Map::new();
        m.insert(storage.data_dir().display().to_string(), volume);
        serde_json::Value::Object(m).to_string()
    }

    fn prom(&self) -> String {
        let usage = self.usage();
        let host = cairn_common::web::hostname();
        let mut w = PromWriter::new();
        for r in self.records(&usage, &host) {
            r.write_prom(&mut w);
        }
        let m = &self.shared.metrics;
        for (name, value) in m.pairs() {
            w.sample(
                &format!("cairn_datanode_{name}"),
                "counter",
                &[],
                value as f64,
            );
        }
        w.sample(
            "cairn_datanode_read_amplification",
            "gauge",
            &[],
            read_amplification(m),
        );
        w.finish()
    }
}

async fn jmx_handler(State(web): State<Web>, Query(q): Query<HashMap<String, String>>) -> Response {
    let beans = tokio::task::spawn_blocking(move || web.beans())
        .await
        .unwrap_or_default();
    jmx::respond(
        &beans,
        q.get("qry").map(String::as_str),
        q.get("get").map(String::as_str),
    )
}

async fn prom_handler(State(web): State<Web>) -> Response {
    let text = tokio::task::spawn_blocking(move || web.prom())
        .await
        .unwrap_or_default();
    ([(header::CONTENT_TYPE, PROM_CONTENT_TYPE)], text).into_response()
}

async fn conf(
    State(web): State<Web>,
    Query(q): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Response {
    cairn_common::web::conf::respond(&web.shared.config.site, &q, &headers)
}

async fn log_level(Query(q): Query<HashMap<String, String>>) -> Response {
    html(page::page(
        "Cairn DataNode",
        "Log level",
        NAV,
        "/logLevel",
        &cairn_common::web::loglevel::body(&q),
    ))
}

async fn status_page(State(web): State<Web>) -> Response {
    let w2 = web.clone();
    let (usage, replicas) = tokio::task::spawn_blocking(move || {
        (w2.usage(), w2.shared.storage.finalized_replicas().len())
    })
    .await
    .unwrap_or_default();
    let m = &web.shared.metrics;
    let mut body = kv_table(&[
        (
            "DataNode UUID",
            format!(
                "<span id=\"uuid\">{}</span>",
                esc(&web.shared.storage.datanode_uuid().to_string())
            ),
        ),
        (
            "NameNode",
            esc(&web
                .shared
                .serving()
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")),
        ),
        ("Data transfer", web.xfer.to_string()),
        ("IPC", web.ipc.to_string()),
        (
            "Data directory",
            esc(&web.shared.storage.data_dir().display().to_string()),
        ),
        (
            "Version",
            crate::namenode_link::SOFTWARE_VERSION.to_string(),
        ),
        (
            "Registrations / heartbeats",
            format!("{} / {}", load(&m.registrations), load(&m.heartbeats_sent)),
        ),
    ]);
    body.push_str("<h2>Storage</h2>");
    body.push_str(&kv_table(&[
        (
            "Capacity",
            format!("<span id=\"capacity\">{}</span>", bytes(usage.capacity)),
        ),
        (
            "DFS used",
            format!(
                "{} {}",
                bytes(usage.dfs_used),
                usage_bar(usage.dfs_used, usage.capacity)
            ),
        ),
        ("Non DFS used", bytes(usage.non_dfs_used)),
        ("Remaining", bytes(usage.remaining)),
        (
            "Finalized replicas",
            format!("<span id=\"replicas\">{replicas}</span>"),
        ),
        ("Failed volumes", "0".into()),
    ]));
    body.push_str("<h2>Activity</h2>");
    body.push_str(&kv_table(&[
        ("Blocks written", load(&m.blocks_finalized).to_string()),
        ("Bytes received", bytes(load(&m.write_bytes_received))),
        ("Reads", load(&m.read_ops).to_string()),
        ("Bytes sent", bytes(load(&m.read_bytes_sent))),
        (
            "Read amplification",
            format!(
                "<span id=\"read-amplification\">{:.3}</span>",
                read_amplification(m)
            ),
        ),
        ("Transfers now", load(&m.xceivers_active).to_string()),
        (
            "Checksum errors (read / write)",
            format!(
                "{} / {}",
                load(&m.read_checksum_errors),
                load(&m.write_checksum_errors)
            ),
        ),
        (
            "Replicas quarantined",
            load(&m.replicas_quarantined).to_string(),
        ),
    ]));
    let mut all =
        String::from("<h2>All counters</h2><table><tr><th>Counter</th><th>Value</th></tr>");
    for (k, v) in m.pairs() {
        let _ = write!(
            all,
            "<tr><td><code>{k}</code></td><td class=\"num\">{v}</td></tr>"
        );
    }
    all.push_str("</table>");
    body.push_str(&all);
    html(page::page(
        "Cairn DataNode",
        "DataNode status",
        NAV,
        "/",
        &body,
    ))
}

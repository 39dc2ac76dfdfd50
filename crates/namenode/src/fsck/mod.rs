//! fsck: HDFS's `NamenodeFsck`, served on the NameNode's `/fsck` (the
//! servlet Java's `hdfs fsck` (`DFSck`) and `cairn fsck` read). It walks the
//! tree under a path as the caller, page by page of `dfs.ls.limit` entries
//! (the namespace lock is held for one page, the block manager's for that
//! page's blocks), and streams HDFS's text report: the optional per-file
//! lines (`files`, `blocks`, `locations`, `racks`, `replicadetails`,
//! `openforwrite`), the problems it finds (under-replicated, missing and
//! corrupt blocks), the summary, and the last line `DFSck` reads for its
//! exit status ("... is HEALTHY", "... is CORRUPT", "... does not exist",
//! "... FAILED"). Also `listcorruptfileblocks` (superuser), `blockId`
//! (superuser) and, for corrupt files, `delete` and `move` (to
//! `/lost+found`).
//!
//! Permissions are the caller's, as in HDFS: listing needs read and
//! execute on each directory, each file needs read access.

mod copy;
mod facts;
mod lookups;
mod policies;
mod repair;
mod summary;
mod walk;

pub(crate) use lookups::corrupt_file_blocks;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use tokio::sync::mpsc;

use crate::javafmt::java_date;
use crate::service::NameNodeState;

pub use summary::Tally;

/// The status words `DFSck` looks for at the end of the report.
pub const HEALTHY_STATUS: &str = "is HEALTHY";
pub const CORRUPT_STATUS: &str = "is CORRUPT";
pub const NONEXISTENT_STATUS: &str = "does not exist";
pub const FAILURE_STATUS: &str = "FAILED";

/// The caller when a request names none (`hadoop.http.staticuser.user`).
pub const STATIC_USER: &str = "dr.who";

/// One fsck request: the servlet's query parameters.
#[derive(Debug, Clone, Default)]
pub struct FsckRequest {
    pub path: String,
    pub user: String,
    pub remote: Option<IpAddr>,
    pub show_files: bool,
    pub show_blocks: bool,
    pub show_locations: bool,
    pub show_racks: bool,
    pub show_replica_details: bool,
    pub show_upgrade_domains: bool,
    pub show_maintenance: bool,
    pub show_open_files: bool,
    pub show_storage_policies: bool,
    pub show_progress: bool,
    pub list_corrupt_file_blocks: bool,
    pub start_block_after: Option<String>,
    pub include_snapshots: bool,
    pub block_ids: Option<Vec<String>>,
    pub do_move: bool,
    pub do_delete: bool,
    pub do_replicate: bool,
}

impl FsckRequest {
    /// From the query string, as `NamenodeFsck` reads its parameter map:
    /// a flag is on when its name is present, whatever its value; names
    /// are case-sensitive. The caller is `user.name`, else the first name
    /// of `ugi` (what `DFSck` sends), else the static web user.
    pub fn from_query(query: &str, remote: Option<IpAddr>) -> FsckRequest {
        let mut params: HashMap<String, String> = HashMap::new();
        for (k, v) in form_urlencoded::parse(query.as_bytes()) {
            // A servlet's getParameter gives the first value.
            params
                .entry(k.into_owned())
                .or_insert_with(|| v.into_owned());
        }
        let has = |k: &str| params.contains_key(k);
        let user = params
            .get("user.name")
            .cloned()
            .or_else(|| {
                params
                    .get("ugi")
                    .map(|u| u.split(',').next().unwrap_or_default().to_string())
            })
            .filter(|u| !u.is_empty())
            .unwrap_or_else(|| STATIC_USER.to_string());
        FsckRequest {
            path: params.get("path").cloned().unwrap_or_else(|| "/".into()),
            user,
            remote,
            show_files: has("files"),
            show_blocks: has("blocks"),
            show_locations: has("locations"),
            show_racks: has("racks"),
            show_replica_details: has("replicadetails"),
            show_upgrade_domains: has("upgradedomains"),
            show_maintenance: has("maintenance"),
            show_open_files: has("openforwrite"),
            show_storage_policies: has("storagepolicies"),
            show_progress: has("showprogress"),
            list_corrupt_file_blocks: has("listcorruptfileblocks"),
            start_block_after: params.get("startblockafter").cloned(),
            include_snapshots: has("includeSnapshots"),
            block_ids: params
                .get("blockId")
                .map(|ids| ids.split(' ').map(str::to_string).collect()),
            do_move: has("move"),
            do_delete: has("delete"),
            do_replicate: has("replicate"),
        }
    }

    /// `UserGroupInformation.toString()` of the caller.
    fn ugi(&self) -> String {
        format!("{} (auth:SIMPLE)", self.user)
    }

    /// `InetAddress.toString()` of the client: "/1.2.3.4".
    fn remote_text(&self) -> String {
        self.remote
            .map_or_else(|| "/127.0.0.1".into(), |ip| format!("/{ip}"))
    }
}

/// The report as it is written: buffered, sent to the HTTP body in chunks.
pub struct Output {
    tx: mpsc::Sender<Bytes>,
    buf: String,
    /// The client went away: stop working for it.
    gone: bool,
}

/// Flush once this much is buffered.
const CHUNK: usize = 32 * 1024;

impl Output {
    pub fn new(tx: mpsc::Sender<Bytes>) -> Output {
        Output {
            tx,
            buf: String::new(),
            gone: false,
        }
    }

    pub fn print(&mut self, s: &str) {
        self.buf.push_str(s);
    }

    pub fn println(&mut self, s: &str) {
        self.buf.push_str(s);
        self.buf.push('\n');
    }

    /// Sends what is buffered; false once the client is gone.
    pub async fn flush(&mut self) -> bool {
        if !self.buf.is_empty() && !self.gone {
            let chunk = Bytes::from(std::mem::take(&mut self.buf));
            self.gone = self.tx.send(chunk).await.is_err();
        }
        !self.gone
    }

    /// Sends a chunk once enough is buffered; false once the client is gone.
    pub async fn flush_if_full(&mut self) -> bool {
        if self.buf.len() >= CHUNK {
            return self.flush().await;
        }
        !self.gone
    }
}

/// Why fsck stopped early: printed as HDFS prints the exception's message.
#[derive(Debug)]
pub struct Failure(pub String);

impl From<cairn_rpc::CallError> for Failure {
    fn from(e: cairn_rpc::CallError) -> Failure {
        match e {
            cairn_rpc::CallError::Remote { message, .. } => Failure(message),
            other => Failure(other.to_string()),
        }
    }
}

impl From<crate::namespace::FsError> for Failure {
    fn from(e: crate::namespace::FsError) -> Failure {
        Failure::from(crate::service::to_call_error(e))
    }
}

/// Runs one fsck and writes its report to `out` (HDFS's
/// `NamenodeFsck.fsck()`).
pub async fn fsck(state: Arc<NameNodeState>, req: FsckRequest, out: &mut Output) {
    let started = Instant::now();
    let result = if req.block_ids.is_some() {
        lookups::block_ids(&state, &req, out).await
    } else {
        run(&state, &req, out, started).await
    };
    if let Err(Failure(message)) = result {
        tracing::warn!(path = %req.path, %message, "fsck failed");
        out.println(&ended_line(started));
        out.println(&message);
        out.print(&format!("\n\nFsck on path '{}' {FAILURE_STATUS}", req.path));
    }
    out.flush().await;
}

fn ended_line(started: Instant) -> String {
    format!(
        "FSCK ended at {} in {} milliseconds",
        java_date(crate::service::now_ms()),
        started.elapsed().as_millis()
    )
}

async fn run(
    state: &Arc<NameNodeState>,
    req: &FsckRequest,
    out: &mut Output,
    started: Instant,
) -> Result<(), Failure> {
    let live = {
        let dns = state.lock_datanodes()?;
        facts::cluster_size(&dns, Instant::now()).0
    };
    out.println(&format!(
        "FSCK started by {} from {} for path {} at {}",
        req.ugi(),
        req.remote_text(),
        req.path,
        java_date(crate::service::now_ms())
    ));
    tracing::info!(user = %req.user, path = %req.path, "fsck started");
    let caller = state.users.caller_async(Arc::from(req.user.as_str())).await;
    let snapshottable = if req.include_snapshots {
        let ns = state.read_namespace()?;
        Some(
            ns.snapshottable_dirs(&caller)
                .unwrap_or_default()
                .into_iter()
                .map(|d| walk::child_path(&d.parent_path, &d.status.name))
                .collect::<Vec<String>>(),
        )
    } else {
        None
    };
    let root = {
        let ns = state.read_namespace()?;
        ns.get_file_info(&caller, &req.path)?
    };
    let Some(root) = root else {
        out.print(&format!("\n\nPath '{}' {NONEXISTENT_STATUS}", req.path));
        return Ok(());
    };
    if req.list_corrupt_file_blocks {
        return lookups::list_corrupt_file_blocks(state, req, &caller, out).await;
    }
    let mut walk = walk::Walk::new(state, req, caller, snapshottable);
    walk.check_tree(&req.path, root, out).await?;
    let healthy = walk.repl.is_healthy() && walk.ec.is_healthy();
    let racks = {
        let dns = state.lock_datanodes()?;
        facts::cluster_size(&dns, Instant::now()).1
    };
    out.print("\nStatus: ");
    out.println(if healthy { "HEALTHY" } else { "CORRUPT" });
    out.println(&format!(" Number of data-nodes:\t{live}"));
    out.println(&format!(" Number of racks:\t\t{racks}"));
    out.println(&format!(" Total dirs:\t\t\t{}", walk.dirs));
    out.println(" Total symlinks:\t\t0");
    out.println("\nReplicated Blocks:");
    out.println(&walk.repl.replicated_section(
        state.config.replication,
        state.config.limits.min_replication,
    ));
    out.println("\nErasure Coded Block Groups:");
    out.println(&walk.ec.erasure_coded_section());
    if req.show_storage_policies {
        out.print(&walk.policies.report());
    }
    out.println(&ended_line(started));
    if walk.internal_error {
        return Err(Failure("fsck encountered internal errors!".into()));
    }
    let status = if healthy {
        HEALTHY_STATUS
    } else {
        CORRUPT_STATUS
    };
    out.print(&format!(
        "\n\nThe filesystem under path '{}' {status}",
        req.path
    ));
    Ok(())
}

//! `ClientProtocol` over Hadoop IPC: decodes each request, runs it against
//! the namespace with the caller's identity, logs the resulting edits to the
//! journal under the namespace lock, waits outside the lock until they are
//! durable, and encodes the reply exactly as HDFS does (required proto2
//! fields always present, optional fields clients depend on filled in).
//!
//! This file holds the shared state, the helpers every handler uses (locks,
//! `mutate`/`read`, the safe-mode check, the caller's identity) and the
//! dispatch table from method name to handler. The handlers live by area:
//! `namespace_ops` (metadata queries and changes), `write_path` (writers,
//! leases, pipelines), `truncate_concat` (truncate and its block recovery,
//! concat), `read_path` (block locations), `admin` (cluster state and
//! dfsadmin calls), `image` (edit-log rolls, `saveNamespace`, `metaSave`),
//! `open_files` (`listOpenFiles`, encryption-zone queries), `xattrs` and
//! `acls`, `storage_policy`, `quota` (extended attributes, ACLs, storage
//! policies, setQuota and quota usage); `convert` builds
//! the protobuf answers; `ha_gate` refuses what a standby or observer does
//! not serve.

mod acls;
mod admin;
mod cache;
mod convert;
#[cfg(test)]
mod copy_truncate_commit_tests;
mod dispatch;
mod features_off;
mod ha_gate;
mod image;
mod inotify;
mod lease_recovery;
mod listing;
mod namespace_ops;
mod open_files;
mod quota;
mod read_path;
mod retry;
pub(crate) mod snapshots;
mod storage_policy;
mod truncate_concat;
mod upgrade;
mod write_path;
mod xattrs;

pub use convert::{block_record, to_call_error};
/// How a service reads a request and writes its answer.
pub(crate) use convert::{decode, encode};
pub use ha_gate::{standby_refusal, Category, OBSERVER_CATCH_UP};
pub use image::LastImage;
pub(crate) use retry::directive_answer;
pub use truncate_concat::TRUNCATE_RECOVERY_RETRY;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use bytes::Bytes;
use cairn_proto::exceptions as ex;
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;

use crate::blocks::BlockManager;
use crate::config::NameNodeConfig;
use crate::datanodes::DatanodeManager;
use crate::journal::{EditLog, TxId};
use crate::leases::LeaseTable;
use crate::namespace::permission::Caller;
use crate::namespace::{Edit, FsError, INodeId, Namespace, Removed};
use crate::users::UserDirectory;

/// [`NameNodeState::judge_file_again`] with both locks held.
pub(crate) fn judge_blocks_again(ns: &Namespace, bm: &mut BlockManager, file: INodeId) {
    let blocks = ns.blocks_of(file);
    bm.judge_again(blocks.iter().map(|b| b.id));
    if ns.writer_of(file).is_none() {
        bm.committed(blocks.iter().map(|b| b.id));
    }
}

/// Blocks a call may forget on the edit log's sync thread after its sync;
/// more are forgotten on the runtime's workers.
const LIGHT_REMOVALS: usize = 256;

pub(crate) use cairn_common::clock::{now_ms, now_ms_signed};

/// State shared by every handler of the NameNode.
pub struct NameNodeState {
    pub namespace: Arc<RwLock<Namespace>>,
    pub leases: Mutex<LeaseTable>,
    pub journal: Arc<dyn EditLog>,
    pub users: UserDirectory,
    pub config: NameNodeConfig,
    /// Manual safe mode (`setSafeMode ENTER`): mutations are refused.
    pub safe_mode: AtomicBool,
    /// Start-up safe mode: on until enough blocks are reported.
    pub startup_safe_mode: crate::safemode::StartupSafeMode,
    /// HDFS's startup progress (`/startupProgress`).
    pub startup_progress: crate::startup_progress::StartupProgress,
    /// Replica locations (lock after `namespace`).
    pub blocks: Mutex<BlockManager>,
    /// Registered DataNodes (lock after `blocks`).
    pub datanodes: Mutex<DatanodeManager>,
    /// Identity of this namespace, handed to DataNodes.
    pub block_pool_id: String,
    pub cluster_id: String,
    pub namespace_id: u32,
    /// Varies block placement between calls.
    pub placement_seed: std::sync::atomic::AtomicU64,
    /// The newest checkpoint image; held while one is written, so that the
    /// background checkpointer and `saveNamespace` take turns (HDFS's
    /// `cpLock`). Lock before `namespace`.
    pub checkpoints: Mutex<LastImage>,
    /// Files whose truncate waits for its block recovery, with when the
    /// current recovery attempt was queued (`None`: none is running). A
    /// leaf lock: take no other lock while holding it.
    pub truncates: Mutex<HashMap<INodeId, Option<std::time::Instant>>>,
    /// Held while a full block report is applied: one at a time, as HDFS's
    /// single block-report thread, so that reports arriving together do
    /// not starve each other's batches of the block manager lock while
    /// holding the namespace lock.
    pub full_reports: Mutex<()>,
    /// The address RPC is served on, once bound (WebHDFS redirects name it
    /// as `namenoderpcaddress`).
    pub rpc_address: std::sync::OnceLock<std::net::SocketAddr>,
    /// HDFS's `NameNodeActivity` counters.
    pub metrics: crate::metrics::NameNodeMetrics,
    /// Calls waiting for the namespace lock now (HDFS's `LockQueueLength`).
    pub lock_queue: AtomicU64,
    /// Images sent whole over HTTP (`/imagetransfer`), microseconds each.
    pub image_downloads: cairn_common::metrics::Histogram,
    /// The IPC server's figures (queue and processing times, per method).
    pub rpc_metrics: Arc<cairn_rpc::RpcMetrics>,
    /// When this NameNode started, ms since the Unix epoch.
    pub started_ms: u64,
    /// Active, standby or observer (a lone NameNode: always active).
    pub ha: crate::ha::HaState,
    /// The last txid written to the edit log: the state id every RPC
    /// response carries and observers catch up to. An atomic, not the
    /// journal's own figure, because it is read on every response; set by
    /// whatever writes or applies edits (`mutate`; a log follower should
    /// call [`NameNodeState::advance_state_id`]).
    pub last_written: std::sync::atomic::AtomicU64,
    /// Answers of at-most-once calls, for their retries.
    pub retry_cache: Arc<crate::retry_cache::RetryCache>,
    /// HDFS's `restoreFailedStorage` flag (`dfs.namenode.name.dir.restore`,
    /// off); set and read by dfsadmin, with nothing to restore.
    pub restore_failed_storage: AtomicBool,
    /// Bumped whenever a DataNode's incremental report names a replica it
    /// received: `complete` waits on it for its file's last block.
    pub replicas_reported: tokio::sync::watch::Sender<u64>,
    /// Access times reads have made due, for their background writer.
    pub access_times: crate::access_time::AccessTimes,
}

/// Blocks per INVALIDATE command in one heartbeat reply (Hadoop's
/// `dfs.block.invalidate.limit` default).
pub const INVALIDATE_LIMIT: usize = 1000;

/// A call's answer: the encoded response, or the error to send.
pub(crate) type CallResult = Result<Bytes, CallError>;

impl NameNodeState {
    pub fn lock_blocks(&self) -> Result<std::sync::MutexGuard<'_, BlockManager>, CallError> {
        cairn_rpc::lock_wait::lock_timed(&self.blocks)
            .map_err(|_| CallError::io("block manager lock poisoned"))
    }

    /// The namespace read lock (lock it before `blocks` and `datanodes`);
    /// a wait for it counts in the call's RpcLockWaitTime, as a wait for
    /// HDFS's namesystem lock does.
    pub fn read_namespace(&self) -> Result<std::sync::RwLockReadGuard<'_, Namespace>, CallError> {
        let ns = &self.namespace;
        let waiting = Some(&self.lock_queue);
        cairn_rpc::lock_wait::timed(ns.try_read(), waiting, || ns.read())
            .map_err(|_| CallError::io("namespace lock poisoned"))
    }

    pub fn lock_datanodes(&self) -> Result<std::sync::MutexGuard<'_, DatanodeManager>, CallError> {
        cairn_rpc::lock_wait::lock_timed(&self.datanodes)
            .map_err(|_| CallError::io("datanode manager lock poisoned"))
    }

    fn min_replication(&self) -> usize {
        usize::from(self.config.limits.min_replication)
    }

    /// The replication monitor judges `file`'s blocks again: its target
    /// replication changed, or it was closed (blocks of open files are not
    /// judged). A closed file's blocks are committed: the block map may
    /// forget the pipelines they were handed out with.
    pub(crate) fn judge_file_again(&self, file: INodeId) {
        let Ok(ns) = self.namespace.read() else {
            return;
        };
        if let Ok(mut bm) = self.blocks.lock() {
            judge_blocks_again(&ns, &mut bm, file);
        }
    }

    /// Changes the lease table under the namespace write lock, with the
    /// namespace change it follows (HDFS changes its leases under its
    /// namesystem lock): no call sees a file created, closed or deleted
    /// without its lease added or gone. A poisoned table stops the process,
    /// since the namespace has already changed.
    pub(super) fn with_leases(&self, f: impl FnOnce(&mut LeaseTable)) {
        match self.leases.lock() {
            Ok(mut l) => f(&mut l),
            Err(_) => cairn_common::fatal::stop("lease table lock poisoned"),
        }
    }

    /// Drops the replicas of what a delete/overwrite removed, once its edit
    /// is durable (its leases went with the namespace change).
    /// `forget_removed_blocks` after the call's sync: a large set is
    /// forgotten on the runtime's workers rather than on the edit log's
    /// thread, which would hold up every other call's sync meanwhile.
    /// On that thread the block manager's lock is only tried: a holder
    /// (a block report) would stall every sync behind it.
    async fn forget_removed_blocks_after_sync(&self, removed: &Removed) {
        if removed.blocks.is_empty() {
            return;
        }
        if removed.blocks.len() <= LIGHT_REMOVALS {
            if let Ok(mut b) = self.blocks.try_lock() {
                b.remove_blocks(&removed.blocks);
                return;
            }
        }
        cairn_rpc::off_this_thread().await;
        self.forget_removed_blocks(removed);
    }

    /// [`Self::lock_datanodes`] after a sync: on the edit log's thread
    /// (`mutate_light`) only tried, the call moving to its connection's task
    /// when the lock is held.
    async fn lock_datanodes_after_sync(
        &self,
    ) -> Result<std::sync::MutexGuard<'_, DatanodeManager>, CallError> {
        if cairn_rpc::finishing_calls_here() {
            // Decided first: the try_lock result (a guard) may not live
            // across the await, or the future would not be Send.
            let held = match self.datanodes.try_lock() {
                Ok(dns) => return Ok(dns),
                Err(std::sync::TryLockError::WouldBlock) => true,
                Err(std::sync::TryLockError::Poisoned(_)) => false,
            };
            if held {
                cairn_rpc::off_this_thread().await;
            }
        }
        self.lock_datanodes()
    }

    fn forget_removed_blocks(&self, removed: &Removed) {
        if let Ok(mut b) = self.blocks.lock() {
            b.remove_blocks(&removed.blocks);
        }
    }

    async fn caller(&self, ctx: &CallContext) -> Caller {
        self.users.caller_async(Arc::clone(&ctx.user)).await
    }

    fn check_not_safe_mode(&self, what: &str) -> Result<(), CallError> {
        // The message is built only when refusing: this runs on every
        // mutation.
        if !self.in_safe_mode() {
            return Ok(());
        }
        self.refuse_in_safe_mode(&format!("Cannot {what}"))
    }

    /// HDFS's `checkNameNodeSafeMode(message)`: a SafeModeException whose
    /// first line is `"<message>. Name node is in safe mode."`.
    pub(crate) fn refuse_in_safe_mode(&self, message: &str) -> Result<(), CallError> {
        if let Some(why) = self.journal.failure() {
            return Err(CallError::remote(
                ex::SAFE_MODE,
                format!("{message}. Name node is in safe mode.\nThe edit log cannot accept changes: {why}"),
            ));
        }
        if self.safe_mode.load(Ordering::Acquire) {
            return Err(CallError::remote(
                ex::SAFE_MODE,
                format!("{message}. Name node is in safe mode.\nIt was turned on manually. Use \"hdfs dfsadmin -safemode leave\" to turn safe mode off."),
            ));
        }
        if self.startup_safe_mode.is_on() {
            let tip = self.startup_safe_mode.tip(std::time::Instant::now());
            return Err(CallError::remote(
                ex::SAFE_MODE,
                format!("{message}. Name node is in safe mode.\n{tip}"),
            ));
        }
        Ok(())
    }

    /// Whether the NameNode is in safe mode (turned on by hand, forced by an
    /// edit log that cannot take changes, or still starting up).
    pub fn in_safe_mode(&self) -> bool {
        self.safe_mode.load(Ordering::Acquire)
            || self.journal.failure().is_some()
            || self.startup_safe_mode.is_on()
    }

    /// Runs a mutation under the write lock, logs its edits while still
    /// holding it (txids follow apply order), then waits outside the lock
    /// until the journal has made them durable. `what` describes the call
    /// for refusals and fatal errors only: it is a closure because building
    /// the string on every mutation was a few % of a mkdirs.
    pub(crate) async fn mutate<T>(
        self: &Arc<Self>,
        what: impl Fn() -> String,
        f: impl FnOnce(&mut Namespace) -> Result<(T, Vec<Edit>), FsError>,
    ) -> Result<T, CallError> {
        // Only the active writes edits (HDFS: a standby's edit log is not
        // open for writing): this also stops background work and
        // DataNode-triggered changes (commitBlockSynchronization) on a
        // standby, not only client calls.
        let ha = self.ha.get();
        if ha != crate::ha::HaServiceState::Active {
            return Err(standby_refusal(Category::Write, ha));
        }
        if self.in_safe_mode() {
            self.refuse_in_safe_mode(&format!("Cannot {}", what()))?;
        }
        debug_assert!(
            !cairn_rpc::finishing_calls_here(),
            "a mutation on the edit log's sync thread"
        );
        let (value, txid): (T, Option<TxId>) = {
            let lock = &self.namespace;
            let waiting = Some(&self.lock_queue);
            let mut ns = cairn_rpc::lock_wait::timed(lock.try_write(), waiting, || lock.write())
                .map_err(|_| CallError::io("namespace lock poisoned"))?;
            // Asked before `f` changes memory: a log handing the lead on
            // refuses here, and the caller fails over (HDFS: the standby
            // transition takes the namesystem lock that writes hold); a
            // log that failed, or whose disk is full, refuses as safe mode
            // does. Either way memory is never ahead of a refusal.
            let Ok(admission) = self.journal.admit() else {
                self.refuse_in_safe_mode(&format!("Cannot {}", what()))?;
                return Err(standby_refusal(
                    Category::Write,
                    crate::ha::HaServiceState::Standby,
                ));
            };
            let (value, mut edits) = f(&mut ns).map_err(to_call_error)?;
            if !edits.is_empty() {
                if let Some(((client_id, call_id), cache_directive_id)) = retry::take_logged_call()
                {
                    edits.push(Edit::RetryId {
                        client_id,
                        call_id,
                        cache_directive_id,
                    });
                }
            }
            let txid = if edits.is_empty() {
                None
            } else {
                // The change is applied in memory; a log that will not take
                // its edits would leave memory ahead of the disk.
                match self.journal.append_admitted(&admission, &edits) {
                    Ok(txid) => {
                        self.advance_state_id(txid);
                        Some(txid)
                    }
                    Err(e) => cairn_common::fatal::stop(&format!(
                        "the edit log refused edits already applied in memory ({}): {e}",
                        what()
                    )),
                }
            };
            (value, txid)
        };
        if let Some(txid) = txid {
            if let Err(e) = self.journal.wait_durable(txid).await {
                // Applied in memory, never made durable: the process must
                // not serve that state; a restart reloads what is on disk.
                cairn_common::fatal::stop(&format!(
                    "edits applied in memory could not be made durable ({}): {e}",
                    what()
                ));
            }
        }
        Ok(value)
    }

    /// [`Self::mutate`] for a call with only light work after its sync,
    /// none of it taking the namespace's or the journal's locks: the edit
    /// log's sync thread may finish it and write its response
    /// (`cairn_rpc::finish_woken_calls_here`). A roll of the log holds the
    /// namespace lock while it waits for that thread, so such work there
    /// would deadlock.
    pub(crate) async fn mutate_light<T>(
        self: &Arc<Self>,
        what: impl Fn() -> String,
        f: impl FnOnce(&mut Namespace) -> Result<(T, Vec<Edit>), FsError>,
    ) -> Result<T, CallError> {
        cairn_rpc::may_finish_anywhere(self.mutate(what, f)).await
    }

    fn read<T>(&self, f: impl FnOnce(&Namespace) -> Result<T, FsError>) -> Result<T, CallError> {
        debug_assert!(
            !cairn_rpc::finishing_calls_here(),
            "the namespace read on the edit log's sync thread"
        );
        let ns = self
            .namespace
            .read()
            .map_err(|_| CallError::io("namespace lock poisoned"))?;
        f(&ns).map_err(to_call_error)
    }

    /// Runs one ClientProtocol call (RPC and WebHDFS both come through here).
    pub(crate) async fn dispatch(
        self: Arc<Self>,
        ctx: CallContext,
        method: &str,
        req: Bytes,
    ) -> CallResult {
        cairn_common::fatal::inject("namenode", method);
        let caller = self.caller(&ctx).await;
        // The calls answered at once (reads) run here; the rest are boxed,
        // so that this future, allocated for every call, is not as large
        // as the largest mutation's.
        let result = match self.answer_now(&caller, &ctx, method, &req).transpose() {
            Some(result) => result,
            None => Box::pin(Arc::clone(&self).answer_waiting(&caller, &ctx, method, req)).await,
        };
        if result.is_ok() {
            self.metrics.record(method);
        }
        result
    }
}

/// The `ClientProtocol` endpoint.
pub struct ClientProtocolService {
    pub state: Arc<NameNodeState>,
}

impl Protocol for ClientProtocolService {
    fn name(&self) -> &str {
        cairn_proto::protocols::CLIENT_PROTOCOL
    }

    /// `ClientNamenodeProtocol.proto`'s service, as HDFS names its server.
    fn service_name(&self) -> &str {
        "ClientNamenodeProtocol"
    }

    fn detailed_method_names(&self) -> &'static [&'static str] {
        cairn_proto::protocols::CLIENT_PROTOCOL_METHODS
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, CallResult> {
        let state = self.state.clone();
        Box::pin(async move {
            state.check_ha(&ctx, &method).await?;
            state.dispatch_once(ctx, &method, request).await
        })
    }
}

//! The DataNode's links to its NameNodes over DatanodeProtocol (PROTOCOL.md
//! §4). As HDFS's `BPOfferService`, a DataNode runs one service actor per
//! NameNode of its nameservice ([`crate::nameservice`]; a single NameNode
//! without one); every actor registers, heartbeats and reports to its own
//! NameNode, and the write path's incremental and bad-block reports are
//! copied to each. All NameNodes must give the same block pool, namespace
//! and cluster ids. Commands count only from the NameNode taken as active
//! (`offer`: the one claiming ACTIVE in heartbeat replies with the highest
//! transaction id); from any other only RegisterCommand is obeyed, the rest
//! is logged and ignored, as HDFS's `processCommandFromStandby`.
//!
//! Each actor talks to its NameNode in the order a Hadoop 3.4.1 DataNode
//! uses:
//!
//! 1. `versionRequest` → block pool id, namespace id, cluster id, ctime and
//!    the NameNode's capabilities (0x1: block reports as byte buffers);
//! 2. `registerDatanode` with the bound transfer IP and ports, layout
//!    version −57 and software version 3.4.1; the NameNode's answer is the
//!    registration used from then on;
//! 3. `sendHeartbeat` every `dfs.heartbeat.interval`, asking for a full
//!    block report lease until one is granted; then `blockReport` with that
//!    lease (and again every `dfs.blockreport.intervalMsec`);
//! 4. `blockReceivedAndDeleted` as soon as replicas are finalized
//!    (RECEIVED) or deleted (DELETED): a bounded queue feeds this task,
//!    which sends whatever has queued up in one call.
//!
//! Commands in heartbeat and block report answers are carried out
//! (`commands`): INVALIDATE deletes replicas (then reports them DELETED),
//! TRANSFER copies replicas to the named DataNodes
//! ([`crate::transfer::copy`]), RegisterCommand registers again and sends a
//! full report, BlockRecoveryCommand makes this DataNode the primary of a
//! block recovery (`crate::block_recovery`). Caching and key updates are
//! logged and ignored.
//!
//! This file holds the actors' start and session loop; `register` builds
//! the registration, `reports` sends heartbeats and the full, incremental
//! and bad-block reports, `offer` holds what the actors share.
//!
//! `refreshNamenodes` ([`crate::refresh`]) starts an actor for each
//! NameNode added to the configuration and stops those removed; actor
//! numbers are not reused, so the active choice never points at the wrong
//! one.
//!
//! A NameNode that is down, refuses a call or does not answer within
//! `cairn.datanode.namenode.call-timeout` is retried with exponential
//! backoff (up to `cairn.datanode.namenode.retry-max`) for as long as the
//! DataNode runs: it never exits because the NameNode is unreachable.

mod commands;
mod offer;
mod register;
mod reports;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_proto::hadoop::hdfs::DatanodeRegistrationProto;
use cairn_rpc::client::{Client, ClientError};
use tokio::sync::{mpsc, Semaphore};
use tokio_util::sync::CancellationToken;
use tracing::{debug, info, warn};

use self::offer::Offer;

use crate::block_recovery::Recoveries;
use crate::ibr::{IbrBacklog, IbrEntry, IBR_QUEUE_LEN};
use crate::ids::BlockPoolId;
use crate::refresh::{RefreshRequest, Refreshed};
use crate::scanner::BadReplica;
use crate::Shared;

/// Layout version Hadoop 3.4.1 DataNodes register with.
pub const DATANODE_LAYOUT_VERSION: i32 = -57;
/// The Hadoop release we speak like; the NameNode checks it against its
/// minimum supported DataNode version.
pub const SOFTWARE_VERSION: &str = "3.4.1";
/// Heartbeats to wait for a block report lease before reporting without
/// one (lease id 0, which NameNodes accept as "no rate limiting").
const LEASE_WAIT_HEARTBEATS: u32 = 10;
/// Replica copies (TRANSFER commands) running at once.
const MAX_XMITS: usize = 4;

/// The ports and address the DataNode registers with.
#[derive(Debug, Clone)]
pub struct Endpoints {
    pub xfer: SocketAddr,
    pub ipc: SocketAddr,
    pub http: SocketAddr,
}

/// Why a session with the NameNode ended.
#[derive(Debug, thiserror::Error)]
enum LinkError {
    #[error("NameNode call {method} failed: {source}")]
    Call {
        method: &'static str,
        source: ClientError,
    },
    #[error("NameNode call {0} timed out")]
    Timeout(&'static str),
    #[error("NameNode asked us to register again")]
    Reregister,
    #[error("{0}")]
    Invalid(String),
    #[error("shutting down")]
    Shutdown,
}

/// What one registration established.
struct Session {
    client: Client,
    registration: DatanodeRegistrationProto,
    pool: BlockPoolId,
    capabilities: u64,
}

/// One NameNode's service actor (HDFS's `BPServiceActor`).
pub(crate) struct NameNodeLink {
    shared: Arc<Shared>,
    endpoints: Endpoints,
    /// This actor's index among the nameservice's NameNodes.
    actor: usize,
    /// The NameNode it serves.
    namenode: SocketAddr,
    /// What all actors share: the namespace and the active choice.
    offer: Arc<Offer>,
    ibr_rx: mpsc::Receiver<IbrEntry>,
    pending: IbrBacklog,
    bad_rx: mpsc::Receiver<BadReplica>,
    /// Corrupt replicas not yet reported (kept across reconnections).
    pending_bad: Vec<BadReplica>,
    /// Copies running for any NameNode (shared by the actors).
    xmits: Arc<Semaphore>,
    user: String,
    /// Blocks this DataNode is recovering as the primary (shared).
    recoveries: Recoveries,
}

/// What starting an actor takes beyond its NameNode.
struct ActorKit {
    shared: Arc<Shared>,
    endpoints: Endpoints,
    offer: Arc<Offer>,
    xmits: Arc<Semaphore>,
    user: String,
    recoveries: Recoveries,
}

impl ActorKit {
    fn link(
        &self,
        actor: usize,
        namenode: SocketAddr,
        ibr_rx: mpsc::Receiver<IbrEntry>,
        bad_rx: mpsc::Receiver<BadReplica>,
    ) -> NameNodeLink {
        NameNodeLink {
            shared: self.shared.clone(),
            endpoints: self.endpoints.clone(),
            actor,
            namenode,
            offer: self.offer.clone(),
            ibr_rx,
            pending: IbrBacklog::default(),
            bad_rx,
            pending_bad: Vec::new(),
            xmits: self.xmits.clone(),
            user: self.user.clone(),
            recoveries: self.recoveries.clone(),
        }
    }

    /// Starts an actor fed by its own copies of the report queues.
    fn start(&self, actor: usize, namenode: SocketAddr, shutdown: &CancellationToken) -> Running {
        let (ibr, irx) = mpsc::channel(IBR_QUEUE_LEN);
        let (bad, brx) = mpsc::channel(crate::scanner::BAD_QUEUE_LEN);
        let stop = shutdown.child_token();
        let task = tokio::spawn(self.link(actor, namenode, irx, brx).run(stop.clone()));
        Running {
            namenode,
            actor,
            ibr,
            bad,
            stop,
            task,
        }
    }
}

/// A running actor and its queues.
struct Running {
    namenode: SocketAddr,
    actor: usize,
    ibr: mpsc::Sender<IbrEntry>,
    bad: mpsc::Sender<BadReplica>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

/// Runs one actor per configured NameNode until `shutdown`, copying every
/// incremental and bad-block report to each, and starting or stopping
/// actors when `refreshNamenodes` names other NameNodes.
///
/// # Cancel safety
/// Cancel through `shutdown`.
pub(crate) async fn run_actors(
    shared: Arc<Shared>,
    endpoints: Endpoints,
    mut ibr_rx: mpsc::Receiver<IbrEntry>,
    mut bad_rx: mpsc::Receiver<BadReplica>,
    mut refresh_rx: mpsc::Receiver<RefreshRequest>,
    shutdown: CancellationToken,
) {
    let kit = ActorKit {
        shared: shared.clone(),
        endpoints,
        offer: Arc::new(Offer::default()),
        xmits: Arc::new(Semaphore::new(MAX_XMITS)),
        user: register::process_user(),
        recoveries: Recoveries::default(),
    };
    let namenodes = shared.config.namenodes.clone();
    if let ([nn], None) = (namenodes.as_slice(), &shared.config.namenode_source) {
        // One NameNode for good: no copying of the queues.
        kit.link(0, *nn, ibr_rx, bad_rx).run(shutdown).await;
        return;
    }
    let mut running: Vec<Running> = Vec::new();
    // Actors stopped by a refresh, awaited at shutdown.
    let mut stopped: Vec<tokio::task::JoinHandle<()>> = Vec::new();
    // Actor numbers are never reused: the offer knows the active by number.
    let mut next_actor = 0;
    for nn in namenodes {
        running.push(kit.start(next_actor, nn, &shutdown));
        next_actor += 1;
    }
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            Some(e) = ibr_rx.recv() => {
                for r in &running {
                    if r.ibr.try_send(e.clone()).is_err() {
                        // That actor is stuck; its next full report covers it.
                        debug!("an actor's incremental report queue is full; entry dropped");
                    }
                }
            }
            Some(b) = bad_rx.recv() => {
                for r in &running {
                    let _ = r.bad.try_send(b.clone());
                }
            }
            Some(req) = refresh_rx.recv() => {
                let mut done = Refreshed::default();
                let (keep, gone): (Vec<Running>, Vec<Running>) = running
                    .into_iter()
                    .partition(|r| req.namenodes.contains(&r.namenode));
                running = keep;
                for r in gone {
                    r.stop.cancel();
                    kit.offer.forget(r.actor);
                    info!(namenode = %r.namenode, "NameNode no longer configured; its service actor stops");
                    done.removed.push(r.namenode);
                    stopped.push(r.task);
                }
                stopped.retain(|t| !t.is_finished());
                for nn in &req.namenodes {
                    if !running.iter().any(|r| r.namenode == *nn) {
                        info!(namenode = %nn, "NameNode added to the configuration; starting its service actor");
                        running.push(kit.start(next_actor, *nn, &shutdown));
                        next_actor += 1;
                        done.added.push(*nn);
                    }
                }
                done.serving = running.iter().map(|r| r.namenode).collect();
                match shared.serving.lock() {
                    Ok(mut s) => s.clone_from(&done.serving),
                    Err(poisoned) => poisoned.into_inner().clone_from(&done.serving),
                }
                let _ = req.done.send(done);
            }
            else => break,
        }
    }
    for t in running.into_iter().map(|r| r.task).chain(stopped) {
        let _ = t.await;
    }
}

impl NameNodeLink {
    fn timeout(&self) -> Duration {
        self.shared.config.namenode_call_timeout
    }

    async fn call<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        client: &Client,
        method: &'static str,
        req: &Req,
    ) -> Result<Resp, LinkError> {
        match tokio::time::timeout(self.timeout(), client.call::<Req, Resp>(method, req)).await {
            Err(_) => Err(LinkError::Timeout(method)),
            Ok(Err(source)) => Err(LinkError::Call { method, source }),
            Ok(Ok(r)) => Ok(r),
        }
    }

    /// Runs until `shutdown`.
    ///
    /// # Cancel safety
    /// Cancel through `shutdown`.
    pub(crate) async fn run(mut self, shutdown: CancellationToken) {
        let mut backoff = Duration::from_millis(500);
        let mut warned = false;
        loop {
            if shutdown.is_cancelled() {
                return;
            }
            let session = tokio::select! {
                _ = shutdown.cancelled() => return,
                s = self.register() => s,
            };
            let err = match session {
                Ok(session) => {
                    backoff = Duration::from_millis(500);
                    if warned {
                        info!(namenode = %self.namenode, "NameNode reachable again");
                        warned = false;
                    }
                    match self.serve(session, &shutdown).await {
                        LinkError::Shutdown => return,
                        LinkError::Reregister => {
                            info!(namenode = %self.namenode, "NameNode asked for a new registration");
                            continue;
                        }
                        e => e,
                    }
                }
                Err(e) => e,
            };
            if let LinkError::Invalid(why) = &err {
                // Not a network fault (e.g. another namespace): say so each
                // time, as HDFS's "Initialization failed" does.
                warn!(namenode = %self.namenode, error = %why, "initialization failed for NameNode; retrying");
            } else if !warned {
                warn!(namenode = %self.namenode, error = %err, "NameNode unreachable; retrying");
                warned = true;
            } else {
                debug!(namenode = %self.namenode, error = %err, "NameNode still unreachable");
            }
            // Keep draining the report queue while we wait.
            let until = Instant::now() + backoff;
            loop {
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep_until(until.into()) => break,
                    e = self.ibr_rx.recv() => match e {
                        Some(e) => self.keep(e),
                        None => tokio::time::sleep_until(until.into()).await,
                    },
                }
            }
            backoff = (backoff * 2).min(self.shared.config.namenode_retry_max);
        }
    }

    fn keep(&mut self, e: IbrEntry) {
        self.pending.keep(e);
    }

    /// Heartbeats, reports and commands until the session breaks; returns
    /// why it ended.
    async fn serve(&mut self, s: Session, shutdown: &CancellationToken) -> LinkError {
        let cfg = self.shared.config.clone();
        let mut need_report = true;
        let mut heartbeats_without_lease = 0u32;
        let mut next_report = Instant::now() + cfg.block_report_interval;
        let mut next_heartbeat = Instant::now();
        let mut trigger = self.shared.report_trigger.subscribe();
        let mut full_seen = trigger.borrow_and_update().full_requests_for(self.namenode);
        loop {
            // Incremental reports first: they gate the clients' `complete`.
            if let Err(e) = self.flush_ibr(&s).await {
                return e;
            }
            if let Err(e) = self.flush_bad(&s).await {
                return e;
            }
            if Instant::now() >= next_heartbeat {
                next_heartbeat = Instant::now() + cfg.heartbeat_interval;
                let resp = match self.heartbeat(&s, need_report).await {
                    Ok(r) => r,
                    Err(e) => return e,
                };
                // Stopped while the heartbeat was out (its NameNode left
                // the configuration): its answer must not make this actor
                // the active one again, nor its commands run.
                if shutdown.is_cancelled() {
                    return LinkError::Shutdown;
                }
                let claims_active = resp.ha_status.state
                    == cairn_proto::hadoop::hdfs::nnha_status_heartbeat_proto::State::Active as i32;
                self.offer.heartbeat(
                    self.actor,
                    &self.namenode.to_string(),
                    claims_active,
                    i64::try_from(resp.ha_status.txid).unwrap_or(i64::MAX),
                );
                if let Err(e) = self.commands(&resp.cmds).await {
                    return e;
                }
                let lease = resp.full_block_report_lease_id.unwrap_or(0);
                if need_report {
                    if lease == 0 {
                        heartbeats_without_lease += 1;
                    }
                    if lease != 0 || heartbeats_without_lease >= LEASE_WAIT_HEARTBEATS {
                        if let Err(e) = self.block_report(&s, lease).await {
                            return e;
                        }
                        need_report = false;
                        heartbeats_without_lease = 0;
                        next_report = Instant::now() + cfg.block_report_interval;
                    }
                } else if Instant::now() >= next_report {
                    need_report = true;
                }
            }
            tokio::select! {
                _ = shutdown.cancelled() => return LinkError::Shutdown,
                _ = tokio::time::sleep_until(next_heartbeat.into()) => {}
                e = self.ibr_rx.recv() => {
                    if let Some(e) = e {
                        self.keep(e);
                    }
                }
                // `triggerBlockReport`: incremental reports go at the top
                // of the loop; a full one takes the next heartbeat's lease.
                Ok(()) = trigger.changed() => {
                    let full = trigger.borrow_and_update().full_requests_for(self.namenode);
                    if full > full_seen {
                        full_seen = full;
                        need_report = true;
                        next_heartbeat = Instant::now();
                    }
                }
            }
        }
    }
}

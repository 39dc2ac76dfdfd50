//! One NameNode as a member of the Raft group: its namespace, Raft log
//! directory (log, vote, snapshot), state machine, edit log and the
//! listener other members reach it on.

use std::collections::BTreeMap;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use cairn_common::disk::Disk;
use openraft::{BasicNode, Config, SnapshotPolicy};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use super::edit_log::RaftEditLog;
use super::log_store::{LogStoreConfig, RaftLogStore};
use super::network::{serve, NetworkFactory};
use super::snapshot::{self, BaseImage, SnapshotSettings, SnapshotStore};
use super::state_machine::{AppliedHook, ImageOwner, NamespaceStateMachine, Progress};
use super::{NodeId, Raft};
use crate::namespace::Namespace;

/// Timing of elections and heartbeats.
#[derive(Debug, Clone)]
pub struct MemberTiming {
    pub heartbeat: Duration,
    pub election_min: Duration,
    pub election_max: Duration,
}

impl Default for MemberTiming {
    fn default() -> Self {
        Self {
            heartbeat: Duration::from_millis(150),
            election_min: Duration::from_millis(600),
            election_max: Duration::from_millis(1200),
        }
    }
}

/// What a member is, apart from its namespace and listener.
#[derive(Clone)]
pub struct MemberSpec {
    pub id: NodeId,
    pub disk: Arc<dyn Disk>,
    /// The member's Raft directory (log and meta file).
    pub dir: PathBuf,
    pub owner: ImageOwner,
    pub timing: MemberTiming,
    /// What follows the edits this member applies from the log.
    pub hook: AppliedHook,
    /// The image the namespace was formatted with (the base of the first
    /// snapshot).
    pub base: BaseImage,
    pub snapshots: SnapshotSettings,
}

/// A running member.
pub struct RaftMember {
    pub id: NodeId,
    pub raft: Raft,
    pub namespace: Arc<RwLock<Namespace>>,
    pub edit_log: Arc<RaftEditLog>,
    /// The txid the namespace holds at start: its image's, or its
    /// snapshot's when that is newer.
    pub loaded_txid: u64,
    server: JoinHandle<()>,
}

impl RaftMember {
    /// Starts member `spec.id` with its Raft log in `spec.dir`, serving the other
    /// members on `listener`, over `namespace` (holding the edits up to
    /// `txid`). A member with a snapshot starts from it when it is newer;
    /// one whose log has entries re-applies the committed ones after it
    /// and rejoins the group it was part of.
    ///
    /// # Errors
    /// A damaged Raft log, meta or snapshot file, a snapshot older than
    /// the image, or a Raft configuration error.
    pub async fn start(
        spec: MemberSpec,
        listener: TcpListener,
        namespace: Namespace,
        txid: u64,
    ) -> io::Result<Self> {
        Self::start_shared(spec, listener, Arc::new(RwLock::new(namespace)), txid).await
    }

    /// As [`RaftMember::start`], over a namespace shared with the
    /// NameNode's RPC services.
    ///
    /// # Errors
    /// As [`RaftMember::start`].
    pub async fn start_shared(
        spec: MemberSpec,
        listener: TcpListener,
        namespace: Arc<RwLock<Namespace>>,
        txid: u64,
    ) -> io::Result<Self> {
        let MemberSpec {
            id,
            disk,
            dir,
            owner,
            timing,
            hook,
            base,
            snapshots,
        } = spec;
        let (policy, keep) = match snapshots.every_entries {
            0 => (SnapshotPolicy::Never, u64::MAX),
            n => (SnapshotPolicy::LogsSinceLast(n), snapshots.keep_entries),
        };
        let config = Config {
            cluster_name: "cairn".into(),
            heartbeat_interval: timing.heartbeat.as_millis() as u64,
            election_timeout_min: timing.election_min.as_millis() as u64,
            election_timeout_max: timing.election_max.as_millis() as u64,
            snapshot_policy: policy,
            max_in_snapshot_log_to_keep: keep,
            ..Default::default()
        }
        .validate()
        .map_err(io::Error::other)?;
        disk.create_dir_all(&dir)?;
        let on_disk = snapshot::read_file(disk.as_ref(), &dir)?;
        let snapshot_end = on_disk.as_ref().and_then(|(m, _)| m.last_log_id);
        let store =
            RaftLogStore::open_after(disk.clone(), &dir, LogStoreConfig::default(), snapshot_end)?;
        store
            .purge_behind_snapshots(snapshot_end)
            .map_err(io::Error::other)?;
        let snapshot_store = SnapshotStore {
            disk,
            dir: dir.clone(),
            log: store.clone(),
            base,
            owner,
            written: Default::default(),
        };
        let mut txid = txid;
        let snapshot = match on_disk {
            Some((meta, image)) => {
                let (ns, snap_txid) = snapshot_store.decode(&image)?;
                if snap_txid < txid {
                    return Err(io::Error::other(format!(
                        "the Raft snapshot in {} is at txid {snap_txid}, behind the image's {txid}",
                        dir.display()
                    )));
                }
                *namespace
                    .write()
                    .map_err(|_| io::Error::other("namespace lock poisoned"))? = ns;
                txid = snap_txid;
                tracing::info!(snapshot = %meta.snapshot_id, txid, "namespace loaded from the Raft snapshot");
                Some(meta)
            }
            None => None,
        };
        let progress = Progress::new(txid);
        let sm = NamespaceStateMachine::new(
            id,
            namespace.clone(),
            progress.clone(),
            hook,
            snapshot_store,
            snapshot,
        );
        let raft = Raft::new(id, Arc::new(config), NetworkFactory, store, sm)
            .await
            .map_err(io::Error::other)?;
        let edit_log = Arc::new(RaftEditLog::new(raft.clone(), progress));
        let server = serve(listener, raft.clone(), edit_log.handover());
        Ok(Self {
            id,
            raft,
            namespace,
            edit_log,
            loaded_txid: txid,
            server,
        })
    }

    /// Whether this member's log has never been part of a group (no vote,
    /// no entry): a new nameservice, to be initialized.
    ///
    /// # Errors
    /// When Raft stopped.
    pub async fn is_fresh(&self) -> io::Result<bool> {
        self.raft
            .is_initialized()
            .await
            .map(|initialized| !initialized)
            .map_err(io::Error::other)
    }

    /// Forms a new group of `members` (id → Raft address); done once, on
    /// one member, when the nameservice is formatted.
    ///
    /// # Errors
    /// When the member is already part of a group, or Raft stopped.
    pub async fn initialize(&self, members: &BTreeMap<NodeId, String>) -> io::Result<()> {
        initialize(&self.raft, members).await
    }

    /// Stops the member: Raft, its listener, the edit log's tasks.
    pub async fn shutdown(self) {
        self.server.abort();
        let _ = self.raft.shutdown().await;
    }
}

async fn initialize(raft: &Raft, members: &BTreeMap<NodeId, String>) -> io::Result<()> {
    let nodes: BTreeMap<NodeId, BasicNode> = members
        .iter()
        .map(|(id, addr)| (*id, BasicNode::new(addr)))
        .collect();
    raft.initialize(nodes).await.map_err(io::Error::other)
}

/// How long each member after the first waits for the group to be formed
/// by one before it, for every member before it: a few elections' worth,
/// so that the first one's vote requests and heartbeats reach it.
fn forming_turn(timing: &MemberTiming) -> Duration {
    (timing.election_max + timing.heartbeat) * 4
}

/// Forms a new group of `members` from `me`, a member whose log is empty,
/// unless another member forms it first.
///
/// Only one member may form it at a time: openraft orders leaders of the
/// same term by node id, so a member that formed the group a moment after
/// another (an election in the same first term) deposed the leader the
/// others had just elected, and that leader, holding its first edits
/// uncommitted, had to stop. So the member with the lowest id forms it at
/// once and each other waits its turn ([`forming_turn`] for every member
/// before it) and forms it only if it has heard from none by then (a vote
/// request or a heartbeat makes it part of the group): a nameservice whose
/// first member never started still forms.
///
/// # Errors
/// When Raft stopped.
pub async fn form_group(
    raft: &Raft,
    me: NodeId,
    members: &BTreeMap<NodeId, String>,
    timing: &MemberTiming,
) -> io::Result<bool> {
    let before = members.keys().filter(|id| **id < me).count() as u32;
    let until = tokio::time::Instant::now() + forming_turn(timing) * before;
    loop {
        if raft.is_initialized().await.map_err(io::Error::other)? {
            return Ok(false);
        }
        if tokio::time::Instant::now() >= until {
            return initialize(raft, members).await.map(|()| true);
        }
        tokio::time::sleep(timing.heartbeat).await;
    }
}

//! A NameNode whose edit log is replicated by Raft (issue 15; RFC 0001):
//! the NameNodes of a nameservice form one openraft group
//! ([`crate::journal::raft`]); the leader is the active NameNode and
//! applies mutations, answered once a majority has their edits on disk;
//! the others apply the committed edits to their own namespace and serve
//! as standbys (or observers). [`run`] puts one member together around the
//! namespace loaded from its name directory, and [`follower`] keeps the
//! rest of the NameNode (block map, state id, leases, HA state) in step
//! with the log and with leadership.
//!
//! The Raft log lives in `<first name dir>/raft`. On its first start a
//! member whose log is empty forms the group from the configured members:
//! the one with the lowest id at once, each other only if it has heard
//! from none before it after its turn ([`crate::journal::raft::member::form_group`]).
//! Every `cairn.namenode.raft.snapshot.entries` entries a member writes a
//! snapshot (its checkpoint, in the Raft directory) and purges the log
//! behind it; a restart starts from the snapshot. `-recover` cuts a damaged
//! Raft log ([`recover_log`]). A member formatted by
//! [`bootstrap_standby`] waits to be added (`cairn admin -addNameNode`,
//! [`crate::journal::raft::membership`]). The log file is rewritten
//! without its purged head as it grows ([`crate::journal::raft::log_store`]).

pub mod follower;
pub mod settings;

use std::sync::{Arc, RwLock};

use cairn_common::disk::{Disk, RealDisk};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tracing::info;

use crate::config::NameNodeConfig;
use crate::ha::HaServiceState;
use crate::journal::raft::member::{MemberSpec, RaftMember};
use crate::journal::raft::state_machine::{AppliedEdits, AppliedHook, ImageOwner};
use crate::startup_progress::{Phase, StartupProgress};
use crate::users::UserDirectory;
use crate::{serve_namenode, storage, Listeners, NameNodeError};

/// Runs this NameNode as a member of its Raft group until `shutdown`.
///
/// # Errors
/// When the name directory is not formatted or damaged, the Raft log is
/// damaged, the Raft address cannot be bound, or the RPC server fails.
pub async fn run(
    mut config: NameNodeConfig,
    listeners: Listeners,
    shutdown: CancellationToken,
) -> Result<(), NameNodeError> {
    let Some(settings) = config.raft.clone() else {
        return Err(NameNodeError::Io(std::io::Error::other(
            "no Raft group configured",
        )));
    };
    let superuser = UserDirectory::current_user();
    let disk: Arc<dyn Disk> = Arc::new(RealDisk);
    let progress = StartupProgress::default();
    let (version, ns, last_txid) = storage::load_recording(
        disk.as_ref(),
        &config.name_dirs,
        &superuser,
        &config.superuser_group,
        config.limits.clone(),
        &progress,
    )?;
    // A member saves no image at start-up (its Raft snapshots are its
    // checkpoints): HDFS's phase is begun and ended at once.
    progress.begin_phase(Phase::SavingCheckpoint);
    progress.end_phase(Phase::SavingCheckpoint);
    let raft_dir = raft_dir(&config)?;
    let raft_listener = TcpListener::bind(settings.own_address())
        .await
        .map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!("binding the Raft address {}: {e}", settings.own_address()),
            )
        })?;
    let hook = AppliedHook::default();
    let spec = MemberSpec {
        id: settings.id,
        disk: disk.clone(),
        dir: raft_dir.clone(),
        owner: ImageOwner {
            superuser: superuser.clone(),
            supergroup: config.superuser_group.clone(),
            limits: config.limits.clone(),
        },
        timing: settings.timing.clone(),
        hook: hook.clone(),
        base: base_image(&config, disk.clone(), &superuser),
        snapshots: settings.snapshots,
    };
    let shared = Arc::new(RwLock::new(ns));
    let member = RaftMember::start_shared(spec, raft_listener, shared.clone(), last_txid).await?;
    let last_txid = member.loaded_txid;
    let fresh = member.is_fresh().await?;
    if !fresh {
        // A member that comes back must not stand for election before it
        // has heard the group: without pre-vote (openraft 0.9) its higher
        // term would depose a healthy leader. It may stand once it has
        // seen a leader, or after a while alone (the whole group
        // restarting).
        member.raft.runtime_config().elect(false);
        tokio::spawn(allow_elections(member.raft.clone(), settings.id));
    }
    let joining_marker = raft_dir.join(JOINING);
    let joining = disk.exists(&joining_marker);
    if fresh && joining {
        info!(
            "joining the Raft group of nameservice {}: waiting to be added (cairn admin -addNameNode {})",
            settings.nameservice, settings.name
        );
    } else if fresh {
        info!(members = ?settings.members, "forming the Raft group of nameservice {}", settings.nameservice);
        // In the background: a member after the first waits its turn, and
        // serves (as a standby) meanwhile.
        let (raft, me, members) = (member.raft.clone(), settings.id, settings.members.clone());
        let timing = settings.timing.clone();
        tokio::spawn(async move {
            match crate::journal::raft::member::form_group(&raft, me, &members, &timing).await {
                Ok(true) => info!("Raft group formed here"),
                Ok(false) => info!("Raft group formed by another member"),
                Err(e) => info!(error = %e, "Raft group not formed here (another member did)"),
            }
        });
    }
    if !fresh && joining {
        // Part of the group now: a later start is an ordinary one.
        disk.remove_file(&joining_marker)?;
    }
    // Not active until Raft says so; observers stay observers.
    let follower_state = match config.ha_initial_state {
        HaServiceState::Observer => HaServiceState::Observer,
        _ => HaServiceState::Standby,
    };
    // Start-up safe mode ends when the block threshold is met, without
    // the extension: a member restarted while the others serve may be
    // elected within seconds, and the DataNodes, which report to every
    // member all along, are not starting late.
    config.safe_mode.extension = std::time::Duration::ZERO;
    let edit_log = member.edit_log.clone();
    let state = crate::new_state_shared(config, version, shared, edit_log.clone(), |state| {
        state.ha.set(follower_state);
        match state.blocks.lock() {
            Ok(mut bm) => {
                bm.set_active(false);
            }
            Err(_) => cairn_common::fatal::stop("block manager lock poisoned (start-up)"),
        }
        let as_hook: Arc<dyn AppliedEdits> = state.clone();
        let _ = hook.set(as_hook);
    });
    state.startup_progress.take_from(progress);
    info!(
        member = %settings.name,
        raft_id = settings.id,
        raft_address = settings.own_address(),
        "NameNode is a member of the Raft group of nameservice {}",
        settings.nameservice
    );
    let leadership = tokio::spawn(follower::follow_leadership(
        state.clone(),
        edit_log,
        follower_state,
        shutdown.clone(),
    ));
    let result = serve_namenode(state, listeners, None, last_txid, shutdown).await;
    leadership.abort();
    member.shutdown().await;
    result
}

/// Marks a member formatted by `-bootstrapStandby`: its first start waits
/// to be added to the group instead of forming one.
pub const JOINING: &str = "JOINING";

/// Formats the metadata directories of a new member of an existing Raft
/// nameservice with `info` (the namespace identity the group's active
/// reports) and an empty namespace, and marks it as joining: it gets the
/// namespace from the group's snapshot and log once added.
///
/// # Errors
/// I/O errors, or directories formatted already (unless `force`).
pub fn bootstrap_standby(
    config: &NameNodeConfig,
    info: &storage::VersionInfo,
    force: bool,
) -> Result<(), NameNodeError> {
    let raft = raft_dir(config)?;
    let superuser = UserDirectory::current_user();
    let ns = crate::namespace::Namespace::new(
        &superuser,
        &config.superuser_group,
        info.created_ms,
        config.limits.clone(),
    );
    storage::format(&RealDisk, &config.name_dirs, info, &ns, force)?;
    RealDisk.create_dir_all(&raft)?;
    cairn_common::durable::write_atomic(&raft.join(JOINING), b"")?;
    Ok(())
}

/// `cairn namenode -recover` on a member: recovers its Raft log
/// ([`crate::journal::raft::recovery`]), asking `decide` at damage.
///
/// # Errors
/// No metadata directory, I/O errors, or the operator quitting.
pub fn recover_log(
    config: &NameNodeConfig,
    decide: &mut dyn FnMut(&str) -> crate::storage::RecoveryChoice,
) -> Result<crate::journal::raft::recovery::Recovered, NameNodeError> {
    Ok(crate::journal::raft::recovery::recover(
        &RealDisk,
        &raft_dir(config)?,
        decide,
    )?)
}

/// A member's Raft directory: `raft` in its first metadata directory.
fn raft_dir(config: &NameNodeConfig) -> Result<std::path::PathBuf, NameNodeError> {
    match config.name_dirs.first() {
        Some(d) => Ok(d.join("raft")),
        None => Err(storage::StorageError::NotFormatted(String::new()).into()),
    }
}

/// Loads the name directories' image again: the base of a member's
/// first snapshot.
fn base_image(
    config: &NameNodeConfig,
    disk: Arc<dyn Disk>,
    superuser: &str,
) -> crate::journal::raft::snapshot::BaseImage {
    let dirs = config.name_dirs.clone();
    let superuser = superuser.to_string();
    let group = config.superuser_group.clone();
    let limits = config.limits.clone();
    Arc::new(move || {
        let (_, ns, txid) = storage::load(disk.as_ref(), &dirs, &superuser, &group, limits.clone())
            .map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok((ns, txid))
    })
}

/// How long a returning member stays out of elections when it hears no
/// leader.
const QUIET_START: std::time::Duration = std::time::Duration::from_secs(5);

/// Lets `raft` stand for election once it has seen another member lead,
/// or after [`QUIET_START`].
async fn allow_elections(raft: crate::journal::raft::Raft, me: crate::journal::raft::NodeId) {
    let mut metrics = raft.metrics();
    let _ = tokio::time::timeout(QUIET_START, async {
        loop {
            if metrics
                .borrow_and_update()
                .current_leader
                .is_some_and(|l| l != me)
            {
                return;
            }
            if metrics.changed().await.is_err() {
                return;
            }
        }
    })
    .await;
    raft.runtime_config().elect(true);
}

//! ClientDatanodeProtocol's administration calls (`hdfs dfsadmin
//! -getDatanodeInfo`, `-triggerBlockReport`, `-getBalancerBandwidth`,
//! `-evictWriters`, `-shutdownDatanode`, `-getVolumeReport`,
//! `-deleteBlockPool`, `-reconfig datanode`), as a Hadoop 3.4.1 DataNode
//! answers them: every one but getDatanodeInfo and getBalancerBandwidth
//! for the DataNode's own user or the supergroup only (HDFS's
//! `checkSuperuserPrivilege`, "Permission denied."), none when
//! `dfs.permissions.enabled` is false.
//!
//! Reconfiguration: no property of a Cairn DataNode changes while it runs,
//! so the list of reconfigurable properties is empty, and a started
//! reconfiguration changes nothing (HDFS skips every changed property that
//! is not reconfigurable; its status then lists no change).

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use cairn_common::clock::now_ms_signed as now_ms;
use cairn_proto::exceptions;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::{CallContext, CallError};
use prost::Message;
use tokio_util::sync::CancellationToken;
use tracing::info;

use crate::ids::BlockPoolId;
use crate::refresh::Refresher;
use crate::Shared;

/// HDFS's `hadoop.common.configuration.version` and
/// `hadoop.hdfs.configuration.version` defaults, as getDatanodeInfo
/// reports them.
const CONFIG_VERSION: &str = "core-3.0.0,hdfs-1";

/// The full block reports asked for by `triggerBlockReport`, which the
/// actors watch (an incremental one only wakes them: each sends its
/// pending incremental report at once, which every NameNode gets soon
/// anyway). Counted per request, each naming the NameNode addresses it
/// is for (none: every NameNode), so requests for different NameNodes
/// that arrive before the actors look stay apart, as HDFS's per-actor
/// triggers do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportTrigger {
    full: Vec<(Vec<SocketAddr>, u64)>,
}

impl ReportTrigger {
    /// How many full reports were asked of the actor reporting to
    /// `namenode`, ever: it reports again when this grows.
    pub fn full_requests_for(&self, namenode: SocketAddr) -> u64 {
        self.full
            .iter()
            .filter(|(targets, _)| targets.is_empty() || targets.contains(&namenode))
            .map(|(_, n)| n)
            .sum()
    }

    fn ask_full(&mut self, targets: Vec<SocketAddr>) {
        match self.full.iter_mut().find(|(t, _)| *t == targets) {
            Some((_, n)) => *n += 1,
            None => self.full.push((targets, 1)),
        }
    }
}

/// The state the administration calls need.
pub struct Administration {
    shared: Arc<Shared>,
    /// The DataNode's own shutdown (`shutdownDatanode`).
    shutdown: CancellationToken,
    own_user: String,
    shutting_down: AtomicBool,
    /// The last reconfiguration's start and end, ms since the epoch.
    reconfigured: Mutex<Option<(i64, i64)>>,
}

/// An administration call's answer.
pub(crate) fn reply(m: &impl Message) -> Result<Bytes, CallError> {
    Ok(Bytes::from(m.encode_to_vec()))
}

impl Administration {
    pub(crate) fn new(shared: Arc<Shared>, shutdown: CancellationToken) -> Self {
        Administration {
            shared,
            shutdown,
            own_user: cairn_common::local_users::process_user(),
            shutting_down: AtomicBool::new(false),
            reconfigured: Mutex::new(None),
        }
    }

    pub(crate) fn refresher(&self) -> &Refresher {
        &self.shared.refresher
    }

    /// HDFS's `DataNode.checkSuperuserPrivilege`: with permissions on,
    /// only the DataNode's own user or a member of the supergroup.
    pub(crate) fn check_superuser(&self, ctx: &CallContext) -> Result<(), CallError> {
        let user: &str = &ctx.user;
        let config = &self.shared.config;
        if !config.permissions_enabled || user == self.own_user {
            return Ok(());
        }
        // A group lookup may be slow (NSS); admin calls are rare.
        if cairn_common::local_users::groups_of(user).contains(&config.supergroup) {
            return Ok(());
        }
        Err(CallError::remote(
            exceptions::ACCESS_CONTROL,
            "Permission denied.",
        ))
    }

    /// Runs `method` if it is one of this module's.
    pub(crate) async fn call(
        &self,
        ctx: &CallContext,
        method: &str,
        request: Bytes,
    ) -> Option<Result<Bytes, CallError>> {
        Some(match method {
            "getDatanodeInfo" => self.datanode_info(request),
            "triggerBlockReport" => self.trigger_block_report(ctx, request).await,
            "getBalancerBandwidth" => pb::GetBalancerBandwidthRequestProto::decode(request)
                .map_err(CallError::from)
                .and_then(|_| {
                    let bandwidth = self.shared.balancer_bandwidth.load(Ordering::Acquire);
                    reply(&pb::GetBalancerBandwidthResponseProto { bandwidth })
                }),
            "evictWriters" => self.evict_writers(ctx, request),
            "shutdownDatanode" => self.shutdown_datanode(ctx, request),
            "getVolumeReport" => self.volume_report(ctx, request),
            "deleteBlockPool" => self.delete_block_pool(ctx, request).await,
            "startReconfiguration" => self.start_reconfiguration(ctx, request),
            "getReconfigurationStatus" => self.reconfiguration_status(ctx, request),
            "listReconfigurableProperties" => {
                pb::ListReconfigurablePropertiesRequestProto::decode(request)
                    .map_err(CallError::from)
                    .and_then(|_| self.check_superuser(ctx))
                    .and_then(|()| {
                        reply(&pb::ListReconfigurablePropertiesResponseProto { name: Vec::new() })
                    })
            }
            other => {
                let superuser = || self.check_superuser(ctx);
                return crate::disk_balancer::call(&self.shared, &superuser, other, request);
            }
        })
    }

    fn datanode_info(&self, request: Bytes) -> Result<Bytes, CallError> {
        pb::GetDatanodeInfoRequestProto::decode(request)?;
        reply(&pb::GetDatanodeInfoResponseProto {
            local_info: pb::DatanodeLocalInfoProto {
                software_version: crate::namenode_link::SOFTWARE_VERSION.into(),
                config_version: CONFIG_VERSION.into(),
                uptime: self.shared.started.elapsed().as_secs(),
            },
        })
    }

    /// `triggerBlockReport`: the actors (of `nnAddress` only, when given)
    /// report at once; a NameNode this DataNode does not serve is nothing
    /// to do, as in HDFS.
    async fn trigger_block_report(
        &self,
        ctx: &CallContext,
        request: Bytes,
    ) -> Result<Bytes, CallError> {
        let r = pb::TriggerBlockReportRequestProto::decode(request)?;
        self.check_superuser(ctx)?;
        let targets = match r.nn_address.as_deref().filter(|a| !a.is_empty()) {
            None => Vec::new(),
            Some(addr) => {
                let addr = addr.to_string();
                // Every address the name has: the actor's is one of them
                // whichever family it took.
                let resolved = tokio::task::spawn_blocking(move || {
                    addr.to_socket_addrs()
                        .map(|a| a.collect::<Vec<_>>())
                        .unwrap_or_default()
                })
                .await
                .unwrap_or_default();
                if resolved.is_empty() {
                    // Names no address: no actor reports to it.
                    return reply(&pb::TriggerBlockReportResponseProto {});
                }
                resolved
            }
        };
        info!(caller = %ctx.user, full = !r.incremental, ?targets, "block report triggered");
        self.shared.report_trigger.send_modify(|t| {
            if !r.incremental {
                t.ask_full(targets);
            }
        });
        reply(&pb::TriggerBlockReportResponseProto {})
    }

    fn evict_writers(&self, ctx: &CallContext, request: Bytes) -> Result<Bytes, CallError> {
        pb::EvictWritersRequestProto::decode(request)?;
        self.check_superuser(ctx)?;
        let told = self.shared.storage.evict_writers();
        info!(caller = %ctx.user, writers = told, "Evicting all writers.");
        reply(&pb::EvictWritersResponseProto {})
    }

    /// `shutdownDatanode`: answers, then stops the DataNode (after a
    /// second, or at once for an upgrade, as HDFS).
    fn shutdown_datanode(&self, ctx: &CallContext, request: Bytes) -> Result<Bytes, CallError> {
        let r = pb::ShutdownDatanodeRequestProto::decode(request)?;
        self.check_superuser(ctx)?;
        if self.shutting_down.swap(true, Ordering::AcqRel) {
            return Err(CallError::io("Shutdown already in progress."));
        }
        info!(
            caller = %ctx.user,
            upgrade = r.for_upgrade,
            "shutdownDatanode command received; shutting down the DataNode"
        );
        let shutdown = self.shutdown.clone();
        let delay = if r.for_upgrade {
            Duration::ZERO
        } else {
            Duration::from_secs(1)
        };
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            shutdown.cancel();
        });
        reply(&pb::ShutdownDatanodeResponseProto {})
    }

    /// `getVolumeReport`: the one data directory.
    fn volume_report(&self, ctx: &CallContext, request: Bytes) -> Result<Bytes, CallError> {
        pb::GetVolumeReportRequestProto::decode(request)?;
        self.check_superuser(ctx)?;
        let storage = &self.shared.storage;
        let config = &self.shared.config;
        let usage = storage
            .usage()
            .map_err(|e| CallError::io(format!("getVolumeReport: {e}")))?;
        reply(&pb::GetVolumeReportResponseProto {
            volume_info: vec![pb::DatanodeVolumeInfoProto {
                path: storage.data_dir().display().to_string(),
                storage_type: config.storage_type.proto(),
                used_space: usage.dfs_used,
                free_space: usage.remaining,
                reserved_space: config.reserved_bytes,
                // Cairn reserves no space ahead for replicas being written.
                reserved_space_for_replicas: 0,
                num_blocks: storage.replica_count() as u64,
            }],
        })
    }

    /// `deleteBlockPool`: only a pool no NameNode is served for.
    async fn delete_block_pool(
        &self,
        ctx: &CallContext,
        request: Bytes,
    ) -> Result<Bytes, CallError> {
        let r = pb::DeleteBlockPoolRequestProto::decode(request)?;
        self.check_superuser(ctx)?;
        info!(pool = %r.block_pool, force = r.force, "deleteBlockPool command received");
        let running = !self.shared.serving().is_empty()
            && self
                .shared
                .pools
                .lock()
                .is_ok_and(|p| p.contains(&r.block_pool));
        if running {
            return Err(CallError::io(
                "The block pool is still running. First do a refreshNamenodes to shutdown the block pool service",
            ));
        }
        let Ok(pool) = BlockPoolId::new(&r.block_pool) else {
            // Not a pool name: no directory of it to delete.
            return reply(&pb::DeleteBlockPoolResponseProto {});
        };
        let storage = self.shared.storage.clone();
        tokio::task::spawn_blocking(move || storage.delete_pool(&pool, r.force))
            .await
            .map_err(|e| CallError::io(format!("deleteBlockPool: {e}")))?
            .map_err(CallError::io)?;
        reply(&pb::DeleteBlockPoolResponseProto {})
    }

    /// `startReconfiguration`: nothing is reconfigurable, so the task
    /// ends at once with no change.
    fn start_reconfiguration(&self, ctx: &CallContext, request: Bytes) -> Result<Bytes, CallError> {
        pb::StartReconfigurationRequestProto::decode(request)?;
        self.check_superuser(ctx)?;
        let now = now_ms();
        if let Ok(mut r) = self.reconfigured.lock() {
            *r = Some((now, now));
        }
        info!(caller = %ctx.user, "reconfiguration started: no property is reconfigurable");
        reply(&pb::StartReconfigurationResponseProto {})
    }

    fn reconfiguration_status(
        &self,
        ctx: &CallContext,
        request: Bytes,
    ) -> Result<Bytes, CallError> {
        pb::GetReconfigurationStatusRequestProto::decode(request)?;
        self.check_superuser(ctx)?;
        let last = self.reconfigured.lock().ok().and_then(|r| *r);
        reply(&match last {
            None => pb::GetReconfigurationStatusResponseProto {
                start_time: 0,
                end_time: None,
                changes: Vec::new(),
            },
            Some((start, end)) => pb::GetReconfigurationStatusResponseProto {
                start_time: start,
                end_time: Some(end),
                changes: Vec::new(),
            },
        })
    }
}

/// `ReconfigurationProtocol` on the IPC port: HDFS's DataNode serves the
/// three reconfiguration calls under that name too (Hadoop's own
/// `dfsadmin -reconfig datanode` uses ClientDatanodeProtocol's).
pub struct ReconfigurationService {
    pub admin: Arc<Administration>,
}

impl cairn_rpc::Protocol for ReconfigurationService {
    fn name(&self) -> &str {
        cairn_proto::protocols::RECONFIGURATION_PROTOCOL
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> futures::future::BoxFuture<'static, Result<Bytes, CallError>> {
        Box::pin(async move {
            let reconfiguration = matches!(
                method.as_str(),
                "startReconfiguration"
                    | "getReconfigurationStatus"
                    | "listReconfigurableProperties"
            );
            if !reconfiguration {
                return Err(CallError::NoSuchMethod(method.to_string()));
            }
            self.admin
                .call(&ctx, &method, request)
                .await
                .unwrap_or(Err(CallError::NoSuchMethod(method.to_string())))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_report_requests_stay_with_the_namenodes_they_name() {
        let a: SocketAddr = "127.0.0.1:8020".parse().expect("addr");
        let b: SocketAddr = "[::1]:8020".parse().expect("addr");
        let mut t = ReportTrigger::default();
        t.ask_full(vec![a]);
        assert_eq!((t.full_requests_for(a), t.full_requests_for(b)), (1, 0));
        // A name resolving to both families reaches either actor.
        t.ask_full(vec![b, a]);
        assert_eq!((t.full_requests_for(a), t.full_requests_for(b)), (2, 1));
        // No address: every actor.
        t.ask_full(Vec::new());
        t.ask_full(vec![a]);
        assert_eq!((t.full_requests_for(a), t.full_requests_for(b)), (4, 2));
    }
}

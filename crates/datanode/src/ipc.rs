//! ClientDatanodeProtocol on the DataNode's IPC port (PROTOCOL.md §3.12),
//! served by `cairn_rpc::server`. The Java reader calls
//! `getReplicaVisibleLength` for a file whose last block is still being
//! written (over SASL even with security off, which the RPC server
//! handles); `dfsadmin -refreshNamenodes` calls `refreshNamenodes`
//! ([`crate::refresh`]; HDFS's superuser check first); the other
//! administration calls are in [`crate::admin`]; every other method
//! answers `RpcNoSuchMethodException`.
//!
//! InterDatanodeProtocol is served on the same port: the primary DataNode
//! of a block recovery calls `initReplicaRecovery` and
//! `updateReplicaUnderRecovery` on every DataNode holding a replica
//! ([`InterDatanodeService`]; the primary's side is in
//! `block_recovery`).

use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::exceptions;
use cairn_proto::hadoop::hdfs::{
    BlockProto, GetReplicaVisibleLengthRequestProto, GetReplicaVisibleLengthResponseProto,
    InitReplicaRecoveryRequestProto, InitReplicaRecoveryResponseProto,
    RefreshNamenodesRequestProto, RefreshNamenodesResponseProto, ReplicaStateProto,
    UpdateReplicaUnderRecoveryRequestProto, UpdateReplicaUnderRecoveryResponseProto,
};
use cairn_proto::protocols::{CLIENT_DATANODE_PROTOCOL, INTER_DATANODE_PROTOCOL};
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;
use prost::Message;

use crate::admin::Administration;
use crate::ids::{BlockId, BlockPoolId, GenStamp, ReplicaKey};
use crate::storage::{ReplicaState, ReportedState, Storage, StorageError};

/// The ClientDatanodeProtocol service.
pub struct ClientDatanodeService {
    storage: Arc<Storage>,
    admin: Arc<Administration>,
}

impl ClientDatanodeService {
    /// A service answering from `storage`'s replica map.
    pub fn new(storage: Arc<Storage>, admin: Arc<Administration>) -> Self {
        ClientDatanodeService { storage, admin }
    }

    /// `refreshNamenodes`: re-read the configuration, serve its NameNodes.
    async fn refresh_namenodes(&self, ctx: &CallContext) -> Result<(), CallError> {
        self.admin.check_superuser(ctx)?;
        let done = self
            .admin
            .refresher()
            .refresh()
            .await
            .map_err(|why| CallError::io(format!("refreshNamenodes: {why}")))?;
        tracing::info!(
            caller = %ctx.user,
            added = ?done.added,
            removed = ?done.removed,
            serving = ?done.serving,
            "NameNodes refreshed from the configuration"
        );
        Ok(())
    }

    /// Bytes of the replica a reader may rely on: a finalized replica's
    /// length, or what a replica being written has acknowledged.
    ///
    /// # Errors
    /// `ReplicaNotFoundException` for an unknown replica, `IOException` when
    /// ours is older than the block asked about.
    pub fn visible_length(
        &self,
        req: &GetReplicaVisibleLengthRequestProto,
    ) -> Result<u64, CallError> {
        let b = &req.block;
        let key = ReplicaKey {
            pool: BlockPoolId::new(&b.pool_id).map_err(CallError::io)?,
            block: BlockId(b.block_id),
        };
        let replica = self.storage.get(&key).ok_or_else(|| {
            CallError::remote(
                exceptions::REPLICA_NOT_FOUND,
                format!("Replica not found for {key}"),
            )
        })?;
        if replica.gs < GenStamp(b.generation_stamp) {
            return Err(CallError::io(format!(
                "replica.getGenerationStamp() < block.getGenerationStamp(), block={key}, replica GS {}",
                replica.gs
            )));
        }
        Ok(match &replica.state {
            ReplicaState::Finalized { len } => *len,
            ReplicaState::Rbw(s) => s.acked(),
        })
    }
}

impl Protocol for ClientDatanodeService {
    fn name(&self) -> &str {
        CLIENT_DATANODE_PROTOCOL
    }

    /// `ClientDatanodeProtocol.proto`'s service, as HDFS names its server.
    fn service_name(&self) -> &str {
        "ClientDatanodeProtocolService"
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, Result<Bytes, CallError>> {
        Box::pin(async move {
            match method.as_str() {
                "refreshNamenodes" => {
                    RefreshNamenodesRequestProto::decode(request)?;
                    self.refresh_namenodes(&ctx).await?;
                    Ok(Bytes::from(
                        RefreshNamenodesResponseProto {}.encode_to_vec(),
                    ))
                }
                "getReplicaVisibleLength" => {
                    let req = GetReplicaVisibleLengthRequestProto::decode(request)?;
                    let length = self.visible_length(&req)?;
                    Ok(Bytes::from(
                        GetReplicaVisibleLengthResponseProto { length }.encode_to_vec(),
                    ))
                }
                other => match self.admin.call(&ctx, other, request).await {
                    Some(result) => result,
                    None => Err(CallError::NoSuchMethod(method.to_string())),
                },
            }
        })
    }
}

/// The InterDatanodeProtocol service (block recovery, replica side).
pub struct InterDatanodeService {
    storage: Arc<Storage>,
    ibr: crate::ibr::IbrQueue,
}

fn storage_call_error(e: StorageError) -> CallError {
    match e {
        StorageError::NotFound(key) => CallError::remote(
            exceptions::REPLICA_NOT_FOUND,
            format!("Replica not found for {key}"),
        ),
        e => CallError::io(e.to_string()),
    }
}

impl InterDatanodeService {
    /// A service working on `storage`, reporting recovered replicas to
    /// `ibr`.
    pub fn new(storage: Arc<Storage>, ibr: crate::ibr::IbrQueue) -> Self {
        InterDatanodeService { storage, ibr }
    }

    /// `initReplicaRecovery`: takes our replica over for the recovery and
    /// describes it.
    ///
    /// # Errors
    /// `IOException` for a replica that cannot take part (stamps out of
    /// order, newer recovery) or an I/O error.
    pub async fn init_replica_recovery(
        &self,
        req: InitReplicaRecoveryRequestProto,
    ) -> Result<InitReplicaRecoveryResponseProto, CallError> {
        let rb = req.block;
        let b = rb.block.b;
        let key = ReplicaKey {
            pool: BlockPoolId::new(&b.pool_id).map_err(CallError::io)?,
            block: BlockId(b.block_id),
        };
        let storage = self.storage.clone();
        let (block_gs, recovery_id) = (GenStamp(b.generation_stamp), GenStamp(rb.new_gen_stamp));
        let k2 = key.clone();
        let found = tokio::task::spawn_blocking(move || {
            storage.init_replica_recovery(&k2, block_gs, recovery_id)
        })
        .await
        .map_err(|e| CallError::io(e.to_string()))?
        .map_err(storage_call_error)?;
        Ok(match found {
            None => InitReplicaRecoveryResponseProto {
                replica_found: false,
                state: None,
                block: None,
            },
            Some(info) => {
                tracing::info!(replica = %key, len = info.len, gs = %info.gs, recovery = %recovery_id, "replica taken over for block recovery");
                InitReplicaRecoveryResponseProto {
                    replica_found: true,
                    state: Some(match info.state {
                        ReportedState::Finalized => ReplicaStateProto::Finalized as i32,
                        ReportedState::Rbw => ReplicaStateProto::Rbw as i32,
                        ReportedState::Rwr => ReplicaStateProto::Rwr as i32,
                        ReportedState::Rur => ReplicaStateProto::Rur as i32,
                        ReportedState::Temporary => ReplicaStateProto::Temporary as i32,
                    }),
                    block: Some(BlockProto {
                        block_id: key.block.0,
                        gen_stamp: info.gs.0,
                        num_bytes: Some(info.len),
                    }),
                }
            }
        })
    }

    /// `updateReplicaUnderRecovery`: cuts, restamps and finalizes our
    /// replica; answers our storage id.
    ///
    /// # Errors
    /// `ReplicaNotFoundException`, `IOException`.
    pub async fn update_replica_under_recovery(
        &self,
        req: UpdateReplicaUnderRecoveryRequestProto,
    ) -> Result<UpdateReplicaUnderRecoveryResponseProto, CallError> {
        let b = &req.block;
        let key = ReplicaKey {
            pool: BlockPoolId::new(&b.pool_id).map_err(CallError::io)?,
            block: BlockId(b.block_id),
        };
        // A new block id: copy-on-truncate (the old replica stays whole).
        let copy_into = req
            .new_block_id
            .filter(|&id| id != 0 && id != b.block_id)
            .map(BlockId);
        let storage = self.storage.clone();
        let (recovery_id, new_len) = (GenStamp(req.recovery_id), req.new_length);
        let k2 = key.clone();
        let fin = tokio::task::spawn_blocking(move || match copy_into {
            Some(new) => storage.copy_replica_for_truncate(&k2, new, recovery_id, new_len),
            None => storage.update_replica_under_recovery(&k2, recovery_id, new_len),
        })
        .await
        .map_err(|e| CallError::io(e.to_string()))?
        .map_err(storage_call_error)?;
        tracing::info!(replica = %key, len = fin.len, gs = %fin.gs, "replica recovered and finalized");
        // Every NameNode hears of the new stamp and length, or of the
        // copy (HDFS's DataNode does the same, for HA): a standby would
        // otherwise keep only the old replica, stale once it applies the
        // recovery, and serve no location for the block after a failover.
        // The NameNodes keep a report of a copy that comes before the
        // commit that adds its block.
        self.ibr.received(&fin, self.storage.storage_id());
        Ok(UpdateReplicaUnderRecoveryResponseProto {
            storage_uuid: Some(self.storage.storage_id().to_string()),
        })
    }
}

impl Protocol for InterDatanodeService {
    fn name(&self) -> &str {
        INTER_DATANODE_PROTOCOL
    }

    fn call(
        self: Arc<Self>,
        _ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, Result<Bytes, CallError>> {
        Box::pin(async move {
            match method.as_str() {
                "initReplicaRecovery" => {
                    let req = InitReplicaRecoveryRequestProto::decode(request)?;
                    let resp = self.init_replica_recovery(req).await?;
                    Ok(Bytes::from(resp.encode_to_vec()))
                }
                "updateReplicaUnderRecovery" => {
                    let req = UpdateReplicaUnderRecoveryRequestProto::decode(request)?;
                    let resp = self.update_replica_under_recovery(req).await?;
                    Ok(Bytes::from(resp.encode_to_vec()))
                }
                _ => Err(CallError::NoSuchMethod(method.to_string())),
            }
        })
    }
}

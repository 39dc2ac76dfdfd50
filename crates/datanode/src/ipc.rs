//! ClientDatanodeProtocol on the DataNode's IPC port (PROTOCOL.md §3.12),
//! served by `cairn_rpc::server`. The Java reader calls
//! `getReplicaVisibleLength` for a file whose last block is still being
//! written (over SASL even with security off, which the RPC server
//! handles); every other method answers `RpcNoSuchMethodException`.

use std::sync::Arc;

use bytes::Bytes;
use cairn_proto::exceptions;
use cairn_proto::hadoop::hdfs::{
    GetReplicaVisibleLengthRequestProto, GetReplicaVisibleLengthResponseProto,
};
use cairn_proto::protocols::CLIENT_DATANODE_PROTOCOL;
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;
use prost::Message;

use crate::ids::{BlockId, BlockPoolId, GenStamp, ReplicaKey};
use crate::storage::{ReplicaState, Storage};

/// The ClientDatanodeProtocol service.
pub struct ClientDatanodeService {
    storage: Arc<Storage>,
}

impl ClientDatanodeService {
    /// A service answering from `storage`'s replica map.
    pub fn new(storage: Arc<Storage>) -> Self {
        ClientDatanodeService { storage }
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

    fn call(
        self: Arc<Self>,
        _ctx: CallContext,
        method: String,
        request: Bytes,
    ) -> BoxFuture<'static, Result<Bytes, CallError>> {
        Box::pin(async move {
            match method.as_str() {
                "getReplicaVisibleLength" => {
                    let req = GetReplicaVisibleLengthRequestProto::decode(request)?;
                    let length = self.visible_length(&req)?;
                    Ok(Bytes::from(
                        GetReplicaVisibleLengthResponseProto { length }.encode_to_vec(),
                    ))
                }
                _ => Err(CallError::NoSuchMethod(method)),
            }
        })
    }
}

//! `org.apache.hadoop.hdfs.server.protocol.NamenodeProtocol`, the calls
//! the Balancer and the Mover make besides ClientProtocol's (`hdfs
//! balancer`, `hdfs mover`): versionRequest, getBlockKeys (none: Cairn
//! runs without block tokens, as HDFS without Kerberos), isUpgradeFinalized
//! and isRollingUpgrade (Cairn keeps no upgrade state: always finalized,
//! never rolling), getBlocks (a DataNode's blocks to move), and the
//! transaction ids a checkpointer reads. As in HDFS, all but versionRequest
//! are the superuser's. Checkpointing calls (rollEditLog, startCheckpoint,
//! ...) are not served: Cairn has no secondary or backup NameNode.

use std::hash::{BuildHasher, Hasher};
use std::sync::Arc;

use bytes::Bytes;
use cairn_common::storage_type::StorageType;
use cairn_proto::exceptions as ex;
use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::{CallContext, CallError, Protocol};
use futures::future::BoxFuture;

use crate::datanode_service::namespace_info;
use crate::datanodes::DatanodeUuid;
use crate::service::{decode, encode, CallResult, NameNodeState};

/// `GetBlocksRequestProto.minBlockSize`'s default (10 MiB).
const DEFAULT_MIN_BLOCK_SIZE: u64 = 10 << 20;

pub struct NamenodeProtocolService {
    pub state: Arc<NameNodeState>,
}

impl NamenodeProtocolService {
    async fn run(&self, ctx: &CallContext, method: &str, request: Bytes) -> CallResult {
        if method == "versionRequest" {
            return encode(&pb::VersionResponseProto {
                info: namespace_info(&self.state),
            });
        }
        let caller = self.state.users.caller_async(Arc::clone(&ctx.user)).await;
        match method {
            "getBlocks" => {
                let r: pb::GetBlocksRequestProto = decode(&request)?;
                self.get_blocks(ctx, &caller, &r).await
            }
            "getBlockKeys" => {
                decode::<pb::GetBlockKeysRequestProto>(&request)?;
                self.state.require_superuser(&caller, "getBlockKeys")?;
                encode(&pb::GetBlockKeysResponseProto {
                    keys: Some(pb::ExportedBlockKeysProto::tokens_off()),
                })
            }
            "isUpgradeFinalized" => {
                decode::<pb::IsUpgradeFinalizedRequestProto>(&request)?;
                self.state
                    .require_superuser(&caller, "isUpgradeFinalized")?;
                encode(&pb::IsUpgradeFinalizedResponseProto {
                    is_upgrade_finalized: true,
                })
            }
            "isRollingUpgrade" => {
                decode::<pb::IsRollingUpgradeRequestProto>(&request)?;
                self.state.require_superuser(&caller, "isRollingUpgrade")?;
                encode(&pb::IsRollingUpgradeResponseProto {
                    is_rolling_upgrade: false,
                })
            }
            "getTransactionId" => {
                decode::<pb::GetTransactionIdRequestProto>(&request)?;
                self.state.require_superuser(&caller, "getTransactionId")?;
                encode(&pb::GetTransactionIdResponseProto {
                    tx_id: self.state.journal.last_txid().0,
                })
            }
            "getMostRecentCheckpointTxId" => {
                decode::<pb::GetMostRecentCheckpointTxIdRequestProto>(&request)?;
                self.state
                    .require_superuser(&caller, "getMostRecentCheckpointTxId")?;
                encode(&pb::GetMostRecentCheckpointTxIdResponseProto {
                    tx_id: self.state.checkpoints.lock().map_or(0, |l| l.txid),
                })
            }
            other => Err(CallError::NoSuchMethod(other.to_string())),
        }
    }

    /// `getBlocks`: HDFS's checks in its order (sizes, superuser, safe
    /// mode, then the HA state), then blocks of the DataNode from a random
    /// one on until `size` bytes (`BlockManager.getBlocksWithLocations`).
    /// Cairn does not record when a block was added, so no block is held
    /// back as "hot" (`timeInterval`).
    async fn get_blocks(
        &self,
        ctx: &CallContext,
        caller: &crate::namespace::permission::Caller,
        r: &pb::GetBlocksRequestProto,
    ) -> CallResult {
        // Java reads the uint64 fields as longs; HDFS names `size` in
        // both messages.
        let size = r.size as i64;
        let min_bytes = r.min_block_size.unwrap_or(DEFAULT_MIN_BLOCK_SIZE) as i64;
        if size <= 0 || min_bytes < 0 {
            return Err(CallError::remote(
                ex::ILLEGAL_ARGUMENT,
                format!("Unexpected not positive size: {size}"),
            ));
        }
        self.state.require_superuser(caller, "getBlocks")?;
        if self.state.in_safe_mode() {
            self.state.refuse_in_safe_mode("Cannot execute getBlocks")?;
        }
        self.state.check_ha(ctx, "getBlocks").await?;
        let uuid = DatanodeUuid(r.datanode.datanode_uuid.clone());
        let wanted = r.storage_type.and_then(StorageType::from_proto);
        let node_type = self.state.lock_datanodes()?.storage_type(&uuid);
        let start = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish() as usize;
        let blocks = self.state.lock_blocks()?.movable_blocks(
            &uuid,
            size.unsigned_abs(),
            min_bytes.unsigned_abs(),
            start,
            |_| wanted.is_none_or(|t| t == node_type),
        );
        let Some(blocks) = blocks else {
            return Err(CallError::remote(
                ex::HADOOP_ILLEGAL_ARGUMENT,
                format!(
                    "Datanode {}:{} not found.",
                    r.datanode.ip_addr, r.datanode.xfer_port
                ),
            ));
        };
        let datanodes = self.state.lock_datanodes()?;
        let blocks = blocks
            .into_iter()
            .map(|b| pb::BlockWithLocationsProto {
                block: pb::BlockProto {
                    block_id: b.id.0,
                    gen_stamp: b.gs.0,
                    num_bytes: Some(b.num_bytes),
                },
                storage_types: b
                    .locations
                    .iter()
                    .map(|(d, _)| datanodes.storage_type(d).proto())
                    .collect(),
                datanode_uuids: b.locations.iter().map(|(d, _)| d.0.clone()).collect(),
                storage_uuids: b.locations.into_iter().map(|(_, s)| s).collect(),
            })
            .collect();
        encode(&pb::GetBlocksResponseProto {
            blocks: pb::BlocksWithLocationsProto { blocks },
        })
    }
}

impl Protocol for NamenodeProtocolService {
    fn name(&self) -> &str {
        cairn_proto::protocols::NAMENODE_PROTOCOL
    }

    fn call(
        self: Arc<Self>,
        ctx: CallContext,
        method: cairn_rpc::MethodName,
        request: Bytes,
    ) -> BoxFuture<'static, CallResult> {
        Box::pin(async move { self.run(&ctx, &method, request).await })
    }
}

//! What the DataNode sends the NameNode unasked: heartbeats (with the
//! volume's space figures), full block reports, incremental reports of
//! finalized and deleted replicas, and corrupt replicas
//! (`reportBadBlocks`).

use cairn_proto::hadoop::hdfs::received_deleted_block_info_proto::BlockStatus;
use cairn_proto::hadoop::hdfs::{
    BlockProto, BlockReceivedAndDeletedRequestProto, BlockReceivedAndDeletedResponseProto,
    BlockReportContextProto, BlockReportRequestProto, BlockReportResponseProto, DatanodeInfoProto,
    ExtendedBlockProto, HeartbeatRequestProto, HeartbeatResponseProto, LocatedBlockProto,
    ReceivedDeletedBlockInfoProto, ReportBadBlocksRequestProto, ReportBadBlocksResponseProto,
    StorageReceivedDeletedBlocksProto, StorageReportProto,
};
use tracing::{debug, info};

use super::{LinkError, NameNodeLink, Session, MAX_XMITS};
use crate::block_report;
use crate::ibr::{IbrEntry, IbrStatus};
use crate::metrics::Metrics;

impl NameNodeLink {
    pub(super) async fn heartbeat(
        &self,
        s: &Session,
        request_lease: bool,
    ) -> Result<HeartbeatResponseProto, LinkError> {
        let storage = self.shared.storage.clone();
        let usage = tokio::task::spawn_blocking(move || storage.usage())
            .await
            .map_err(|e| LinkError::Invalid(e.to_string()))?
            .unwrap_or_default();
        let m = &self.shared.metrics;
        let xmits = MAX_XMITS - self.xmits.available_permits();
        let req = HeartbeatRequestProto {
            registration: s.registration.clone(),
            reports: vec![StorageReportProto {
                storage_uuid: self.shared.storage.storage_id().to_string(),
                failed: None,
                capacity: Some(usage.capacity),
                dfs_used: Some(usage.dfs_used),
                remaining: Some(usage.remaining),
                block_pool_used: Some(usage.dfs_used),
                storage: Some(self.storage_proto()),
                non_dfs_used: Some(usage.non_dfs_used),
                mount: Some(String::new()),
            }],
            xmits_in_progress: Some(u32::try_from(xmits).unwrap_or(0)),
            xceiver_count: Some(
                u32::try_from(Metrics::get(&m.xceivers_active)).unwrap_or(u32::MAX),
            ),
            failed_volumes: Some(0),
            request_full_block_report_lease: Some(request_lease),
            ..Default::default()
        };
        let began = std::time::Instant::now();
        let resp: HeartbeatResponseProto = self.call(&s.client, "sendHeartbeat", &req).await?;
        Metrics::inc(&m.heartbeats_sent);
        Metrics::add_since(&m.heartbeat_micros, began);
        Ok(resp)
    }

    pub(super) async fn block_report(&self, s: &Session, lease: u64) -> Result<(), LinkError> {
        let storage = self.shared.storage.clone();
        let pool = s.pool.clone();
        let replicas = tokio::task::spawn_blocking(move || storage.report(&pool))
            .await
            .map_err(|e| LinkError::Invalid(e.to_string()))?;
        let n = replicas.len();
        let report = block_report::storage_report(self.storage_proto(), &replicas, s.capabilities);
        let id = i64::from_be_bytes(
            uuid::Uuid::new_v4().as_bytes()[..8]
                .try_into()
                .unwrap_or([0; 8]),
        ) & i64::MAX;
        let req = BlockReportRequestProto {
            registration: s.registration.clone(),
            block_pool_id: s.pool.to_string(),
            reports: vec![report],
            context: Some(BlockReportContextProto {
                total_rpcs: 1,
                cur_rpc: 0,
                id,
                lease_id: Some(lease),
            }),
        };
        let began = std::time::Instant::now();
        let resp: BlockReportResponseProto = self.call(&s.client, "blockReport", &req).await?;
        Metrics::inc(&self.shared.metrics.block_reports_sent);
        Metrics::add_since(&self.shared.metrics.block_report_micros, began);
        info!(replicas = n, lease, "full block report sent");
        if let Some(cmd) = resp.cmd {
            self.commands(std::slice::from_ref(&cmd)).await?;
        }
        Ok(())
    }

    /// Reports every queued corrupt replica in one `reportBadBlocks` call.
    pub(super) async fn flush_bad(&mut self, s: &Session) -> Result<(), LinkError> {
        while let Ok(b) = self.bad_rx.try_recv() {
            if self.pending_bad.len() < crate::scanner::BAD_QUEUE_LEN {
                self.pending_bad.push(b);
            }
        }
        self.pending_bad.retain(|b| b.key.pool == s.pool);
        if self.pending_bad.is_empty() {
            return Ok(());
        }
        let me = DatanodeInfoProto {
            id: s.registration.datanode_id.clone(),
            ..Default::default()
        };
        let storage_id = self.shared.storage.storage_id().to_string();
        let blocks = self
            .pending_bad
            .iter()
            .map(|b| LocatedBlockProto {
                b: ExtendedBlockProto {
                    pool_id: b.key.pool.to_string(),
                    block_id: b.key.block.0,
                    generation_stamp: b.gs.0,
                    num_bytes: Some(0),
                },
                offset: 0,
                locs: vec![me.clone()],
                corrupt: true,
                block_token: crate::transfer::copy::empty_token(),
                is_cached: vec![false],
                storage_types: vec![self.shared.config.storage_type.proto()],
                storage_ids: vec![storage_id.clone()],
                ..Default::default()
            })
            .collect();
        let req = ReportBadBlocksRequestProto { blocks };
        let _: ReportBadBlocksResponseProto = self.call(&s.client, "reportBadBlocks", &req).await?;
        let n = self.pending_bad.len();
        Metrics::add(&self.shared.metrics.bad_blocks_reported, n as u64);
        info!(replicas = n, "corrupt replicas reported to the NameNode");
        self.pending_bad.clear();
        Ok(())
    }

    /// Sends every queued incremental report entry in one call.
    pub(super) async fn flush_ibr(&mut self, s: &Session) -> Result<(), LinkError> {
        while let Ok(e) = self.ibr_rx.try_recv() {
            self.keep(e);
        }
        if self.pending.is_empty() {
            return Ok(());
        }
        let entries: Vec<IbrEntry> = self
            .pending
            .iter()
            .filter(|e| e.key.pool == s.pool)
            .cloned()
            .collect();
        if entries.is_empty() {
            self.pending.clear();
            return Ok(());
        }
        let storage = self.storage_proto();
        let blocks = entries
            .iter()
            .map(|e| ReceivedDeletedBlockInfoProto {
                block: BlockProto {
                    block_id: e.key.block.0,
                    gen_stamp: e.gs.0,
                    num_bytes: Some(e.len),
                },
                delete_hint: e.delete_hint.clone(),
                status: match e.status {
                    IbrStatus::Received => BlockStatus::Received as i32,
                    IbrStatus::Deleted => BlockStatus::Deleted as i32,
                },
            })
            .collect();
        let req = BlockReceivedAndDeletedRequestProto {
            registration: s.registration.clone(),
            block_pool_id: s.pool.to_string(),
            blocks: vec![StorageReceivedDeletedBlocksProto {
                storage_uuid: storage.storage_uuid.clone(),
                blocks,
                storage: Some(storage),
            }],
        };
        let began = std::time::Instant::now();
        let _: BlockReceivedAndDeletedResponseProto = self
            .call(&s.client, "blockReceivedAndDeleted", &req)
            .await?;
        Metrics::inc(&self.shared.metrics.ibr_calls);
        Metrics::add_since(&self.shared.metrics.ibr_micros, began);
        Metrics::add(&self.shared.metrics.ibr_entries, entries.len() as u64);
        debug!(entries = entries.len(), "incremental block report sent");
        self.pending.clear();
        Ok(())
    }
}

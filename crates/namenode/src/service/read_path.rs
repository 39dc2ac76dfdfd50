//! `ClientProtocol` calls a reader makes: where the blocks of a file are
//! (`getBlockLocations`, nearest replica first), the server defaults a
//! client reads before it starts, and `reportBadBlocks` when a replica
//! fails its checksum (the DataNode protocol reports through the same
//! function).

use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::{CallContext, CallError};

use super::convert::encode;
use super::{CallResult, NameNodeState};
use crate::blocks::BlockManager;
use crate::datanodes::{DatanodeManager, DatanodeUuid};
use crate::namespace::permission::Caller;
use crate::namespace::storage_policy::DEFAULT_POLICY_ID;
use crate::namespace::{BlockId, BlockRecord, FileStatus};

impl NameNodeState {
    /// `getBlockLocations`.
    pub(super) fn get_block_locations(
        &self,
        caller: &Caller,
        ctx: &CallContext,
        r: pb::GetBlockLocationsRequestProto,
    ) -> CallResult {
        let (st, blocks) = self.read(|ns| {
            let st = ns.open_for_read(caller, &r.src)?;
            let blocks = ns.blocks_for_status(&st);
            Ok((st, blocks))
        })?;
        self.access_times
            .read(&r.src, &st, cairn_common::clock::now_ms());
        let bm = self.lock_blocks()?;
        let dns = self.lock_datanodes()?;
        let range = (r.offset, r.length);
        let client_ip = Some(ctx.remote_addr.ip());
        encode(&pb::GetBlockLocationsResponseProto {
            locations: Some(self.located_blocks(&st, &blocks, range, &bm, &dns, client_ip)),
        })
    }

    /// The blocks of file `st` that `(offset, length)` asks for (see
    /// [`handed_out`]), with their live locations (nearest to `client_ip`
    /// first), as HDFS's `createLocatedBlocks`: the last block is always
    /// described, and a file being written reports the length of its
    /// completed blocks.
    pub(super) fn located_blocks(
        &self,
        st: &FileStatus,
        blocks: &[BlockRecord],
        (offset, length): (u64, u64),
        bm: &BlockManager,
        dns: &DatanodeManager,
        client_ip: Option<std::net::IpAddr>,
    ) -> pb::LocatedBlocksProto {
        let chosen = handed_out(blocks, offset, length);
        let mut located = Vec::with_capacity(chosen.len());
        let mut pos = 0u64;
        let n = blocks.len();
        let mut last_located = None;
        for (i, b) in blocks.iter().enumerate() {
            let is_last = i + 1 == n;
            if chosen.contains(&i) || is_last {
                let stamp = is_last
                    .then(|| bm.stamp_before_recovery(st.id, b.id))
                    .flatten();
                let b = &BlockRecord {
                    gs: stamp.unwrap_or(b.gs),
                    ..*b
                };
                let mut lb = self.located_block(b, pos, &bm.locations(b.id), dns, client_ip);
                // Only corrupt replicas left: hand them out, marked.
                lb.corrupt = bm.all_corrupt(b.id);
                if is_last {
                    last_located = Some(lb.clone());
                }
                if chosen.contains(&i) {
                    located.push(lb);
                }
            }
            pos += b.num_bytes;
        }
        // For a file being written, the length excludes the last block.
        let file_length = if st.under_construction {
            blocks[..n.saturating_sub(1)]
                .iter()
                .map(|b| b.num_bytes)
                .sum()
        } else {
            st.length
        };
        pb::LocatedBlocksProto {
            file_length,
            blocks: located,
            under_construction: st.under_construction,
            last_block: last_located,
            is_last_block_complete: !st.under_construction && n > 0,
            ..Default::default()
        }
    }

    /// `getServerDefaults`.
    pub(super) fn get_server_defaults(&self) -> CallResult {
        encode(&pb::GetServerDefaultsResponseProto {
            server_defaults: self.server_defaults(),
        })
    }

    /// `reportBadBlocks`.
    pub(super) fn client_report_bad_blocks(
        &self,
        r: pb::ReportBadBlocksRequestProto,
    ) -> CallResult {
        self.report_bad_blocks(&r.blocks, "client")?;
        encode(&pb::ReportBadBlocksResponseProto {})
    }

    /// `reportBadBlocks` (ClientProtocol and DatanodeProtocol): marks the
    /// replica of each block on each listed DataNode corrupt.
    ///
    /// # Errors
    /// A poisoned block manager lock.
    pub(crate) fn report_bad_blocks(
        &self,
        blocks: &[pb::LocatedBlockProto],
        from: &str,
    ) -> Result<(), CallError> {
        let mut bm = self.lock_blocks()?;
        for lb in blocks {
            let id = BlockId(lb.b.block_id);
            for loc in &lb.locs {
                let dn = DatanodeUuid(loc.id.datanode_uuid.clone());
                let outcome = bm.mark_corrupt(&dn, id);
                tracing::warn!(block = %id, datanode = %dn, reporter = from, ?outcome, "replica reported corrupt");
            }
        }
        Ok(())
    }

    fn server_defaults(&self) -> pb::FsServerDefaultsProto {
        let c = &self.config;
        pb::FsServerDefaultsProto {
            block_size: c.block_size,
            bytes_per_checksum: c.bytes_per_checksum,
            write_packet_size: c.write_packet_size,
            replication: u32::from(c.replication),
            file_buffer_size: c.file_buffer_size,
            encrypt_data_transfer: Some(false),
            trash_interval: Some(c.trash_interval_minutes),
            checksum_type: Some(pb::ChecksumTypeProto::ChecksumCrc32c as i32),
            key_provider_uri: Some(String::new()),
            policy_id: Some(u32::from(DEFAULT_POLICY_ID)),
            snapshot_trash_root_enabled: Some(false),
        }
    }
}

/// The indexes of the blocks HDFS hands out for `(offset, length)`
/// (`BlockManager.createLocatedBlockList`): from the block that holds
/// `offset` on, at least one, until one ends at or past `offset + length`.
/// Two quirks clients see: a zero length still gets the block at `offset`,
/// and when the first block has no bytes yet (a new file's block being
/// written) the search for `offset` is skipped, so it is handed out.
fn handed_out(blocks: &[BlockRecord], offset: u64, length: u64) -> std::ops::Range<usize> {
    let n = blocks.len();
    if n == 0 {
        return 0..0;
    }
    let searched = if blocks[0].num_bytes == 0 { 0 } else { n };
    let (mut i, mut pos) = (0, 0u64);
    while i < searched && pos + blocks[i].num_bytes <= offset {
        pos += blocks[i].num_bytes;
        i += 1;
    }
    if searched > 0 && i == searched {
        return 0..0;
    }
    let (start, end) = (i, offset.saturating_add(length));
    loop {
        pos += blocks[i].num_bytes;
        i += 1;
        if pos >= end || i >= n {
            return start..i;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::handed_out;
    use crate::namespace::{BlockId, BlockRecord, GenStamp};

    fn blocks(sizes: &[u64]) -> Vec<BlockRecord> {
        sizes
            .iter()
            .zip(1u64..)
            .map(|(&num_bytes, id)| BlockRecord {
                id: BlockId(id),
                gs: GenStamp(1),
                num_bytes,
            })
            .collect()
    }

    #[test]
    fn blocks_handed_out_follow_hdfs() {
        let full = blocks(&[10, 10, 5]);
        assert_eq!(handed_out(&full, 0, 25), 0..3);
        assert_eq!(handed_out(&full, 0, 10), 0..1);
        assert_eq!(handed_out(&full, 9, 2), 0..2);
        assert_eq!(handed_out(&full, 10, 1), 1..2);
        assert_eq!(
            handed_out(&full, 12, 0),
            1..2,
            "a zero length gets one block"
        );
        assert_eq!(handed_out(&full, 25, 10), 0..0, "past the end");
        assert_eq!(handed_out(&full, 0, u64::MAX), 0..3);
        // Being written: the last block has no bytes the NameNode knows of.
        let open = blocks(&[10, 0]);
        assert_eq!(handed_out(&open, 0, 10), 0..1);
        assert_eq!(handed_out(&open, 0, 100), 0..2);
        assert_eq!(handed_out(&open, 10, 100), 0..0);
        let new = blocks(&[0]);
        assert_eq!(handed_out(&new, 0, 0), 0..1, "the first block, empty");
        assert_eq!(handed_out(&new, 5, 0), 0..1);
        assert_eq!(handed_out(&[], 0, 10), 0..0);
    }
}

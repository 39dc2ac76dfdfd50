//! Block report encodings (PROTOCOL.md §4.2).
//!
//! A NameNode that advertises capability 0x1 (Hadoop 3.x does) gets the
//! **buffer encoding**: per replica a zigzag varint block id, then varints
//! of length, generation stamp and replica state, all replicas in one byte
//! string (split into 64 KiB pieces as Hadoop splits it; the NameNode
//! concatenates the pieces before decoding), `numberOfBlocks` = the count
//! and no legacy list. Other NameNodes get the **legacy long list**:
//! `[#finalized, #other, (id, len, gs) per finalized replica, -1, -1, -1,
//! (id, len, gs, state) per other replica]`.

use bytes::{Bytes, BytesMut};
use cairn_proto::hadoop::hdfs::{DatanodeStorageProto, StorageBlockReportProto};

use crate::storage::{ReportedReplica, ReportedState};

/// NamespaceInfo capability bit: the NameNode reads `blocksBuffers`.
pub const CAPABILITY_BLOCK_REPORT_BUFFERS: u64 = 0x1;

/// Size of the pieces `blocksBuffers` is split into (Hadoop's chunk size).
pub const BUFFER_CHUNK_BYTES: usize = 64 * 1024;

fn put_varint(out: &mut BytesMut, v: u64) {
    prost::encoding::encode_varint(v, out);
}

/// The buffer encoding of `replicas`, one piece per 64 KiB.
pub fn encode_buffers(replicas: &[ReportedReplica]) -> Vec<Bytes> {
    let mut out = BytesMut::with_capacity(replicas.len() * 16);
    for r in replicas {
        let id = r.block.0 as i64;
        // ZigZag, as protobuf's sint64.
        put_varint(&mut out, ((id << 1) ^ (id >> 63)) as u64);
        put_varint(&mut out, r.len);
        put_varint(&mut out, r.gs.0);
        put_varint(&mut out, r.state.proto());
    }
    let all = out.freeze();
    if all.len() <= BUFFER_CHUNK_BYTES {
        return vec![all];
    }
    (0..all.len())
        .step_by(BUFFER_CHUNK_BYTES)
        .map(|at| all.slice(at..(at + BUFFER_CHUNK_BYTES).min(all.len())))
        .collect()
}

/// The legacy long-list encoding of `replicas` (values as u64: Java's
/// `long`s in a `uint64` field, −1 as its two's complement).
pub fn encode_legacy(replicas: &[ReportedReplica]) -> Vec<u64> {
    let finalized: Vec<&ReportedReplica> = replicas
        .iter()
        .filter(|r| r.state == ReportedState::Finalized)
        .collect();
    let others: Vec<&ReportedReplica> = replicas
        .iter()
        .filter(|r| r.state != ReportedState::Finalized)
        .collect();
    let mut v = Vec::with_capacity(2 + finalized.len() * 3 + 3 + others.len() * 4);
    v.push(finalized.len() as u64);
    v.push(others.len() as u64);
    for r in &finalized {
        v.extend([r.block.0, r.len, r.gs.0]);
    }
    v.extend([u64::MAX; 3]);
    for r in &others {
        v.extend([r.block.0, r.len, r.gs.0, r.state.proto()]);
    }
    v
}

/// One storage's report in the encoding the NameNode asked for.
pub fn storage_report(
    storage: DatanodeStorageProto,
    replicas: &[ReportedReplica],
    capabilities: u64,
) -> StorageBlockReportProto {
    if capabilities & CAPABILITY_BLOCK_REPORT_BUFFERS != 0 {
        StorageBlockReportProto {
            storage,
            blocks: Vec::new(),
            number_of_blocks: Some(replicas.len() as u64),
            blocks_buffers: encode_buffers(replicas),
        }
    } else {
        StorageBlockReportProto {
            storage,
            blocks: encode_legacy(replicas),
            number_of_blocks: None,
            blocks_buffers: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{BlockId, GenStamp};
    use bytes::BufMut;
    use prost::Message;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).expect("hex"))
            .collect()
    }

    fn storage(id: &str) -> DatanodeStorageProto {
        DatanodeStorageProto {
            storage_uuid: id.into(),
            state: Some(0),
            storage_type: Some(1),
        }
    }

    #[test]
    fn buffer_encoding_is_byte_identical_to_the_capture() {
        // dn-restart.txt, call 6: one finalized replica blk_1073741828_1004
        // of 200000 bytes, storage DS-e0671487-d2a6-421c-832a-34a20f4e80f0.
        let replica = ReportedReplica {
            block: BlockId(1_073_741_828),
            len: 200_000,
            gs: GenStamp(1004),
            state: ReportedState::Finalized,
        };
        let report = storage_report(
            storage("DS-e0671487-d2a6-421c-832a-34a20f4e80f0"),
            &[replica],
            1,
        );
        let captured = hex(
            "0a 2d 0a 27 44 53 2d 65 30 36 37 31 34 38 37 2d 64 32 61 36 2d 34 32 31 63 2d 38 33 32 61 2d
             33 34 61 32 30 66 34 65 38 30 66 30 10 00 18 01 18 01 22 0b 88 80 80 80 08 c0 9a 0c ec 07 00",
        );
        assert_eq!(report.encode_to_vec(), captured);
        // The same call's empty storage: `18 00 22 00`.
        let empty = storage_report(storage("DS-01db1b43-8145-4e69-a85e-75b5aa95881a"), &[], 1);
        let captured_empty = hex(
            "0a 2d 0a 27 44 53 2d 30 31 64 62 31 62 34 33 2d 38 31 34 35 2d 34 65 36 39 2d 61 38 35 65 2d
             37 35 62 35 61 61 39 35 38 38 31 61 10 00 18 01 18 00 22 00",
        );
        assert_eq!(empty.encode_to_vec(), captured_empty);
    }

    #[test]
    fn legacy_encoding_and_large_reports() {
        let rs = [
            ReportedReplica {
                block: BlockId(5),
                len: 10,
                gs: GenStamp(1),
                state: ReportedState::Finalized,
            },
            ReportedReplica {
                block: BlockId(6),
                len: 3,
                gs: GenStamp(2),
                state: ReportedState::Rbw,
            },
        ];
        assert_eq!(
            encode_legacy(&rs),
            vec![1, 1, 5, 10, 1, u64::MAX, u64::MAX, u64::MAX, 6, 3, 2, 1]
        );
        let legacy = storage_report(storage("DS-x"), &rs, 0);
        assert!(legacy.blocks_buffers.is_empty() && legacy.number_of_blocks.is_none());
        // Negative ids zigzag to small numbers; big reports split at 64 KiB.
        let neg = encode_buffers(&[ReportedReplica {
            block: BlockId(-1i64 as u64),
            len: 0,
            gs: GenStamp(0),
            state: ReportedState::Rbw,
        }]);
        assert_eq!(neg[0].to_vec(), vec![1, 0, 0, 1]);
        let many: Vec<ReportedReplica> = (0..10_000u64)
            .map(|i| ReportedReplica {
                block: BlockId(1 << 30 | i),
                len: 1 << 27,
                gs: GenStamp(1000 + i),
                state: ReportedState::Finalized,
            })
            .collect();
        let pieces = encode_buffers(&many);
        assert!(pieces.len() > 1);
        assert!(pieces.iter().all(|p| p.len() <= BUFFER_CHUNK_BYTES));
        let total: usize = pieces.iter().map(Bytes::len).sum();
        let mut joined = BytesMut::with_capacity(total);
        for p in &pieces {
            joined.put_slice(p);
        }
        // Decode the concatenation back.
        let mut buf = joined.freeze();
        for r in &many {
            let z = prost::encoding::decode_varint(&mut buf).expect("id");
            let id = ((z >> 1) as i64) ^ -((z & 1) as i64);
            assert_eq!(id as u64, r.block.0);
            assert_eq!(
                prost::encoding::decode_varint(&mut buf).expect("len"),
                r.len
            );
            assert_eq!(
                prost::encoding::decode_varint(&mut buf).expect("gs"),
                r.gs.0
            );
            assert_eq!(prost::encoding::decode_varint(&mut buf).expect("state"), 0);
        }
    }
}

//! Block report encodings (PROTOCOL.md §4.2), both directions: the
//! DataNode encodes what it holds, the NameNode decodes it. One codec in
//! one place, so the two sides cannot drift apart.
//!
//! A NameNode that advertises capability 0x1 (Hadoop 3.x does) gets the
//! **buffer encoding**: per replica a zigzag varint block id, then varints
//! of length, generation stamp and replica state, all replicas in one byte
//! string (split into 64 KiB pieces as Hadoop splits it; a replica may
//! straddle two pieces), `numberOfBlocks` = the count and no legacy list.
//! Other NameNodes get the **legacy long list**: `[#finalized, #other,
//! (id, len, gs) per finalized replica, -1, -1, -1, (id, len, gs, state)
//! per other replica]`.

use bytes::{Bytes, BytesMut};
use cairn_common::ids::{BlockId, GenStamp};

use crate::hadoop::hdfs::{DatanodeStorageProto, StorageBlockReportProto};

/// NamespaceInfo capability bit: the NameNode reads `blocksBuffers`.
pub const CAPABILITY_BLOCK_REPORT_BUFFERS: u64 = 0x1;

/// Size of the pieces `blocksBuffers` is split into (Hadoop's chunk size).
pub const BUFFER_CHUNK_BYTES: usize = 64 * 1024;

/// A replica's state as reports carry it (`ReplicaStateProto` numbers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReportedState {
    /// 0
    Finalized,
    /// 1: being written.
    Rbw,
    /// 2: waiting to be recovered (after a DataNode restart).
    Rwr,
    /// 3: under recovery.
    Rur,
    /// 4: a temporary replica (a copy in progress).
    Temporary,
}

impl ReportedState {
    /// The `ReplicaStateProto` value.
    pub fn proto(self) -> u64 {
        match self {
            ReportedState::Finalized => 0,
            ReportedState::Rbw => 1,
            ReportedState::Rwr => 2,
            ReportedState::Rur => 3,
            ReportedState::Temporary => 4,
        }
    }

    /// From the wire; `None` for a number Hadoop does not define.
    pub fn from_proto(v: u64) -> Option<Self> {
        Some(match v {
            0 => ReportedState::Finalized,
            1 => ReportedState::Rbw,
            2 => ReportedState::Rwr,
            3 => ReportedState::Rur,
            4 => ReportedState::Temporary,
            _ => return None,
        })
    }
}

/// One line of a block report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReportedReplica {
    pub block: BlockId,
    pub len: u64,
    pub gs: GenStamp,
    pub state: ReportedState,
}

/// Why a report could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlockReportError {
    #[error("block report buffers end inside a replica: {0}")]
    Truncated(String),
    #[error("block report names replica state {0}, which does not exist")]
    UnknownState(u64),
    #[error("legacy block report of {longs} longs is too short for {finalized} finalized and {other} other replicas")]
    LegacyTooShort {
        longs: usize,
        finalized: u64,
        other: u64,
    },
}

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
    let finalized = || {
        replicas
            .iter()
            .filter(|r| r.state == ReportedState::Finalized)
    };
    let others = || {
        replicas
            .iter()
            .filter(|r| r.state != ReportedState::Finalized)
    };
    let (nf, no) = (finalized().count(), others().count());
    let mut v = Vec::with_capacity(2 + nf * 3 + 3 + no * 4);
    v.push(nf as u64);
    v.push(no as u64);
    for r in finalized() {
        v.extend([r.block.0, r.len, r.gs.0]);
    }
    v.extend([u64::MAX; 3]);
    for r in others() {
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

/// The replicas of one storage's report, in either encoding.
///
/// # Errors
/// [`BlockReportError`] for a report that ends inside a replica, names a
/// state that does not exist, or whose legacy counts do not fit.
pub fn decode(report: &StorageBlockReportProto) -> Result<Vec<ReportedReplica>, BlockReportError> {
    if report.blocks_buffers.is_empty() {
        decode_legacy(&report.blocks)
    } else {
        decode_buffers(&report.blocks_buffers)
    }
}

fn state(v: u64) -> Result<ReportedState, BlockReportError> {
    ReportedState::from_proto(v).ok_or(BlockReportError::UnknownState(v))
}

fn decode_buffers(pieces: &[Bytes]) -> Result<Vec<ReportedReplica>, BlockReportError> {
    // The pieces are one stream cut at arbitrary bytes.
    let joined: Vec<u8>;
    let mut b: &[u8] = match pieces {
        [one] => one,
        _ => {
            joined = pieces.iter().flat_map(|p| p.iter().copied()).collect();
            &joined
        }
    };
    let mut out = Vec::with_capacity(b.len() / 12);
    let varint = |b: &mut &[u8]| {
        prost::encoding::decode_varint(b).map_err(|e| BlockReportError::Truncated(e.to_string()))
    };
    while !b.is_empty() {
        let zz = varint(&mut b)?;
        let id = ((zz >> 1) as i64) ^ -((zz & 1) as i64);
        let len = varint(&mut b)?;
        let gs = varint(&mut b)?;
        out.push(ReportedReplica {
            block: BlockId(id as u64),
            len,
            gs: GenStamp(gs),
            state: state(varint(&mut b)?)?,
        });
    }
    Ok(out)
}

fn decode_legacy(v: &[u64]) -> Result<Vec<ReportedReplica>, BlockReportError> {
    let [finalized, other, rest @ ..] = v else {
        // No counts at all: an empty report.
        return Ok(Vec::new());
    };
    let too_short = || BlockReportError::LegacyTooShort {
        longs: v.len(),
        finalized: *finalized,
        other: *other,
    };
    let nf = usize::try_from(*finalized).map_err(|_| too_short())?;
    let no = usize::try_from(*other).map_err(|_| too_short())?;
    let finalized_longs = nf.checked_mul(3).ok_or_else(too_short)?;
    let other_longs = no.checked_mul(4).ok_or_else(too_short)?;
    let needed = finalized_longs
        .checked_add(3)
        .and_then(|n| n.checked_add(other_longs))
        .ok_or_else(too_short)?;
    if rest.len() < needed {
        return Err(too_short());
    }
    // The three longs after the finalized replicas are a separator
    // (-1 -1 -1); like Hadoop, nothing depends on their value.
    let (done, rest) = rest.split_at(finalized_longs);
    let others = &rest[3..];
    let mut out = Vec::with_capacity(nf + no);
    for r in done.chunks_exact(3) {
        out.push(ReportedReplica {
            block: BlockId(r[0]),
            len: r[1],
            gs: GenStamp(r[2]),
            state: ReportedState::Finalized,
        });
    }
    for r in others[..other_longs].chunks_exact(4) {
        out.push(ReportedReplica {
            block: BlockId(r[0]),
            len: r[1],
            gs: GenStamp(r[2]),
            state: state(r[3])?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
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

    fn replica(id: u64, len: u64, gs: u64, state: ReportedState) -> ReportedReplica {
        ReportedReplica {
            block: BlockId(id),
            len,
            gs: GenStamp(gs),
            state,
        }
    }

    #[test]
    fn buffer_encoding_is_byte_identical_to_the_capture() {
        // dn-restart.txt, call 6: one finalized replica blk_1073741828_1004
        // of 200000 bytes, storage DS-e0671487-d2a6-421c-832a-34a20f4e80f0.
        let r = replica(1_073_741_828, 200_000, 1004, ReportedState::Finalized);
        let report = storage_report(storage("DS-e0671487-d2a6-421c-832a-34a20f4e80f0"), &[r], 1);
        let captured = hex(
            "0a 2d 0a 27 44 53 2d 65 30 36 37 31 34 38 37 2d 64 32 61 36 2d 34 32 31 63 2d 38 33 32 61 2d
             33 34 61 32 30 66 34 65 38 30 66 30 10 00 18 01 18 01 22 0b 88 80 80 80 08 c0 9a 0c ec 07 00",
        );
        assert_eq!(report.encode_to_vec(), captured);
        assert_eq!(decode(&report).expect("decode"), vec![r]);
        // The same call's empty storage: `18 00 22 00`.
        let empty = storage_report(storage("DS-01db1b43-8145-4e69-a85e-75b5aa95881a"), &[], 1);
        let captured_empty = hex(
            "0a 2d 0a 27 44 53 2d 30 31 64 62 31 62 34 33 2d 38 31 34 35 2d 34 65 36 39 2d 61 38 35 65 2d
             37 35 62 35 61 61 39 35 38 38 31 61 10 00 18 01 18 00 22 00",
        );
        assert_eq!(empty.encode_to_vec(), captured_empty);
        assert!(decode(&empty).expect("decode").is_empty());
    }

    #[test]
    fn both_encodings_round_trip_every_state() {
        let rs = [
            replica(5, 10, 1, ReportedState::Finalized),
            replica(6, 3, 2, ReportedState::Rbw),
            replica(7, 0, 3, ReportedState::Rwr),
            replica(8, 9, 4, ReportedState::Rur),
            replica(-1i64 as u64, 0, 0, ReportedState::Temporary),
        ];
        let legacy = encode_legacy(&rs[..2]);
        assert_eq!(
            legacy,
            vec![1, 1, 5, 10, 1, u64::MAX, u64::MAX, u64::MAX, 6, 3, 2, 1]
        );
        for capabilities in [0, 1] {
            let report = storage_report(storage("DS-x"), &rs, capabilities);
            assert_eq!(report.blocks_buffers.is_empty(), capabilities == 0);
            // Legacy lists finalized replicas first; all states survive.
            let mut got = decode(&report).expect("decode");
            got.sort_by_key(|r| r.gs);
            let mut want = rs.to_vec();
            want.sort_by_key(|r| r.gs);
            assert_eq!(got, want, "capabilities {capabilities}");
        }
        // Negative ids zigzag to small numbers.
        assert_eq!(encode_buffers(&rs[4..])[0].to_vec(), vec![1, 0, 0, 4]);
    }

    #[test]
    fn large_reports_split_and_straddle_pieces() {
        let many: Vec<ReportedReplica> = (0..10_000u64)
            .map(|i| replica(1 << 30 | i, 1 << 27, 1000 + i, ReportedState::Finalized))
            .collect();
        let pieces = encode_buffers(&many);
        assert!(pieces.len() > 1);
        assert!(pieces.iter().all(|p| p.len() <= BUFFER_CHUNK_BYTES));
        let report = StorageBlockReportProto {
            blocks_buffers: pieces,
            ..Default::default()
        };
        assert_eq!(decode(&report).expect("decode"), many);
    }

    #[test]
    fn malformed_reports_are_refused() {
        let buffers = |b: &[u8]| StorageBlockReportProto {
            blocks_buffers: vec![Bytes::copy_from_slice(b)],
            ..Default::default()
        };
        // A replica cut short, and a state Hadoop does not have.
        assert!(matches!(
            decode(&buffers(&[2, 10, 1])),
            Err(BlockReportError::Truncated(_))
        ));
        assert_eq!(
            decode(&buffers(&[2, 10, 1, 9])),
            Err(BlockReportError::UnknownState(9))
        );
        let legacy = |v: Vec<u64>| StorageBlockReportProto {
            blocks: v,
            ..Default::default()
        };
        assert!(matches!(
            decode(&legacy(vec![2, 0, 1, 2, 3])),
            Err(BlockReportError::LegacyTooShort { .. })
        ));
        assert!(matches!(
            decode(&legacy(vec![u64::MAX, u64::MAX])),
            Err(BlockReportError::LegacyTooShort { .. })
        ));
        assert!(decode(&legacy(vec![])).expect("empty").is_empty());
    }
}

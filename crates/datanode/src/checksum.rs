//! Chunk checksums as HDFS uses them (PROTOCOL.md §3.10): one 4-byte
//! big-endian CRC per `bytes_per_checksum` bytes of data, the last chunk of a
//! range possibly shorter.
//!
//! Two CRC32C implementations are kept on purpose. [`Crc32cImpl::Hardware`]
//! is the `crc-fast` crate (carry-less multiply folding over SIMD registers,
//! with its own fallback on CPUs without them; on this project's 2-core VM
//! it checksums 512-byte chunks at 50 µs a MiB where the `crc32c` crate,
//! which runs one CRC instruction chain for inputs under 768 bytes, took
//! 120); [`Crc32cImpl::Software`] is a plain
//! table-driven loop, one byte per step. The switch
//! `cairn.datanode.checksum.hardware` picks one, so HDFS-959's "fast CRC"
//! item can be measured against a slow one. CRC32 (zlib's) is only used to
//! verify what a client wrote with `dfs.checksum.type=CRC32`: the DataNode
//! stores CRC32C, because hdfs-native cannot verify Hadoop's CRC32 on read.

use cairn_proto::hadoop::hdfs::ChecksumTypeProto;

/// Bytes of one stored checksum (CRC32 and CRC32C alike).
pub const CHECKSUM_SIZE: usize = 4;

/// Largest `bytes_per_checksum` accepted from a client. Hadoop has no hard
/// limit; ours keeps a partial chunk's bytes (held in memory while a replica
/// is written) small.
pub const MAX_BYTES_PER_CHECKSUM: u32 = 16 * 1024 * 1024;

/// The checksum algorithms HDFS names (`DataChecksum.Type` ids).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChecksumKind {
    /// No checksums (`CHECKSUM_NULL`, id 0).
    Null,
    /// zlib's CRC-32 (`CHECKSUM_CRC32`, id 1).
    Crc32,
    /// Castagnoli CRC-32C (`CHECKSUM_CRC32C`, id 2).
    Crc32c,
}

impl ChecksumKind {
    /// The id Hadoop uses on the wire and in `.meta` headers.
    pub fn id(self) -> u8 {
        match self {
            ChecksumKind::Null => 0,
            ChecksumKind::Crc32 => 1,
            ChecksumKind::Crc32c => 2,
        }
    }

    /// The kind with Hadoop id `id`, if it is one we know.
    pub fn from_id(id: u8) -> Option<Self> {
        match id {
            0 => Some(ChecksumKind::Null),
            1 => Some(ChecksumKind::Crc32),
            2 => Some(ChecksumKind::Crc32c),
            _ => None,
        }
    }

    /// The protobuf enum value.
    pub fn to_proto(self) -> ChecksumTypeProto {
        match self {
            ChecksumKind::Null => ChecksumTypeProto::ChecksumNull,
            ChecksumKind::Crc32 => ChecksumTypeProto::ChecksumCrc32,
            ChecksumKind::Crc32c => ChecksumTypeProto::ChecksumCrc32c,
        }
    }

    /// From the raw protobuf enum value.
    pub fn from_proto(v: i32) -> Option<Self> {
        u8::try_from(v).ok().and_then(Self::from_id)
    }

    /// Bytes per stored checksum: 4, or 0 for [`ChecksumKind::Null`].
    pub fn size(self) -> usize {
        match self {
            ChecksumKind::Null => 0,
            _ => CHECKSUM_SIZE,
        }
    }
}

/// Which CRC32C code computes checksums (`cairn.datanode.checksum.hardware`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Crc32cImpl {
    /// The `crc-fast` crate: SIMD instructions where available.
    Hardware,
    /// A byte-at-a-time table lookup, as Java's pre-HADOOP-6166 code did.
    Software,
}

const fn make_table(poly: u32) -> [u32; 256] {
    let mut table = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut crc = i as u32;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ poly
            } else {
                crc >> 1
            };
            bit += 1;
        }
        table[i] = crc;
        i += 1;
    }
    table
}

/// Reflected Castagnoli polynomial.
static CRC32C_TABLE: [u32; 256] = make_table(0x82F6_3B78);
/// Reflected IEEE polynomial (zlib, `java.util.zip.CRC32`).
static CRC32_TABLE: [u32; 256] = make_table(0xEDB8_8320);

fn table_crc(table: &[u32; 256], data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        // The index is the low byte, so the cast cannot lose anything.
        crc = table[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

/// CRC32C of `data` with the chosen implementation.
pub fn crc32c(imp: Crc32cImpl, data: &[u8]) -> u32 {
    match imp {
        // CRC-32/ISCSI is CRC32C; the crate returns every width as a u64.
        Crc32cImpl::Hardware => crc_fast::checksum(crc_fast::CrcAlgorithm::Crc32Iscsi, data) as u32,
        Crc32cImpl::Software => table_crc(&CRC32C_TABLE, data),
    }
}

/// zlib CRC-32 of `data` (table-driven; only used to verify CRC32 writes).
pub fn crc32(data: &[u8]) -> u32 {
    table_crc(&CRC32_TABLE, data)
}

/// A chunk whose checksum did not match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("checksum mismatch in chunk {chunk} (expected {expected:08x}, computed {computed:08x})")]
pub struct ChecksumMismatch {
    /// Index of the chunk within the range checked.
    pub chunk: usize,
    /// The checksum that came with the data.
    pub expected: u32,
    /// The checksum of the data.
    pub computed: u32,
}

/// Why a range's checksums could not be checked at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChecksumError {
    /// Data and checksum lengths do not agree.
    #[error("{sums} checksum bytes do not fit {data} data bytes in chunks of {bpc}")]
    Shape { data: usize, sums: usize, bpc: u32 },
    /// A chunk's checksum is wrong.
    #[error(transparent)]
    Mismatch(#[from] ChecksumMismatch),
}

/// A checksum algorithm with its chunk size: how one side of a transfer
/// checksums data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataChecksum {
    /// The algorithm.
    pub kind: ChecksumKind,
    /// Bytes of data per checksum, > 0.
    pub bytes_per_checksum: u32,
}

impl DataChecksum {
    /// The CRC32C/512 checksum both Hadoop clients use by default.
    pub const DEFAULT: DataChecksum = DataChecksum {
        kind: ChecksumKind::Crc32c,
        bytes_per_checksum: 512,
    };

    /// Chunk size in bytes.
    pub fn bpc(&self) -> usize {
        self.bytes_per_checksum as usize
    }

    /// Number of chunks `len` bytes of data span.
    pub fn chunks(&self, len: usize) -> usize {
        len.div_ceil(self.bpc().max(1))
    }

    /// Checksum bytes for `len` bytes of data.
    pub fn checksum_len(&self, len: usize) -> usize {
        self.chunks(len) * self.kind.size()
    }

    /// Checksum of one chunk.
    pub fn checksum_of(&self, imp: Crc32cImpl, chunk: &[u8]) -> u32 {
        match self.kind {
            ChecksumKind::Null => 0,
            ChecksumKind::Crc32 => crc32(chunk),
            ChecksumKind::Crc32c => crc32c(imp, chunk),
        }
    }

    /// Checks `data` (chunked from its first byte) against `sums`.
    ///
    /// # Errors
    /// [`ChecksumError::Shape`] if `sums` has the wrong length,
    /// [`ChecksumError::Mismatch`] naming the first bad chunk.
    pub fn verify(&self, imp: Crc32cImpl, data: &[u8], sums: &[u8]) -> Result<(), ChecksumError> {
        if sums.len() != self.checksum_len(data.len()) {
            return Err(ChecksumError::Shape {
                data: data.len(),
                sums: sums.len(),
                bpc: self.bytes_per_checksum,
            });
        }
        if self.kind == ChecksumKind::Null {
            return Ok(());
        }
        for (i, (chunk, sum)) in data
            .chunks(self.bpc())
            .zip(sums.chunks_exact(CHECKSUM_SIZE))
            .enumerate()
        {
            let expected = u32::from_be_bytes([sum[0], sum[1], sum[2], sum[3]]);
            let computed = self.checksum_of(imp, chunk);
            if expected != computed {
                return Err(ChecksumMismatch {
                    chunk: i,
                    expected,
                    computed,
                }
                .into());
            }
        }
        Ok(())
    }

    /// Appends the checksums of `data` (chunked from its first byte) to `out`.
    pub fn compute_into(&self, imp: Crc32cImpl, data: &[u8], out: &mut Vec<u8>) {
        if self.kind == ChecksumKind::Null {
            return;
        }
        for chunk in data.chunks(self.bpc()) {
            out.extend_from_slice(&self.checksum_of(imp, chunk).to_be_bytes());
        }
    }
}

/// Deterministic test data (xorshift; `seed` must not be 0), shared by the
/// checksum tests of this crate.
#[cfg(test)]
pub(crate) fn pseudo_random(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        // The standard check values of CRC-32C/ISCSI and CRC-32/ISO-HDLC.
        assert_eq!(crc32c(Crc32cImpl::Hardware, b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(Crc32cImpl::Software, b"123456789"), 0xE306_9283);
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32c(Crc32cImpl::Software, b""), 0);
    }

    #[test]
    fn hardware_and_software_crc32c_agree() {
        // Every length up to a few chunks, at every start offset within a
        // 16-byte SIMD lane (the fast code folds aligned blocks and
        // handles heads and tails apart), then some long inputs.
        let data = pseudo_random(1200, 1);
        for start in 0..16 {
            for len in 0..=data.len() - start {
                let slice = &data[start..start + len];
                assert_eq!(
                    crc32c(Crc32cImpl::Hardware, slice),
                    crc32c(Crc32cImpl::Software, slice),
                    "start {start} len {len}"
                );
            }
        }
        for (len, seed) in [(4095, 2), (65536, 3), (1 << 20, 4)] {
            let data = pseudo_random(len, seed);
            assert_eq!(
                crc32c(Crc32cImpl::Hardware, &data),
                crc32c(Crc32cImpl::Software, &data),
                "len {len}"
            );
        }
    }

    #[test]
    fn verify_finds_the_bad_chunk() {
        let c = DataChecksum::DEFAULT;
        let data = pseudo_random(1300, 9);
        let mut sums = Vec::new();
        c.compute_into(Crc32cImpl::Hardware, &data, &mut sums);
        assert_eq!(sums.len(), 12);
        c.verify(Crc32cImpl::Software, &data, &sums).expect("good");
        let mut bad = data.clone();
        bad[1299] ^= 1;
        match c.verify(Crc32cImpl::Hardware, &bad, &sums) {
            Err(ChecksumError::Mismatch(m)) => assert_eq!(m.chunk, 2),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            c.verify(Crc32cImpl::Hardware, &data, &sums[..8]),
            Err(ChecksumError::Shape { .. })
        ));
    }

    #[test]
    fn crc32_chunks_verify() {
        let c = DataChecksum {
            kind: ChecksumKind::Crc32,
            bytes_per_checksum: 100,
        };
        let data = pseudo_random(250, 3);
        let mut sums = Vec::new();
        c.compute_into(Crc32cImpl::Hardware, &data, &mut sums);
        c.verify(Crc32cImpl::Hardware, &data, &sums).expect("good");
    }
}

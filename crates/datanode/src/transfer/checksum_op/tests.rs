//! BLOCK_CHECKSUM computation against first principles: the MD5 of the
//! CRCs of the requested bytes chunked from 0, and the CRC of the requested
//! bytes themselves (per stripe). The exact values Apache HDFS gives are
//! checked end to end by the CLI's t22_file_checksum test.

use super::*;
use crate::checksum::{pseudo_random, ChecksumKind, CHECKSUM_SIZE};

/// A replica in memory: data plus the CRCs stored for it.
struct Mem {
    data: Vec<u8>,
    sums: Vec<u8>,
    checksum: DataChecksum,
}

impl Mem {
    fn new(data: Vec<u8>, kind: ChecksumKind, bpc: u32) -> Mem {
        let checksum = DataChecksum {
            kind,
            bytes_per_checksum: bpc,
        };
        let mut sums = Vec::new();
        checksum.compute_into(Crc32cImpl::Software, &data, &mut sums);
        Mem {
            data,
            sums,
            checksum,
        }
    }
}

fn range_err() -> ReadError {
    ReadError::Range {
        start: 0,
        end: 0,
        len: 0,
    }
}

impl ChecksumSource for Mem {
    fn visible_len(&self) -> u64 {
        self.data.len() as u64
    }
    fn checksum(&self) -> DataChecksum {
        self.checksum
    }
    fn read_checksums(&self, first_chunk: u64, sums: &mut [u8]) -> Result<(), ReadError> {
        let at = first_chunk as usize * self.checksum.kind.size();
        let src = self.sums.get(at..at + sums.len()).ok_or_else(range_err)?;
        sums.copy_from_slice(src);
        Ok(())
    }
    fn read_data(&self, start: u64, data: &mut [u8]) -> Result<(), ReadError> {
        let at = start as usize;
        let src = self.data.get(at..at + data.len()).ok_or_else(range_err)?;
        data.copy_from_slice(src);
        Ok(())
    }
}

fn crc(kind: ChecksumKind, data: &[u8]) -> u32 {
    DataChecksum {
        kind,
        bytes_per_checksum: 512,
    }
    .checksum_of(Crc32cImpl::Hardware, data)
}

/// MD5 of the CRCs of `data` chunked from its first byte.
fn md5_of_crcs(kind: ChecksumKind, bpc: usize, data: &[u8]) -> Vec<u8> {
    let mut md5 = Md5::new();
    for chunk in data.chunks(bpc) {
        md5.update(crc(kind, chunk).to_be_bytes());
    }
    md5.finalize().to_vec()
}

const MD5: Mode = Mode::Md5Crc;
const COMPOSITE: Mode = Mode::CompositeCrc { stripe_bytes: 0 };
const KINDS: [ChecksumKind; 2] = [ChecksumKind::Crc32c, ChecksumKind::Crc32];

#[test]
fn md5crc_over_whole_and_partial_blocks() {
    for kind in KINDS {
        for len in [1usize, 511, 512, 513, 4096, 10_000] {
            let mem = Mem::new(pseudo_random(len, len as u64), kind, 512);
            for request in [
                0,
                1,
                300,
                511,
                512,
                513,
                4000,
                len - 1,
                len,
                len + 1,
                1 << 40,
            ] {
                let got =
                    compute(&mem, request as u64, MD5, Crc32cImpl::Software).expect("checksum");
                let upto = request.min(len);
                assert_eq!(
                    got.digest,
                    md5_of_crcs(kind, 512, &mem.data[..upto]),
                    "{kind:?} len {len} request {request}"
                );
                assert_eq!(got.bytes_per_crc, 512);
                assert_eq!(got.crc_per_block, len.div_ceil(512) as u64);
                assert_eq!(got.checksum.kind, kind);
            }
        }
    }
}

#[test]
fn composite_crc_is_the_crc_of_the_requested_bytes() {
    for kind in KINDS {
        for len in [1usize, 511, 512, 513, 4096, 10_000] {
            let mem = Mem::new(pseudo_random(len, 3 + len as u64), kind, 512);
            for request in [1, 300, 511, 512, 513, 4000, len - 1, len, len + 1] {
                let upto = request.min(len);
                let got = compute(&mem, request as u64, COMPOSITE, Crc32cImpl::Hardware)
                    .expect("checksum");
                let want = if upto == 0 {
                    Vec::new()
                } else {
                    crc(kind, &mem.data[..upto]).to_be_bytes().to_vec()
                };
                assert_eq!(got.digest, want, "{kind:?} len {len} request {request}");
            }
        }
    }
}

#[test]
fn composite_crc_with_stripes() {
    let mem = Mem::new(pseudo_random(5000, 9), ChecksumKind::Crc32c, 512);
    let striped = |stripe_bytes, request| {
        compute(
            &mem,
            request,
            Mode::CompositeCrc { stripe_bytes },
            Crc32cImpl::Software,
        )
    };
    let want = |stripe: usize, upto: usize| -> Vec<u8> {
        mem.data[..upto]
            .chunks(stripe)
            .flat_map(|s| crc(ChecksumKind::Crc32c, s).to_be_bytes())
            .collect()
    };
    assert_eq!(
        striped(1024, 5000).expect("aligned").digest,
        want(1024, 5000)
    );
    assert_eq!(
        striped(1024, 4500).expect("aligned").digest,
        want(1024, 4500)
    );
    // A stripe longer than the data is the whole range.
    assert_eq!(
        striped(1 << 30, 5000).expect("one").digest,
        want(5000, 5000)
    );
    // More stripes than an answer may hold.
    let one_byte = Mem::new(pseudo_random(5_000_000, 4), ChecksumKind::Crc32c, 1);
    assert!(matches!(
        compute(
            &one_byte,
            5_000_000,
            Mode::CompositeCrc { stripe_bytes: 1 },
            Crc32cImpl::Hardware
        ),
        Err(ChecksumOpError::TooManyStripes { .. })
    ));
    // Chunks that straddle a stripe boundary are refused, as HDFS does.
    assert!(matches!(
        striped(700, 5000),
        Err(ChecksumOpError::Compose(ComposeError::Misaligned { .. }))
    ));
}

#[test]
fn empty_and_null_checksum_blocks() {
    let empty = Mem::new(Vec::new(), ChecksumKind::Crc32c, 512);
    let got = compute(&empty, 0, MD5, Crc32cImpl::Hardware).expect("md5");
    assert_eq!(got.digest, Md5::digest(b"").to_vec());
    assert_eq!(got.crc_per_block, 0);
    let got = compute(&empty, 0, COMPOSITE, Crc32cImpl::Hardware).expect("composite");
    assert!(got.digest.is_empty());

    let null = Mem::new(pseudo_random(1000, 1), ChecksumKind::Null, 512);
    let got = compute(&null, 600, MD5, Crc32cImpl::Hardware).expect("md5");
    assert_eq!(got.digest, Md5::digest(b"").to_vec());
    assert_eq!(got.crc_per_block, 0);
    assert!(matches!(
        compute(&null, 600, COMPOSITE, Crc32cImpl::Hardware),
        Err(ChecksumOpError::Compose(ComposeError::NotACrc(_)))
    ));
}

#[test]
fn other_chunk_sizes() {
    for bpc in [1u32, 100, 4096] {
        let mem = Mem::new(pseudo_random(9000, 5), ChecksumKind::Crc32c, bpc);
        for request in [1u64, 99, 4097, 8999, 9000] {
            let got = compute(&mem, request, MD5, Crc32cImpl::Hardware).expect("md5");
            let upto = request as usize;
            assert_eq!(
                got.digest,
                md5_of_crcs(ChecksumKind::Crc32c, bpc as usize, &mem.data[..upto])
            );
            let got = compute(&mem, request, COMPOSITE, Crc32cImpl::Hardware).expect("crc");
            assert_eq!(
                got.digest,
                crc(ChecksumKind::Crc32c, &mem.data[..upto]).to_be_bytes()
            );
        }
    }
}

#[test]
fn short_meta_files_are_errors_not_panics() {
    let mut mem = Mem::new(pseudo_random(3000, 2), ChecksumKind::Crc32c, 512);
    mem.sums.truncate(2 * CHECKSUM_SIZE + 1);
    for mode in [MD5, COMPOSITE] {
        assert!(matches!(
            compute(&mem, 3000, mode, Crc32cImpl::Hardware),
            Err(ChecksumOpError::Read(_))
        ));
    }
    // Only the CRCs below the request are read.
    assert!(compute(&mem, 1000, MD5, Crc32cImpl::Hardware).is_ok());
}

#[test]
fn modes_and_echoed_options() {
    assert_eq!(requested_mode(None).expect("default"), MD5);
    let composite = BlockChecksumOptionsProto {
        block_checksum_type: Some(BlockChecksumTypeProto::CompositeCrc as i32),
        stripe_length: None,
    };
    assert_eq!(
        requested_mode(Some(&composite)).expect("composite"),
        COMPOSITE
    );
    let bad = BlockChecksumOptionsProto {
        block_checksum_type: Some(9),
        stripe_length: Some(5),
    };
    assert!(matches!(
        requested_mode(Some(&bad)),
        Err(ChecksumOpError::Type(9))
    ));
    let echoed = echoed_options(Some(&composite));
    assert_eq!(echoed.block_checksum_type, Some(2));
    assert_eq!(echoed.stripe_length, Some(0));
    assert_eq!(echoed_options(None).block_checksum_type, Some(1));
}

//! Storage tests: replica life cycle, partial chunks, overlapping packets,
//! appends, recovery of torn RBW replicas and interrupted moves.

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::checksum::{Crc32cImpl, DataChecksum};
use crate::ids::{BlockId, BlockPoolId, GenStamp, ReplicaKey};

pub(super) fn opts(seek_free: bool, buffered: bool) -> StorageOptions {
    StorageOptions {
        stored_kind: ChecksumKind::Crc32c,
        default_bpc: 512,
        sync_on_close: false,
        reserved_bytes: 0,
        capacity_cap: None,
        writer: WriterOptions {
            seek_free,
            buffered_checksums: buffered,
            checksum_buffer_bytes: 64,
            crc: Crc32cImpl::Hardware,
        },
        writer_stop_wait: WRITER_STOP_WAIT,
    }
}

pub(super) fn open(dir: &Path) -> Storage {
    Storage::open(dir, opts(true, true), Arc::new(Metrics::default())).expect("open storage")
}

pub(super) fn key(id: u64) -> ReplicaKey {
    ReplicaKey {
        pool: BlockPoolId::new("BP-test").expect("pool"),
        block: BlockId(id),
    }
}

pub(super) fn bytes(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn sums(data: &[u8]) -> Vec<u8> {
    let mut s = Vec::new();
    DataChecksum::DEFAULT.compute_into(Crc32cImpl::Hardware, data, &mut s);
    s
}

/// Writes `data` at `offset` as a client would: checksums from the
/// packet's start.
pub(super) fn put(w: &mut ReplicaWriter, offset: u64, data: &[u8]) {
    let s = sums(data);
    w.write_packet(offset, data, Some((DataChecksum::DEFAULT, &s)))
        .expect("write packet");
}

pub(super) fn read_all(s: &Storage, k: &ReplicaKey) -> Vec<u8> {
    let r = s.open_reader(k, GenStamp(0)).expect("reader");
    let mut data = Vec::new();
    let mut sums = Vec::new();
    r.read(0, r.len(), Some(Crc32cImpl::Software), &mut data, &mut sums)
        .expect("read verifies");
    data
}

#[test]
fn write_finalize_reopen() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path());
    let k = key(1073741825);
    s.add_pool(&k.pool).expect("pool");
    let data = bytes(64512 * 2 + 1000, 1);
    let mut w = s
        .create_rbw(&k, GenStamp(1001), DataChecksum::DEFAULT, false)
        .expect("create");
    for (i, chunk) in data.chunks(64512).enumerate() {
        put(&mut w, (i * 64512) as u64, chunk);
    }
    let fin = s.finalize(w, data.len() as u64, false).expect("finalize");
    assert_eq!(fin.len, data.len() as u64);
    assert!(matches!(
        s.create_rbw(&k, GenStamp(1002), DataChecksum::DEFAULT, false),
        Err(StorageError::Exists(_))
    ));
    assert_eq!(read_all(&s, &k), data);
    let meta_file = dir
        .path()
        .join("current/BP-test/finalized/subdir0/subdir0/blk_1073741825_1001.meta");
    assert_eq!(
        std::fs::metadata(&meta_file).expect("meta").len(),
        meta::meta_len(&DataChecksum::DEFAULT, data.len() as u64)
    );
    let uuid = s.datanode_uuid().clone();
    drop(s);
    let s = open(dir.path());
    assert_eq!(s.datanode_uuid(), &uuid, "identity survives a restart");
    let report = s.report(&k.pool);
    assert_eq!(report.len(), 1);
    assert_eq!(report[0].len, data.len() as u64);
    assert_eq!(report[0].state, ReportedState::Finalized);
    assert_eq!(read_all(&s, &k), data);
    assert!(s.delete(&k, GenStamp(1001)).expect("delete"));
    assert!(!meta_file.exists());
    assert!(s.report(&k.pool).is_empty());
}

#[test]
fn every_write_switch_gives_the_same_files() {
    let data = bytes(5000, 7);
    let mut files = Vec::new();
    for (seek_free, buffered) in [(true, true), (false, true), (true, false), (false, false)] {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = Storage::open(
            dir.path(),
            opts(seek_free, buffered),
            Arc::new(Metrics::default()),
        )
        .expect("open");
        let k = key(7);
        let mut w = s
            .create_rbw(&k, GenStamp(1), DataChecksum::DEFAULT, false)
            .expect("create");
        // Odd packet sizes, a partial chunk grown over three packets, and a
        // re-sent overlap.
        put(&mut w, 0, &data[..700]);
        put(&mut w, 512, &data[512..800]);
        put(&mut w, 800, &data[800..1000]);
        put(&mut w, 1000, &data[1000..5000]);
        s.finalize(w, 5000, true).expect("finalize");
        let dirp = dir.path().join("current/BP-test/finalized/subdir0/subdir0");
        files.push((
            std::fs::read(dirp.join("blk_7")).expect("data"),
            std::fs::read(dirp.join("blk_7_1.meta")).expect("meta"),
        ));
        assert_eq!(read_all(&s, &k), data);
    }
    assert!(files.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn hflush_resend_of_a_partial_chunk_is_accepted() {
    // java-read-open-file.txt: 1000 bytes, then offset 512 / 488 bytes again.
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path());
    let k = key(9);
    let data = bytes(1000, 3);
    let mut w = s
        .create_rbw(&k, GenStamp(1003), DataChecksum::DEFAULT, false)
        .expect("create");
    put(&mut w, 0, &data);
    w.publish().expect("publish");
    // A reader sees the partial chunk with its checksum.
    assert_eq!(read_all(&s, &k), data);
    put(&mut w, 512, &data[512..]);
    assert_eq!(w.len(), 1000);
    assert!(matches!(
        w.write_packet(1001, &[0], None),
        Err(WriteError::Gap { .. })
    ));
    s.finalize(w, 1000, false).expect("finalize");
    assert_eq!(read_all(&s, &k), data);
}

#[test]
fn append_recomputes_the_partial_chunk() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path());
    let k = key(11);
    let first = bytes(1000, 5);
    let mut w = s
        .create_rbw(&k, GenStamp(1), DataChecksum::DEFAULT, false)
        .expect("create");
    put(&mut w, 0, &first);
    s.finalize(w, 1000, false).expect("finalize");
    assert!(s.append(&k, GenStamp(2), 999).is_err(), "wrong length");
    // hdfs-native keeps the GS on append: equal is fine.
    let mut w = s.append(&k, GenStamp(1), 1000).expect("append same GS");
    drop(w);
    // (The replica is now RBW; take it over as append recovery with a new GS.)
    w = s.recover(&k, GenStamp(2), 1000, 1000).expect("recover");
    let more = bytes(2000, 9);
    // The client's first append packet reaches the chunk boundary (24
    // bytes) with a checksum of those bytes only.
    put(&mut w, 1000, &more[..24]);
    put(&mut w, 1024, &more[24..]);
    s.finalize(w, 3000, false).expect("finalize");
    let mut all = first.clone();
    all.extend_from_slice(&more);
    assert_eq!(read_all(&s, &k), all);
    let r = s.get(&k).expect("replica");
    assert_eq!(r.gs, GenStamp(2));
}

#[test]
fn rbw_recovery_cuts_a_torn_tail() {
    let dir = tempfile::tempdir().expect("tempdir");
    let k = key(21);
    let data = bytes(3 * 512 + 100, 4);
    {
        let s = open(dir.path());
        let mut w = s
            .create_rbw(&k, GenStamp(5), DataChecksum::DEFAULT, false)
            .expect("create");
        put(&mut w, 0, &data);
        w.publish().expect("publish");
    }
    let rbw = dir.path().join("current/BP-test/rbw");
    // A crash after data reached the block file but before its checksum:
    // 300 more bytes without checksums.
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(rbw.join("blk_21"))
            .expect("open data");
        f.write_all(&[0xEE; 300]).expect("torn bytes");
    }
    let s = open(dir.path());
    let report = s.report(&k.pool);
    assert_eq!(report.len(), 1);
    assert_eq!(report[0].state, ReportedState::Rbw);
    // The last partial chunk's stored checksum covers 100 bytes; the chunk
    // now holds 400 on disk, so it is cut back to the last full chunk.
    assert_eq!(report[0].len, 3 * 512);
    assert_eq!(read_all(&s, &k), data[..3 * 512].to_vec());
    assert_eq!(
        std::fs::metadata(rbw.join("blk_21_5.meta"))
            .expect("meta")
            .len(),
        meta::meta_len(&DataChecksum::DEFAULT, 3 * 512)
    );
    drop(s);

    // A flipped byte in chunk 1 cuts the replica back to chunk 0.
    {
        let p = rbw.join("blk_21");
        let mut b = std::fs::read(&p).expect("read");
        b[700] ^= 0xFF;
        std::fs::write(&p, b).expect("write");
    }
    let s = open(dir.path());
    assert_eq!(s.report(&k.pool)[0].len, 512);
}

#[test]
fn interrupted_finalize_is_completed_at_start() {
    let dir = tempfile::tempdir().expect("tempdir");
    let k = key(0x1F_1F05);
    let data = bytes(2048, 8);
    {
        let s = open(dir.path());
        let mut w = s
            .create_rbw(&k, GenStamp(3), DataChecksum::DEFAULT, false)
            .expect("create");
        put(&mut w, 0, &data);
        w.publish().expect("publish");
    }
    // Crash between the two renames of finalize: meta moved, data not.
    let root = dir.path().join("current/BP-test");
    let fin = root.join("finalized/subdir31/subdir31");
    std::fs::create_dir_all(&fin).expect("mkdir");
    std::fs::rename(
        root.join("rbw/blk_2039557_3.meta"),
        fin.join("blk_2039557_3.meta"),
    )
    .expect("move meta");
    let s = open(dir.path());
    let r = s.report(&k.pool);
    assert_eq!(r.len(), 1);
    assert_eq!(r[0].state, ReportedState::Finalized);
    assert_eq!(read_all(&s, &k), data);
    // A damaged finalized meta goes to quarantine, not to the report.
    drop(s);
    std::fs::write(fin.join("blk_2039557_3.meta"), b"junk").expect("damage");
    let s = open(dir.path());
    assert!(s.report(&k.pool).is_empty());
    assert!(root.join("quarantine/blk_2039557").exists());
}

#[test]
fn usage_counts_our_bytes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path());
    let k = key(30);
    let mut w = s
        .create_rbw(&k, GenStamp(1), DataChecksum::DEFAULT, false)
        .expect("create");
    put(&mut w, 0, &bytes(1024, 1));
    s.finalize(w, 1024, false).expect("finalize");
    let u = s.usage().expect("usage");
    assert_eq!(u.dfs_used, 1024 + 7 + 8);
    assert!(u.capacity > 0 && u.remaining <= u.capacity);
}

#[test]
fn block_recovery_takes_over_cuts_and_finalizes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path());
    let k = key(21);
    let data = bytes(3000, 3);
    let mut w = s
        .create_rbw(&k, GenStamp(1), DataChecksum::DEFAULT, false)
        .expect("create");
    put(&mut w, 0, &data);
    drop(w);
    assert_eq!(
        s.init_replica_recovery(&key(22), GenStamp(1), GenStamp(5))
            .expect("missing"),
        None
    );
    assert!(
        s.init_replica_recovery(&k, GenStamp(2), GenStamp(5))
            .is_err(),
        "replica older than the block"
    );
    let info = s
        .init_replica_recovery(&k, GenStamp(1), GenStamp(5))
        .expect("init")
        .expect("found");
    assert_eq!(
        info,
        recovery::RecoveryReplicaInfo {
            gs: GenStamp(1),
            len: 3000,
            state: ReportedState::Rbw
        }
    );
    assert!(
        s.recover(&k, GenStamp(6), 0, u64::MAX).is_err(),
        "no pipeline may continue a replica under recovery"
    );
    assert!(
        s.init_replica_recovery(&k, GenStamp(1), GenStamp(4))
            .is_err(),
        "an older recovery is refused"
    );
    assert!(s
        .update_replica_under_recovery(&k, GenStamp(4), 1500)
        .is_err());
    assert!(s
        .update_replica_under_recovery(&k, GenStamp(5), 3001)
        .is_err());
    let fin = s
        .update_replica_under_recovery(&k, GenStamp(5), 1500)
        .expect("update");
    assert_eq!((fin.gs, fin.len), (GenStamp(5), 1500));
    let r = s.get(&k).expect("replica");
    assert!(matches!(r.state, ReplicaState::Finalized { len: 1500 }));
    assert_eq!(read_all(&s, &k), data[..1500].to_vec());
    // A retried update of the same recovery is accepted.
    s.update_replica_under_recovery(&k, GenStamp(5), 1500)
        .expect("retry");
    // The replica survives a restart as finalized.
    drop(s);
    let s = open(dir.path());
    let r = s.get(&k).expect("replica after restart");
    assert_eq!(r.gs, GenStamp(5));
    assert!(matches!(r.state, ReplicaState::Finalized { len: 1500 }));
}

#[test]
fn truncate_recovery_cuts_a_finalized_replica() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path());
    let k = key(31);
    s.add_pool(&k.pool).expect("pool");
    let data = bytes(3000, 5);
    let mut w = s
        .create_rbw(&k, GenStamp(1001), DataChecksum::DEFAULT, false)
        .expect("create");
    put(&mut w, 0, &data);
    s.finalize(w, 3000, false).expect("finalize");
    let info = s
        .init_replica_recovery(&k, GenStamp(1001), GenStamp(1005))
        .expect("init")
        .expect("found");
    assert_eq!((info.len, info.state), (3000, ReportedState::Finalized));
    assert!(
        s.update_replica_under_recovery(&k, GenStamp(1001), 1300)
            .is_err(),
        "a recovery id not newer than the replica is refused"
    );
    // Cut inside a chunk: the last chunk's checksum covers 1300 % 512 bytes.
    let fin = s
        .update_replica_under_recovery(&k, GenStamp(1005), 1300)
        .expect("truncate");
    assert_eq!((fin.gs, fin.len), (GenStamp(1005), 1300));
    assert_eq!(read_all(&s, &k), data[..1300].to_vec());
    let meta_file = dir
        .path()
        .join("current/BP-test/finalized/subdir0/subdir0/blk_31_1005.meta");
    assert_eq!(
        std::fs::metadata(&meta_file).expect("meta").len(),
        meta::meta_len(&DataChecksum::DEFAULT, 1300)
    );
    // The recovery started again (the commit was lost): a replica already
    // cut takes part as it is and is only restamped.
    let info = s
        .init_replica_recovery(&k, GenStamp(1001), GenStamp(1007))
        .expect("init again")
        .expect("found");
    assert_eq!((info.gs, info.len), (GenStamp(1005), 1300));
    s.update_replica_under_recovery(&k, GenStamp(1007), 1300)
        .expect("restamp");
    // A crash while a replica was back in rbw/: start-up reports it RBW,
    // and the next attempt cuts and finalizes it.
    drop(s.append(&k, GenStamp(1009), 1300).expect("to rbw"));
    drop(s);
    let s = open(dir.path());
    let r = s.get(&k).expect("replica after restart");
    assert_eq!(r.gs, GenStamp(1009));
    assert!(matches!(r.state, ReplicaState::Rbw(_)));
    let info = s
        .init_replica_recovery(&k, GenStamp(1007), GenStamp(1011))
        .expect("init rbw")
        .expect("found");
    assert_eq!((info.len, info.state), (1300, ReportedState::Rbw));
    s.update_replica_under_recovery(&k, GenStamp(1011), 1000)
        .expect("cut rbw");
    assert_eq!(read_all(&s, &k), data[..1000].to_vec());
    assert!(
        s.update_replica_under_recovery(&k, GenStamp(1013), 1200)
            .is_err(),
        "a replica shorter than the length asked for"
    );
}

#[test]
fn a_transfer_replaces_an_older_replica_as_hdfs_create_temporary() {
    // Goal: a copy (transfer) with a newer stamp replaces an older
    // finalized replica; a client's new pipeline does not; the same or an
    // older stamp is always refused; an older replica still being written
    // is replaced by a new pipeline too (its writer is stopped).
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path());
    let k = key(1073741900);
    s.add_pool(&k.pool).expect("pool");
    let old = bytes(3000, 7);
    let mut w = s
        .create_rbw(&k, GenStamp(5), DataChecksum::DEFAULT, false)
        .expect("create");
    put(&mut w, 0, &old);
    s.finalize(w, old.len() as u64, false).expect("finalize");
    let old_meta = dir
        .path()
        .join("current/BP-test/finalized/subdir0/subdir0/blk_1073741900_5.meta");
    assert!(old_meta.exists());
    for (gs, transfer) in [
        (GenStamp(6), false),
        (GenStamp(5), true),
        (GenStamp(4), true),
    ] {
        assert!(
            matches!(
                s.create_rbw(&k, gs, DataChecksum::DEFAULT, transfer),
                Err(StorageError::Exists(_))
            ),
            "gs {gs} transfer {transfer} must be refused"
        );
    }
    let new = bytes(5000, 9);
    let mut w = s
        .create_rbw(&k, GenStamp(6), DataChecksum::DEFAULT, true)
        .expect("a newer transfer replaces the finalized replica");
    assert!(!old_meta.exists(), "the older replica's files are gone");
    put(&mut w, 0, &new[..1000]);
    // The copy dies half way; a newer pipeline takes the RBW replica over.
    drop(w);
    let mut w = s
        .create_rbw(&k, GenStamp(7), DataChecksum::DEFAULT, false)
        .expect("a newer pipeline replaces an RBW replica");
    put(&mut w, 0, &new);
    s.finalize(w, new.len() as u64, false).expect("finalize");
    assert_eq!(read_all(&s, &k), new);
    assert_eq!(s.get(&k).expect("replica").gs, GenStamp(7));
    drop(s);
    let s = open(dir.path());
    let report = s.report(&k.pool);
    assert_eq!(report.len(), 1, "one replica after a restart: {report:?}");
    assert_eq!(report[0].len, new.len() as u64);
}

#[test]
fn raw_checksum_and_data_reads_for_block_checksum() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path());
    let k = key(1073741900);
    s.add_pool(&k.pool).expect("pool");
    let data = bytes(1300, 4);
    let mut w = s
        .create_rbw(&k, GenStamp(1001), DataChecksum::DEFAULT, false)
        .expect("create");
    put(&mut w, 0, &data[..1000]);
    w.publish().expect("publish");
    // Being written: the snapshot's CRC of the partial chunk at 1000 bytes.
    let r = s.open_reader(&k, GenStamp(1001)).expect("rbw reader");
    assert_eq!(r.len(), 1000);
    let mut got = vec![0u8; 8];
    r.read_checksums(0, &mut got).expect("two crcs");
    assert_eq!(got, sums(&data[..1000]));
    put(&mut w, 1000, &data[1000..]);
    s.finalize(w, 1300, false).expect("finalize");

    let r = s.open_reader(&k, GenStamp(1001)).expect("reader");
    let mut got = vec![0u8; 12];
    r.read_checksums(0, &mut got).expect("all crcs");
    assert_eq!(got, sums(&data));
    let mut last = [0u8; 4];
    r.read_checksums(2, &mut last).expect("last crc");
    assert_eq!(last.as_slice(), &sums(&data)[8..]);
    r.read_checksums(3, &mut []).expect("nothing to read");
    // Past the last chunk, or not whole checksums.
    assert!(r.read_checksums(3, &mut [0u8; 4]).is_err());
    assert!(r.read_checksums(0, &mut [0u8; 6]).is_err());
    assert!(r.read_checksums(u64::MAX, &mut [0u8; 4]).is_err());

    let mut mid = vec![0u8; 77];
    r.read_data(1200, &mut mid).expect("data");
    assert_eq!(mid, &data[1200..1277]);
    assert!(r.read_data(1250, &mut [0u8; 51]).is_err());
    assert!(r.read_data(u64::MAX, &mut [0u8; 2]).is_err());
}

/// Drops `path`'s pages from the page cache (written back first, so that
/// none stays dirty).
fn evict(path: &Path) {
    use std::os::fd::AsRawFd;
    let f = std::fs::File::open(path).expect("open");
    f.sync_all().expect("sync");
    nix::fcntl::posix_fadvise(
        f.as_raw_fd(),
        0,
        0,
        nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
    )
    .expect("fadvise");
}

/// Goal: a reader opened from the caches reads what the ordinary reader
/// reads; once the block file's pages have left the page cache its reads
/// say "would block" (not wrong bytes, not a failed replica), and the same
/// reader made to wait reads them from the disk.
#[test]
fn a_cached_reader_reads_only_what_the_page_cache_holds() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open(dir.path());
    let k = key(1073741830);
    s.add_pool(&k.pool).expect("pool");
    let data = bytes(20_000, 9);
    let mut w = s
        .create_rbw(&k, GenStamp(1001), DataChecksum::DEFAULT, false)
        .expect("create");
    put(&mut w, 0, &data);
    s.finalize(w, data.len() as u64, false).expect("finalize");
    let read = |r: &ReplicaReader| {
        let (mut got, mut sums) = (Vec::new(), Vec::new());
        r.read(4096, 8192, Some(Crc32cImpl::Software), &mut got, &mut sums)
            .map(|()| got)
    };
    let r = match s.open_reader_cached(&k, GenStamp(0)) {
        Ok(r) => r,
        // A kernel without cached lookups (before Linux 5.12).
        Err(e) if e.would_block() => return,
        Err(e) => panic!("open: {e}"),
    };
    match read(&r) {
        Ok(got) => assert!(got == data[4096..8192]),
        // A file system without RWF_NOWAIT reads.
        Err(e) if e.would_block() => return,
        Err(e) => panic!("read: {e}"),
    }
    evict(
        &dir.path()
            .join("current/BP-test/finalized/subdir0/subdir0/blk_1073741830"),
    );
    let e = read(&r).expect_err("the block file's pages are gone");
    assert!(e.would_block(), "{e}");
    let got = read(&r.waiting()).expect("a waiting read");
    assert!(got == data[4096..8192]);
}

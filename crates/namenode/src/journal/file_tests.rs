//! The file edit log when its disk fills up (`Writer::extend_to`).

use std::path::{Path, PathBuf};
use std::time::Duration;

use cairn_common::disk::sim::SimDisk;

use super::*;
use crate::namespace::INodeId;

/// A disk whose files end at `limit` bytes: a write or allocation past it
/// fails as on a full disk. Everything else is the simulated disk's.
struct FullAt {
    inner: SimDisk,
    limit: u64,
}

struct FullFile {
    inner: Box<dyn DiskFile>,
    limit: u64,
}

fn no_space() -> io::Error {
    io::Error::from_raw_os_error(28)
}

impl DiskFile for FullFile {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        if offset + buf.len() as u64 > self.limit {
            return Err(no_space());
        }
        self.inner.write_all_at(buf, offset)
    }
    fn allocate(&self, from: u64, len: u64) -> io::Result<()> {
        if from + len > self.limit {
            return Err(no_space());
        }
        self.inner.allocate(from, len)
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        if len > self.limit {
            return Err(no_space());
        }
        self.inner.set_len(len)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.inner.sync_data()
    }
    fn sync_all(&self) -> io::Result<()> {
        self.inner.sync_all()
    }
}

impl Disk for FullAt {
    fn create(&self, path: &Path) -> io::Result<Box<dyn DiskFile>> {
        Ok(Box::new(FullFile {
            inner: self.inner.create(path)?,
            limit: self.limit,
        }))
    }
    fn open_write(&self, path: &Path) -> io::Result<Box<dyn DiskFile>> {
        Ok(Box::new(FullFile {
            inner: self.inner.open_write(path)?,
            limit: self.limit,
        }))
    }
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.inner.read(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        self.inner.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.inner.remove_file(path)
    }
    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.inner.create_dir_all(path)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.inner.sync_dir(dir)
    }
    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        self.inner.list_dir(dir)
    }
    fn exists(&self, path: &Path) -> bool {
        self.inner.exists(path)
    }
}

fn mkdir(i: u64, name_len: usize) -> Edit {
    Edit::Mkdir {
        id: INodeId(16386 + i),
        path: format!("/d{i}-{}", "x".repeat(name_len)),
        permission: 0o755,
        owner: "o".into(),
        group: "g".into(),
        mtime_ms: 1,
    }
}

/// A log allocating 4 KiB steps on a disk that holds 4 KiB in all.
fn log_on_a_disk_full_at_4k() -> (FullAt, FileEditLog) {
    let disk = FullAt {
        inner: SimDisk::new(),
        limit: 4096,
    };
    let dir = PathBuf::from("/name");
    disk.create_dir_all(&dir).expect("mkdir");
    let config = JournalConfig {
        preallocation: Preallocation::Fallocate,
        step_bytes: 4096,
        ..JournalConfig::default()
    };
    let log = FileEditLog::create(&disk, std::slice::from_ref(&dir), "edits_1", 0, config)
        .expect("create");
    (disk, log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edits_taken_before_the_disk_filled_are_still_written() {
    // Goal: when the log cannot allocate its next step on any copy it
    // refuses new edits, but keeps its copies: an edit it took before the
    // refusal is written in the room already allocated and becomes
    // durable. (It dropped its last copy instead, and such an edit then
    // failed as "no journal directory left": the NameNode stopped.)
    let (disk, log) = log_on_a_disk_full_at_4k();
    // Each sync takes a while, so the second edit arrives while the first
    // is being synced, before the allocation ahead fails.
    disk.inner.set_sync_delay(Duration::from_millis(300));
    // The first record leaves less than half a step: after its batch the
    // log allocates ahead, which the full disk refuses.
    let first = log.append(&[mkdir(1, 2300)]).expect("first edit");
    tokio::time::sleep(Duration::from_millis(100)).await;
    let second = log
        .append(&[mkdir(2, 10)])
        .expect("taken before the refusal");
    log.wait_durable(first).await.expect("first durable");
    log.wait_durable(second)
        .await
        .expect("the edit taken before the refusal is durable");
    let refused = log.append(&[mkdir(3, 10)]).expect_err("refused once full");
    assert!(refused.0.contains("cannot preallocate"), "{refused}");
    // The figures are final once the sync thread is joined.
    log.close();
    assert_eq!(log.stats().records, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mutation_admitted_before_the_disk_filled_is_still_taken() {
    // Goal: a mutation asks the log to admit it before it changes memory
    // (`admit`), then appends. If the disk fills in between, the log
    // refuses new mutations but still takes the admitted one's edits:
    // refusing them would leave memory ahead of the log, and the NameNode
    // would have to stop.
    let (disk, log) = log_on_a_disk_full_at_4k();
    disk.inner.set_sync_delay(Duration::from_millis(100));
    // After this record's batch the log allocates ahead, which the full
    // disk refuses.
    let first = log.append(&[mkdir(1, 2300)]).expect("first edit");
    let admission = log.admit().expect("admitted before the disk filled");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while log.failure().is_none() {
        assert!(std::time::Instant::now() < deadline, "no refusal");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(log.admit().is_err(), "the next mutation is refused");
    assert!(log.append(&[mkdir(3, 10)]).is_err(), "unadmitted edits too");
    let second = log
        .append_admitted(&admission, &[mkdir(2, 10)])
        .expect("the admitted mutation's edits are taken");
    log.wait_durable(first).await.expect("first durable");
    log.wait_durable(second)
        .await
        .expect("the admitted mutation's edits are durable");
    log.close();
    assert_eq!(log.stats().records, 2);
}

/// The records of a segment's bytes, in order, up to its end.
fn records_of(bytes: &[u8]) -> Vec<(u64, Edit)> {
    let mut pos = 0;
    let mut got = Vec::new();
    loop {
        match super::super::codec::decode_record(&bytes[pos..]) {
            super::super::codec::Decoded::Record { txid, edit, size } => {
                got.push((txid, edit));
                pos += size;
            }
            super::super::codec::Decoded::End => return got,
            other => panic!("at {pos}: {other:?}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_writes_keep_every_record_across_block_boundaries() {
    // Goal: with direct writes (each batch rewritten from the start of
    // its first 4 KiB block, zeros after it), a segment on a real file
    // system holds every record in order, and nothing but zeros after the
    // last; also when batches end mid-block, span blocks, or cross a
    // preallocation step.
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().to_path_buf();
    let disk = cairn_common::disk::RealDisk;
    let config = JournalConfig {
        preallocation: Preallocation::Fallocate,
        step_bytes: 16 * 1024,
        direct: true,
        ..JournalConfig::default()
    };
    let log = FileEditLog::create(&disk, std::slice::from_ref(&dir), "edits_1", 0, config)
        .expect("create");
    let mut want = Vec::new();
    for i in 0..200u64 {
        // 20 to ~5,000 bytes: some batches inside a block, some across.
        let e = mkdir(i, ((i * 977) % 5000) as usize + 20);
        let txid = log.append(std::slice::from_ref(&e)).expect("append");
        want.push((txid.0, e));
        if i % 3 == 0 {
            log.wait_durable(txid).await.expect("durable");
        }
    }
    log.wait_durable(TxId(200)).await.expect("all durable");
    let written = log.bytes_written() as usize;
    log.close();
    // Where the file system takes direct writes (ext4, xfs; not tmpfs),
    // every batch went that way.
    let probe = dir.join("probe");
    std::fs::write(&probe, b"").expect("probe");
    if disk.open_direct(&probe).expect("open").is_some() {
        let stats = log.stats();
        assert!(stats.batches > 0);
        assert_eq!(stats.direct_batches, stats.batches);
    }
    let bytes = std::fs::read(dir.join("edits_1")).expect("read");
    assert!(bytes.len() >= written);
    assert!(bytes[written..].iter().all(|b| *b == 0));
    assert_eq!(records_of(&bytes), want);
}

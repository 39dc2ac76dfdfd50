//! The log store and state machine against openraft's own storage test
//! suite, and the log file's start-up rules (torn tail, damage, reopen).

use std::sync::{Arc, RwLock};

use cairn_common::disk::{Disk, RealDisk};
use openraft::storage::{RaftLogReader, RaftLogStorage};
use openraft::testing::{StoreBuilder, Suite};
use openraft::{EntryPayload, LeaderId};

use super::log_store::{LogStoreConfig, RaftLogStore, HEADER_LEN, LOG_FILE};
use super::snapshot::{empty_base, SnapshotStore};
use super::state_machine::{AppliedHook, ImageOwner, NamespaceStateMachine, Progress};
use super::{EditBatch, Entry, LogId, StorageError, TypeConfig, Vote};
use crate::namespace::{Limits, Namespace};

fn owner() -> ImageOwner {
    ImageOwner {
        superuser: "hdfs".into(),
        supergroup: "supergroup".into(),
        limits: Limits::default(),
    }
}

fn disk() -> Arc<dyn Disk> {
    Arc::new(RealDisk)
}

struct Builder;

impl StoreBuilder<TypeConfig, RaftLogStore, NamespaceStateMachine, tempfile::TempDir> for Builder {
    async fn build(
        &self,
    ) -> Result<(tempfile::TempDir, RaftLogStore, NamespaceStateMachine), StorageError> {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default())
            .expect("open raft log");
        let ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
        let snapshots = SnapshotStore {
            disk: disk(),
            dir: dir.path().to_path_buf(),
            log: store.clone(),
            base: empty_base(&owner()),
            owner: owner(),
            written: Default::default(),
        };
        let sm = NamespaceStateMachine::new(
            1,
            Arc::new(RwLock::new(ns)),
            Progress::new(0),
            AppliedHook::default(),
            snapshots,
            None,
        );
        Ok((dir, store, sm))
    }
}

#[test]
fn openraft_storage_suite() {
    Suite::test_all(Builder).expect("openraft storage suite");
}

fn entry(term: u64, index: u64, payload: &[u8]) -> Entry {
    Entry {
        log_id: LogId::new(LeaderId::new(term, 1), index),
        payload: EntryPayload::Normal(EditBatch {
            records: payload.to_vec(),
        }),
    }
}

/// Appends through openraft's blocking helper (it waits for the flush).
async fn append(store: &mut RaftLogStore, entries: Vec<Entry>) {
    use openraft::storage::RaftLogStorageExt;
    store.blocking_append(entries).await.expect("append");
}

async fn indexes(store: &mut RaftLogStore) -> Vec<u64> {
    store
        .try_get_log_entries(0..)
        .await
        .expect("read")
        .iter()
        .map(|e| e.log_id.index)
        .collect()
}

#[tokio::test]
async fn reopen_keeps_entries_and_vote_and_cuts_a_torn_tail() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let mut s =
            RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open");
        append(
            &mut s,
            (1..=5).map(|i| entry(1, i, &[i as u8; 100])).collect(),
        )
        .await;
        s.save_vote(&Vote::new(3, 2)).await.expect("vote");
        // A conflicting suffix is cut and replaced.
        s.truncate(LogId::new(LeaderId::new(1, 1), 4))
            .await
            .expect("truncate");
        append(&mut s, vec![entry(2, 4, b"new")]).await;
    }
    let mut s = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("reopen");
    assert_eq!(indexes(&mut s).await, vec![1, 2, 3, 4]);
    assert_eq!(s.read_vote().await.expect("vote"), Some(Vote::new(3, 2)));
    let got = s.try_get_log_entries(4..5).await.expect("read");
    assert_eq!(got[0].log_id.leader_id.term, 2);
    drop(s);

    // Tear the last record: a half-written tail followed by zeros.
    let path = dir.path().join(LOG_FILE);
    let mut data = std::fs::read(&path).expect("read log");
    let end = data.iter().rposition(|b| *b != 0).expect("data") + 1;
    for b in &mut data[end - 3..end] {
        *b = 0;
    }
    std::fs::write(&path, &data).expect("write");
    let mut s = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("torn");
    assert_eq!(indexes(&mut s).await, vec![1, 2, 3]);
    // The next append goes where the torn record was.
    append(&mut s, vec![entry(2, 4, b"again")]).await;
    drop(s);
    let mut s = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("again");
    assert_eq!(indexes(&mut s).await, vec![1, 2, 3, 4]);
}

#[tokio::test]
async fn damage_before_the_tail_is_refused_with_its_offset() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let mut s =
            RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open");
        append(&mut s, (1..=3).map(|i| entry(1, i, &[7u8; 64])).collect()).await;
    }
    let path = dir.path().join(LOG_FILE);
    let mut data = std::fs::read(&path).expect("read log");
    // Flip one payload byte of the first record (32-byte header, kind).
    data[40] ^= 0xff;
    std::fs::write(&path, &data).expect("write");
    let err = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default())
        .err()
        .expect("damage refused");
    let msg = err.to_string();
    assert!(msg.contains("offset 0") && msg.contains(LOG_FILE), "{msg}");
}

/// One edit record (mkdir `path`) with `txid`, as the leader encodes it.
fn mkdir_record(path: &str, txid: u64) -> Vec<u8> {
    let mut ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    let edits = ns
        .mkdirs(
            &crate::namespace::permission::Caller::superuser("hdfs"),
            path,
            0o755,
            false,
            2,
        )
        .expect("mkdirs");
    let mut out = Vec::new();
    crate::journal::codec::encode_record(&mut out, txid, &edits[0]);
    out
}

fn normal(node: u64, index: u64, records: Vec<u8>) -> Entry {
    Entry {
        log_id: LogId::new(LeaderId::new(1, node), index),
        payload: EntryPayload::Normal(EditBatch { records }),
    }
}

#[tokio::test]
async fn state_machine_applies_others_skips_its_own_and_refuses_divergence() {
    use openraft::storage::RaftStateMachine;
    use std::sync::atomic::Ordering;
    let ns = Arc::new(RwLock::new(Namespace::new(
        "hdfs",
        "supergroup",
        1,
        Limits::default(),
    )));
    let progress = Progress::new(0);
    let dir = tempfile::tempdir().expect("tempdir");
    let snapshots = SnapshotStore {
        disk: disk(),
        dir: dir.path().to_path_buf(),
        log: RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open"),
        base: empty_base(&owner()),
        owner: owner(),
        written: Default::default(),
    };
    let mut sm = NamespaceStateMachine::new(
        1,
        ns.clone(),
        progress.clone(),
        AppliedHook::default(),
        snapshots,
        None,
    );
    let exists = |p: &str| {
        ns.read()
            .expect("lock")
            .get_file_info(&crate::namespace::permission::Caller::superuser("hdfs"), p)
            .expect("stat")
            .is_some()
    };
    // A follower applies another leader's entry.
    sm.apply([normal(2, 1, mkdir_record("/a", 1))])
        .await
        .expect("apply");
    assert!(exists("/a"));
    assert_eq!(progress.applied_txid.load(Ordering::Acquire), 1);
    assert_eq!(*progress.committed_txid.borrow(), 1);

    // As leader, it applied /b (txid 2) before proposing it: its own
    // committed entry only advances the state.
    ns.write()
        .expect("lock")
        .mkdirs(
            &crate::namespace::permission::Caller::superuser("hdfs"),
            "/b",
            0o755,
            false,
            2,
        )
        .expect("mkdir");
    progress.applied_txid.store(2, Ordering::Release);
    sm.apply([normal(1, 2, mkdir_record("/b", 2))])
        .await
        .expect("own entry");
    assert_eq!(*progress.committed_txid.borrow(), 2);

    // It applied /c (txid 3) and lost the lead before it committed; the
    // new leader's txid 3 is something else: refused, for good.
    progress.applied_txid.store(3, Ordering::Release);
    let err = sm.apply([normal(3, 3, mkdir_record("/d", 3))]).await;
    assert!(err.is_err());
    assert!(progress.diverged.load(Ordering::Acquire));
    assert!(!exists("/d"));
}

#[test]
fn snapshot_file_round_trips_and_refuses_damage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open");
    let store = SnapshotStore {
        disk: disk(),
        dir: dir.path().to_path_buf(),
        log,
        base: empty_base(&owner()),
        owner: owner(),
        written: Default::default(),
    };
    assert!(store.read().expect("read").is_none());
    let meta = openraft::SnapshotMeta {
        last_log_id: Some(LogId::new(LeaderId::new(2, 1), 7)),
        last_membership: openraft::StoredMembership::default(),
        snapshot_id: "2-7-40".into(),
    };
    let ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    let image = crate::image::encode(&ns, 40);
    store.write(&meta, &image).expect("write");
    let (m, i) = store.read().expect("read").expect("a snapshot");
    assert_eq!(m, meta);
    assert_eq!(i, image);
    assert_eq!(store.decode(&i).expect("decode").1, 40);

    let path = dir.path().join(super::snapshot::SNAPSHOT_FILE);
    let mut data = std::fs::read(&path).expect("read file");
    let mid = data.len() / 2;
    data[mid] ^= 0x40;
    std::fs::write(&path, &data).expect("write file");
    let e = store.read().expect_err("damage is refused");
    assert!(e.to_string().contains("checksum mismatch"), "{e}");
}

/// A member's log drops entries only behind a snapshot on disk: openraft
/// purges what a snapshot from the leader replaces before the state
/// machine has written that snapshot.
#[tokio::test]
async fn a_purge_past_the_newest_snapshot_waits_for_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut s = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open");
    let at = |i: u64| LogId::new(LeaderId::new(1, 1), i);
    s.purge_behind_snapshots(Some(at(2))).expect("rule");
    append(&mut s, (1..=8).map(|i| entry(1, i, b"e")).collect()).await;
    s.purge(at(2)).await.expect("purge behind the snapshot");
    assert_eq!(indexes(&mut s).await, (3..=8).collect::<Vec<_>>());
    // The leader's snapshot up to 6 is accepted; its file is not written yet.
    s.purge(at(6)).await.expect("purge deferred");
    assert_eq!(indexes(&mut s).await, (3..=8).collect::<Vec<_>>());
    s.snapshot_written(Some(at(5))).expect("an older snapshot");
    assert_eq!(indexes(&mut s).await, (3..=8).collect::<Vec<_>>());
    s.snapshot_written(Some(at(6)))
        .expect("the leader's snapshot");
    assert_eq!(indexes(&mut s).await, vec![7, 8]);
    let state = s.get_log_state().await.expect("state");
    assert_eq!(state.last_purged_log_id, Some(at(6)));
    drop(s);
    let mut s = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("reopen");
    assert_eq!(indexes(&mut s).await, vec![7, 8]);
}

/// A snapshot from the leader installed while one was being built purges
/// the entries the build replays: the build hands back the installed one
/// (it is newer) instead of failing the Raft core.
#[tokio::test]
async fn a_build_overtaken_by_an_installed_snapshot_returns_that_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut log = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open");
    append(
        &mut log,
        (1..=5)
            .map(|i| normal(1, i, mkdir_record(&format!("/d{i}"), i)))
            .collect(),
    )
    .await;
    let meta_at = |index: u64, txid: u64| openraft::SnapshotMeta {
        last_log_id: Some(LogId::new(LeaderId::new(1, 1), index)),
        last_membership: openraft::StoredMembership::default(),
        snapshot_id: format!("1-{index}-{txid}"),
    };
    // The leader's snapshot (up to entry 5) lands after the build read
    // that there was none, and the log is purged up to it.
    log.purge(LogId::new(LeaderId::new(1, 1), 5))
        .await
        .expect("purge");
    let store_with = |base: super::snapshot::BaseImage| SnapshotStore {
        disk: disk(),
        dir: dir.path().to_path_buf(),
        log: log.clone(),
        base,
        owner: owner(),
        written: Default::default(),
    };
    let installed = meta_at(5, 5);
    let writer = store_with(empty_base(&owner()));
    let plain = empty_base(&owner());
    let (m, image) = (installed.clone(), {
        let ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
        crate::image::encode(&ns, 5)
    });
    let racing: super::snapshot::BaseImage = Arc::new(move || {
        writer.write(&m, &image)?;
        plain()
    });
    let (got, _) = store_with(racing)
        .build(meta_at(3, 3), 3)
        .expect("the installed snapshot stands for the build");
    assert_eq!(got, installed);

    // Without a newer snapshot, entries missing under a build are an error.
    std::fs::remove_file(dir.path().join(super::snapshot::SNAPSHOT_FILE)).expect("remove");
    let e = store_with(empty_base(&owner()))
        .build(meta_at(4, 4), 4)
        .expect_err("missing entries");
    assert!(
        e.to_string()
            .contains("replays to txid 0, not the applied 4"),
        "{e}"
    );
}

#[tokio::test]
async fn a_start_rewrites_the_log_file_without_purged_records() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(LOG_FILE);
    {
        let mut s =
            RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open");
        // 100 entries of 100 KiB; 4.5 MB purged below: enough for a start
        // to rewrite the file, fewer than the bytes kept, so the purge
        // itself does not.
        append(
            &mut s,
            (1..=100)
                .map(|i| entry(1, i, &vec![i as u8; 100 * 1024]))
                .collect(),
        )
        .await;
        s.purge(LogId::new(LeaderId::new(1, 1), 45))
            .await
            .expect("purge");
        assert_eq!(indexes(&mut s).await, (46..=100).collect::<Vec<_>>());
    }
    let before = std::fs::metadata(&path).expect("stat").len();
    let mut s = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("reopen");
    let after = std::fs::metadata(&path).expect("stat").len();
    assert!(
        after + 4 * 1024 * 1024 < before,
        "{before} bytes -> {after}"
    );
    assert_eq!(indexes(&mut s).await, (46..=100).collect::<Vec<_>>());
    let got = s.try_get_log_entries(55..56).await.expect("read");
    let EntryPayload::Normal(b) = &got[0].payload else {
        panic!("not a normal entry");
    };
    assert_eq!(b.records, vec![55u8; 100 * 1024]);
    // Appends go on after the rewritten records, and survive a reopen.
    append(&mut s, vec![entry(1, 101, b"next")]).await;
    drop(s);
    let mut s = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("reopen");
    assert_eq!(indexes(&mut s).await, (46..=101).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_purge_of_most_of_the_file_rewrites_it_while_running() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(LOG_FILE);
    let mut s = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open");
    append(
        &mut s,
        (1..=60)
            .map(|i| entry(1, i, &vec![i as u8; 100 * 1024]))
            .collect(),
    )
    .await;
    let before = std::fs::metadata(&path).expect("stat").len();
    s.purge(LogId::new(LeaderId::new(1, 1), 50))
        .await
        .expect("purge");
    // Appends queued after the purge land in the rewritten file; a
    // conflicting suffix is cut there too.
    append(
        &mut s,
        (61..=63).map(|i| entry(1, i, &[i as u8; 10])).collect(),
    )
    .await;
    s.truncate(LogId::new(LeaderId::new(1, 1), 62))
        .await
        .expect("truncate");
    append(&mut s, vec![entry(2, 62, b"replaced")]).await;
    let after = std::fs::metadata(&path).expect("stat").len();
    assert!(
        after + 4 * 1024 * 1024 < before,
        "the running log's file shrank: {before} bytes -> {after}"
    );
    drop(s);
    let mut s = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("reopen");
    assert_eq!(indexes(&mut s).await, (51..=62).collect::<Vec<_>>());
    let got = s.try_get_log_entries(51..63).await.expect("read");
    let EntryPayload::Normal(b) = &got[0].payload else {
        panic!("not a normal entry");
    };
    assert_eq!(b.records, vec![51u8; 100 * 1024]);
    assert_eq!(got[11].log_id.leader_id.term, 2);
    let EntryPayload::Normal(b) = &got[11].payload else {
        panic!("not a normal entry");
    };
    assert_eq!(b.records, b"replaced");
}

#[tokio::test]
async fn a_jump_past_an_installed_snapshot_reads_as_purged() {
    let dir = tempfile::tempdir().expect("tempdir");
    {
        let mut s =
            RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open");
        append(&mut s, (1..=5).map(|i| entry(1, i, b"old")).collect()).await;
        // A snapshot up to 9 was installed; entries after it arrived
        // before openraft recorded the purge (a crash in between).
        append(&mut s, (10..=12).map(|i| entry(2, i, b"new")).collect()).await;
    }
    let e = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default())
        .err()
        .expect("a jump without a snapshot is damage");
    assert!(e.to_string().contains("has index 10 after Some(5)"), "{e}");
    // A snapshot that does not reach the jump explains nothing.
    let short = Some(LogId::new(LeaderId::new(1, 1), 7));
    assert!(
        RaftLogStore::open_after(disk(), dir.path(), LogStoreConfig::default(), short).is_err()
    );
    let snap = LogId::new(LeaderId::new(2, 1), 9);
    for _ in 0..2 {
        let mut s =
            RaftLogStore::open_after(disk(), dir.path(), LogStoreConfig::default(), Some(snap))
                .expect("open after the snapshot");
        assert_eq!(indexes(&mut s).await, vec![10, 11, 12]);
        let state = s.get_log_state().await.expect("state");
        assert_eq!(state.last_purged_log_id, Some(snap));
    }
}

#[tokio::test]
async fn recovery_cuts_the_log_at_damage_and_keeps_the_old_one() {
    use super::recovery::recover;
    use crate::storage::RecoveryChoice;
    let dir = tempfile::tempdir().expect("tempdir");
    let record = HEADER_LEN + 1 + 64;
    {
        let mut s =
            RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open");
        append(&mut s, (1..=5).map(|i| entry(1, i, &[7u8; 64])).collect()).await;
        s.save_committed(Some(LogId::new(LeaderId::new(1, 1), 5)))
            .await
            .expect("committed");
        let mut led = Vote::new(1, 1);
        led.commit();
        s.save_vote(&led).await.expect("vote");
    }
    let path = dir.path().join(LOG_FILE);
    let mut data = std::fs::read(&path).expect("read log");
    // Damage the third record's payload.
    data[2 * record + 40] ^= 0xff;
    std::fs::write(&path, &data).expect("write");
    assert!(RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).is_err());

    // Quitting changes nothing.
    let mut asked = Vec::new();
    let e = recover(disk().as_ref(), dir.path(), &mut |q: &str| {
        asked.push(q.to_string());
        RecoveryChoice::Quit
    })
    .expect_err("quit");
    assert!(e.to_string().contains("given up"), "{e}");
    assert!(
        asked[0].contains(&format!("offset {}", 2 * record)),
        "{asked:?}"
    );
    assert_eq!(std::fs::read(&path).expect("read"), data);

    let done = recover(disk().as_ref(), dir.path(), &mut |_: &str| {
        RecoveryChoice::Stop
    })
    .expect("recover");
    assert_eq!(done.last_kept, Some(2));
    let saved = done.saved_in.expect("old log kept");
    assert_eq!(std::fs::read(saved.join(LOG_FILE)).expect("saved"), data);
    let mut s = RaftLogStore::open(disk(), dir.path(), LogStoreConfig::default()).expect("open");
    assert_eq!(indexes(&mut s).await, vec![1, 2]);
    assert_eq!(
        s.read_committed()
            .await
            .expect("committed")
            .map(|c| c.index),
        Some(2),
        "the committed hint is lowered to what is left"
    );
    let vote = s.read_vote().await.expect("vote").expect("a vote");
    assert_eq!(vote.leader_id().term, 1, "the term is kept");
    assert!(
        !vote.is_committed(),
        "but it does not lead again on its own"
    );
}

//! Storage tests of replicas changed from two sides at once: a finalize
//! against an INVALIDATE, and takeovers (pipeline recovery, block
//! recovery, a stale replica's replacement, close recovery) against a
//! writer that is still running.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::tests::{bytes, key, opts, put};
use super::*;
use crate::checksum::DataChecksum;

fn open_with_stop_wait(dir: &Path, wait: Duration) -> Arc<Storage> {
    let o = StorageOptions {
        writer_stop_wait: wait,
        ..opts(true, true)
    };
    Arc::new(Storage::open(dir, o, Arc::new(Metrics::default())).expect("open storage"))
}

/// Every file of block `id` anywhere under `dir`.
fn files_of(dir: &Path, id: u64) -> Vec<PathBuf> {
    let prefix = format!("blk_{id}");
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read dir") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n == prefix || n.starts_with(&format!("{prefix}_")))
            {
                out.push(p);
            }
        }
    }
    out
}

/// A replica being written, 1000 bytes acknowledged, and its live writer.
fn live_writer(s: &Storage, k: &ReplicaKey) -> ReplicaWriter {
    s.add_pool(&k.pool).expect("pool");
    let mut w = s
        .create_rbw(k, GenStamp(1001), DataChecksum::DEFAULT, false)
        .expect("create");
    put(&mut w, 0, &bytes(1000, 3));
    w.publish().expect("publish");
    w.shared.set_acked(1000);
    w
}

/// The token that cancels the replica's running writer.
fn writer_token_of(s: &Storage, k: &ReplicaKey) -> tokio_util::sync::CancellationToken {
    s.get(k)
        .and_then(|r| match r.state {
            ReplicaState::Rbw(sh) => sh.writer_token(),
            ReplicaState::Finalized { .. } => None,
        })
        .expect("a running writer's token")
}

fn wait_until_finished<T>(t: &std::thread::JoinHandle<T>, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while !t.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    t.is_finished()
}

/// An INVALIDATE that arrives while a finalize is between moving the files
/// and recording the replica as finalized must not leave a replica in the
/// map whose files are gone, nor files that no replica owns: it waits for
/// the finalize and then deletes the finalized replica.
#[test]
fn invalidate_waits_for_a_finalize_in_progress() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open_with_stop_wait(dir.path(), WRITER_STOP_WAIT);
    let k = key(1073742001);
    let w = live_writer(&s, &k);
    let pause = s.hooks.pause_finalize_after_rename();
    let finalize = {
        let s = s.clone();
        std::thread::spawn(move || s.finalize(w, 1000, false))
    };
    pause
        .arrived
        .recv_timeout(Duration::from_secs(10))
        .expect("finalize reached the pause");
    let invalidate = {
        let (s, k) = (s.clone(), k.clone());
        std::thread::spawn(move || s.delete(&k, GenStamp(1001)))
    };
    let ran_inside_finalize = wait_until_finished(&invalidate, Duration::from_millis(200));
    pause.resume.send(()).expect("resume finalize");
    finalize.join().expect("finalize thread").expect("finalize");
    let deleted = invalidate
        .join()
        .expect("invalidate thread")
        .expect("invalidate");
    assert!(deleted, "the replica was deleted");
    assert!(s.get(&k).is_none(), "a deleted replica is still in the map");
    assert_eq!(files_of(dir.path(), 1073742001), Vec::<PathBuf>::new());
    assert!(!ran_inside_finalize, "INVALIDATE ran inside a finalize");
}

/// A pipeline recovery waits for the old writer to end and only then
/// takes the replica over.
#[test]
fn takeover_waits_for_the_old_writer_to_end() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open_with_stop_wait(dir.path(), Duration::from_secs(20));
    let k = key(1073742002);
    let old = live_writer(&s, &k);
    let old_token = writer_token_of(&s, &k);
    let released = Arc::new(AtomicBool::new(false));
    let takeover = {
        let (s, k, released) = (s.clone(), k.clone(), released.clone());
        std::thread::spawn(move || {
            let r = s.recover(&k, GenStamp(1002), 0, 1000);
            (r, released.load(Ordering::Acquire))
        })
    };
    assert!(
        !wait_until_finished(&takeover, Duration::from_millis(150)),
        "the takeover went on while the old writer was alive"
    );
    assert!(old_token.is_cancelled(), "the old writer was told to stop");
    released.store(true, Ordering::Release);
    drop(old);
    let (r, after_release) = takeover.join().expect("takeover thread");
    let new = r.expect("takeover once the old writer ended");
    assert!(
        after_release,
        "the takeover finished only after the release"
    );
    assert_eq!((new.gen_stamp(), new.len()), (GenStamp(1002), 1000));
}

/// Whatever takes a replica over fails, after its bound, while the old
/// writer never ends; the replica is left as it was, and the same
/// takeover succeeds once the writer is gone.
#[test]
fn takeover_fails_while_the_old_writer_never_ends() {
    let wait = Duration::from_millis(150);
    type Takeover = fn(&Storage, &ReplicaKey) -> Result<(), StorageError>;
    let takeovers: [(&str, Takeover); 4] = [
        ("pipeline recovery", |s, k| {
            s.recover(k, GenStamp(1002), 0, 1000).map(drop)
        }),
        ("block recovery", |s, k| {
            s.init_replica_recovery(k, GenStamp(1001), GenStamp(1002))
                .map(drop)
        }),
        ("stale replica replacement", |s, k| {
            s.create_rbw(k, GenStamp(1002), DataChecksum::DEFAULT, true)
                .map(drop)
        }),
        ("close recovery", |s, k| {
            s.close_recovery(k, GenStamp(1002), 1000).map(drop)
        }),
    ];
    for (i, (what, takeover)) in takeovers.into_iter().enumerate() {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = open_with_stop_wait(dir.path(), wait);
        let id = 1073742010 + i as u64;
        let k = key(id);
        let old = live_writer(&s, &k);
        let files_before = files_of(dir.path(), id);
        let start = Instant::now();
        let r = takeover(&s, &k);
        assert!(r.is_err(), "{what} went on while the old writer was alive");
        assert!(start.elapsed() >= wait, "{what} gave up before its bound");
        let e = r.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("still running"), "{what}: unclear error {e:?}");
        let now = s.get(&k).expect("replica still there");
        assert_eq!(now.gs, GenStamp(1001), "{what} changed the replica");
        assert!(matches!(now.state, ReplicaState::Rbw(_)));
        assert_eq!(files_of(dir.path(), id), files_before, "{what} moved files");
        drop(old);
        takeover(&s, &k).unwrap_or_else(|e| panic!("{what} after the writer ended: {e}"));
    }
}

/// The finalize of a writer that a takeover is stopping fails at once
/// instead of finalizing under the takeover, which then goes on.
#[test]
fn a_revoked_writer_cannot_finalize() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = open_with_stop_wait(dir.path(), Duration::from_secs(20));
    let k = key(1073742003);
    let old = live_writer(&s, &k);
    let old_token = writer_token_of(&s, &k);
    let takeover = {
        let (s, k) = (s.clone(), k.clone());
        std::thread::spawn(move || s.recover(&k, GenStamp(1002), 0, 1000))
    };
    // Wait until the takeover has told the old writer to stop.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !old_token.is_cancelled() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let start = Instant::now();
    assert!(
        s.finalize(old, 1000, false).is_err(),
        "a revoked writer finalized the replica"
    );
    assert!(start.elapsed() < Duration::from_secs(5), "finalize hung");
    let new = takeover
        .join()
        .expect("takeover thread")
        .expect("takeover after the old writer failed");
    assert_eq!(new.gen_stamp(), GenStamp(1002));
    let finalized = files_of(dir.path(), 1073742003)
        .into_iter()
        .filter(|p| p.components().any(|c| c.as_os_str() == "finalized"))
        .count();
    assert_eq!(finalized, 0, "files of the revoked writer in finalized/");
}

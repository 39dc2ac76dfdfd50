//! Three Raft members in one process, each with its own namespace, Raft
//! edit log and directory: mutations made on the leader (apply, append,
//! unlock, wait until committed, as a handler does) appear on both
//! followers; the leader is stopped, another is elected and takes more
//! mutations; the stopped member restarts from its directory and catches
//! up on everything; then the whole group restarts from its directories
//! with nothing lost. With snapshots every 20 entries, every member writes
//! them and purges its log; a member left behind is sent the leader's;
//! a group restart starts from them. A step-down lets the mutation it
//! overlaps finish first and refuses the next before it runs.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use cairn_common::disk::RealDisk;
use cairn_namenode::journal::raft::member::RaftMember;
use cairn_namenode::journal::raft::snapshot::SnapshotSettings;
use cairn_namenode::journal::EditLog;
use cairn_namenode::namespace::permission::Caller;
use tokio::net::TcpListener;

mod common;

use common::{group, start_with};

const WAIT: Duration = Duration::from_secs(30);

async fn start(id: u64, root: &std::path::Path, listener: TcpListener) -> RaftMember {
    start_with(id, root, listener, SnapshotSettings::default()).await
}

/// Snapshots every 20 entries, 5 kept behind each.
const OFTEN: SnapshotSettings = SnapshotSettings {
    every_entries: 20,
    keep_entries: 5,
};

async fn start_often(id: u64, root: &std::path::Path, listener: TcpListener) -> RaftMember {
    start_with(id, root, listener, OFTEN).await
}

/// Waits until `m` has a snapshot and has purged its log up to `index`.
async fn wait_purged(m: &RaftMember, index: u64) {
    let deadline = Instant::now() + WAIT;
    loop {
        let (snapshot, purged) = {
            let metrics = m.raft.metrics();
            let x = metrics.borrow();
            (x.snapshot, x.purged)
        };
        if snapshot.is_some() && purged.is_some_and(|p| p.index >= index) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "member {}: snapshot {snapshot:?}, purged {purged:?}, want ≥ {index}",
            m.id
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The member that is active (leader, caught up), waiting for one.
async fn active(members: &BTreeMap<u64, RaftMember>) -> u64 {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some((id, _)) = members.iter().find(|(_, m)| m.edit_log.is_active()) {
            return *id;
        }
        assert!(
            Instant::now() < deadline,
            "no active member within {WAIT:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// mkdir on `m` as a handler does it; returns once committed.
async fn mkdir(m: &RaftMember, path: &str) {
    let txid = {
        let mut ns = m.namespace.write().expect("lock");
        let edits = ns
            .mkdirs(&Caller::superuser("hdfs"), path, 0o755, true, 2)
            .expect("mkdirs");
        m.edit_log.append(&edits).expect("append")
    };
    m.edit_log.wait_durable(txid).await.expect("committed");
}

fn has(m: &RaftMember, path: &str) -> bool {
    let ns = m.namespace.read().expect("lock");
    ns.get_file_info(&Caller::superuser("hdfs"), path)
        .expect("getFileInfo")
        .is_some()
}

async fn wait_for(m: &RaftMember, paths: &[String]) {
    let deadline = Instant::now() + WAIT;
    while !paths.iter().all(|p| has(m, p)) {
        let missing: Vec<_> = paths.iter().filter(|p| !has(m, p)).collect();
        assert!(
            Instant::now() < deadline,
            "member {} still misses {} paths, e.g. {:?}; its Raft: {:?}",
            m.id,
            missing.len(),
            missing.first(),
            m.raft.metrics().borrow().clone()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// mkdir `path` on whichever member is active; waits until every member
/// has all of `paths` (and it).
async fn mkdir_everywhere(
    members: &BTreeMap<u64, RaftMember>,
    path: &str,
    paths: &mut Vec<String>,
) {
    let now = active(members).await;
    mkdir(&members[&now], path).await;
    paths.push(path.into());
    for m in members.values() {
        wait_for(m, paths).await;
    }
}

/// Listens on a member's address again after it stopped. The port was
/// free when the member let it go, but until it is bound again any
/// outgoing connection on this machine may get it as its local port (other
/// tests' clients do): wait for that connection to end rather than fail.
async fn rebind(addr: &str) -> TcpListener {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        match TcpListener::bind(addr).await {
            Ok(l) => return l,
            Err(e) if std::time::Instant::now() < deadline => {
                eprintln!("rebind {addr}: {e}; trying again");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(e) => panic!("rebind {addr}: {e}"),
        }
    }
}

/// Stops every member and starts them again from their directories.
async fn restart_all(
    members: BTreeMap<u64, RaftMember>,
    addrs: &BTreeMap<u64, String>,
    root: &std::path::Path,
    snapshots: SnapshotSettings,
) -> BTreeMap<u64, RaftMember> {
    for (_, m) in members {
        m.shutdown().await;
    }
    let mut members = BTreeMap::new();
    for (id, addr) in addrs {
        let l = rebind(addr).await;
        members.insert(*id, start_with(*id, root, l, snapshots).await);
    }
    members
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_members_replicate_fail_over_and_catch_up() {
    let root = tempfile::tempdir().expect("tempdir");
    let (mut members, addrs) = group(root.path(), SnapshotSettings::default()).await;

    // Garbage on the Raft port closes that connection, nothing more.
    for garbage in [
        vec![0xff, 0xff, 0xff, 0xff],
        [&5u32.to_be_bytes()[..], b"{oops"].concat(),
    ] {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let mut s = tokio::net::TcpStream::connect(&addrs[&2])
            .await
            .expect("connect");
        s.write_all(&garbage).await.expect("write");
        let mut buf = [0u8; 16];
        let n = tokio::time::timeout(WAIT, s.read(&mut buf))
            .await
            .expect("closed in time")
            .unwrap_or(0);
        assert_eq!(n, 0, "no reply to garbage");
    }

    // A follower refuses edits.
    let leader = active(&members).await;
    let follower = members
        .keys()
        .find(|id| **id != leader)
        .copied()
        .expect("follower");
    assert!(members[&follower].edit_log.append(&[]).is_err());

    // Concurrent mutations on the leader: each waits for its commit.
    // They share Raft entries (group commit): far fewer entries than
    // mutations.
    let mut paths: Vec<String> = Vec::new();
    {
        let m = &members[&leader];
        let entries_before = m.raft.metrics().borrow().last_log_index.unwrap_or(0);
        let batch: Vec<String> = (0..200).map(|i| format!("/round1/d{i}")).collect();
        futures::future::join_all(batch.iter().map(|p| mkdir(m, p))).await;
        paths.extend(batch);
        let entries = m.raft.metrics().borrow().last_log_index.unwrap_or(0) - entries_before;
        eprintln!("200 mkdirs (201 edits) took {entries} Raft entries");
        assert!(entries < 100, "{entries} Raft entries for 200 mkdirs");
    }
    for m in members.values() {
        wait_for(m, &paths).await;
    }

    // Stop the leader; another member takes over and takes mutations.
    let old = members.remove(&leader).expect("leader");
    old.shutdown().await;
    let new_leader = active(&members).await;
    assert_ne!(new_leader, leader);
    {
        let m = &members[&new_leader];
        let batch: Vec<String> = (0..100).map(|i| format!("/round2/d{i}")).collect();
        futures::future::join_all(batch.iter().map(|p| mkdir(m, p))).await;
        paths.extend(batch);
    }
    for m in members.values() {
        wait_for(m, &paths).await;
    }

    // The old leader restarts from its directory (fresh namespace: it
    // re-applies its log) and catches up with what it missed.
    let l = rebind(&addrs[&leader]).await;
    let back = start(leader, root.path(), l).await;
    wait_for(&back, &paths).await;
    members.insert(leader, back);

    // And mutations go on, reaching all three.
    mkdir_everywhere(&members, "/round3", &mut paths).await;

    // The whole group stops and starts again from its directories: every
    // acknowledged mutation is still there, on every member.
    let members = restart_all(members, &addrs, root.path(), SnapshotSettings::default()).await;
    mkdir_everywhere(&members, "/round4", &mut paths).await;
    for (_, m) in members {
        m.shutdown().await;
    }
}

/// A step-down (`transitionToStandby`) asked while a mutation is admitted
/// waits until that mutation has appended, commits its edits before it
/// returns, and refuses the next mutation before it changes anything: no
/// edit is ever refused after it was applied in memory.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_step_down_waits_for_the_admitted_mutation_and_refuses_the_next() {
    let root = tempfile::tempdir().expect("tempdir");
    let (members, _) = group(root.path(), SnapshotSettings::default()).await;
    let leader = active(&members).await;
    let m = &members[&leader];
    mkdir(m, "/before").await;

    let (stepping, txid) = {
        let mut ns = m.namespace.write().expect("lock");
        let admission = m.edit_log.admit().expect("the leader admits");
        let stepping = tokio::spawn(m.edit_log.step_down().expect("a replicated log"));
        // The test thread is not a runtime worker: it may block.
        std::thread::sleep(Duration::from_millis(300));
        assert!(
            !stepping.is_finished(),
            "the step-down waits for the admitted mutation"
        );
        let edits = ns
            .mkdirs(&Caller::superuser("hdfs"), "/admitted", 0o755, true, 2)
            .expect("mkdirs");
        let txid = m
            .edit_log
            .append_admitted(&admission, &edits)
            .expect("the admitted mutation appends");
        (stepping, txid)
    };
    stepping
        .await
        .expect("step-down task")
        .expect("stepped down");
    tokio::time::timeout(Duration::from_millis(100), m.edit_log.wait_durable(txid))
        .await
        .expect("committed before the step-down returned")
        .expect("committed");
    let refused = m
        .edit_log
        .admit()
        .err()
        .expect("the next mutation is refused");
    assert!(
        refused.0.contains("handing the lead on") || refused.0.contains("Raft follower"),
        "{refused}"
    );

    // Another member leads, with the admitted mutation.
    let deadline = Instant::now() + WAIT;
    let next = loop {
        if let Some((id, _)) = members
            .iter()
            .find(|(id, x)| **id != leader && x.edit_log.is_active())
        {
            break *id;
        }
        assert!(Instant::now() < deadline, "no new leader within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    wait_for(&members[&next], &["/before".into(), "/admitted".into()]).await;
    for (_, m) in members {
        m.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn snapshots_purge_the_log_and_catch_up_a_member_left_behind() {
    let root = tempfile::tempdir().expect("tempdir");
    let (mut members, addrs) = group(root.path(), OFTEN).await;

    // One mkdir at a time: one entry each, three snapshots' worth.
    let leader = active(&members).await;
    let mut paths: Vec<String> = Vec::new();
    for i in 0..60 {
        let p = format!("/a/d{i}");
        mkdir(&members[&leader], &p).await;
        paths.push(p);
    }
    for m in members.values() {
        wait_for(m, &paths).await;
        // Every member built its own snapshot and purged the log behind.
        wait_purged(m, 20).await;
        assert!(root.path().join(format!("nn{}/snapshot", m.id)).exists());
    }

    // A follower stops; the group goes on past what its log holds.
    let victim = members
        .keys()
        .find(|id| **id != leader)
        .copied()
        .expect("follower");
    let stopped = members.remove(&victim).expect("victim");
    let its_last = stopped.raft.metrics().borrow().last_log_index.unwrap_or(0);
    stopped.shutdown().await;
    for i in 0..60 {
        let p = format!("/b/d{i}");
        mkdir(&members[&leader], &p).await;
        paths.push(p);
    }
    wait_purged(&members[&leader], its_last + 1).await;

    // It restarts: from its own snapshot, then the leader's snapshot
    // (its log no longer has what the member misses), then entries.
    let l = rebind(&addrs[&victim]).await;
    let back = start_often(victim, root.path(), l).await;
    assert!(back.loaded_txid >= 20, "started from its snapshot");
    wait_for(&back, &paths).await;
    let installed = back.raft.metrics().borrow().snapshot;
    assert!(
        installed.is_some_and(|s| s.index > its_last),
        "it was sent the leader's snapshot: {installed:?}"
    );
    members.insert(victim, back);
    mkdir_everywhere(&members, "/c", &mut paths).await;

    // The whole group restarts from snapshots and short logs.
    let members = restart_all(members, &addrs, root.path(), OFTEN).await;
    for (id, m) in &members {
        assert!(m.loaded_txid >= 100, "member {id} loaded {}", m.loaded_txid);
    }
    mkdir_everywhere(&members, "/d", &mut paths).await;
    for (_, m) in members {
        m.shutdown().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_leader_recovered_from_a_damaged_log_follows_and_catches_up() {
    use cairn_namenode::journal::raft::recovery;
    use cairn_namenode::namespace::{Limits, Namespace};
    use cairn_namenode::storage::RecoveryChoice;
    let root = tempfile::tempdir().expect("tempdir");
    let (members, addrs) = group(root.path(), SnapshotSettings::default()).await;
    let leader = active(&members).await;
    let mut paths: Vec<String> = Vec::new();
    for i in 0..30 {
        mkdir_everywhere(&members, &format!("/r/d{i}"), &mut paths).await;
    }
    // The whole group stops, the leader's log damaged in the middle: a
    // normal start refuses it.
    for (_, m) in members {
        m.shutdown().await;
    }
    let dir = root.path().join(format!("nn{leader}"));
    let log = dir.join("raft-log");
    let mut data = std::fs::read(&log).expect("read log");
    let end = data.iter().rposition(|b| *b != 0).expect("records") + 1;
    data[end / 2] ^= 0xff;
    std::fs::write(&log, &data).expect("write log");
    let l = rebind(&addrs[&leader]).await;
    let ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    let spec = common::spec_with(leader, root.path(), SnapshotSettings::default());
    assert!(
        RaftMember::start(spec, l, ns, 0).await.is_err(),
        "a damaged log is refused"
    );

    // Recovered, it keeps what precedes the damage; back with the others
    // it must not lead its old term again with a shorter log (it would
    // overwrite entries the others hold): it follows and catches up.
    let done =
        recovery::recover(&RealDisk, &dir, &mut |_: &str| RecoveryChoice::Stop).expect("recover");
    let kept = done.last_kept.expect("entries before the damage");
    assert!(done.saved_in.is_some());
    let mut members = BTreeMap::new();
    for (id, addr) in &addrs {
        let l = rebind(addr).await;
        let m = start_with(*id, root.path(), l, SnapshotSettings::default()).await;
        if *id == leader {
            let last = m.raft.metrics().borrow().last_log_index.unwrap_or(0);
            assert!(last <= kept, "it starts with {last}, kept {kept}");
        }
        members.insert(*id, m);
    }
    mkdir_everywhere(&members, "/t", &mut paths).await;
    for (_, m) in members {
        m.shutdown().await;
    }
}

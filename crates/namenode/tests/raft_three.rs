//! Three Raft members in one process, each with its own namespace, Raft
//! edit log and directory: mutations made on the leader (apply, append,
//! unlock, wait until committed, as a handler does) appear on both
//! followers; the leader is stopped, another is elected and takes more
//! mutations; the stopped member restarts from its directory and catches
//! up on everything; then the whole group restarts from its directories
//! with nothing lost.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_common::disk::RealDisk;
use cairn_namenode::journal::raft::member::{MemberSpec, MemberTiming, RaftMember};
use cairn_namenode::journal::raft::state_machine::ImageOwner;
use cairn_namenode::journal::EditLog;
use cairn_namenode::namespace::permission::Caller;
use cairn_namenode::namespace::{Limits, Namespace};
use tokio::net::TcpListener;

const WAIT: Duration = Duration::from_secs(30);

fn spec(id: u64, root: &std::path::Path) -> MemberSpec {
    MemberSpec {
        id,
        disk: Arc::new(RealDisk),
        dir: root.join(format!("nn{id}")),
        owner: ImageOwner {
            superuser: "hdfs".into(),
            supergroup: "supergroup".into(),
            limits: Limits::default(),
        },
        timing: MemberTiming::default(),
        hook: Default::default(),
    }
}

async fn start(id: u64, root: &std::path::Path, listener: TcpListener) -> RaftMember {
    let ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    RaftMember::start(spec(id, root), listener, ns, 0)
        .await
        .expect("start member")
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
            "member {} still misses {} paths, e.g. {:?}",
            m.id,
            missing.len(),
            missing.first()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_members_replicate_fail_over_and_catch_up() {
    let root = tempfile::tempdir().expect("tempdir");
    let mut listeners = BTreeMap::new();
    let mut addrs = BTreeMap::new();
    for id in 1..=3u64 {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        addrs.insert(id, l.local_addr().expect("addr").to_string());
        listeners.insert(id, l);
    }
    let mut members = BTreeMap::new();
    for (id, l) in listeners {
        members.insert(id, start(id, root.path(), l).await);
    }
    members[&1].initialize(&addrs).await.expect("initialize");

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
    let l = TcpListener::bind(&addrs[&leader]).await.expect("rebind");
    let back = start(leader, root.path(), l).await;
    wait_for(&back, &paths).await;
    members.insert(leader, back);

    // And mutations go on, reaching all three.
    let now = active(&members).await;
    mkdir(&members[&now], "/round3").await;
    paths.push("/round3".into());
    for m in members.values() {
        wait_for(m, &paths).await;
    }

    // The whole group stops and starts again from its directories: every
    // acknowledged mutation is still there, on every member.
    for (_, m) in std::mem::take(&mut members) {
        m.shutdown().await;
    }
    for (id, addr) in &addrs {
        let l = TcpListener::bind(addr).await.expect("rebind");
        members.insert(*id, start(*id, root.path(), l).await);
    }
    let now = active(&members).await;
    mkdir(&members[&now], "/round4").await;
    paths.push("/round4".into());
    for m in members.values() {
        wait_for(m, &paths).await;
    }
    for (_, m) in members {
        m.shutdown().await;
    }
}

//! Moving the active by hand in a Raft nameservice (issue 15 item 2):
//! `cairn admin -failover nnA nnB` and Java's `hdfs haadmin -failover`
//! (DFSHAAdmin, with the fencer `cairn up --ha` configures) make exactly
//! the named standby active; `-transitionToStandby` of the active lets the
//! group elect another. A client keeps making directories throughout:
//! every one acknowledged is there at the end, and no Raft term had two
//! active NameNodes. A create and a delete answered by the old active and
//! retried on the new one (same client id and call id, as the Java client
//! retries after a failover) get the first answers from its retry cache,
//! which learnt them from the Raft log; so do an append and a named
//! createSnapshot, whose answers the new active rebuilds. A truncate whose block recovery
//! finished before a move reads back cut on the new active (the
//! DataNodes told every NameNode of the recovered replicas), and so does
//! a copy-on-truncate (the cut block in a snapshot: the DataNodes report
//! the new block before the active commits it); one whose recovery was
//! pending is recovered by the new active.
//!
//! The Java step needs a JDK and Maven (the kit fetches the jars on first
//! use).

mod common;

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::Client;
use common::ha::{active_terms, up_ha, HaUp};
use prost::Message;

fn create_request(p: &str) -> Vec<u8> {
    pb::CreateRequestProto {
        src: p.into(),
        masked: pb::FsPermissionProto { perm: 0o644 },
        client_name: "retrying-client".into(),
        create_flag: 1, // CREATE: a second run fails
        create_parent: true,
        replication: 1,
        block_size: 1 << 20,
        ..Default::default()
    }
    .encode_to_vec()
}

fn delete_request(p: &str) -> Vec<u8> {
    pb::DeleteRequestProto {
        src: p.into(),
        recursive: true,
    }
    .encode_to_vec()
}

async fn rpc_client(up: &HaUp, nn: &str, client_id: Option<bytes::Bytes>) -> Client {
    let addr = up.addr(nn).parse().expect("address");
    let user = common::current_user();
    match client_id {
        Some(id) => Client::connect_as(addr, &user, CLIENT_PROTOCOL, id).await,
        None => Client::connect(addr, &user, CLIENT_PROTOCOL).await,
    }
    .expect("connect")
}

/// `cairn --conf <conf> admin ARGS`: exit code and output.
fn admin(up: &HaUp, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cairn"))
        .arg("--conf")
        .arg(up.conf_dir())
        .arg("admin")
        .args(args)
        .output()
        .expect("cairn admin");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A standby other than `not`.
fn standby_other_than(up: &HaUp, not: &[&str]) -> String {
    up.namenodes
        .iter()
        .map(|(nn, _)| nn.clone())
        .find(|nn| !not.contains(&nn.as_str()) && up.state_of(nn) == "standby")
        .expect("a standby NameNode")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_lead_moves_where_the_operator_says() {
    let up = up_ha(6);
    let c = up.client();
    c.mkdirs("/load", 0o755, true).await.expect("mkdirs");

    // A writer that goes on through every move; it records what was
    // acknowledged.
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let c = up.client();
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut acked = Vec::new();
            let mut i = 0u32;
            while !stop.load(Ordering::Acquire) {
                let path = format!("/load/d{i}");
                i += 1;
                match c.mkdirs(&path, 0o755, false).await {
                    Ok(()) => acked.push(path),
                    Err(e) => eprintln!("writer: {path}: {e}"),
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            acked
        })
    };

    // Calls answered by the active, to be retried after the move.
    let from = up.active(Duration::from_secs(30));
    let raw = rpc_client(&up, &from, None).await;
    c.mkdirs("/retried/gone", 0o755, true)
        .await
        .expect("mkdirs");
    let create_id = raw.next_call_id();
    let created = raw
        .call_raw("create", &create_request("/retried/f"))
        .await
        .expect("create");
    let created = pb::CreateResponseProto::decode(created).expect("decode");
    let delete_id = raw.next_call_id();
    let deleted = raw
        .call_raw("delete", &delete_request("/retried/gone"))
        .await
        .expect("delete");
    assert!(
        pb::DeleteResponseProto::decode(deleted)
            .expect("decode")
            .result
    );
    // An append (its answer: the partial last block and the status) and
    // a named snapshot: answers kept where they ran, rebuilt by the next
    // active from the ids it learnt.
    common::ha::write(
        &c,
        "/retried/appended",
        &bytes::Bytes::from(vec![7u8; 1000]),
    )
    .await;
    let append = pb::AppendRequestProto {
        src: "/retried/appended".into(),
        client_name: "retrying-client".into(),
        flag: None,
    }
    .encode_to_vec();
    let append_id = raw.next_call_id();
    let appended = raw.call_raw("append", &append).await.expect("append");
    let appended = pb::AppendResponseProto::decode(appended).expect("decode");
    c.mkdirs("/retried/snapped", 0o755, true)
        .await
        .expect("mkdirs");
    common::allow_snapshot(&raw, "/retried/snapped").await;
    let snapshot = pb::CreateSnapshotRequestProto {
        snapshot_root: "/retried/snapped".into(),
        snapshot_name: Some("r1".into()),
    }
    .encode_to_vec();
    let snapshot_id = raw.next_call_id();
    let snapped = raw
        .call_raw("createSnapshot", &snapshot)
        .await
        .expect("createSnapshot");
    let snapped = pb::CreateSnapshotResponseProto::decode(snapped).expect("decode");
    // addCacheDirective: the new id travels in the log with the call's ids.
    let pool = pb::AddCachePoolRequestProto {
        info: pb::CachePoolInfoProto {
            pool_name: Some("retried".into()),
            ..Default::default()
        },
    };
    raw.call_raw("addCachePool", &pool.encode_to_vec())
        .await
        .expect("addCachePool");
    let directive = pb::AddCacheDirectiveRequestProto {
        info: pb::CacheDirectiveInfoProto {
            path: Some("/retried/snapped".into()),
            pool: Some("retried".into()),
            ..Default::default()
        },
        cache_flags: None,
    }
    .encode_to_vec();
    let directive_id = raw.next_call_id();
    let added = raw
        .call_raw("addCacheDirective", &directive)
        .await
        .expect("addCacheDirective");
    let added = pb::AddCacheDirectiveResponseProto::decode(added).expect("decode");

    let refused_id = create_refused_after_parents(&raw).await;

    // cairn admin -failover: exactly the named standby becomes active.
    let to = standby_other_than(&up, &[&from]);
    let started = Instant::now();
    let (code, out) = admin(&up, &["-failover", &from, &to]);
    let took = started.elapsed();
    assert_eq!(code, 0, "-failover {from} {to}: {out}");
    assert!(
        out.contains(&format!("Failover from {from} to {to} successful")),
        "{out}"
    );
    eprintln!("-failover {from} {to} took {:.2} s", took.as_secs_f64());
    assert_eq!(up.state_of(&to), "active");
    assert_eq!(up.state_of(&from), "standby");
    c.mkdirs("/after-failover", 0o755, false)
        .await
        .expect("mkdirs after -failover");

    // The retries reach the new active: first answers, no second runs.
    let hits = up.jmx_bean(&to, "RetryCache.NameNodeRetryCache")["CacheHit"]
        .as_u64()
        .expect("CacheHit");
    let retrying = rpc_client(&up, &to, Some(raw.client_id().clone())).await;
    let again = retrying
        .retry_raw("create", &create_request("/retried/f"), create_id, 1)
        .await
        .expect("the retried create is answered from the retry cache");
    let again = pb::CreateResponseProto::decode(again).expect("decode");
    assert_eq!(
        again.fs.map(|f| f.file_id),
        created.fs.map(|f| f.file_id),
        "the created file's status"
    );
    let again = retrying
        .retry_raw("delete", &delete_request("/retried/gone"), delete_id, 1)
        .await
        .expect("retried delete");
    assert!(
        pb::DeleteResponseProto::decode(again)
            .expect("decode")
            .result,
        "the retried delete answers true, as the first did"
    );
    let again = retrying
        .retry_raw("append", &append, append_id, 1)
        .await
        .expect("the retried append is answered, not refused as a second append");
    let again = pb::AppendResponseProto::decode(again).expect("decode");
    assert_eq!(
        again
            .block
            .as_ref()
            .map(|b| (b.b.block_id, b.b.generation_stamp)),
        appended
            .block
            .as_ref()
            .map(|b| (b.b.block_id, b.b.generation_stamp)),
        "the appended block"
    );
    assert_eq!(
        again.stat.map(|s| (s.file_id, s.length)),
        appended.stat.map(|s| (s.file_id, s.length))
    );
    let again = retrying
        .retry_raw("createSnapshot", &snapshot, snapshot_id, 1)
        .await
        .expect("the retried createSnapshot is answered, not refused as a second one");
    let again = pb::CreateSnapshotResponseProto::decode(again).expect("decode");
    assert_eq!(again.snapshot_path, snapped.snapshot_path);
    let again = retrying
        .retry_raw("addCacheDirective", &directive, directive_id, 1)
        .await
        .expect("retried addCacheDirective");
    let again = pb::AddCacheDirectiveResponseProto::decode(again).expect("decode");
    assert_eq!(
        again.id, added.id,
        "the first run's directive, not a second"
    );
    let listed: pb::ListCacheDirectivesResponseProto = retrying
        .call(
            "listCacheDirectives",
            &pb::ListCacheDirectivesRequestProto {
                prev_id: 0,
                filter: pb::CacheDirectiveInfoProto::default(),
            },
        )
        .await
        .expect("listCacheDirectives");
    assert_eq!(listed.elements.len(), 1, "{listed:?}");
    let now = up.jmx_bean(&to, "RetryCache.NameNodeRetryCache")["CacheHit"]
        .as_u64()
        .expect("CacheHit");
    assert_eq!(now, hits + 5, "the five retries were cache hits on {to}");
    retry_runs_again(&retrying, refused_id).await;

    // Failing over to the active is refused, as haadmin does.
    let (code, out) = admin(&up, &["-failover", &from, &to]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("Can't failover to an active service"), "{out}");

    // -transitionToStandby of the active: the group elects another.
    let (code, out) = admin(&up, &["-transitionToStandby", &to]);
    assert_eq!(code, 0, "-transitionToStandby {to}: {out}");
    let started = Instant::now();
    let next = loop {
        let now = up.active(Duration::from_secs(30));
        if now != to {
            break now;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{to} stepped down but no other NameNode became active"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    eprintln!(
        "-transitionToStandby {to}: {next} active after {:.2} s",
        started.elapsed().as_secs_f64()
    );
    c.mkdirs("/after-standby", 0o755, false)
        .await
        .expect("mkdirs after -transitionToStandby");

    // Java's haadmin, then FsShell through the new active.
    let target = standby_other_than(&up, &[&next]);
    let java = up.java(&format!(
        "haadmin -failover {next} {target}\nhaadmin -getServiceState {target}\n\
         haadmin -getServiceState {next}\nfs -mkdir /java-after\n"
    ));
    assert!(
        java.contains(&format!("Failover from {next} to {target} successful")),
        "{java}"
    );
    assert!(
        java.contains(&format!(
            "$ haadmin -getServiceState {target}\nactive\nexit=0"
        )),
        "{java}"
    );
    assert!(
        java.contains(&format!(
            "$ haadmin -getServiceState {next}\nstandby\nexit=0"
        )),
        "{java}"
    );
    assert!(java.contains("$ fs -mkdir /java-after\nexit=0"), "{java}");

    // A truncate whose block recovery finished before the lead moves:
    // the new active knows where the cut replicas are.
    let data = bytes::Bytes::from(common::pattern(8, 300_000));
    common::ha::write(&c, "/truncated-before", &data).await;
    let active = up.active(Duration::from_secs(10));
    let raw = rpc_client(&up, &active, None).await;
    truncate(&raw, "/truncated-before", 50_000).await;
    wait_closed(&raw, "/truncated-before").await;
    let next_active = standby_other_than(&up, &[&active]);
    let (code, out) = admin(&up, &["-failover", &active, &next_active]);
    assert_eq!(code, 0, "-failover {active} {next_active}: {out}");
    assert_eq!(
        common::ha::read(&c, "/truncated-before").await,
        data.slice(..50_000)
    );

    // A copy-on-truncate (the cut block is in a snapshot) finished before
    // the lead moves: the DataNodes reported the copy to every NameNode,
    // so the new active knows where it is; the snapshot keeps the old
    // block whole.
    let data = bytes::Bytes::from(common::pattern(6, 300_000));
    let active = up.active(Duration::from_secs(10));
    let raw = rpc_client(&up, &active, None).await;
    c.mkdirs("/snapped", 0o755, true).await.expect("mkdirs");
    common::ha::write(&c, "/snapped/file", &data).await;
    common::allow_snapshot(&raw, "/snapped").await;
    let _: pb::CreateSnapshotResponseProto = raw
        .call(
            "createSnapshot",
            &pb::CreateSnapshotRequestProto {
                snapshot_root: "/snapped".into(),
                snapshot_name: Some("s1".into()),
            },
        )
        .await
        .expect("createSnapshot");
    truncate(&raw, "/snapped/file", 70_000).await;
    wait_closed(&raw, "/snapped/file").await;
    let next_active = standby_other_than(&up, &[&active]);
    let (code, out) = admin(&up, &["-failover", &active, &next_active]);
    assert_eq!(code, 0, "-failover {active} {next_active}: {out}");
    assert_eq!(
        common::ha::read(&c, "/snapped/file").await,
        data.slice(..70_000)
    );
    assert_eq!(
        common::ha::read(&c, "/snapped/.snapshot/s1/file").await,
        data
    );

    // A truncate waiting for its block recovery when the lead moves: the
    // old active's queued recovery goes with its command queues; the new
    // active starts it again and the file closes at the new length.
    let data = bytes::Bytes::from(common::pattern(7, 300_000));
    common::ha::write(&c, "/truncated", &data).await;
    let active = up.active(Duration::from_secs(10));
    let raw = rpc_client(&up, &active, None).await;
    truncate(&raw, "/truncated", 100_000).await;
    let next_active = standby_other_than(&up, &[&active]);
    let (code, out) = admin(&up, &["-failover", &active, &next_active]);
    assert_eq!(code, 0, "-failover {active} {next_active}: {out}");
    let started = Instant::now();
    wait_closed(&rpc_client(&up, &next_active, None).await, "/truncated").await;
    eprintln!(
        "truncate finished on {next_active} {:.2} s after the move",
        started.elapsed().as_secs_f64()
    );
    let info = c.get_file_info("/truncated").await.expect("file info");
    assert_eq!(info.length, 100_000);
    assert_eq!(
        common::ha::read(&c, "/truncated").await,
        data.slice(..100_000)
    );

    stop.store(true, Ordering::Release);
    let acked = writer.await.expect("writer");
    // hdfs-native retries through the moves (with its back-off), so
    // its calls span them.
    assert!(acked.len() > 1, "the writer made progress: {}", acked.len());
    for path in acked.iter().chain(&[
        "/after-failover".to_string(),
        "/after-standby".to_string(),
        "/java-after".to_string(),
    ]) {
        assert!(
            c.get_file_info(path).await.is_ok(),
            "acknowledged {path} is missing"
        );
    }
    let terms = active_terms(up.dir.path());
    assert!(terms.len() >= 4, "four terms had an active: {terms:?}");
    for (t, n) in &terms {
        assert_eq!(*n, 1, "term {t} had {n} active NameNodes: {terms:?}");
    }
}

/// Truncates `path` to `len` (a cut inside a block: its recovery runs).
async fn set_namespace_quota(raw: &Client, path: &str, quota: u64) {
    let req = pb::SetQuotaRequestProto {
        path: path.into(),
        namespace_quota: quota,
        storagespace_quota: u64::MAX >> 1, // HDFS's QUOTA_DONT_SET
        storage_type: None,
    };
    raw.call_raw("setQuota", &req.encode_to_vec())
        .await
        .expect("setQuota");
}

/// A create refused part-way: under /retried/q's namespace quota of 2 it
/// makes the missing /retried/q/a, then is refused at /retried/q/a/b. The
/// parents stay (logged, as HDFS's); the quota is lifted afterwards.
/// Returns the call's id.
async fn create_refused_after_parents(raw: &Client) -> i32 {
    raw.call_raw(
        "mkdirs",
        &pb::MkdirsRequestProto {
            src: "/retried/q".into(),
            masked: pb::FsPermissionProto { perm: 0o755 },
            create_parent: true,
            unmasked: None,
        }
        .encode_to_vec(),
    )
    .await
    .expect("mkdirs");
    set_namespace_quota(raw, "/retried/q", 2).await;
    let id = raw.next_call_id();
    let e = raw
        .call_raw("create", &create_request("/retried/q/a/b/f"))
        .await
        .expect_err("refused by the quota");
    assert_eq!(
        e.class(),
        Some("org.apache.hadoop.hdfs.protocol.NSQuotaExceededException"),
        "{e}"
    );
    set_namespace_quota(raw, "/retried/q", u64::MAX).await; // QUOTA_RESET
                                                            // Another writer then creates the file.
    let mut other =
        pb::CreateRequestProto::decode(&create_request("/retried/q/a/b/f")[..]).expect("decode");
    other.client_name = "another-client".into();
    raw.call_raw("create", &other.encode_to_vec())
        .await
        .expect("another writer's create");
    id
}

/// The retry of a refused create runs again on the new active (HDFS
/// remembers a failed call as failed), so it meets the other writer's
/// file, where an answer from the retry cache would hand the retrying
/// client that file's status as its own create's.
async fn retry_runs_again(retrying: &Client, id: i32) {
    let e = retrying
        .retry_raw("create", &create_request("/retried/q/a/b/f"), id, 1)
        .await
        .expect_err("the retried create runs again and meets the other writer's file");
    assert_eq!(
        e.class(),
        Some("org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException"),
        "{e}"
    );
}

async fn truncate(raw: &Client, path: &str, len: u64) {
    let r: pb::TruncateResponseProto = raw
        .call(
            "truncate",
            &pb::TruncateRequestProto {
                src: path.into(),
                new_length: len,
                client_name: "truncating-client".into(),
            },
        )
        .await
        .expect("truncate");
    assert!(!r.result, "a cut inside a block waits for its recovery");
}

/// Waits until `path` is closed, as `raw`'s NameNode says (60 s at most).
async fn wait_closed(raw: &Client, path: &str) {
    let started = Instant::now();
    loop {
        let closed: Result<pb::IsFileClosedResponseProto, _> = raw
            .call(
                "isFileClosed",
                &pb::IsFileClosedRequestProto { src: path.into() },
            )
            .await;
        if closed.is_ok_and(|r| r.result) {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{path} not closed within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

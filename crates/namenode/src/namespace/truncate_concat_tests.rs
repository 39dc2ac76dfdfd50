//! Unit tests of truncate and concat: every precondition with HDFS's
//! exception and message (as Apache HDFS 3.4.1 answers them, see
//! tests/java/expected/truncate-concat.txt), the block bookkeeping, the
//! truncate's block recovery, and replay (also of a checkpoint image taken
//! while a truncate waits for its recovery).

use super::permission::Caller;
use super::tests::{assert_replays, ns, root, stat, user, NOW};
use super::*;

/// A closed file at `path` with blocks of the given lengths (block size
/// `bs`, replication 3, written by client "w"); returns its blocks.
pub(super) fn file(
    ns: &mut Namespace,
    log: &mut Vec<Edit>,
    path: &str,
    bs: u64,
    lens: &[u64],
) -> Vec<BlockRecord> {
    let (st, e, _) = ns
        .create(&root(), path, 0o644, "w", "m", true, true, 3, bs, NOW)
        .expect("create");
    log.extend(e);
    let yes = |_: &BlockRecord| true;
    let mut prev: Option<BlockRecord> = None;
    let mut out = Vec::new();
    for len in lens {
        let (a, e) = ns.add_block(path, st.id.0, "w", prev, &yes).expect("block");
        log.extend(e);
        let b = BlockRecord {
            num_bytes: *len,
            ..a.block
        };
        out.push(b);
        prev = Some(b);
    }
    let (done, e) = ns
        .complete(path, st.id.0, "w", prev, NOW, &yes)
        .expect("complete");
    assert!(done);
    log.extend(e);
    out
}

/// A file at `path` open for writing by client "w", without blocks.
fn open(ns: &mut Namespace, log: &mut Vec<Edit>, path: &str) {
    let (_, e, _) = ns
        .create(&root(), path, 0o644, "w", "m", true, true, 3, 1024, NOW)
        .expect("create");
    log.extend(e);
}

fn truncate(
    ns: &mut Namespace,
    c: &Caller,
    p: &str,
    len: i64,
    client: &str,
) -> Result<(Truncated, Option<Edit>), FsError> {
    ns.truncate(c, p, len, client, "127.0.0.1", NOW + 5)
}

fn err(r: Result<(Truncated, Option<Edit>), FsError>) -> FsError {
    r.expect_err("must fail")
}

#[test]
fn truncate_preconditions_answer_as_hdfs() {
    let mut ns = ns();
    let mut log = Vec::new();
    file(&mut ns, &mut log, "/d/f", 1024, &[1024, 1024, 952]);
    log.extend(
        ns.mkdirs(&root(), "/d/dir", 0o700, true, NOW)
            .expect("mkdir"),
    );
    let su = root();
    assert_eq!(
        err(truncate(&mut ns, &su, "/d/f", -1, "c")),
        FsError::IllegalArgument("Cannot truncate to a negative file size: -1.".into())
    );
    assert!(matches!(
        err(truncate(&mut ns, &su, "d/f", 0, "c")),
        FsError::InvalidPath(_)
    ));
    assert_eq!(
        err(truncate(&mut ns, &su, "/d/f/x", 0, "c")),
        FsError::AccessControl("/d/f (is not a directory)".into())
    );
    assert_eq!(
        err(truncate(&mut ns, &su, "/d/missing", 0, "c")),
        FsError::FileNotFound("File does not exist: /d/missing".into())
    );
    assert_eq!(
        err(truncate(&mut ns, &su, "/d/dir", 0, "c")),
        FsError::FileNotFound("Path is not a file: /d/dir".into())
    );
    assert_eq!(
        err(truncate(&mut ns, &su, "/d/f", 3001, "c")),
        FsError::IllegalArgument(
            "Cannot truncate to a larger file size. Current size: 3000, truncate size: 3001."
                .into()
        )
    );
    let alice = user("alice", &[]);
    assert_eq!(
        err(truncate(&mut ns, &alice, "/d/f", 10, "c")),
        FsError::AccessControl(
            "Permission denied: user=alice, access=WRITE, inode=\"/d/f\":hdfs:supergroup:-rw-r--r--"
                .into()
        )
    );
    assert_eq!(
        err(truncate(&mut ns, &alice, "/d/dir/x", 0, "c")),
        FsError::AccessControl(
            "Permission denied: user=alice, access=EXECUTE, inode=\"/d/dir\":hdfs:supergroup:drwx------"
                .into()
        )
    );
    // The same length: nothing to do, the file stays closed.
    let (t, e) = truncate(&mut ns, &su, "/d/f", 3000, "c").expect("same length");
    assert!(t.done && e.is_none() && t.removed.is_empty() && t.recovery.is_none());
    // Open by a writer: the writer itself, then another client.
    let (_, _, e) = ns.append(&su, "/d/f", "w2", "m2", false).expect("append");
    log.push(e);
    assert_eq!(
        err(truncate(&mut ns, &su, "/d/f", 10, "w2")),
        FsError::AlreadyBeingCreated(
            "Failed to TRUNCATE_FILE /d/f for w2 on 127.0.0.1 because w2 is already the current lease holder."
                .into()
        )
    );
    assert_eq!(
        err(truncate(&mut ns, &su, "/d/f", 10, "c")),
        FsError::AlreadyBeingCreated(
            "Failed to TRUNCATE_FILE /d/f for c on 127.0.0.1 because this file lease is currently owned by w2 on m2"
                .into()
        )
    );
    assert_replays(&ns, &log);
}

#[test]
fn truncate_at_a_block_boundary_drops_blocks_and_stays_closed() {
    let mut ns = ns();
    let mut log = Vec::new();
    let blocks = file(&mut ns, &mut log, "/f", 1024, &[1024, 1024, 952]);
    let (t, e) = truncate(&mut ns, &root(), "/f", 2048, "c").expect("truncate");
    assert!(t.done && t.recovery.is_none());
    assert_eq!(t.removed, vec![blocks[2].id]);
    log.extend(e);
    let st = stat(&ns, "/f");
    assert_eq!(
        (st.length, st.under_construction, st.mtime_ms),
        (2048, false, NOW + 5)
    );
    assert_eq!(ns.blocks_of(st.id), &blocks[..2]);
    let (t, e) = truncate(&mut ns, &root(), "/f", 0, "c").expect("to zero");
    assert!(t.done);
    assert_eq!(t.removed, vec![blocks[0].id, blocks[1].id]);
    log.extend(e);
    assert_eq!(stat(&ns, "/f").length, 0);
    assert_replays(&ns, &log);
}

#[test]
fn truncate_inside_a_block_waits_for_its_block_recovery() {
    let mut ns = ns();
    let mut log = Vec::new();
    let blocks = file(&mut ns, &mut log, "/f", 1024, &[1024, 1024, 952]);
    let (_, _, gs_before) = ns.counters();
    let (t, e) = truncate(&mut ns, &root(), "/f", 1100, "c").expect("truncate");
    log.extend(e);
    assert!(!t.done);
    assert_eq!(t.removed, vec![blocks[2].id]);
    let rec = t.recovery.expect("a recovery");
    assert_eq!(rec.block, blocks[1]);
    assert_eq!(
        rec.target,
        BlockRecord {
            id: blocks[1].id,
            gs: GenStamp(gs_before.0 + 1),
            num_bytes: 76
        }
    );
    // Open for the client; the old length until the DataNodes commit.
    let st = stat(&ns, "/f");
    assert!(st.under_construction);
    assert_eq!(st.length, 2048);
    assert_eq!(
        ns.writer_of(st.id).map(UnderConstruction::client_name),
        Some("c")
    );
    assert_eq!(ns.truncate_block_of(st.id), Some(rec.target));
    // While the recovery runs.
    let (again, e) = truncate(&mut ns, &root(), "/f", 1100, "other").expect("same again");
    assert!(!again.done && e.is_none() && again.recovery.is_none());
    assert_eq!(
        err(truncate(&mut ns, &root(), "/f", 1099, "c")),
        FsError::AlreadyBeingCreated(
            "Failed to TRUNCATE_FILE /f for c on 127.0.0.1 because /f is being truncated.".into()
        )
    );
    assert_eq!(
        ns.append(&root(), "/f", "other", "127.0.0.1", false).map(|_| ()),
        Err(FsError::RecoveryInProgress(
            "Failed to APPEND_FILE /f for other on 127.0.0.1 because another recovery is in progress by c on 127.0.0.1"
                .into()
        ))
    );
    assert_eq!(
        ns.append(&root(), "/f", "c", "127.0.0.1", false).map(|_| ()),
        Err(FsError::AlreadyBeingCreated(
            "Failed to APPEND_FILE /f for c on 127.0.0.1 because c is already the current lease holder."
                .into()
        ))
    );
    // A replay, and a checkpoint image, rebuild the waiting truncate.
    let mut replayed = Namespace::new("hdfs", "supergroup", NOW, Limits::default());
    for e in &log {
        replayed.apply(e).expect("replay");
    }
    assert_eq!(replayed.truncate_block_of(st.id), Some(rec.target));
    let mut imaged = Namespace::new("hdfs", "supergroup", NOW, Limits::default());
    for e in ns.to_edits() {
        imaged.apply(&e).expect("image");
    }
    assert_eq!(imaged.truncate_block_of(st.id), Some(rec.target));
    assert_eq!(imaged.blocks_of(st.id), ns.blocks_of(st.id));
    assert_eq!(imaged.writer_of(st.id), ns.writer_of(st.id));
    // (An image stores the id counters too; the stamps replayed cover the
    // truncate block's.)
    assert!(imaged.counters().2 >= rec.target.gs);
    assert_replays(&ns, &log);

    // The recovery starts again (its primary died): a new recovery id.
    let (old, new, e) = ns
        .begin_block_recovery(st.id)
        .expect("restamp")
        .expect("a block");
    log.push(e);
    assert_eq!(old, blocks[1]);
    assert_eq!(
        (new.id, new.gs, new.num_bytes),
        (blocks[1].id, GenStamp(rec.target.gs.0 + 1), 76)
    );
    assert_eq!(ns.truncate_block_of(st.id), Some(new));
    // Only the current attempt may commit.
    let stale =
        ns.commit_block_synchronization(st.id, blocks[1].id, rec.target.gs, 76, false, NOW + 9);
    assert_eq!(
        stale,
        Err(FsError::Io(format!(
            "The recovery id {} does not match current recovery id {} for block {}",
            rec.target.gs, new.gs, blocks[1].id
        )))
    );
    let e = ns
        .commit_block_synchronization(st.id, blocks[1].id, new.gs, 76, false, NOW + 9)
        .expect("commit");
    log.extend(e);
    let st = stat(&ns, "/f");
    assert!(!st.under_construction);
    assert_eq!(st.length, 1100);
    assert_eq!(ns.blocks_of(st.id), &[blocks[0], new]);
    assert_eq!(ns.truncate_block_of(st.id), None);
    assert_replays(&ns, &log);
    // Appending works again.
    let (_, partial, _) = ns.append(&root(), "/f", "c", "m", false).expect("append");
    assert_eq!(partial, Some(new));
}

fn concat(
    ns: &mut Namespace,
    c: &Caller,
    trg: &str,
    srcs: &[&str],
) -> Result<(Concatenated, Edit), FsError> {
    let srcs: Vec<String> = srcs.iter().map(|s| s.to_string()).collect();
    ns.concat(c, trg, &srcs, NOW + 7)
}

fn hiae(s: &str) -> FsError {
    FsError::IllegalArgument(s.into())
}

#[test]
fn concat_preconditions_answer_as_hdfs() {
    let mut ns = ns();
    let mut log = Vec::new();
    for p in ["/c/t", "/c/s1", "/c/s2", "/c/sub/s3"] {
        file(&mut ns, &mut log, p, 1024, &[1000]);
    }
    file(&mut ns, &mut log, "/c/big", 2048, &[1000]);
    file(&mut ns, &mut log, "/c/empty", 1024, &[]);
    open(&mut ns, &mut log, "/c/open");
    let su = root();
    let cases: Vec<(&str, Vec<&str>, FsError)> = vec![
        ("", vec!["/c/s1"], FsError::BadArgument("Target file name is empty".into())),
        ("/c/t", vec![], FsError::BadArgument("No sources given".into())),
        ("c/t", vec!["/c/s1"], FsError::InvalidPath("Invalid path name c/t".into())),
        ("/c/missing", vec!["/c/s1"], FsError::FileNotFound("File does not exist: /c/missing".into())),
        ("/c/sub", vec!["/c/s1"], FsError::FileNotFound("Path is not a file: /c/sub".into())),
        ("/c/s2/x", vec!["/c/s1"], FsError::AccessControl("/c/s2 (is not a directory)".into())),
        ("/c/open", vec!["/c/s1"], hiae("concat: target file /c/open is under construction")),
        ("/c/t", vec!["/c/s2/x"], FsError::AccessControl("/c/s2 (is not a directory)".into())),
        ("/c/t", vec!["/c/s1", "/c/missing"], FsError::FileNotFound("File does not exist: /c/missing".into())),
        ("/c/t", vec!["/c/sub"], FsError::FileNotFound("Path is not a file: /c/sub".into())),
        ("/c/t", vec!["/c/sub/s3"], hiae("Source file /c/sub/s3 is not in the same directory with the target /c/t")),
        ("/c/t", vec!["/c/s1", "/c/t"], hiae("concat: the src file /c/t is the same with the target file /c/t")),
        ("/c/t", vec!["/c/empty"], hiae("concat: source file /c/empty is invalid or empty or underConstruction")),
        ("/c/t", vec!["/c/open"], hiae("concat: source file /c/open is invalid or empty or underConstruction")),
        ("/c/t", vec!["/c/big"], hiae("concat: source file /c/big has preferred block size 2048 which is greater than the target file's preferred block size 1024")),
        ("/c/t", vec!["/c/s1", "/c/s2", "/c/s1"], hiae("concat: at least two of the source files are the same")),
        // The first broken rule answers, source by source.
        ("/c/t", vec!["/c/empty", "/c/missing"], hiae("concat: source file /c/empty is invalid or empty or underConstruction")),
    ];
    for (trg, srcs, want) in cases {
        let got = concat(&mut ns, &su, trg, &srcs).map(|_| ());
        assert_eq!(got, Err(want), "concat {trg} {srcs:?}");
    }
    // Permissions: write on the target, read on a source, write on the
    // sources' directory.
    ns.set_permission(&su, "/c", 0o777).expect("chmod");
    let alice = user("alice", &[]);
    let denied = |access: &str, inode: &str, mode: &str| {
        FsError::AccessControl(format!(
            "Permission denied: user=alice, access={access}, inode=\"{inode}\":hdfs:supergroup:{mode}"
        ))
    };
    assert_eq!(
        concat(&mut ns, &alice, "/c/t", &["/c/s1"]).map(|_| ()),
        Err(denied("WRITE", "/c/t", "-rw-r--r--"))
    );
    ns.set_permission(&su, "/c/t", 0o666).expect("chmod");
    ns.set_permission(&su, "/c/s1", 0o600).expect("chmod");
    assert_eq!(
        concat(&mut ns, &alice, "/c/t", &["/c/s1"]).map(|_| ()),
        Err(denied("READ", "/c/s1", "-rw-------"))
    );
    ns.set_permission(&su, "/c/s1", 0o644).expect("chmod");
    ns.set_permission(&su, "/c", 0o755).expect("chmod");
    assert_eq!(
        concat(&mut ns, &alice, "/c/t", &["/c/s1"]).map(|_| ()),
        Err(denied("WRITE", "/c", "drwxr-xr-x"))
    );
    // Nothing changed.
    assert!(ns.get_file_info(&su, "/c/s1").expect("ok").is_some());
    assert_eq!(stat(&ns, "/c/t").length, 1000);
    ns.set_permission(&su, "/c", 0o777).expect("chmod");
    let (c, e) = concat(&mut ns, &alice, "/c/t", &["/c/s1"]).expect("allowed");
    assert_eq!(c.removed.len(), 1);
    log.push(e);
    assert_eq!(stat(&ns, "/c/t").length, 2000);
}

#[test]
fn concat_appends_blocks_in_order_removes_the_sources_and_replays() {
    let mut ns = ns();
    let mut log = Vec::new();
    let t = file(&mut ns, &mut log, "/x/t", 1024, &[1024, 500]);
    let a = file(&mut ns, &mut log, "/x/a", 1024, &[1024, 7]);
    let b = file(&mut ns, &mut log, "/x/b", 512, &[100]);
    let ids = (
        stat(&ns, "/x/t").id,
        stat(&ns, "/x/a").id,
        stat(&ns, "/x/b").id,
    );
    let (c, e) = concat(&mut ns, &root(), "/x/t", &["/x/a", "/x/b"]).expect("concat");
    log.push(e);
    assert_eq!(c.target, ids.0);
    assert_eq!(c.removed, vec![ids.1, ids.2]);
    assert_eq!(c.moved, vec![a[0].id, a[1].id, b[0].id]);
    let want: Vec<BlockRecord> = t.iter().chain(&a).chain(&b).copied().collect();
    assert_eq!(ns.blocks_of(ids.0), want.as_slice());
    let st = stat(&ns, "/x/t");
    assert_eq!(
        (st.length, st.mtime_ms),
        (1024 + 500 + 1024 + 7 + 100, NOW + 7)
    );
    assert_eq!(stat(&ns, "/x").mtime_ms, NOW + 7);
    assert!(ns.get_file_info(&root(), "/x/a").expect("ok").is_none());
    assert!(ns.inode(ids.1).is_none() && ns.inode(ids.2).is_none());
    assert_replays(&ns, &log);
    // An empty target takes the blocks as they are.
    file(&mut ns, &mut log, "/x/e", 1024, &[]);
    let (c, e) = concat(&mut ns, &root(), "/x/e", &["/x/t"]).expect("into empty");
    log.push(e);
    assert_eq!(c.moved.len(), 5);
    assert_eq!(stat(&ns, "/x/e").length, 2655);
    assert_replays(&ns, &log);
    // A concat edit that does not fit the tree is refused on replay.
    let bad = Edit::Concat {
        target: "/x/e".into(),
        srcs: vec!["/x/e".into()],
        mtime_ms: 1,
    };
    assert!(ns.apply(&bad).is_err());
}

#[test]
fn lease_recovery_hands_an_open_file_to_a_new_holder() {
    let mut ns = ns();
    let mut log = Vec::new();
    file(&mut ns, &mut log, "/f", 1024, &[1024, 1024, 952]);
    let (t, e) = truncate(&mut ns, &root(), "/f", 1100, "c").expect("truncate");
    log.extend(e);
    let target = t.recovery.expect("a recovery").target;
    let id = stat(&ns, "/f").id;
    let edit = ns
        .reassign_lease(id, "HDFS_NameNode")
        .expect("open")
        .expect("a new holder");
    log.push(edit);
    // The same machine, and a truncate keeps its block.
    let uc = ns.writer_of(id).expect("still open");
    assert_eq!(uc.client_name(), "HDFS_NameNode");
    assert_eq!(uc.client_machine(), "127.0.0.1");
    assert_eq!(ns.truncate_block_of(id), Some(target));
    assert_eq!(ns.reassign_lease(id, "HDFS_NameNode"), Ok(None));
    // An open file: its old writer is told it lost the lease.
    let (st, e, _) = ns
        .create(&root(), "/g", 0o644, "w", "m", true, true, 3, 1024, NOW)
        .expect("create");
    log.extend(e);
    log.extend(ns.reassign_lease(st.id, "x").expect("open"));
    assert_eq!(
        ns.writable_file("/g", st.id.0, "w"),
        Err(FsError::LeaseExpired(format!(
            "Client (=w) is not the lease owner (=x: /g (inode {}) Holder w does not have any open files.",
            st.id
        )))
    );
    assert_eq!(
        ns.writable_file("/g", st.id.0, "x").map(|(i, _)| i),
        Ok(st.id)
    );
    assert_replays(&ns, &log);
    let copy = super::tests::replayed(&log);
    assert_eq!(
        copy.writer_of(st.id).map(UnderConstruction::client_name),
        Some("x")
    );
    assert_eq!(
        copy.writer_of(id).map(UnderConstruction::client_name),
        Some("HDFS_NameNode")
    );
    assert_eq!(copy.truncate_block_of(id), Some(target));
    assert!(matches!(
        ns.reassign_lease(stat(&ns, "/").id, "x"),
        Err(FsError::FileNotFound(_))
    ));
}

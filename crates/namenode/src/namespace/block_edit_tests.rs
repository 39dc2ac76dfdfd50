//! Unit tests of the namespace's blocks and edits: replay into an identical
//! tree, block allocation, commit and limits, edits that reuse an inode id,
//! and the sweep of unused attribute sets.

use super::tests::{assert_replays, ns, root, stat, NOW};
use super::*;

#[test]
fn edits_replay_to_the_same_tree() {
    let mut ns = ns();
    let mut log = Vec::new();
    let c = root();
    log.extend(ns.mkdirs(&c, "/a/b", 0o755, true, NOW + 1).expect("mkdir"));
    let (_, e, _) = ns
        .create(
            &c,
            "/a/b/f",
            0o640,
            "cl",
            "m",
            false,
            true,
            2,
            4096,
            NOW + 2,
        )
        .expect("create");
    log.extend(e);
    log.extend(
        ns.complete("/a/b/f", 0, "cl", None, NOW + 3, &|_| true)
            .expect("close")
            .1,
    );
    log.push(
        ns.set_owner(&c, "/a/b/f", Some("alice"), Some("g"))
            .expect("chown"),
    );
    log.push(ns.set_permission(&c, "/a", 0o711).expect("chmod"));
    log.extend(ns.rename(&c, "/a/b", "/z", NOW + 4).expect("rename").1);
    log.push(
        ns.rename2(&c, "/z/f", "/y", false, NOW + 5)
            .expect("rename2")
            .0,
    );
    log.extend(
        ns.mkdirs(&c, "/gone/deep", 0o755, true, NOW + 6)
            .expect("mkdir"),
    );
    log.push(
        ns.delete(&c, "/gone", true, NOW + 7)
            .expect("delete")
            .expect("existed")
            .0,
    );
    log.push(ns.set_times(&c, "/y", Some(77), Some(88)).expect("times"));
    log.extend(ns.set_replication(&c, "/y", 5).expect("setrep"));
    assert_replays(&ns, &log);
}

#[test]
fn blocks_are_allocated_committed_and_replayed() {
    // Goal: addBlock allocates sequential ids and stamps from HDFS's
    // starting points, commits the previous block's length, answers a
    // retried addBlock with the same block, refuses writers without the
    // lease, and complete waits for replication; the edits replay.
    let mut ns = ns();
    let c = root();
    let mut log = Vec::new();
    let (st, e, _) = ns
        .create(&c, "/b/f", 0o644, "w", "m", false, true, 3, 1024, NOW)
        .expect("create");
    log.extend(e);
    let yes = |_: &BlockRecord| true;
    let (a1, e) = ns
        .add_block("/b/f", st.id.0, "w", None, &yes)
        .expect("first");
    assert_eq!(a1.block.id, BlockId(FIRST_BLOCK_ID));
    assert_eq!(a1.block.gs, FIRST_GENERATION_STAMP);
    assert_eq!(a1.offset, 0);
    log.extend(e);
    // A lost answer: the client asks again with the same previous (none).
    let (again, e) = ns
        .add_block("/b/f", st.id.0, "w", None, &yes)
        .expect("retry");
    assert!(again.existing && e.is_none());
    assert_eq!(again.block, a1.block);
    assert!(matches!(
        ns.add_block("/b/f", 0, "intruder", None, &yes),
        Err(FsError::LeaseExpired(_))
    ));
    let prev = BlockRecord {
        num_bytes: 1024,
        ..a1.block
    };
    let (a2, e) = ns
        .add_block("/b/f", 0, "w", Some(prev), &yes)
        .expect("second");
    log.extend(e);
    assert_eq!(a2.offset, 1024);
    assert_eq!(a2.block.id.0, FIRST_BLOCK_ID + 1);
    let prev2 = BlockRecord {
        num_bytes: 1024,
        ..a2.block
    };
    // The block before the previous one lacks replicas: not yet.
    assert!(matches!(
        ns.add_block("/b/f", 0, "w", Some(prev2), &|b: &BlockRecord| b.id
            != a1.block.id),
        Err(FsError::NotReplicatedYet(_))
    ));
    let last = BlockRecord {
        num_bytes: 10,
        ..a2.block
    };
    let (done, e) = ns
        .complete("/b/f", 0, "w", Some(last), NOW + 1, &|b: &BlockRecord| {
            b.id != a2.block.id
        })
        .expect("complete");
    assert!(!done, "last block not yet reported");
    // As HDFS's, the block is committed even so: the file's length counts
    // the writer's bytes (logged, so a replay agrees), once.
    log.extend(e.clone());
    assert!(matches!(e, Some(Edit::UpdateBlock { block, .. }) if block == last));
    assert_eq!(stat(&ns, "/b/f").length, 1034);
    let (_, again) = ns
        .complete("/b/f", 0, "w", Some(last), NOW + 1, &|_: &BlockRecord| {
            false
        })
        .expect("complete");
    assert!(again.is_none(), "nothing new to commit");
    // A stamp the NameNode never gave is refused, as HDFS's commitBlock.
    let stale = BlockRecord {
        gs: GenStamp(last.gs.0 - 1),
        ..last
    };
    match ns.complete("/b/f", 0, "w", Some(stale), NOW + 1, &yes) {
        Err(FsError::Io(m)) => assert!(
            m.starts_with("Commit block with mismatching GS. NN has blk_"),
            "{m}"
        ),
        other => panic!("{other:?}"),
    }
    let (done, e) = ns
        .complete("/b/f", 0, "w", Some(last), NOW + 2, &yes)
        .expect("complete");
    assert!(done);
    log.extend(e);
    assert_eq!(stat(&ns, "/b/f").length, 1034);
    assert_replays(&ns, &log);
    let (removed_edit, removed) = ns
        .delete(&c, "/b", true, NOW)
        .expect("ok")
        .expect("existed");
    let _ = removed_edit;
    assert_eq!(removed.blocks, vec![a1.block.id, a2.block.id]);
}

#[test]
fn append_at_a_block_boundary_allocates_after_the_full_last_block() {
    // Goal: as HDFS's analyzeFileState "case 1": the first addBlock of an
    // append to a file whose last block is full and complete has no
    // previous block, and gets a new block after it; a retried addBlock
    // whose block already holds data, and a previous block that names
    // nothing of the file, are refused.
    let mut ns = ns();
    let c = root();
    let mut log = Vec::new();
    let (st, e, _) = ns
        .create(&c, "/a", 0o644, "w", "m", false, true, 3, 1024, NOW)
        .expect("create");
    log.extend(e);
    let yes = |_: &BlockRecord| true;
    let mut prev = None;
    for _ in 0..2 {
        let (a, e) = ns.add_block("/a", st.id.0, "w", prev, &yes).expect("block");
        log.extend(e);
        prev = Some(BlockRecord {
            num_bytes: 1024,
            ..a.block
        });
    }
    let (done, e) = ns
        .complete("/a", 0, "w", prev, NOW + 1, &yes)
        .expect("complete");
    assert!(done);
    log.extend(e);
    let (_, partial, e) = ns.append(&c, "/a", "w2", "m", false).expect("append");
    assert!(partial.is_none(), "the last block is full");
    log.push(e);
    // The last block lacks its minimum replication: not a boundary append.
    assert!(ns
        .add_block("/a", 0, "w2", None, &|_: &BlockRecord| false)
        .is_err());
    let (a3, e) = ns
        .add_block("/a", 0, "w2", None, &yes)
        .expect("boundary append");
    assert!(!a3.existing);
    assert_eq!(a3.offset, 2048);
    log.extend(e);
    // A retry naming the full block as previous gets the same, empty block.
    let (again, e) = ns.add_block("/a", 0, "w2", prev, &yes).expect("retry");
    assert!(again.existing && e.is_none());
    assert_eq!(again.block, a3.block);
    let bogus = BlockRecord {
        id: BlockId(FIRST_BLOCK_ID + 77),
        ..a3.block
    };
    assert!(matches!(
        ns.add_block("/a", 0, "w2", Some(bogus), &yes),
        Err(FsError::Io(_))
    ));
    let last = BlockRecord {
        num_bytes: 5,
        ..a3.block
    };
    let (done, e) = ns
        .complete("/a", 0, "w2", Some(last), NOW + 2, &yes)
        .expect("complete");
    assert!(done);
    log.extend(e);
    assert_eq!(stat(&ns, "/a").length, 2053);
    assert_replays(&ns, &log);
}

/// Found by fuzzing (`fuzz/corpus/image/crash-5315d750…`): an image whose
/// mkdir reused the root's inode id replaced the root, and deleting that
/// directory then panicked. A new inode's id must be free.
#[test]
fn edits_reusing_an_inode_id_are_refused() {
    let mut ns = ns();
    let mkdir = |id: INodeId, path: &str| Edit::Mkdir {
        id,
        path: path.into(),
        permission: 0o755,
        owner: "hdfs".into(),
        group: "supergroup".into(),
        mtime_ms: NOW,
    };
    let err = ns.apply(&mkdir(ROOT_INODE_ID, "/a")).expect_err("root id");
    assert!(err.to_string().contains("already in use"), "{err}");
    assert!(ns
        .apply(&Edit::Delete {
            path: "/a".into(),
            mtime_ms: NOW
        })
        .is_err());
    ns.apply(&mkdir(INodeId(16386), "/a")).expect("mkdir");
    assert!(ns.apply(&mkdir(INodeId(16386), "/b")).is_err());
    let add = |id: INodeId, path: &str, overwrite: bool| Edit::AddFile {
        id,
        path: path.into(),
        permission: 0o644,
        owner: "hdfs".into(),
        group: "supergroup".into(),
        mtime_ms: NOW,
        replication: 1,
        block_size: 1024,
        client_name: "c".into(),
        client_machine: "m".into(),
        overwrite,
    };
    assert!(ns.apply(&add(INodeId(16386), "/f", false)).is_err());
    ns.apply(&add(INodeId(16387), "/f", false)).expect("create");
    // Overwriting a file may reuse nothing but the replaced file's id.
    assert!(ns.apply(&add(INodeId(16386), "/f", true)).is_err());
    ns.apply(&add(INodeId(16388), "/f", true))
        .expect("overwrite");
    // The tree is whole: the root and /a are still there.
    assert!(ns
        .apply(&Edit::Delete {
            path: "/a".into(),
            mtime_ms: NOW
        })
        .is_ok());
    assert!(ns.apply(&mkdir(INodeId(16389), "/a")).is_ok());
}

#[test]
fn block_sizes_above_2_gib_must_be_multiples_of_512() {
    let mut ns = ns();
    let create = |ns: &mut Namespace, p: &str, bs: u64| {
        ns.create(&root(), p, 0o644, "c", "m", false, true, 3, bs, NOW)
            .map(|(st, _, _)| st.block_size)
    };
    assert_eq!(create(&mut ns, "/big", 5 << 30).ok(), Some(5 << 30));
    assert!(matches!(
        create(&mut ns, "/odd", (3 << 30) + 100),
        Err(FsError::IllegalArgument(m)) if m.contains("multiple of 512 bytes")
    ));
    assert!(ns.get_file_info(&root(), "/odd").ok().flatten().is_none());
}

#[test]
fn add_block_stops_at_the_blocks_per_file_limit() {
    let limits = Limits {
        max_blocks_per_file: 2,
        ..Limits::default()
    };
    let mut ns = Namespace::new("hdfs", "supergroup", NOW, limits);
    let (st, _, _) = ns
        .create(&root(), "/f", 0o644, "w", "m", false, true, 3, 1024, NOW)
        .expect("create");
    let yes = |_: &BlockRecord| true;
    let mut previous = None;
    for _ in 0..2 {
        let (a, _) = ns
            .add_block("/f", st.id.0, "w", previous, &yes)
            .expect("within the limit");
        previous = Some(BlockRecord {
            num_bytes: 1024,
            ..a.block
        });
    }
    let e = ns.add_block("/f", st.id.0, "w", previous, &yes);
    assert!(
        matches!(&e, Err(FsError::Io(m)) if m.contains("dfs.namenode.fs-limits.max-blocks-per-file): 2 >= 2")),
        "{e:?}"
    );
}

/// Goal: attribute sets no inode uses any more are swept once there are
/// thousands, so a user who makes a new one per file (a block size of its
/// own, then a delete) cannot grow the table without bound; live inodes and
/// those a snapshot keeps have the same attributes after the sweeps.
#[test]
fn unused_attribute_sets_are_swept() {
    let mut n = ns();
    n.create(
        &root(),
        "/keep/f",
        0o640,
        "c",
        "m",
        false,
        true,
        2,
        512 * 3,
        NOW,
    )
    .expect("create");
    n.create(
        &root(),
        "/snap/g",
        0o600,
        "c",
        "m",
        false,
        true,
        4,
        512 * 5,
        NOW,
    )
    .expect("create");
    n.allow_snapshot(&root(), "/snap").expect("allow");
    n.create_snapshot(&root(), "/snap", Some("s1"), NOW)
        .expect("snapshot");
    n.delete(&root(), "/snap/g", false, NOW).expect("delete");
    let kept = stat(&n, "/keep/f");
    let retained = stat(&n, "/snap/.snapshot/s1/g");
    for i in 0..10_000u64 {
        let p = format!("/churn/f{i}");
        n.create(
            &root(),
            &p,
            0o644,
            "c",
            "m",
            false,
            true,
            3,
            512 * (10 + i),
            NOW,
        )
        .expect("create");
        n.delete(&root(), &p, false, NOW).expect("delete");
    }
    assert!(
        n.names.set_count() < 8192,
        "{} sets kept",
        n.names.set_count()
    );
    for (p, before) in [("/keep/f", kept), ("/snap/.snapshot/s1/g", retained)] {
        let after = stat(&n, p);
        assert_eq!(
            (after.permission, after.replication, after.block_size),
            (before.permission, before.replication, before.block_size),
            "{p}"
        );
        assert_eq!(
            (after.owner, after.group),
            (before.owner, before.group),
            "{p}"
        );
    }
    assert_eq!(stat(&n, "/keep/f").block_size, 512 * 3);
    assert_eq!(stat(&n, "/snap/.snapshot/s1/g").replication, 4);
}

//! Snapshots: HDFS's rules and messages, `.snapshot` reads at snapshot
//! time after appends, truncates, deletes and renames, block retention
//! until the last snapshot naming a block goes, deleting snapshots in any
//! order, journal replay and checkpoint images rebuilding the same
//! snapshot views, and that the cost stays proportional to the changes.

use super::tests::{ns, root, stat, user, NOW};
use super::truncate_concat_tests::file;
use super::*;

pub(super) fn mkdir(n: &mut Namespace, log: &mut Vec<Edit>, p: &str) {
    log.extend(n.mkdirs(&root(), p, 0o755, true, NOW).expect("mkdir"));
}

pub(super) fn allow(n: &mut Namespace, log: &mut Vec<Edit>, p: &str) {
    log.push(n.allow_snapshot(&root(), p).expect("allow"));
}

pub(super) fn snap(n: &mut Namespace, log: &mut Vec<Edit>, p: &str, name: &str) {
    let (_, e) = n
        .create_snapshot(&root(), p, Some(name), NOW + 10)
        .expect("snapshot");
    log.push(e);
}

pub(super) fn del_snap(
    n: &mut Namespace,
    log: &mut Vec<Edit>,
    p: &str,
    name: &str,
) -> Vec<BlockId> {
    log.push(
        n.delete_snapshot(&root(), p, name, NOW + 20)
            .expect("delete snapshot"),
    );
    n.take_freed_blocks()
}

pub(super) fn delete(n: &mut Namespace, log: &mut Vec<Edit>, p: &str) -> Removed {
    let (e, removed) = n
        .delete(&root(), p, true, NOW + 30)
        .expect("delete")
        .expect("existed");
    log.push(e);
    removed
}

pub(super) fn append(n: &mut Namespace, log: &mut Vec<Edit>, p: &str, more: u64) {
    let (_, last, e) = n.append(&root(), p, "w", "m", false).expect("append");
    log.push(e);
    let (id, _) = n.resolve_file(p, 0).expect("file");
    let last = last.expect("partial last block");
    let grown = BlockRecord {
        num_bytes: last.num_bytes + more,
        ..last
    };
    let yes = |_: &BlockRecord| true;
    let (done, e) = n
        .complete(p, id.0, "w", Some(grown), NOW + 40, &yes)
        .expect("complete");
    assert!(done);
    log.extend(e);
}

pub(super) fn len(n: &Namespace, p: &str) -> Option<u64> {
    n.get_file_info(&root(), p)
        .expect("valid")
        .map(|s| s.length)
}

fn names(n: &Namespace, p: &str) -> Vec<String> {
    n.get_listing(&root(), p, "", 1000)
        .expect("valid")
        .expect("exists")
        .entries
        .into_iter()
        .map(|e| e.name)
        .collect()
}

pub(super) fn read_blocks(n: &Namespace, p: &str) -> Vec<BlockRecord> {
    let st = n.open_for_read(&root(), p).expect("readable");
    n.blocks_for_status(&st)
}

/// Everything a reader sees, `.snapshot` paths included: path, kind,
/// permission, owner, mtime, length, blocks.
fn dump(n: &Namespace) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec!["/".to_string()];
    while let Some(p) = stack.pop() {
        let s = n.get_file_info(&root(), &p).expect("ok").expect("exists");
        let blocks = if s.is_dir {
            Vec::new()
        } else {
            read_blocks(n, &p)
        };
        out.push(format!(
            "{p} dir={} perm={:o} owner={} mtime={} len={} blocks={blocks:?}",
            s.is_dir, s.permission, s.owner, s.mtime_ms, s.length
        ));
        if !s.is_dir {
            continue;
        }
        let join = |name: &str| format!("{}/{name}", p.trim_end_matches('/'));
        for c in names(n, &p) {
            stack.push(join(&c));
        }
        if n.get_file_info(&root(), &join(snapshot::DOT_SNAPSHOT))
            .expect("ok")
            .is_some()
        {
            for s in names(n, &join(snapshot::DOT_SNAPSHOT)) {
                stack.push(format!("{}/{s}", join(snapshot::DOT_SNAPSHOT)));
            }
        }
    }
    out.sort();
    out
}

/// `log` replayed into a fresh namespace, and `n`'s image loaded into another.
pub(super) fn rebuilt(n: &Namespace, log: &[Edit]) -> (Namespace, Namespace) {
    let mut replayed = ns();
    for e in log {
        replayed.apply(e).expect("replay");
    }
    let mut imaged = ns();
    for e in n.to_edits() {
        imaged.apply(&e).expect("image");
    }
    (replayed, imaged)
}

/// Replays `log` and the image of `n` into fresh namespaces: both must
/// show the same, snapshots included.
pub(super) fn assert_rebuilds(n: &Namespace, log: &[Edit]) {
    let expected = dump(n);
    let (replayed, imaged) = rebuilt(n, log);
    assert_eq!(dump(&replayed), expected, "journal replay");
    assert_eq!(dump(&imaged), expected, "image");
    assert_eq!(imaged.to_edits(), n.to_edits(), "image of the image");
    let loaded = super::tests::imaged(n);
    assert_eq!(dump(&loaded), expected, "sectioned image");
    let blocks = |x: &Namespace| {
        let mut b: Vec<_> = x.all_blocks().into_iter().map(|(_, b)| b.id).collect();
        b.sort();
        b
    };
    assert_eq!(blocks(&imaged), blocks(n), "blocks held");
    assert_eq!(blocks(&loaded), blocks(n), "blocks held after the image");
    assert_eq!(blocks(&replayed), blocks(n), "blocks held after replay");
}

#[test]
fn snapshot_operations_answer_as_hdfs() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d/sub");
    mkdir(&mut n, &mut log, "/e");
    file(&mut n, &mut log, "/d/f", 1024, &[10]);
    let su = root();
    assert_eq!(
        n.create_snapshot(&su, "/d", Some("s1"), NOW),
        Err(FsError::Snapshot(
            "Directory is not a snapshottable directory: /d".into()
        ))
    );
    assert_eq!(
        n.allow_snapshot(&su, "/nope"),
        Err(FsError::FileNotFound(
            "Directory does not exist: /nope".into()
        ))
    );
    // The snapshot calls check the owner, which names a missing path
    // its own way (HDFS's checkOwner), before any other user is refused.
    assert_eq!(
        n.create_snapshot(&su, "/nope", Some("s1"), NOW),
        Err(FsError::FileNotFound(
            "Directory/File does not exist /nope".into()
        ))
    );
    assert_eq!(
        n.create_snapshot(&user("alice", &[]), "/nope", Some("s1"), NOW),
        Err(FsError::FileNotFound(
            "Directory/File does not exist /nope".into()
        ))
    );
    assert_eq!(
        n.allow_snapshot(&su, "/d/f"),
        Err(FsError::PathIsNotDirectory(
            "`/d/f': Is not a directory".into()
        ))
    );
    // Named as the caller spelt it (HDFS's INodeDirectory.valueOf with
    // the path asked for), a trailing slash kept.
    assert_eq!(
        n.disallow_snapshot(&su, "/d/f/").map(|_| ()),
        Err(FsError::PathIsNotDirectory(
            "`/d/f/': Is not a directory".into()
        ))
    );
    allow(&mut n, &mut log, "/d");
    assert_eq!(
        n.allow_snapshot(&su, "/d/sub"),
        Err(FsError::Snapshot(
            "Nested snapshottable directories not allowed: path=/d/sub, the ancestor /d is already a snapshottable directory.".into()
        ))
    );
    // The path as the caller spelt it (HDFS's `setSnapshottable(path)`).
    assert_eq!(
        n.allow_snapshot(&su, "/d/sub/"),
        Err(FsError::Snapshot(
            "Nested snapshottable directories not allowed: path=/d/sub/, the ancestor /d is already a snapshottable directory.".into()
        ))
    );
    assert_eq!(
        n.allow_snapshot(&su, "/"),
        Err(FsError::Snapshot(
            "Nested snapshottable directories not allowed: path=/, the subdirectory /d is already a snapshottable directory.".into()
        ))
    );
    snap(&mut n, &mut log, "/d", "s1");
    assert_eq!(
        n.create_snapshot(&su, "/d", Some("s1"), NOW),
        Err(FsError::Snapshot(
            "Failed to add snapshot: there is already a snapshot with the same name \"s1\".".into()
        ))
    );
    assert_eq!(
        n.create_snapshot(&su, "/d", Some(".snapshot"), NOW),
        Err(FsError::InvalidPath(
            "Invalid snapshot name: .snapshot".into()
        ))
    );
    let alice = user("alice", &[]);
    assert_eq!(
        n.create_snapshot(&alice, "/d", Some("s2"), NOW),
        Err(FsError::AccessControl(
            "Permission denied. user=alice is not the owner of inode=/d".into()
        ))
    );
    assert_eq!(
        n.disallow_snapshot(&su, "/d"),
        Err(FsError::Snapshot(
            "The directory /d has snapshot(s). Please redo the operation after removing all the snapshots.".into()
        ))
    );
    let cannot = FsError::Snapshot(
        "The directory /d cannot be deleted since /d is snapshottable and already has snapshots"
            .into(),
    );
    assert_eq!(n.delete(&su, "/d", true, NOW), Err(cannot.clone()));
    assert_eq!(n.rename2(&su, "/d", "/x", false, NOW), Err(cannot.clone()));
    assert_eq!(n.rename(&su, "/d", "/e", NOW), Err(cannot));
    assert_eq!(
        n.delete_snapshot(&su, "/d", "nope", NOW),
        Err(FsError::Snapshot(
            "Cannot delete snapshot nope from path /d: the snapshot does not exist.".into()
        ))
    );
    assert_eq!(
        n.rename_snapshot(&su, "/d", "nope", "s9", NOW),
        Err(FsError::Snapshot(
            "The snapshot nope does not exist for directory /d".into()
        ))
    );
    snap(&mut n, &mut log, "/d", "s2");
    assert_eq!(
        n.rename_snapshot(&su, "/d", "s1", "s2", NOW),
        Err(FsError::Snapshot(
            "The snapshot s2 already exists for directory /d".into()
        ))
    );
    log.extend(
        n.rename_snapshot(&su, "/d", "s1", "s0", NOW + 50)
            .expect("rename"),
    );
    assert_eq!(names(&n, "/d/.snapshot"), ["s0", "s2"]);
    assert_eq!(stat_mtime(&n, "/d/.snapshot/s0"), NOW + 50);
    // Writes below .snapshot, and the reserved name elsewhere.
    let read_only =
        FsError::SnapshotAccessControl("Modification on a read-only snapshot is disallowed".into());
    assert_eq!(
        n.mkdirs(&su, "/d/.snapshot", 0o755, true, NOW),
        Err(read_only.clone())
    );
    assert_eq!(
        n.mkdirs(&su, "/d/.snapshot/s0/x", 0o755, true, NOW),
        Err(read_only.clone())
    );
    assert_eq!(
        n.delete(&su, "/d/.snapshot/s0/f", false, NOW),
        Err(read_only.clone())
    );
    assert_eq!(
        n.rename2(&su, "/d/f", "/d/.snapshot/s0/g", false, NOW),
        Err(read_only)
    );
    assert_eq!(
        n.mkdirs(&su, "/e/.snapshot", 0o755, true, NOW),
        Err(FsError::IllegalArgument(
            "\".snapshot\" is a reserved name.".into()
        ))
    );
    // Listing of snapshottable directories.
    let dirs = n.snapshottable_dirs(&su).expect("a list");
    assert_eq!(dirs.len(), 1);
    assert_eq!((dirs[0].count, dirs[0].quota), (2, 65536));
    // None of alice's: an empty list (HDFS's null only when there is no
    // snapshottable directory at all).
    assert_eq!(n.snapshottable_dirs(&alice).map(|d| d.len()), Some(0));
    for s in ["s0", "s2"] {
        del_snap(&mut n, &mut log, "/d", s);
    }
    log.extend(n.disallow_snapshot(&su, "/d").expect("disallow"));
    assert!(!n.is_snapshottable(n.resolve_file("/d/f", 0).expect("f").0));
    assert!(n.snapshottable_dirs(&su).is_none());
    assert_rebuilds(&n, &log);
}

fn stat_mtime(n: &Namespace, p: &str) -> u64 {
    n.get_file_info(&root(), p)
        .expect("ok")
        .expect("exists")
        .mtime_ms
}

#[test]
fn snapshot_reads_show_the_tree_as_it_was() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d/sub");
    let f = file(&mut n, &mut log, "/d/f", 1024, &[1024, 100]);
    file(&mut n, &mut log, "/d/sub/g", 1024, &[7]);
    file(&mut n, &mut log, "/d/t", 1024, &[1024, 1024, 50]);
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    // After the snapshot: append, truncate at a block boundary, delete,
    // rename, create, chmod.
    append(&mut n, &mut log, "/d/f", 500);
    let (t, e) = n
        .truncate(&root(), "/d/t", 1024, "c", "m", NOW + 5)
        .expect("truncate");
    log.extend(e);
    assert!(t.done);
    assert!(t.removed.is_empty(), "the snapshot keeps the cut blocks");
    let removed = delete(&mut n, &mut log, "/d/sub");
    assert!(removed.blocks.is_empty(), "the snapshot keeps g's block");
    log.push(
        n.rename2(&root(), "/d/f", "/d/f2", false, NOW + 60)
            .expect("rename")
            .0,
    );
    file(&mut n, &mut log, "/d/new", 1024, &[3]);
    log.push(n.set_permission(&root(), "/d/f2", 0o600).expect("chmod"));

    assert_eq!(names(&n, "/d"), ["f2", "new", "t"]);
    assert_eq!(names(&n, "/d/.snapshot/s1"), ["f", "sub", "t"]);
    assert_eq!(names(&n, "/d/.snapshot/s1/sub"), ["g"]);
    assert_eq!(len(&n, "/d/f2"), Some(1624));
    assert_eq!(len(&n, "/d/.snapshot/s1/f"), Some(1124));
    assert_eq!(len(&n, "/d/.snapshot/s1/f2"), None);
    assert_eq!(len(&n, "/d/.snapshot/s1/t"), Some(2098));
    assert_eq!(len(&n, "/d/t"), Some(1024));
    let st = n
        .get_file_info(&root(), "/d/.snapshot/s1/f")
        .expect("ok")
        .expect("f");
    assert_eq!(st.permission, 0o644);
    assert_eq!(
        read_blocks(&n, "/d/.snapshot/s1/f"),
        vec![
            f[0],
            BlockRecord {
                num_bytes: 100,
                gs: n.blocks_of(st.id)[1].gs,
                ..f[1]
            }
        ],
        "cut at the snapshot's length, with today's stamp"
    );
    assert_eq!(read_blocks(&n, "/d/.snapshot/s1/t").len(), 3);
    let du = n
        .content_summary(&root(), "/d/.snapshot/s1")
        .expect("summary");
    assert_eq!(
        (du.directory_count, du.file_count, du.length),
        (2, 3, 1124 + 2098 + 7)
    );
    assert_eq!(read_blocks(&n, "/d/.snapshot/s1/sub/g")[0].num_bytes, 7);
    // The .snapshot directory and a missing snapshot.
    let dot = n
        .get_file_info(&root(), "/d/.snapshot")
        .expect("ok")
        .expect("dot");
    assert!(dot.is_dir);
    assert_eq!(
        n.get_file_info(&root(), "/d/.snapshot/zz").expect("ok"),
        None
    );
    assert!(matches!(
        n.open_for_read(&root(), "/d/.snapshot/s1/sub"),
        Err(FsError::FileNotFound(_))
    ));
    assert_rebuilds(&n, &log);
}

#[test]
fn blocks_stay_until_the_last_snapshot_naming_them_goes() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    let a = file(&mut n, &mut log, "/d/a", 1024, &[1024, 1024, 9]);
    let b = file(&mut n, &mut log, "/d/b", 1024, &[5]);
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    snap(&mut n, &mut log, "/d", "s2");
    // Deleted after both snapshots: held by both.
    assert!(delete(&mut n, &mut log, "/d/b").blocks.is_empty());
    // Cut at a block boundary after s2: held by s2's diff (and s1 through it).
    let (t, e) = n
        .truncate(&root(), "/d/a", 1024, "c", "m", NOW)
        .expect("truncate");
    log.extend(e);
    assert!(t.removed.is_empty());
    // A file created and deleted between snapshots is freed at once.
    let c = file(&mut n, &mut log, "/d/c", 1024, &[4]);
    assert_eq!(delete(&mut n, &mut log, "/d/c").blocks, vec![c[0].id]);
    assert_eq!(read_blocks(&n, "/d/.snapshot/s1/b"), b);
    assert!(
        del_snap(&mut n, &mut log, "/d", "s1").is_empty(),
        "s2 still holds them"
    );
    assert_eq!(read_blocks(&n, "/d/.snapshot/s2/b"), b);
    assert_eq!(read_blocks(&n, "/d/.snapshot/s2/a").len(), 3);
    assert_rebuilds(&n, &log);
    let mut freed = del_snap(&mut n, &mut log, "/d", "s2");
    freed.sort();
    let mut want = vec![b[0].id, a[1].id, a[2].id];
    want.sort();
    assert_eq!(freed, want, "the last snapshot gone: its blocks are freed");
    assert_eq!(n.snapshot_footprint(), 0, "nothing kept");
    assert_rebuilds(&n, &log);
}

#[test]
fn deleting_a_middle_snapshot_keeps_the_others_exact() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    allow(&mut n, &mut log, "/d");
    file(&mut n, &mut log, "/d/a", 1024, &[10]);
    snap(&mut n, &mut log, "/d", "s1");
    file(&mut n, &mut log, "/d/b", 1024, &[20]);
    append(&mut n, &mut log, "/d/a", 5);
    snap(&mut n, &mut log, "/d", "s2");
    delete(&mut n, &mut log, "/d/b");
    append(&mut n, &mut log, "/d/a", 5);
    file(&mut n, &mut log, "/d/c", 1024, &[30]);
    snap(&mut n, &mut log, "/d", "s3");
    delete(&mut n, &mut log, "/d/c");
    log.push(
        n.rename2(&root(), "/d/a", "/d/z", false, NOW)
            .expect("rename")
            .0,
    );
    let before_s1 = (names(&n, "/d/.snapshot/s1"), len(&n, "/d/.snapshot/s1/a"));
    let before_s3 = (names(&n, "/d/.snapshot/s3"), len(&n, "/d/.snapshot/s3/a"));
    assert_eq!(before_s1, (vec!["a".to_string()], Some(10)));
    assert_eq!(before_s3, (vec!["a".to_string(), "c".into()], Some(20)));
    // b existed only at s2: deleting s2 frees it.
    let freed = del_snap(&mut n, &mut log, "/d", "s2");
    assert_eq!(freed.len(), 1);
    assert_eq!(
        (names(&n, "/d/.snapshot/s1"), len(&n, "/d/.snapshot/s1/a")),
        before_s1
    );
    assert_eq!(
        (names(&n, "/d/.snapshot/s3"), len(&n, "/d/.snapshot/s3/a")),
        before_s3
    );
    assert_rebuilds(&n, &log);
    assert_eq!(del_snap(&mut n, &mut log, "/d", "s3").len(), 1, "c goes");
    assert_eq!(names(&n, "/d/.snapshot/s1"), ["a"]);
    assert_eq!(len(&n, "/d/.snapshot/s1/a"), Some(10));
    assert_rebuilds(&n, &log);
    del_snap(&mut n, &mut log, "/d", "s1");
    assert_eq!(n.snapshot_footprint(), 0);
    assert_rebuilds(&n, &log);
}

#[test]
fn a_file_renamed_out_and_deleted_is_kept_for_the_snapshot() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    mkdir(&mut n, &mut log, "/out");
    let f = file(&mut n, &mut log, "/d/f", 1024, &[100]);
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    log.push(
        n.rename2(&root(), "/d/f", "/out/f", false, NOW)
            .expect("rename")
            .0,
    );
    append(&mut n, &mut log, "/out/f", 50);
    assert_eq!(len(&n, "/d/.snapshot/s1/f"), Some(100), "change recorded");
    assert!(delete(&mut n, &mut log, "/out/f").blocks.is_empty());
    assert_eq!(read_blocks(&n, "/d/.snapshot/s1/f")[0].id, f[0].id);
    assert_rebuilds(&n, &log);
    assert_eq!(del_snap(&mut n, &mut log, "/d", "s1"), vec![f[0].id]);
    assert_eq!(n.snapshot_footprint(), 0);
}

#[test]
fn a_concat_source_in_a_snapshot_is_refused() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    file(&mut n, &mut log, "/d/f", 1024, &[1024, 100]);
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    file(&mut n, &mut log, "/d/g", 1024, &[1]);
    assert_eq!(
        n.concat(&root(), "/d/g", &["/d/f".to_string()], NOW)
            .map(|_| ()),
        Err(FsError::Snapshot(
            "Concat: the source file /d/f is in snapshot".into()
        ))
    );
}

#[test]
fn snapshot_cost_follows_the_changes_not_the_tree() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/big");
    for d in 0..100 {
        mkdir(&mut n, &mut log, &format!("/big/d{d}"));
        for f in 0..1000 {
            let (_, e, _) = n
                .create(
                    &root(),
                    &format!("/big/d{d}/f{f}"),
                    0o644,
                    "w",
                    "m",
                    false,
                    false,
                    1,
                    1024,
                    NOW,
                )
                .expect("create");
            drop(e);
        }
    }
    assert!(n.inode_count() > 100_000);
    allow(&mut n, &mut log, "/big");
    for s in 0..3 {
        snap(&mut n, &mut log, "/big", &format!("s{s}"));
    }
    // Taking a snapshot costs one diff (the root's own state), as in HDFS.
    assert_eq!(n.snapshot_footprint(), 3);
    // Ten changes: a bounded number of diffs, whatever the tree's size.
    for i in 0..10 {
        log.push(
            n.set_permission(&root(), &format!("/big/d{i}/f{i}"), 0o600)
                .expect("chmod"),
        );
    }
    let removed = delete(&mut n, &mut log, "/big/d99/f5");
    assert!(removed.blocks.is_empty());
    assert!(
        n.snapshot_footprint() <= 3 + 10 + 3,
        "footprint {} for 11 changes in a tree of 100k inodes",
        n.snapshot_footprint()
    );
    assert_eq!(
        n.get_file_info(&root(), "/big/.snapshot/s1/d3/f3")
            .expect("ok")
            .expect("f3")
            .permission,
        0o644
    );
    assert!(n
        .get_file_info(&root(), "/big/.snapshot/s2/d99/f5")
        .expect("ok")
        .is_some());
}

#[test]
fn snapshot_listings_carry_the_bare_permission_and_no_flags() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d/a");
    mkdir(&mut n, &mut log, "/d/b");
    let named = AclEntry::new(AclScope::Access, AclEntryType::User, Some("bob"), 5);
    log.push(
        n.change_acl(&root(), "/d", AclChange::Modify, &[named])
            .expect("acl"),
    );
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    mkdir(&mut n, &mut log, "/d/c");
    let plain = stat(&n, "/d");
    assert_ne!(plain.permission & ACL_BIT, 0, "getFileInfo shows the ACL");
    assert!(plain.snapshot_enabled);
    // HDFS builds both listings' statuses from the bare FsPermission with
    // no flags: no ACL bit, not snapshottable.
    let dirs = n.snapshottable_dirs(&root()).expect("a list");
    assert_eq!(dirs.len(), 1);
    assert_eq!(dirs[0].status.permission, plain.permission & !ACL_BIT);
    assert!(!dirs[0].status.snapshot_enabled);
    let snaps = n.snapshot_listing_of(&root(), "/d").expect("listing");
    assert_eq!(snaps.len(), 1);
    assert_eq!(snaps[0].status.permission & ACL_BIT, 0);
    assert!(!snaps[0].status.snapshot_enabled);
    assert_eq!(snaps[0].status.children_num, 3, "the children now");
}

#[test]
fn a_write_below_dot_snapshot_checks_the_traversal_first() {
    // HDFS's resolvePath checks the search permission of the path before
    // it refuses a write below `.snapshot` (differential api seed 7520).
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d/e");
    allow(&mut n, &mut log, "/d");
    log.push(n.set_permission(&root(), "/d", 0o750).expect("chmod"));
    snap(&mut n, &mut log, "/d", "s1");
    let bob = user("bob", &["users"]);
    let read_only = FsError::SnapshotAccessControl(snapshot::READ_ONLY_SNAPSHOT.into());
    for p in ["/d/.snapshot/s1", "/d/.snapshot/s1/e", "/d/.snapshot/s9/x"] {
        match n.delete(&bob, p, true, NOW) {
            Err(FsError::AccessControl(m)) => assert!(
                m.contains("access=EXECUTE, inode=\"/d\":hdfs:supergroup:drwxr-x---"),
                "{p}: {m}"
            ),
            other => panic!("{p}: {other:?}"),
        }
        assert_eq!(
            n.delete(&root(), p, true, NOW).err(),
            Some(read_only.clone()),
            "{p}"
        );
    }
    // Searchable (as the snapshot kept the directory): refused as read-only.
    log.push(n.set_permission(&root(), "/d", 0o755).expect("chmod"));
    snap(&mut n, &mut log, "/d", "s2");
    for p in ["/d/.snapshot/s2", "/d/.snapshot/s2/e"] {
        assert_eq!(
            n.delete(&bob, p, true, NOW).err(),
            Some(read_only.clone()),
            "{p}"
        );
        let made = n.mkdirs(&bob, &format!("{p}/z"), 0o755, true, NOW);
        assert_eq!(made.err(), Some(read_only.clone()), "{p}");
    }
}

#[test]
fn calls_resolving_without_a_checker_refuse_a_file_parent_as_such() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    file(&mut n, &mut log, "/d/f", 1024, &[1]);
    let pnd = || {
        Err(FsError::ParentNotDirectory(
            "/d/f (is not a directory)".into(),
        ))
    };
    // HDFS's allowSnapshot, disallowSnapshot and getSnapshotListing use
    // getINodesInPath: ParentNotDirectoryException, for every caller.
    assert_eq!(n.allow_snapshot(&root(), "/d/f/x").map(|_| ()), pnd());
    assert_eq!(n.disallow_snapshot(&root(), "/d/f/x").map(|_| ()), pnd());
    assert_eq!(n.snapshot_listing_of(&root(), "/d/f/x").map(|_| ()), pnd());
    let alice = user("alice", &[]);
    assert_eq!(n.snapshot_listing_of(&alice, "/d/f/x").map(|_| ()), pnd());
    assert_eq!(
        n.allow_snapshot(&root(), "/d/none/").map(|_| ()),
        Err(FsError::FileNotFound(
            "Directory does not exist: /d/none/".into()
        ))
    );
    // createSnapshot resolves with a checker: AccessControlException.
    assert_eq!(
        n.create_snapshot(&root(), "/d/f/x", Some("s"), NOW)
            .map(|_| ()),
        Err(FsError::AccessControl("/d/f (is not a directory)".into()))
    );
}

#[test]
fn snapshottable_directories_do_not_move_into_the_root_or_a_snapshot_root() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/q0/q1");
    mkdir(&mut n, &mut log, "/plain");
    mkdir(&mut n, &mut log, "/snap");
    allow(&mut n, &mut log, "/q0/q1");
    allow(&mut n, &mut log, "/snap");
    let refused = |src: &str, dst: &str| {
        Err(FsError::Snapshot(format!(
            "Unable to rename because {src} has snapshottable descendant directories and {dst} is a descent of a snapshottable directory, and HDFS does not support nested snapshottable directory."
        )))
    };
    // HDFS's root always carries the snapshottable feature.
    assert_eq!(
        n.rename2(&root(), "/q0/q1", "/q2", false, NOW).map(|_| ()),
        refused("/q0/q1", "/")
    );
    assert_eq!(
        n.rename2(&root(), "/q0", "/snap/q0", false, NOW)
            .map(|_| ()),
        refused("/q0", "/snap")
    );
    // Anywhere else it may go.
    log.push(
        n.rename2(&root(), "/q0/q1", "/plain/q1", false, NOW)
            .expect("rename")
            .0,
    );
    assert!(n.is_snapshottable(stat(&n, "/plain/q1").id));
}

#[test]
fn content_summaries_count_what_snapshots_keep() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d/sub");
    mkdir(&mut n, &mut log, "/e");
    file(&mut n, &mut log, "/d/f", 1024, &[100]);
    file(&mut n, &mut log, "/d/sub/g", 1024, &[10]);
    file(&mut n, &mut log, "/d/moved", 1024, &[1]);
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    delete(&mut n, &mut log, "/d/f");
    delete(&mut n, &mut log, "/d/sub");
    log.push(
        n.rename2(&root(), "/d/moved", "/e/moved", false, NOW)
            .expect("rename")
            .0,
    );
    // HDFS counts the deleted file and directory (with its file) that s1
    // keeps, in the totals and apart, and the renamed file both where it
    // is and at its old place (as Apache HDFS 3.4.1 answered this same
    // sequence over WebHDFS: fileCount 4, length 112, snapshotFileCount 3,
    // snapshotLength 111; the quota usage of /d 5 names).
    let s = n.content_summary(&root(), "/").expect("summary");
    assert_eq!(
        (s.file_count, s.directory_count, s.length, s.space_consumed),
        (4, 4, 112, 336)
    );
    assert_eq!(
        s.snapshot,
        snapshot::KeptCounts {
            length: 111,
            file_count: 3,
            directory_count: 1,
            space_consumed: 333,
            type_space: Default::default(),
        }
    );
    let d = n.content_summary(&root(), "/d").expect("summary");
    assert_eq!((d.file_count, d.directory_count, d.length), (3, 2, 111));
    let q = n.quota_usage(&root(), "/d").expect("usage");
    assert_eq!((q.usage.namespace, q.usage.storage_space), (5, 333));
    // Through .snapshot, the tree as it was: nothing extra.
    let at = n
        .content_summary(&root(), "/d/.snapshot/s1")
        .expect("summary");
    assert_eq!((at.file_count, at.length), (3, 111));
    assert_eq!(at.snapshot, snapshot::KeptCounts::default());
    // Once the snapshot goes, so do the counts.
    del_snap(&mut n, &mut log, "/d", "s1");
    let s = n.content_summary(&root(), "/").expect("summary");
    assert_eq!((s.file_count, s.length), (1, 1));
}

//! Snapshot calls as HDFS 3.4.1 answers them: the path in their refusals
//! (renameSnapshot and a refused snapshot name as the caller spelt it,
//! trailing and doubled slashes kept; the other refusals resolved), and
//! the root, snapshottable from the start with a snapshot quota of 0.

use super::snapshot_tests::{allow, mkdir, snap};
use super::tests::{ns, root, stat, NOW};
use super::*;

#[test]
fn snapshot_refusals_name_the_path_as_hdfs_does() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/w/a");
    allow(&mut n, &mut log, "/w/a");
    snap(&mut n, &mut log, "/w/a", "s1");
    snap(&mut n, &mut log, "/w/a", "s2");
    let snapshot_error = |m: &str| Some(FsError::Snapshot(m.into()));
    let renamed = n.rename_snapshot(&root(), "/w//a/", "nope", "x", NOW);
    assert_eq!(
        renamed.err(),
        snapshot_error("The snapshot nope does not exist for directory /w//a/")
    );
    let renamed = n.rename_snapshot(&root(), "/w/a//", "s1", "s2", NOW);
    assert_eq!(
        renamed.err(),
        snapshot_error("The snapshot s2 already exists for directory /w/a//")
    );
    let deleted = n.delete_snapshot(&root(), "/w/a/", "nope", NOW);
    assert_eq!(
        deleted.err(),
        snapshot_error("Cannot delete snapshot nope from path /w/a: the snapshot does not exist.")
    );
    let long = "n".repeat(300);
    let in_dir = |r: Result<_, FsError>| match r {
        Err(FsError::PathComponentTooLong(m)) => m.contains("in directory /w/a/ is exceeded"),
        _ => false,
    };
    assert!(in_dir(
        n.create_snapshot(&root(), "/w/a/", Some(&long), NOW)
            .map(|_| ())
    ));
    assert!(in_dir(
        n.rename_snapshot(&root(), "/w/a/", "s1", &long, NOW)
            .map(|_| ())
    ));
    // A rename that goes through is logged under the resolved path.
    let edit = n
        .rename_snapshot(&root(), "/w/a/", "s1", "s3", NOW)
        .expect("renamed")
        .expect("an edit");
    assert!(
        matches!(&edit, Edit::RenameSnapshot { path, .. } if path == "/w/a"),
        "{edit:?}"
    );
}

#[test]
fn the_root_is_snapshottable_with_no_quota_until_allowed() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    let snapshot_error = |m: &str| Some(FsError::Snapshot(m.into()));
    assert!(stat(&n, "/").snapshot_enabled);
    assert_eq!(
        n.snapshottable_dirs(&root()),
        None,
        "listed once allowed only"
    );
    assert_eq!(
        n.create_snapshot(&root(), "/", Some("r1"), NOW).err(),
        snapshot_error(
            "Failed to add snapshot: there are already 0 snapshot(s) and the snapshot quota is 0"
        )
    );
    assert_eq!(
        n.delete_snapshot(&root(), "/", "r1", NOW).err(),
        snapshot_error("Cannot delete snapshot r1 from path /: the snapshot does not exist.")
    );
    assert_eq!(
        n.rename_snapshot(&root(), "/", "r1", "r2", NOW).err(),
        snapshot_error("The snapshot r1 does not exist for directory /")
    );
    // `/.snapshot` reads as an empty snapshot directory; writes are refused.
    let listed = n.get_listing(&root(), "/.snapshot", "", 10).expect("ok");
    assert_eq!(listed.map(|l| l.entries.len()), Some(0));
    let made = n.mkdirs(&root(), "/.snapshot/x", 0o755, true, NOW);
    assert_eq!(
        made.err(),
        Some(FsError::SnapshotAccessControl(
            snapshot::READ_ONLY_SNAPSHOT.into()
        ))
    );
    // A diff of the root itself has it for its snapshot root; one below a
    // plain directory does not (the root is not an ancestor's snapshot
    // root until allowed), nor does the root stop /d being allowed.
    let missing = n.snapshot_diff_report_of(&root(), "/d2", None, None);
    assert_eq!(
        missing.err(),
        Some(FsError::FileNotFound(
            "Directory does not exist: /d2".into()
        ))
    );
    mkdir(&mut n, &mut log, "/d/e");
    let below = n.snapshot_diff_report_of(&root(), "/d/e", None, None);
    assert_eq!(
        below.err(),
        snapshot_error("The path /d/e is neither snapshottable nor under a snapshot root!")
    );
    allow(&mut n, &mut log, "/d");
    log.extend(n.disallow_snapshot(&root(), "/d").expect("disallow"));
    allow(&mut n, &mut log, "/");
    snap(&mut n, &mut log, "/", "r1");
    let r1 = stat(&n, "/.snapshot/r1");
    assert!(
        !r1.snapshot_enabled,
        "a snapshot's root is not snapshottable"
    );
    let nested = n.allow_snapshot(&root(), "/d");
    assert!(matches!(nested, Err(FsError::Snapshot(m)) if m.contains("the ancestor / is already")));
    n.delete_snapshot(&root(), "/", "r1", NOW).expect("delete");
    log.extend(n.disallow_snapshot(&root(), "/").expect("disallow"));
    assert_eq!(n.snapshottable_dirs(&root()), None);
    assert!(stat(&n, "/").snapshot_enabled);
}

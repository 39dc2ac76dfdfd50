//! HDFS's order of checks on a new name (`addLastINode`: `.reserved` at the
//! root, the length, the parent's item limit, `.snapshot`; a rename:
//! `verifyFsLimitsForRename` first, no item limit within one directory; a
//! snapshot name: `.snapshot`, then the length).

use super::snapshot_tests::{allow, snap};
use super::tests::{create_file, root, NOW};
use super::*;

/// A namespace whose directories hold at most two items, with `/full`
/// holding two and `/b` one file.
fn full_dir() -> Namespace {
    let mut n = Namespace::new(
        "hdfs",
        "supergroup",
        NOW,
        Limits {
            max_directory_items: 2,
            ..Limits::default()
        },
    );
    for p in ["/full/x", "/full/y", "/b"] {
        n.mkdirs(&root(), p, 0o755, true, NOW).expect("mkdir");
    }
    create_file(&mut n, &root(), "/b/f").expect("file");
    n
}

#[test]
fn the_item_limit_comes_before_the_snapshot_name() {
    let mut n = full_dir();
    let e = n
        .mkdirs(&root(), "/full/.snapshot", 0o755, false, NOW)
        .expect_err("refused");
    assert!(matches!(e, FsError::MaxDirectoryItems(_)), "{e:?}");
    let e = create_file(&mut n, &root(), "/full/.snapshot").expect_err("refused");
    assert!(matches!(e, FsError::MaxDirectoryItems(_)), "{e:?}");
    // With room, the name itself is refused.
    let e = n
        .mkdirs(&root(), "/b/.snapshot", 0o755, false, NOW)
        .expect_err("refused");
    assert!(matches!(e, FsError::IllegalArgument(_)), "{e:?}");
}

#[test]
fn renames_within_a_full_directory_are_not_limited() {
    let mut n = full_dir();
    let (ok, edit) = n
        .rename(&root(), "/full/x", "/full/z", NOW)
        .expect("rename");
    assert!(ok && edit.is_some());
    n.rename2(&root(), "/full/z", "/full/w", false, NOW)
        .expect("rename2 within the directory");
    // Into it from elsewhere: refused, by rename and rename2, even where
    // the new name replaces one there.
    let e = n
        .rename(&root(), "/b/f", "/full/g", NOW)
        .expect_err("refused");
    assert!(matches!(e, FsError::MaxDirectoryItems(_)), "{e:?}");
    create_file(&mut n, &root(), "/full/y2").expect_err("full");
    n.delete(&root(), "/full/y", true, NOW).expect("delete");
    create_file(&mut n, &root(), "/full/y").expect("file in place of the directory");
    let e = n
        .rename2(&root(), "/b/f", "/full/y", true, NOW)
        .expect_err("refused");
    assert!(matches!(e, FsError::MaxDirectoryItems(_)), "{e:?}");
}

#[test]
fn a_snapshot_may_be_renamed_to_reserved_at_the_root() {
    let mut n = full_dir();
    let mut log = Vec::new();
    allow(&mut n, &mut log, "/");
    snap(&mut n, &mut log, "/", "s1");
    n.rename_snapshot(&root(), "/", "s1", ".reserved", NOW)
        .expect("HDFS's verifySnapshotName has no .reserved check");
    let e = n
        .rename_snapshot(&root(), "/", ".reserved", ".snapshot", NOW)
        .expect_err("refused");
    assert!(matches!(e, FsError::IllegalArgument(_)), "{e:?}");
}

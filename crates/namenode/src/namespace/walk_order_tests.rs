//! Which check refuses first when several would: HDFS walks a path from
//! the root, each ancestor a directory and searchable in turn, and a
//! snapshot diff checks each side where HDFS resolves it.

use super::tests::{ns, root, user, NOW};
use super::*;

/// /d (0300: the superuser's, nobody else may search it) holding the file
/// /d/f.
fn tree() -> Namespace {
    let mut n = ns();
    n.mkdirs(&root(), "/d", 0o755, true, NOW).expect("mkdir");
    n.create(&root(), "/d/f", 0o644, "c", "m", false, true, 1, 1024, NOW)
        .expect("create");
    n.set_permission(&root(), "/d", 0o300).expect("chmod");
    n
}

#[test]
fn a_file_behind_an_unsearchable_directory_is_refused_as_that_search() {
    let mut n = tree();
    let alice = user("alice", &[]);
    let got = n.create(&alice, "/d/f/x", 0o644, "c", "m", false, true, 1, 1024, NOW);
    assert_eq!(
        got.map(|_| ()),
        Err(FsError::AccessControl(
            "Permission denied: user=alice, access=EXECUTE, inode=\"/d\":hdfs:supergroup:d-wx------"
                .into()
        ))
    );
    // The superuser meets the file.
    assert!(matches!(
        n.create(&root(), "/d/f/x", 0o644, "c", "m", false, true, 1, 1024, NOW),
        Err(FsError::ParentNotDirectory(m)) if m == "/d/f (is not a directory)"
    ));
}

#[test]
fn each_side_of_a_diff_is_checked_where_hdfs_resolves_it() {
    let mut n = ns();
    n.mkdirs(&root(), "/s/hidden", 0o755, true, NOW)
        .expect("mkdir");
    n.set_permission(&root(), "/s/hidden", 0o300)
        .expect("chmod");
    n.create(&root(), "/f", 0o644, "c", "m", false, true, 1, 1024, NOW)
        .expect("create");
    let alice = user("alice", &[]);
    let not_under = "The path /s is neither snapshottable nor under a snapshot root!";
    // RPC's empty name is `/s/.snapshot/`: a search of /s only.
    assert_eq!(
        n.snapshot_diff_report(&alice, "/s", "", "").map(|_| ()),
        Err(FsError::Snapshot(not_under.into()))
    );
    // HDFS's null name (WebHDFS) reads /s and all below it.
    assert!(matches!(
        n.snapshot_diff_report_of(&alice, "/s", None, None),
        Err(FsError::AccessControl(m)) if m.contains("access=READ, inode=\"/s/hidden\"")
    ));
    // A file: `/f/.snapshot/` has a file for an ancestor; `/f` does not.
    assert!(matches!(
        n.snapshot_diff_report(&alice, "/f", "", ""),
        Err(FsError::AccessControl(m)) if m == "/f (is not a directory)"
    ));
    // /f's parent, the root, is snapshottable (as HDFS's always is): the
    // scope is then not a directory (HDFS 3.4.1 over WebHDFS).
    assert_eq!(
        n.snapshot_diff_report_of(&alice, "/f", None, None)
            .map(|_| ()),
        Err(FsError::PathIsNotDirectory(
            "`/f': Is not a directory".into()
        ))
    );
}

/// getErasureCodingPolicy reads the path: read access to it first, then
/// whether it exists.
#[test]
fn the_ec_policy_of_a_path_takes_read_access_to_it() {
    let mut n = ns();
    n.mkdirs(&root(), "/e/sub", 0o711, true, NOW)
        .expect("mkdir");
    n.set_permission(&root(), "/e", 0o711).expect("chmod");
    let alice = user("alice", &[]);
    assert!(matches!(
        n.ec_policy_target(&alice, "/e"),
        Err(FsError::AccessControl(m)) if m.contains("access=READ, inode=\"/e\"")
    ));
    assert_eq!(
        n.ec_policy_target(&alice, "/e/none"),
        Err(FsError::FileNotFound("Path not found: /e/none".into()))
    );
    n.ec_policy_target(&root(), "/e")
        .expect("the superuser reads it");
}

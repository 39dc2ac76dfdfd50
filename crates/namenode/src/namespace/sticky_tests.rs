//! The sticky bit below the path a call checks: HDFS's `checkSubAccess`
//! (recursive delete, getQuotaUsage, a snapshot diff of the current tree)
//! holds every sticky directory of the subtree to it, where a content
//! summary's own walk does not.

use super::tests::{ns, root, user, NOW};
use super::*;

/// /w (0777) holding /w/s (0777) holding /w/s/c (sticky, 1777) holding
/// /w/s/c/e; all the superuser's (hdfs).
fn tree() -> Namespace {
    let mut n = ns();
    n.mkdirs(&root(), "/w/s/c/e", 0o777, true, NOW)
        .expect("mkdir");
    for (p, mode) in [("/w", 0o777), ("/w/s", 0o777), ("/w/s/c", 0o1777)] {
        n.set_permission(&root(), p, mode).expect("chmod");
    }
    n
}

#[test]
fn a_recursive_delete_stops_at_a_sticky_directory_below() {
    let mut n = tree();
    let alice = user("alice", &[]);
    // HDFS names the sticky directory's path with the attributes of the
    // directory whose subtree it checks (/w/s: no sticky bit).
    let denied = "Permission denied by sticky bit: user=alice, path=\"/w/s/c/e\":hdfs:supergroup:drwxrwxrwx, parent=\"/w/s/c\":hdfs:supergroup:drwxrwxrwx";
    assert_eq!(
        n.delete(&alice, "/w/s", true, NOW),
        Err(FsError::AccessControl(denied.into()))
    );
    assert!(matches!(
        n.quota_usage(&alice, "/w/s"),
        Err(FsError::AccessControl(m)) if m == denied
    ));
    n.content_summary(&alice, "/w/s").expect("a summary");
    // The child's owner may remove it, and then the tree.
    n.set_owner(&root(), "/w/s/c/e", Some("alice"), None)
        .expect("chown");
    n.delete(&alice, "/w/s", true, NOW)
        .expect("delete")
        .expect("deleted");
}

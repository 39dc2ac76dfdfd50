//! `dfs.permissions.allow.owner.set.quota` (HDFS 3.4's `FSNamesystem
//! .setQuota` and `FSDirAttrOp.setQuota`): off, only the superuser sets
//! quotas; on, the owner of a directory may set them on its
//! subdirectories, after the usual search checks, and nobody else.

use super::tests::{ns, root, user, NOW};
use super::*;

/// /home (root's) holding /home/alice (alice's, 0700) and its /sub.
fn homes() -> Namespace {
    let mut n = ns();
    n.mkdirs(&root(), "/home/alice/sub", 0o755, true, NOW)
        .expect("mkdir");
    n.set_owner(&root(), "/home/alice", Some("alice"), None)
        .expect("chown");
    n.set_permission(&root(), "/home/alice", 0o700)
        .expect("chmod");
    n
}

fn quota(n: &mut Namespace, who: &str, p: &str) -> Result<Option<Edit>, FsError> {
    n.set_quota(&user(who, &[]), p, 10, QUOTA_DONT_SET, None)
}

#[test]
fn only_the_superuser_sets_quotas_by_default() {
    let mut n = homes();
    assert_eq!(
        quota(&mut n, "alice", "/home/alice/sub"),
        Err(FsError::AccessControl(
            "Access denied for user alice. Superuser privilege is required for operation setQuota"
                .into()
        ))
    );
}

#[test]
fn with_the_switch_the_parent_owner_sets_quotas() {
    let mut n = homes();
    n.set_allow_owner_set_quota(true);
    quota(&mut n, "alice", "/home/alice/sub")
        .expect("owner of the parent")
        .expect("an edit");
    assert_eq!(
        n.quota_usage(&root(), "/home/alice/sub")
            .expect("usage")
            .quota
            .namespace,
        10
    );
    let denied = |who: &str| {
        Err(FsError::AccessControl(format!(
            "Access denied for user {who}. Superuser or owner of parent folder privilege is required"
        )))
    };
    // Her own directory's parent is root's; nor is the root anyone's.
    assert_eq!(quota(&mut n, "alice", "/home/alice"), denied("alice"));
    assert_eq!(quota(&mut n, "alice", "/"), denied("alice"));
    // A missing target is looked for only after the owner check.
    assert_eq!(
        quota(&mut n, "alice", "/home/alice/missing"),
        Err(FsError::FileNotFound(
            "Directory does not exist: /home/alice/missing".into()
        ))
    );
    // Another user cannot even search alice's directory.
    let e = quota(&mut n, "bob", "/home/alice/sub");
    assert!(
        matches!(&e, Err(FsError::AccessControl(m))
            if m.starts_with("Permission denied: user=bob, access=EXECUTE, inode=\"/home/alice\"")),
        "{e:?}"
    );
    n.set_permission(&root(), "/home/alice", 0o755)
        .expect("chmod");
    assert_eq!(quota(&mut n, "bob", "/home/alice/sub"), denied("bob"));
}

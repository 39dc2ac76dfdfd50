//! ACLs: HDFS's transformations and messages, the mask and chmod, access
//! checks through named users and groups, default-ACL inheritance with
//! the client's modes, and that the journal and an image rebuild them.

use super::permission::{Access, Caller};
use super::tests::{imaged, ns, replayed, root, stat, user, NOW};
use super::*;

/// Parses `[default:]type:[name]:perm` entries, comma separated (a
/// test-only cousin of Java's `AclEntry.parseAclSpec`).
fn spec(text: &str) -> Vec<AclEntry> {
    text.split(',')
        .map(|e| {
            let (scope, rest) = match e.strip_prefix("default:") {
                Some(rest) => (AclScope::Default, rest),
                None => (AclScope::Access, e),
            };
            let parts: Vec<&str> = rest.split(':').collect();
            let kind = match parts[0] {
                "user" => AclEntryType::User,
                "group" => AclEntryType::Group,
                "mask" => AclEntryType::Mask,
                _ => AclEntryType::Other,
            };
            let name = Some(parts[1]).filter(|n| !n.is_empty());
            let perm = parts.get(2).map_or(0, |p| {
                p.chars().fold(0, |acc, c| {
                    acc | match c {
                        'r' => 4,
                        'w' => 2,
                        'x' => 1,
                        _ => 0,
                    }
                })
            });
            AclEntry::new(scope, kind, name, perm)
        })
        .collect()
}

fn text(entries: &[AclEntry]) -> String {
    entries
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

fn status(n: &Namespace, p: &str) -> AclStatus {
    n.get_acl_status(&root(), p).expect("status")
}

/// /d (0755, hdfs) holding /d/f (0640, hdfs).
fn tree() -> (Namespace, Vec<Edit>) {
    let mut n = ns();
    let mut log = n.mkdirs(&root(), "/d", 0o755, false, NOW).expect("mkdir");
    log.extend(touch(&mut n, "/d/f", 0o640));
    (n, log)
}

/// Creates an empty file as the superuser; returns its edits.
fn touch(n: &mut Namespace, p: &str, modes: impl Into<CreateModes>) -> Vec<Edit> {
    let (_, edits, _) = n
        .create(&root(), p, modes, "c", "m", false, false, 1, 1 << 20, NOW)
        .expect("create");
    edits
}

fn change(n: &mut Namespace, p: &str, how: AclChange, s: &str) -> Result<Edit, FsError> {
    let entries = if s.is_empty() { Vec::new() } else { spec(s) };
    n.change_acl(&root(), p, how, &entries)
}

#[test]
fn modify_adds_named_entries_and_a_mask() {
    let (mut n, _) = tree();
    change(&mut n, "/d/f", AclChange::Modify, "user:bob:rwx").expect("modify");
    let st = status(&n, "/d/f");
    assert_eq!(text(&st.entries), "user:bob:rwx,group::r--");
    // The mask (union of the group class) sits in the group bits.
    assert_eq!(st.permission, Some(0o670));
    assert_eq!(stat(&n, "/d/f").permission, 0o670 | ACL_BIT);
    // chmod changes the mask, and the group entry stays.
    n.set_permission(&root(), "/d/f", 0o640).expect("chmod");
    assert_eq!(text(&status(&n, "/d/f").entries), "user:bob:rwx,group::r--");
    // A given mask is kept; a later change recalculates it.
    change(&mut n, "/d/f", AclChange::Modify, "mask::r--").expect("mask");
    assert_eq!(status(&n, "/d/f").permission, Some(0o640));
    change(&mut n, "/d/f", AclChange::Modify, "group:staff:r-x").expect("group");
    assert_eq!(status(&n, "/d/f").permission, Some(0o670));
}

#[test]
fn remove_entries_default_and_all() {
    let (mut n, _) = tree();
    change(
        &mut n,
        "/d",
        AclChange::Modify,
        "user:bob:r-x,default:user:carol:rwx,default:group:staff:r--",
    )
    .expect("modify");
    assert_eq!(
        text(&status(&n, "/d").entries),
        "user:bob:r-x,group::r-x,default:user::rwx,default:user:carol:rwx,\
         default:group::r-x,default:group:staff:r--,default:mask::rwx,default:other::r-x"
    );
    change(&mut n, "/d", AclChange::RemoveEntries, "default:user:carol").expect("rm");
    assert_eq!(
        text(&status(&n, "/d").entries),
        "user:bob:r-x,group::r-x,default:user::rwx,default:group::r-x,\
         default:group:staff:r--,default:mask::r-x,default:other::r-x"
    );
    change(&mut n, "/d", AclChange::RemoveDefault, "").expect("-k");
    assert_eq!(text(&status(&n, "/d").entries), "user:bob:r-x,group::r-x");
    // Removing the mask a named entry needs is refused.
    let e = change(&mut n, "/d", AclChange::RemoveEntries, "mask::").expect_err("mask");
    assert_eq!(
        e,
        FsError::Acl("Invalid ACL: mask is required and cannot be deleted. Path: /d".into())
    );
    // chmod g-x restricts the mask; removeAcl gives the group bits back.
    n.set_permission(&root(), "/d", 0o745).expect("chmod");
    n.remove_acl(&root(), "/d").expect("-b");
    let st = status(&n, "/d");
    assert!(st.entries.is_empty());
    assert_eq!(st.permission, Some(0o755));
    assert!(!n.has_acl(stat(&n, "/d").id));
}

#[test]
fn set_replaces_the_scopes_it_names() {
    let (mut n, _) = tree();
    change(&mut n, "/d", AclChange::Modify, "default:user:bob:rwx").expect("default");
    change(
        &mut n,
        "/d",
        AclChange::Set,
        "user::rwx,user:carol:r--,group::---,other::---",
    )
    .expect("set");
    assert_eq!(
        text(&status(&n, "/d").entries),
        "user:carol:r--,group::---,default:user::rwx,default:user:bob:rwx,\
         default:group::r-x,default:mask::rwx,default:other::r-x"
    );
    assert_eq!(status(&n, "/d").permission, Some(0o740));
    // A minimal set drops the stored entries of the access scope.
    change(
        &mut n,
        "/d/f",
        AclChange::Set,
        "user::rw-,group::r--,other::r--",
    )
    .expect("min");
    assert!(!n.has_acl(stat(&n, "/d/f").id));
    assert_eq!(stat(&n, "/d/f").permission, 0o644);
}

#[test]
fn invalid_acls_get_hdfs_messages() {
    let (mut n, _) = tree();
    let cases = [
        (
            AclChange::Set,
            "user::rwx,group::r--",
            "Invalid ACL: the user, group and other entries are required.",
        ),
        (
            AclChange::Modify,
            "mask:m:rwx",
            "Invalid ACL: this entry type must not have a name: mask:m:rwx.",
        ),
        (
            AclChange::Set,
            "user::rwx,group::r--,other::---,user:bob:r--,user:bob:rw-",
            "Invalid ACL: multiple entries with same scope, type and name.",
        ),
    ];
    for (how, s, message) in cases {
        let e = change(&mut n, "/d", how, s).expect_err(s);
        assert_eq!(e, FsError::Acl(format!("{message} Path: /d")), "{s}");
    }
    let e = change(&mut n, "/d/f", AclChange::Modify, "default:user:bob:rwx").expect_err("file");
    assert_eq!(
        e,
        FsError::Acl(
            "Invalid ACL: only directories may have a default ACL. Path: /d/f Path: /d/f".into()
        )
    );
    let many: Vec<String> = (0..31).map(|i| format!("user:u{i}:r--")).collect();
    let e = change(&mut n, "/d", AclChange::Modify, &many.join(",")).expect_err("33");
    assert_eq!(
        e,
        FsError::Acl(
            "Invalid ACL: ACL has 35 access entries, which exceeds maximum of 32. Path: /d".into()
        )
    );
    let many: Vec<String> = (0..33).map(|i| format!("user:u{i}:r--")).collect();
    let e = change(&mut n, "/d", AclChange::Modify, &many.join(",")).expect_err("spec");
    assert_eq!(
        e,
        FsError::Acl(
            "Invalid ACL: ACL has 33 access entries, which exceeds maximum of 32. Path: /d".into()
        )
    );
    let e = change(&mut n, "/d/nope", AclChange::Modify, "user:bob:r--").expect_err("missing");
    assert_eq!(
        e,
        FsError::FileNotFound("Directory/File does not exist /d/nope".into())
    );
    let e = n.get_acl_status(&root(), "/d/nope").expect_err("missing");
    assert_eq!(e, FsError::FileNotFound("cannot find /d/nope".into()));
}

#[test]
fn only_the_owner_changes_an_acl_and_acls_can_be_turned_off() {
    let (mut n, _) = tree();
    let bob = user("bob", &[]);
    let e = n
        .change_acl(&bob, "/d/f", AclChange::Modify, &spec("user:bob:rwx"))
        .expect_err("not owner");
    assert_eq!(
        e,
        FsError::AccessControl("Permission denied. user=bob is not the owner of inode=/d/f".into())
    );
    assert!(n.get_acl_status(&bob, "/d/f").is_ok(), "anyone may read it");
    n.set_acls_enabled(false);
    let e = n.get_acl_status(&root(), "/d").expect_err("off");
    assert_eq!(
        e,
        FsError::Acl(
            "The ACL operation has been rejected.  Support for ACLs has been disabled by \
             setting dfs.namenode.acls.enabled to false."
                .into()
        )
    );
}

fn can(n: &Namespace, who: &Caller, p: &str, access: Access) -> bool {
    let res = n.resolve(p).expect("path");
    let id = res.last().expect("exists");
    n.grants(who, id, n.node(id), access)
}

#[test]
fn access_checks_follow_owner_named_users_groups_mask_other() {
    let (mut n, _) = tree();
    // /d/f: owner rw-, bob rwx, group r--, staff rw-, eng ---, other ---.
    change(
        &mut n,
        "/d/f",
        AclChange::Set,
        "user::rw-,user:bob:rwx,group::r--,group:staff:rw-,group:eng:---,other::---",
    )
    .expect("set");
    let bob = user("bob", &["eng"]);
    let carol = user("carol", &["staff"]);
    let dave = user("dave", &["eng", "staff"]);
    let erin = user("erin", &["supergroup"]);
    let frank = user("frank", &[]);
    assert!(can(&n, &bob, "/d/f", Access::WRITE), "named user");
    assert!(can(&n, &carol, "/d/f", Access::WRITE), "named group");
    assert!(can(&n, &dave, "/d/f", Access::WRITE), "any group granting");
    assert!(can(&n, &erin, "/d/f", Access::READ), "owning group");
    assert!(!can(&n, &erin, "/d/f", Access::WRITE));
    assert!(!can(&n, &frank, "/d/f", Access::READ), "other");
    // The mask limits named users and groups, not the owner.
    n.set_permission(&root(), "/d/f", 0o640).expect("chmod");
    assert!(!can(&n, &bob, "/d/f", Access::WRITE));
    assert!(can(&n, &bob, "/d/f", Access::READ));
    assert!(!can(&n, &carol, "/d/f", Access::WRITE));
    assert!(can(&n, &root(), "/d/f", Access::WRITE));
    // A named user entry that denies wins over other: no fallback.
    change(
        &mut n,
        "/d/f",
        AclChange::Modify,
        "user:frank:---,other::r--",
    )
    .expect("deny");
    assert!(!can(&n, &frank, "/d/f", Access::READ));
    assert!(can(&n, &user("gina", &[]), "/d/f", Access::READ));
    // Through the namespace's own check: a read of the file.
    let e = n.open_for_read(&frank, "/d/f").expect_err("denied");
    assert_eq!(
        e,
        FsError::AccessControl(
            "Permission denied: user=frank, access=READ, inode=\"/d/f\":hdfs:supergroup:-rw-rwxr--"
                .into()
        )
    );
}

/// Gives /d a default ACL (bob rwx, group r-x, other none), then makes
/// /d/sub/deeper (0755, 0777 before the umask) and the file /d/g (0644,
/// 0666); returns the ACL status of /d/sub and of /d/g.
fn children_under_a_default_acl(n: &mut Namespace) -> (AclStatus, AclStatus) {
    change(
        n,
        "/d",
        AclChange::Modify,
        "default:user:bob:rwx,default:group::r-x,default:other::---",
    )
    .expect("default");
    let modes = CreateModes {
        masked: 0o755,
        unmasked: Some(0o777),
    };
    n.mkdirs(&root(), "/d/sub/deeper", modes, true, NOW)
        .expect("mkdir -p");
    let file_modes = CreateModes {
        masked: 0o644,
        unmasked: Some(0o666),
    };
    touch(n, "/d/g", file_modes);
    (status(n, "/d/sub"), status(n, "/d/g"))
}

/// The ACL entries a child directory of [`children_under_a_default_acl`]
/// inherits.
const INHERITED_DIR_ACL: &str = "user:bob:rwx,group::r-x,default:user::rwx,default:user:bob:rwx,\
     default:group::r-x,default:mask::rwx,default:other::---";

#[test]
fn new_children_inherit_the_default_acl_with_the_unmasked_mode() {
    let (mut n, _) = tree();
    let (sub, g) = children_under_a_default_acl(&mut n);
    assert_eq!(text(&sub.entries), INHERITED_DIR_ACL);
    assert_eq!(sub.permission, Some(0o770));
    assert_eq!(status(&n, "/d/sub/deeper"), AclStatus { ..sub.clone() });
    // A file gets the default ACL as its access ACL only.
    assert_eq!(text(&g.entries), "user:bob:rwx,group::r-x");
    assert_eq!(g.permission, Some(0o660));
    let modes = CreateModes {
        masked: 0o755,
        unmasked: Some(0o777),
    };
    // Without the unmasked mode, the masked one filters.
    touch(&mut n, "/d/h", 0o640);
    assert_eq!(status(&n, "/d/h").permission, Some(0o640));
    // A parent without a default ACL: the umask applies as always.
    n.mkdirs(&root(), "/e", modes, false, NOW).expect("mkdir");
    assert_eq!(stat(&n, "/e").permission, 0o755);
}

#[test]
fn a_minimal_default_acl_filters_the_group_and_leaves_files_plain() {
    let (mut n, _) = tree();
    change(
        &mut n,
        "/d",
        AclChange::Modify,
        "default:user::rwx,default:group::rwx,default:other::r--",
    )
    .expect("default");
    let modes = CreateModes {
        masked: 0o644,
        unmasked: Some(0o640),
    };
    touch(&mut n, "/d/g", modes);
    let id = stat(&n, "/d/g").id;
    assert!(!n.has_acl(id), "a minimal inherited ACL is just bits");
    assert_eq!(stat(&n, "/d/g").permission, 0o640);
}

#[test]
fn journal_and_image_rebuild_acls_and_deletes_drop_them() {
    let (mut n, mut log) = tree();
    log.push(
        change(
            &mut n,
            "/d",
            AclChange::Modify,
            "user:bob:r-x,default:group:staff:rwx",
        )
        .expect("modify"),
    );
    let modes = CreateModes {
        masked: 0o755,
        unmasked: Some(0o777),
    };
    log.extend(
        n.mkdirs(&root(), "/d/sub", modes, false, NOW)
            .expect("mkdir"),
    );
    log.push(change(&mut n, "/d/f", AclChange::Modify, "group:eng:rw-").expect("file"));
    log.push(n.set_permission(&root(), "/d/f", 0o600).expect("chmod"));
    log.push(change(&mut n, "/", AclChange::Modify, "user:bob:rwx").expect("root"));
    let (_, rename) = n.rename(&root(), "/d/f", "/d/sub/f", NOW).expect("rename");
    log.extend(rename);
    for copy in [replayed(&log), replayed(&n.to_edits()), imaged(&n)] {
        for p in ["/", "/d", "/d/sub", "/d/sub/f"] {
            assert_eq!(status(&copy, p), status(&n, p), "{p}");
            assert_eq!(stat(&copy, p).permission, stat(&n, p).permission, "{p}");
        }
    }
    n.delete(&root(), "/d", true, NOW).expect("delete");
    assert_eq!(n.acls.len(), 1, "only the root's ACL is left");
}

#[test]
fn without_posix_inheritance_the_umask_filters_the_default_acl() {
    // Goal: dfs.namenode.posix.acl.inheritance.enabled=false is HDFS
    // before HDFS-6962: the masked mode filters what a new child inherits
    // even when the client sent its unmasked mode (on: 0770 and 0660).
    let (mut n, _) = tree();
    n.set_posix_acl_inheritance(false);
    let (sub, g) = children_under_a_default_acl(&mut n);
    assert_eq!(text(&sub.entries), INHERITED_DIR_ACL);
    assert_eq!(sub.permission, Some(0o750));
    assert_eq!(text(&g.entries), "user:bob:rwx,group::r-x");
    assert_eq!(g.permission, Some(0o640));
}

//! Attributes below `.snapshot`: extended attributes, ACLs, permission and
//! owner as a snapshot saw them after the live inode changed (HDFS keeps a
//! copy in the snapshot diff), for files, directories, the snapshot root
//! and deleted files; the reads HDFS allows there (getXAttrs, listXAttrs,
//! getAclStatus, checkAccess, getStoragePolicy, getQuotaUsage) with its
//! errors; diff reports of renames inside renamed directories as HDFS
//! 3.4.1 printed them; and that journal replay and an image rebuild the
//! same answers.

use super::acl::{AclEntry, AclEntryType, AclScope};
use super::snapshot_tests::{allow, assert_rebuilds, del_snap, mkdir, rebuilt, snap};
use super::tests::{ns, root, user, NOW};
use super::truncate_concat_tests::file;
use super::xattrs_tests::{CREATE, REPLACE};
use super::*;

fn ux(name: &str, value: &[u8]) -> XAttr {
    XAttr {
        namespace: XAttrNamespace::User,
        name: name.into(),
        value: Some(value.to_vec()),
    }
}

fn named_user(name: &str, perm: u16) -> AclEntry {
    AclEntry::new(AclScope::Access, AclEntryType::User, Some(name), perm)
}

fn set_x(n: &mut Namespace, log: &mut Vec<Edit>, p: &str, x: XAttr, flags: XAttrSetFlags) {
    log.push(n.set_xattr(&root(), p, x, flags).expect("setXAttr"));
}

fn modify_acl(n: &mut Namespace, log: &mut Vec<Edit>, p: &str, spec: &[AclEntry]) {
    log.push(
        n.change_acl(&root(), p, AclChange::Modify, spec)
            .expect("modifyAclEntries"),
    );
}

fn xattr_text(n: &Namespace, p: &str) -> String {
    match n.get_xattrs(&root(), p, &[]) {
        Ok(list) => list
            .iter()
            .map(|x| {
                let v = String::from_utf8_lossy(x.value.as_deref().unwrap_or_default());
                format!("{}={v}", x.prefixed_name())
            })
            .collect::<Vec<_>>()
            .join(","),
        Err(e) => format!("error {e}"),
    }
}

fn acl_text(n: &Namespace, p: &str) -> String {
    match n.get_acl_status(&root(), p) {
        Ok(s) => {
            let entries: Vec<String> = s.entries.iter().map(ToString::to_string).collect();
            let perm = s.permission.map_or("none".into(), |p| format!("{p:o}"));
            format!("{}:{} {perm} [{}]", s.owner, s.group, entries.join(","))
        }
        Err(e) => format!("error {e}"),
    }
}

fn stat_text(n: &Namespace, p: &str) -> String {
    match n.get_file_info(&root(), p) {
        Ok(Some(s)) => format!("{}:{} {:o}", s.owner, s.group, s.permission),
        Ok(None) => "missing".into(),
        Err(e) => format!("error {e}"),
    }
}

/// /d snapshottable; /d/f (user.a=1, user:bob:r-x, 0640) and /d/gone (with
/// an attribute and an ACL) in snapshot s1 of /d, which itself has
/// user.root=r and an ACL then; afterwards all of them change, /d/gone is
/// deleted and /d/new is created.
fn changed_after_snapshot() -> (Namespace, Vec<Edit>) {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    allow(&mut n, &mut log, "/d");
    file(&mut n, &mut log, "/d/f", 1024, &[10]);
    file(&mut n, &mut log, "/d/gone", 1024, &[5]);
    log.push(n.set_permission(&root(), "/d/f", 0o640).expect("chmod"));
    set_x(&mut n, &mut log, "/d/f", ux("a", b"1"), CREATE);
    modify_acl(&mut n, &mut log, "/d/f", &[named_user("bob", 5)]);
    set_x(&mut n, &mut log, "/d/gone", ux("g", b"kept"), CREATE);
    modify_acl(&mut n, &mut log, "/d/gone", &[named_user("carol", 4)]);
    set_x(&mut n, &mut log, "/d", ux("root", b"r"), CREATE);
    modify_acl(&mut n, &mut log, "/d", &[named_user("bob", 7)]);
    snap(&mut n, &mut log, "/d", "s1");

    set_x(&mut n, &mut log, "/d/f", ux("a", b"2"), REPLACE);
    set_x(&mut n, &mut log, "/d/f", ux("b", b"3"), CREATE);
    modify_acl(&mut n, &mut log, "/d/f", &[named_user("bob", 0)]);
    log.push(n.set_permission(&root(), "/d/f", 0o600).expect("chmod"));
    log.push(
        n.set_owner(&root(), "/d/f", Some("alice"), Some("staff"))
            .expect("chown"),
    );
    log.push(
        n.remove_xattr(&root(), "/d", &ux("root", b""))
            .expect("removeXAttr"),
    );
    log.push(n.remove_acl(&root(), "/d").expect("removeAcl"));
    let (e, _) = n
        .delete(&root(), "/d/gone", false, NOW + 30)
        .expect("delete")
        .expect("existed");
    log.push(e);
    file(&mut n, &mut log, "/d/new", 1024, &[1]);
    set_x(&mut n, &mut log, "/d/new", ux("n", b"new"), CREATE);
    (n, log)
}

/// What every attribute read says about the paths of the scenario.
fn answers(n: &Namespace) -> Vec<String> {
    let paths = [
        "/d",
        "/d/f",
        "/d/new",
        "/d/.snapshot",
        "/d/.snapshot/s1",
        "/d/.snapshot/s1/f",
        "/d/.snapshot/s1/gone",
        "/d/.snapshot/s1/new",
    ];
    let mut out = Vec::new();
    for p in paths {
        out.push(format!(
            "{p}: stat {} | xattrs {} | acl {}",
            stat_text(n, p),
            xattr_text(n, p),
            acl_text(n, p)
        ));
    }
    out
}

#[test]
fn snapshot_paths_show_attributes_as_they_were() {
    let (n, log) = changed_after_snapshot();
    let got = answers(&n);
    let expected = [
        "/d: stat hdfs:supergroup 755 | xattrs  | acl hdfs:supergroup 755 []",
        "/d/f: stat alice:staff 10600 | xattrs user.b=3,user.a=2 | acl alice:staff 600 [user:bob:---,group::r--]",
        "/d/new: stat hdfs:supergroup 644 | xattrs user.n=new | acl hdfs:supergroup 644 []",
        // The `.snapshot` directory has no inode: HDFS's empty ACL status,
        // without a permission.
        "/d/.snapshot: stat : 777 | xattrs error cannot find /d/.snapshot | acl : none []",
        // The snapshot root is the directory as it was, ACL and xattrs included.
        "/d/.snapshot/s1: stat hdfs:supergroup 10775 | xattrs user.root=r | acl hdfs:supergroup 775 [user:bob:rwx,group::r-x]",
        // Old permission, owner, ACL bit and xattrs; getAclStatus's owner
        // and group are the inode's current ones, as HDFS reads them.
        "/d/.snapshot/s1/f: stat hdfs:supergroup 10650 | xattrs user.a=1 | acl alice:staff 650 [user:bob:r-x,group::r--]",
        // Deleted after the snapshot: its ACL and xattrs are kept with it.
        "/d/.snapshot/s1/gone: stat hdfs:supergroup 10644 | xattrs user.g=kept | acl hdfs:supergroup 644 [user:carol:r--,group::r--]",
        "/d/.snapshot/s1/new: stat missing | xattrs error cannot find /d/.snapshot/s1/new | acl error cannot find /d/.snapshot/s1/new",
    ];
    assert_eq!(got, expected);
    assert_rebuilds(&n, &log);
    let (replayed, imaged) = rebuilt(&n, &log);
    assert_eq!(answers(&replayed), got, "journal replay");
    assert_eq!(answers(&imaged), got, "image");
}

#[test]
fn snapshot_reads_check_access_against_the_kept_attributes() {
    let (mut n, _) = changed_after_snapshot();
    let bob = user("bob", &["users"]);
    // bob could read /d/f through its ACL when s1 was taken, not now.
    assert!(n.check_access(&bob, "/d/.snapshot/s1/f", 4).is_ok());
    assert!(n.check_access(&bob, "/d/f", 4).is_err());
    assert_eq!(
        n.get_xattrs(&bob, "/d/.snapshot/s1/f", &[])
            .expect("bob reads the snapshot"),
        vec![ux("a", b"1")]
    );
    let err = n
        .get_xattrs(&bob, "/d/f", &[])
        .expect_err("bob may not read it now");
    assert!(matches!(err, FsError::AccessControl(_)), "{err:?}");
    assert_eq!(
        n.list_xattrs(&bob, "/d/.snapshot/s1/f").expect("list"),
        vec![XAttr {
            value: None,
            ..ux("a", b"")
        }]
    );
    // A snapshot path that does not exist: HDFS's messages per call.
    let missing = "/d/.snapshot/s1/nope";
    assert_eq!(
        n.check_access(&root(), missing, 4).expect_err("missing"),
        FsError::FileNotFound(format!("Path not found: {missing}"))
    );
    assert_eq!(
        n.get_storage_policy(&root(), missing).expect_err("missing"),
        FsError::FileNotFound(format!("File/Directory does not exist: {missing}"))
    );
    assert_eq!(
        n.quota_usage(&root(), missing).expect_err("missing"),
        FsError::FileNotFound(format!("File/Directory does not exist: {missing}"))
    );
    // The policy below `.snapshot` is the inode's, inherited as now.
    n.set_storage_policy(&root(), "/d", "COLD")
        .expect("set policy");
    let policy = n
        .get_storage_policy(&root(), "/d/.snapshot/s1/f")
        .expect("policy");
    assert_eq!(policy.name, "COLD");
    // Quota usage of a snapshot directory: counted as the snapshot saw it.
    let usage = n
        .quota_usage(&root(), "/d/.snapshot/s1")
        .expect("quota usage");
    assert_eq!(usage.usage.namespace, 3, "the root, f and gone");
    assert_eq!(usage.quota, quota::QuotaCounts::NONE);
    // Writes stay refused.
    let err = n
        .set_xattr(&root(), "/d/.snapshot/s1/f", ux("c", b"4"), CREATE)
        .expect_err("read only");
    assert!(matches!(err, FsError::SnapshotAccessControl(_)), "{err:?}");
    let err = n
        .change_acl(
            &root(),
            "/d/.snapshot/s1/f",
            AclChange::Modify,
            &[named_user("x", 1)],
        )
        .expect_err("read only");
    assert!(matches!(err, FsError::SnapshotAccessControl(_)), "{err:?}");
}

#[test]
fn attribute_copies_follow_snapshot_deletion() {
    let (mut n, mut log) = changed_after_snapshot();
    let before = n.snapshot_footprint();
    n.create_snapshot(&root(), "/d", Some("s2"), NOW + 50)
        .map(|(_, e)| log.push(e))
        .expect("s2");
    // A change after s2 records one more copy; s1 still sees its own.
    set_x(&mut n, &mut log, "/d/f", ux("a", b"9"), REPLACE);
    assert_eq!(xattr_text(&n, "/d/.snapshot/s1/f"), "user.a=1");
    assert_eq!(xattr_text(&n, "/d/.snapshot/s2/f"), "user.b=3,user.a=2");
    assert!(n.snapshot_footprint() > before);
    log.push(
        n.delete_snapshot(&root(), "/d", "s1", NOW + 60)
            .expect("delete s1"),
    );
    assert_eq!(xattr_text(&n, "/d/.snapshot/s2/f"), "user.b=3,user.a=2");
    assert!(
        xattr_text(&n, "/d/.snapshot/s1/gone").starts_with("error"),
        "s1 is gone"
    );
    assert_rebuilds(&n, &log);
    log.push(
        n.delete_snapshot(&root(), "/d", "s2", NOW + 70)
            .expect("delete s2"),
    );
    assert_eq!(n.snapshot_footprint(), 0, "nothing kept without snapshots");
    assert_rebuilds(&n, &log);
}

fn report_lines(n: &Namespace, from: &str, to: &str) -> Vec<String> {
    n.snapshot_diff_report(&root(), "/d", from, to)
        .expect("report")
        .entries
        .iter()
        .map(|e| match &e.target {
            Some(t) => format!("{} {} -> {t}", e.kind.label(), e.path),
            None => format!("{} {}", e.kind.label(), e.path),
        })
        .collect()
}

#[test]
fn diff_report_follows_renames_inside_renamed_directories() {
    // The scenario of tests/java/scripts/admin/snapshots.txt, with what
    // Apache HDFS 3.4.1 reported for it.
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d/dir/inner");
    mkdir(&mut n, &mut log, "/d/moved");
    file(&mut n, &mut log, "/d/dir/inner/h", 1024, &[5]);
    file(&mut n, &mut log, "/d/dir/m", 1024, &[3]);
    file(&mut n, &mut log, "/d/f", 1024, &[4]);
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    set_x(&mut n, &mut log, "/d/f", ux("a", b"1"), CREATE);
    for (src, dst) in [("/d/dir/inner", "/d/dir/inner2"), ("/d/dir", "/d/dir2")] {
        log.push(n.rename2(&root(), src, dst, false, NOW).expect("rename").0);
    }
    super::snapshot_tests::append(&mut n, &mut log, "/d/dir2/m", 4);
    file(&mut n, &mut log, "/d/tmp", 1024, &[0]);
    for (src, dst) in [
        ("/d/tmp", "/d/moved/tmp2"),
        ("/d/dir2/inner2/h", "/d/moved/h2"),
    ] {
        log.push(n.rename2(&root(), src, dst, false, NOW).expect("rename").0);
    }
    snap(&mut n, &mut log, "/d", "s2");
    // getSnapshotDiffReport's order: by depth, then path.
    let forward = [
        "M ",
        "R dir -> dir2",
        "M dir",
        "R dir/inner -> dir2/inner2",
        "M f",
        "M moved",
        "+ moved/tmp2",
        "M dir/inner",
        "R dir/inner/h -> moved/h2",
        "M dir/m",
    ];
    assert_eq!(report_lines(&n, "s1", "s2"), forward);
    assert_eq!(report_lines(&n, "s1", ""), forward, "to the current tree");
    let back = report_lines(&n, "s2", "s1");
    assert!(
        back.contains(&"R moved/h2 -> dir/inner/h".to_string()),
        "{back:?}"
    );
    assert!(back.contains(&"- moved/tmp2".to_string()), "{back:?}");
    // The listing walks the earlier tree depth first, by name.
    let listing = n
        .snapshot_diff_report(&root(), "/d", "s1", "s2")
        .expect("report")
        .listing;
    let modified: Vec<&str> = listing.modified.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(modified, ["", "dir", "dir/inner", "dir/m", "f", "moved"]);
    let renamed: Vec<(&str, Option<&str>)> = listing
        .deleted
        .iter()
        .map(|e| (e.path.as_str(), e.target.as_deref()))
        .collect();
    assert_eq!(
        renamed,
        [
            ("dir", Some("dir2")),
            ("dir/inner", Some("dir2/inner2")),
            ("dir/inner/h", Some("moved/h2")),
        ]
    );
    assert_rebuilds(&n, &log);
}

/// getQuotaUsage and getContentSummary of /d's snapshot roots: what each
/// answers (limits, then usage: names and bytes).
fn root_quota_answers(n: &Namespace) -> Vec<String> {
    let mut out = Vec::new();
    for s in ["s0", "s1", "s2"] {
        let p = format!("/d/.snapshot/{s}");
        let u = n.quota_usage(&root(), &p).expect("getQuotaUsage");
        let cs = n.content_summary(&root(), &p).expect("getContentSummary");
        out.push(format!(
            "{s}: quota {}/{} used {}/{} | summary quota {}/{} files {} dirs {}",
            u.quota.namespace,
            u.quota.storage_space,
            u.usage.namespace,
            u.usage.storage_space,
            cs.quota.quota.namespace,
            cs.quota.quota.storage_space,
            cs.file_count,
            cs.directory_count,
        ));
    }
    out
}

#[test]
fn snapshot_roots_keep_the_quota_their_directory_had() {
    // HDFS's snapshot root copies the directory's quota feature (limits
    // only: its usage starts as an empty directory's, one name, no bytes);
    // without a quota then, the usage is counted as the snapshot saw it.
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    allow(&mut n, &mut log, "/d");
    file(&mut n, &mut log, "/d/f", 1024, &[10]);
    snap(&mut n, &mut log, "/d", "s0");
    let quota = |n: &mut Namespace, log: &mut Vec<Edit>, ns_quota, ss_quota| {
        let e = n.set_quota(&root(), "/d", ns_quota, ss_quota, None);
        log.extend(e.expect("setQuota"));
    };
    quota(&mut n, &mut log, 10, 1 << 20);
    snap(&mut n, &mut log, "/d", "s1");
    quota(&mut n, &mut log, 20, -1);
    snap(&mut n, &mut log, "/d", "s2");
    quota(&mut n, &mut log, -1, -1);
    let expected = [
        "s0: quota -1/-1 used 2/30 | summary quota -1/-1 files 1 dirs 1",
        "s1: quota 10/1048576 used 1/0 | summary quota 10/1048576 files 1 dirs 1",
        "s2: quota 20/-1 used 1/0 | summary quota 20/-1 files 1 dirs 1",
    ];
    assert_eq!(root_quota_answers(&n), expected);
    let now = n.quota_usage(&root(), "/d").expect("live");
    assert_eq!(
        now.quota,
        quota::QuotaCounts::NONE,
        "the live quota is gone"
    );
    assert_rebuilds(&n, &log);
    let (replayed, imaged) = rebuilt(&n, &log);
    assert_eq!(root_quota_answers(&replayed), expected, "journal replay");
    assert_eq!(root_quota_answers(&imaged), expected, "image");
}

#[test]
fn deleted_files_keep_their_storage_policy_in_snapshots() {
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d/sub");
    allow(&mut n, &mut log, "/d");
    file(&mut n, &mut log, "/d/f", 1024, &[10]);
    file(&mut n, &mut log, "/d/sub/g", 1024, &[10]);
    for (p, policy) in [("/d/f", "COLD"), ("/d/sub", "ALL_SSD")] {
        log.push(n.set_storage_policy(&root(), p, policy).expect("policy"));
    }
    snap(&mut n, &mut log, "/d", "s1");
    for p in ["/d/f", "/d/sub"] {
        log.push(
            n.delete(&root(), p, true, NOW + 30)
                .expect("rm")
                .expect("existed")
                .0,
        );
    }
    let policies = |n: &Namespace| -> Vec<String> {
        [
            "/d/.snapshot/s1/f",
            "/d/.snapshot/s1/sub",
            "/d/.snapshot/s1/sub/g",
        ]
        .iter()
        .map(|p| {
            let got = n.get_storage_policy(&root(), p).expect("getStoragePolicy");
            let st = n.get_file_info(&root(), p).expect("stat").expect("exists");
            format!("{p} {} {}", got.name, st.storage_policy)
        })
        .collect()
    };
    // HDFS reads the policy from the deleted inode the snapshot holds; a
    // deleted directory's children inherit it as before.
    let expected = [
        "/d/.snapshot/s1/f COLD 2",
        "/d/.snapshot/s1/sub ALL_SSD 12",
        "/d/.snapshot/s1/sub/g ALL_SSD 12",
    ];
    assert_eq!(policies(&n), expected);
    assert_rebuilds(&n, &log);
    let (replayed, imaged) = rebuilt(&n, &log);
    assert_eq!(policies(&replayed), expected, "journal replay");
    assert_eq!(policies(&imaged), expected, "image");
    log.push(
        n.delete_snapshot(&root(), "/d", "s1", NOW + 40)
            .expect("delete s1"),
    );
    assert!(
        !n.keeps_storage_policies(),
        "dropped with the last snapshot"
    );
    assert_rebuilds(&n, &log);
}

#[test]
fn diff_report_names_renames_into_new_directories() {
    // HDFS does not compare inside a directory created after the earlier
    // snapshot, but finds a rename's target through the inode's parents:
    // `R`, not `-`.
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    file(&mut n, &mut log, "/d/f", 1024, &[4]);
    file(&mut n, &mut log, "/d/g", 1024, &[4]);
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    mkdir(&mut n, &mut log, "/d/new/deeper");
    for (src, dst) in [("/d/f", "/d/new/f"), ("/d/g", "/d/new/deeper/g2")] {
        log.push(n.rename2(&root(), src, dst, false, NOW).expect("rename").0);
    }
    snap(&mut n, &mut log, "/d", "s2");
    let forward = ["M ", "+ new", "R f -> new/f", "R g -> new/deeper/g2"];
    assert_eq!(report_lines(&n, "s1", "s2"), forward);
    assert_eq!(report_lines(&n, "s1", ""), forward, "to the current tree");
    let back = ["M ", "- new", "R new/f -> f", "R new/deeper/g2 -> g"];
    assert_eq!(report_lines(&n, "s2", "s1"), back);
    let listing = n
        .snapshot_diff_report(&root(), "/d", "s1", "s2")
        .expect("report")
        .listing;
    let deleted: Vec<(&str, Option<&str>, bool)> = listing
        .deleted
        .iter()
        .map(|e| (e.path.as_str(), e.target.as_deref(), e.is_reference))
        .collect();
    assert_eq!(
        deleted,
        [
            ("f", Some("new/f"), true),
            ("g", Some("new/deeper/g2"), true)
        ]
    );
    let created: Vec<&str> = listing.created.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(created, ["new"]);
    assert_rebuilds(&n, &log);
}

#[test]
fn quota_usage_of_a_quota_directory_counts_what_snapshots_keep() {
    // HDFS's counters of a directory with a quota go on charging deleted
    // children a snapshot keeps: getQuotaUsage answers the same usage
    // with the quota as without it, and quota checks count it.
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/q/d");
    allow(&mut n, &mut log, "/q");
    file(&mut n, &mut log, "/q/d/f", 1024, &[10]);
    file(&mut n, &mut log, "/q/g", 1024, &[5]);
    let quota = |n: &mut Namespace, log: &mut Vec<Edit>, ns_quota, ss_quota| {
        let e = n.set_quota(&root(), "/q", ns_quota, ss_quota, None);
        log.extend(e.expect("setQuota"));
    };
    quota(&mut n, &mut log, 100, 1 << 20);
    snap(&mut n, &mut log, "/q", "s1");
    let before = n.quota_usage(&root(), "/q").expect("usage").usage;
    log.push(
        n.delete(&root(), "/q/d", true, NOW + 30)
            .expect("delete")
            .expect("existed")
            .0,
    );
    let with_quota = n.quota_usage(&root(), "/q").expect("usage");
    assert_eq!(with_quota.quota.namespace, 100);
    assert_eq!(with_quota.usage, before, "kept: /q/d and /q/d/f");
    assert_eq!(with_quota.usage.namespace, 4);
    assert_rebuilds(&n, &log);
    let (replayed, imaged) = rebuilt(&n, &log);
    for (what, m) in [("journal replay", &replayed), ("image", &imaged)] {
        let u = m.quota_usage(&root(), "/q").expect("usage");
        assert_eq!(u.usage, before, "{what}");
    }
    // Checks charge it too: 2 live names and 2 kept fill a quota of 4.
    quota(&mut n, &mut log, 4, -1);
    let refused = n
        .mkdirs(&root(), "/q/new", 0o755, true, NOW + 40)
        .expect_err("over the name quota with what the snapshot keeps");
    assert_eq!(
        refused.to_string(),
        "The NameSpace quota (directories and files) of directory /q is exceeded: quota=4 file count=5"
    );
    quota(&mut n, &mut log, -1, -1);
    let counted = n.quota_usage(&root(), "/q").expect("usage");
    assert_eq!(counted.usage, before, "counted without a quota");
    del_snap(&mut n, &mut log, "/q", "s1");
    let freed = n.quota_usage(&root(), "/q").expect("usage").usage;
    assert_eq!(freed.namespace, 2, "/q and /q/g");
    quota(&mut n, &mut log, 4, -1);
    log.extend(
        n.mkdirs(&root(), "/q/new", 0o755, true, NOW + 50)
            .expect("fits now"),
    );
}

#[test]
fn paths_spelled_with_trailing_slashes_are_named_as_spelled() {
    // HDFS's isValidName ignores trailing empty components (Hadoop's
    // StringUtils.split drops them), and disallowSnapshot's refusal names
    // the path as the caller wrote it.
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d//");
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "s1");
    let err = n
        .disallow_snapshot(&root(), "/d/")
        .expect_err("has a snapshot");
    assert_eq!(
        err.to_string(),
        "The directory /d/ has snapshot(s). Please redo the operation after removing all the snapshots."
    );
    let err = n
        .create(&root(), "/d//", 0o644, "c", "m", false, true, 3, 1024, NOW)
        .expect_err("a directory");
    assert_eq!(err.to_string(), "/d already exists as a directory");
}

#[test]
fn snapshot_path_reads_meet_the_path_before_the_permissions_where_hdfs_does() {
    // HDFS's getBlockLocations resolves with no permission checker: a
    // missing snapshot or file, or a directory, is named before a search
    // the caller may not make (differential api seed 7845); every read
    // refuses a file among a snapshot path's ancestors as not a directory.
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d/x");
    file(&mut n, &mut log, "/d/x/f", 1024, &[1]);
    allow(&mut n, &mut log, "/d");
    log.push(n.set_permission(&root(), "/d", 0o700).expect("chmod"));
    let bob = user("bob", &["users"]);
    let fnf = |m: &str| Err(FsError::FileNotFound(m.into()));
    let no_search = |r: Result<FileStatus, FsError>| match r {
        Err(FsError::AccessControl(m)) => m.contains("access=EXECUTE, inode=\"/d\""),
        _ => false,
    };
    for p in ["/d/.snapshot/s1/x/f", "/d/.snapshot/s1", "/d/.snapshot"] {
        let want = fnf(&format!("File does not exist: {p}"));
        assert_eq!(n.open_for_read(&bob, p), want, "{p}");
        assert!(n.get_file_info(&bob, p).is_err(), "{p}");
    }
    snap(&mut n, &mut log, "/d", "s0");
    let missing = "/d/.snapshot/s0/y";
    assert_eq!(
        n.open_for_read(&bob, missing),
        fnf(&format!("File does not exist: {missing}"))
    );
    assert_eq!(
        n.open_for_read(&bob, "/d/.snapshot/s0/x"),
        fnf("Path is not a file: /d/.snapshot/s0/x")
    );
    assert!(no_search(n.open_for_read(&bob, "/d/.snapshot/s0/x/f")));
    let not_dir = || {
        Err::<(), _>(FsError::AccessControl(
            "/d/.snapshot/s0/x/f (is not a directory)".into(),
        ))
    };
    let below = "/d/.snapshot/s0/x/f/b/c";
    assert_eq!(n.open_for_read(&bob, below).map(|_| ()), not_dir());
    assert_eq!(n.get_listing(&root(), below, "", 10).map(|_| ()), not_dir());
    assert_eq!(n.check_access(&root(), below, 4), not_dir());
    // A superuser's getFileInfo answers "not found" there, as HDFS's.
    assert_eq!(n.get_file_info(&root(), below), Ok(None));
    // A caller who may search the snapshot meets the file in its walk.
    log.push(n.set_permission(&root(), "/d", 0o755).expect("chmod"));
    snap(&mut n, &mut log, "/d", "s2");
    let below = "/d/.snapshot/s2/x/f/b";
    let want = Err(FsError::AccessControl(
        "/d/.snapshot/s2/x/f (is not a directory)".into(),
    ));
    assert_eq!(n.get_file_info(&bob, below).map(|_| ()), want);
    assert_eq!(n.content_summary(&bob, below).map(|_| ()), want);
    assert!(n.open_for_read(&bob, "/d/.snapshot/s2/x/f").is_ok());
    // A write meets it too: as a ParentNotDirectoryException where it
    // would create the path (HDFS's DirOp.CREATE), as an
    // AccessControlException otherwise; for the superuser as for bob.
    let pnd = Err(FsError::ParentNotDirectory(
        "/d/.snapshot/s2/x/f (is not a directory)".into(),
    ));
    for who in [&bob, &root()] {
        assert_eq!(n.mkdirs(who, below, 0o755, true, NOW).map(|_| ()), pnd);
        assert_eq!(n.rename(who, "/d/x", below, NOW).map(|_| ()), pnd);
        assert_eq!(n.delete(who, below, false, NOW).map(|_| ()), want);
    }
}

#[test]
fn snapshot_files_by_a_checked_walk_ask_no_read_access() {
    // HDFS's isFileClosed and getPreferredBlockSize resolve with the
    // permission checker (the walk's search access first, then the file)
    // and ask no read access of the file, unlike getBlockLocations.
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d/x");
    file(&mut n, &mut log, "/d/x/f", 1024, &[1]);
    log.push(n.set_permission(&root(), "/d/x/f", 0o600).expect("chmod"));
    allow(&mut n, &mut log, "/d");
    log.push(n.set_permission(&root(), "/d", 0o700).expect("chmod"));
    snap(&mut n, &mut log, "/d", "s0");
    let bob = user("bob", &["users"]);
    let no_search = |r: Result<FileStatus, FsError>| match r {
        Err(FsError::AccessControl(m)) => m.contains("access=EXECUTE, inode=\"/d\""),
        _ => false,
    };
    for p in [
        "/d/.snapshot/s1/x/f",
        "/d/.snapshot/s0/x",
        "/d/.snapshot/s0/x/f",
    ] {
        let got = n.file_after_walk(&bob, p, false);
        assert!(no_search(got.clone()), "{p}: {got:?}");
        assert!(no_search(n.file_for_block_size(&bob, p)), "{p}");
    }
    // Searchable: a snapshot taken with /d open to bob.
    log.push(n.set_permission(&root(), "/d", 0o755).expect("chmod"));
    snap(&mut n, &mut log, "/d", "s2");
    for p in ["/d/.snapshot/s2/x/f", "/d/x/f"] {
        assert!(n.file_after_walk(&bob, p, false).is_ok(), "{p}");
        assert!(n.file_for_block_size(&bob, p).is_ok(), "{p}");
        assert!(matches!(
            n.open_for_read(&bob, p),
            Err(FsError::AccessControl(m)) if m.contains("access=READ")
        ));
    }
    assert_eq!(
        n.file_after_walk(&bob, "/d/.snapshot/s2/x", false),
        Err(FsError::FileNotFound(
            "Path is not a file: /d/.snapshot/s2/x".into()
        ))
    );
    assert_eq!(
        n.file_for_block_size(&bob, "/d//x/"),
        Err(FsError::FileNotFound("Path is not a file: /d/x".into()))
    );
}

#[test]
fn a_snapshot_copy_unreadable_by_the_superuser_is_refused_to_it() {
    // HDFS's checkUnreadableBySuperuser reads the xattrs of the path it
    // was given: through .snapshot, the snapshot's copy.
    let mut n = ns();
    let mut log = Vec::new();
    mkdir(&mut n, &mut log, "/d");
    file(&mut n, &mut log, "/d/f", 1024, &[1]);
    let marker = XAttr {
        namespace: XAttrNamespace::Security,
        name: "hdfs.unreadable.by.superuser".into(),
        value: None,
    };
    allow(&mut n, &mut log, "/d");
    snap(&mut n, &mut log, "/d", "before");
    set_x(&mut n, &mut log, "/d/f", marker, CREATE);
    snap(&mut n, &mut log, "/d", "after");
    let denied = |r: Result<FileStatus, FsError>| matches!(r, Err(FsError::AccessControl(m)) if m.contains("the superuser is not allowed"));
    assert!(denied(n.open_for_read(&root(), "/d/f")));
    assert!(denied(n.open_for_read(&root(), "/d/.snapshot/after/f")));
    assert!(n.open_for_read(&root(), "/d/.snapshot/before/f").is_ok());
}

//! Unit tests of the namespace state machine: HDFS semantics, permission
//! checks, and replaying edits into an identical tree.

use super::permission::Caller;
use super::*;

pub(super) const NOW: u64 = 1_700_000_000_000;

pub(super) fn ns() -> Namespace {
    Namespace::new("hdfs", "supergroup", NOW, Limits::default())
}

pub(super) fn root() -> Caller {
    Caller::superuser("hdfs")
}

pub(super) fn user(name: &str, groups: &[&str]) -> Caller {
    Caller {
        user: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        is_superuser: false,
    }
}

pub(super) fn stat(ns: &Namespace, p: &str) -> FileStatus {
    ns.get_file_info(&root(), p)
        .expect("valid")
        .unwrap_or_else(|| panic!("{p} missing"))
}

/// A fresh namespace with every edit of `edits` applied.
pub(super) fn replayed(edits: &[Edit]) -> Namespace {
    let mut copy = ns();
    for e in edits {
        copy.apply(e).expect("replay");
    }
    copy
}

/// `ns` saved as a checkpoint image and loaded back.
pub(super) fn imaged(ns: &Namespace) -> Namespace {
    crate::image::tests::round_trip(ns)
}

/// Applies every edit of `log` to a fresh namespace and compares listings.
pub(super) fn assert_replays(ns: &Namespace, log: &[Edit]) {
    let mut copy = Namespace::new("hdfs", "supergroup", NOW, Limits::default());
    for e in log {
        copy.apply(e).expect("replay");
    }
    let dump = |n: &Namespace| {
        let mut out = Vec::new();
        let mut stack = vec!["/".to_string()];
        while let Some(p) = stack.pop() {
            let s = n.get_file_info(&root(), &p).expect("ok").expect("exists");
            out.push((
                p.clone(),
                s.is_dir,
                s.permission,
                s.owner.clone(),
                s.mtime_ms,
                s.length,
            ));
            if s.is_dir {
                let l = n
                    .get_listing(&root(), &p, "", 10_000)
                    .expect("ok")
                    .expect("dir");
                for e in l.entries {
                    stack.push(if p == "/" {
                        format!("/{}", e.name)
                    } else {
                        format!("{p}/{}", e.name)
                    });
                }
            }
        }
        out
    };
    assert_eq!(dump(ns), dump(&copy));
}

#[test]
fn mkdirs_creates_parents_and_is_idempotent() {
    let mut ns = ns();
    let edits = ns
        .mkdirs(&root(), "/a/b/c", 0o750, true, NOW + 1)
        .expect("mkdirs");
    assert_eq!(edits.len(), 3);
    assert_eq!(stat(&ns, "/a/b/c").permission, 0o750);
    // Implicit parents get u+wx.
    assert_eq!(stat(&ns, "/a").permission, 0o750 | 0o300);
    assert_eq!(stat(&ns, "/a").id, INodeId(16386));
    assert!(ns
        .mkdirs(&root(), "/a/b/c", 0o700, true, NOW)
        .expect("again")
        .is_empty());
    assert!(matches!(
        ns.mkdirs(&root(), "/x/y", 0o755, false, NOW),
        Err(FsError::FileNotFound(_))
    ));
}

#[test]
fn files_and_directories_conflict_as_in_hdfs() {
    let mut ns = ns();
    ns.create(
        &root(),
        "/f",
        0o644,
        "c1",
        "m",
        false,
        true,
        3,
        1 << 27,
        NOW,
    )
    .expect("create");
    assert!(matches!(
        ns.mkdirs(&root(), "/f", 0o755, true, NOW),
        Err(FsError::AlreadyExists(_))
    ));
    assert!(matches!(
        ns.mkdirs(&root(), "/f/g", 0o755, true, NOW),
        Err(FsError::ParentNotDirectory(_))
    ));
    // Open by c1: another client cannot create it without overwriting
    // (HDFS names the writer), but may replace it (HDFS-3755: the writer
    // loses the file).
    assert!(matches!(
        ns.create(&root(), "/f", 0o644, "c2", "m", false, true, 3, 1 << 27, NOW),
        Err(FsError::AlreadyBeingCreated(m)) if m.contains("currently owned by c1 on m")
    ));
    let open = stat(&ns, "/f").id;
    let (_, _, removed) = ns
        .create(&root(), "/f", 0o644, "c2", "m", true, true, 3, 1 << 27, NOW)
        .expect("overwrite the open file");
    assert_eq!(removed.files, [open], "the open file's lease goes");
    assert!(ns
        .complete("/f", 0, "c1", None, NOW + 5, &|_| true)
        .is_err());
    ns.complete("/f", 0, "c2", None, NOW + 5, &|_| true)
        .expect("complete");
    assert!(matches!(
        ns.create(
            &root(),
            "/f",
            0o644,
            "c2",
            "m",
            false,
            true,
            3,
            1 << 27,
            NOW
        ),
        Err(FsError::AlreadyExists(_))
    ));
    let old = stat(&ns, "/f").id;
    ns.create(&root(), "/f", 0o644, "c2", "m", true, true, 3, 1 << 27, NOW)
        .expect("overwrite");
    assert_ne!(stat(&ns, "/f").id, old, "overwrite makes a new inode");
    ns.mkdirs(&root(), "/d", 0o755, true, NOW).expect("mkdir");
    assert!(matches!(
        ns.create(&root(), "/d", 0o644, "c2", "m", true, true, 3, 1 << 27, NOW),
        Err(FsError::AlreadyExists(_))
    ));
}

#[test]
fn listing_pages_in_name_order() {
    let mut ns = ns();
    for name in ["b", "a", "d", "c", "e"] {
        ns.mkdirs(&root(), &format!("/dir/{name}"), 0o755, true, NOW)
            .expect("mkdir");
    }
    let page = ns
        .get_listing(&root(), "/dir", "", 2)
        .expect("ok")
        .expect("dir");
    let names: Vec<_> = page.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["a", "b"]);
    assert_eq!(page.remaining, 3);
    let page = ns
        .get_listing(&root(), "/dir", "b", 2)
        .expect("ok")
        .expect("dir");
    let names: Vec<_> = page.entries.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["c", "d"]);
    assert_eq!(page.remaining, 1);
    let page = ns
        .get_listing(&root(), "/dir", "d", 2)
        .expect("ok")
        .expect("dir");
    assert_eq!(page.entries.len(), 1);
    assert_eq!(page.remaining, 0);
    assert!(ns
        .get_listing(&root(), "/nope", "", 2)
        .expect("ok")
        .is_none());
}

#[test]
fn delete_rules() {
    let mut ns = ns();
    ns.mkdirs(&root(), "/t/u", 0o755, true, NOW).expect("mkdir");
    assert!(matches!(
        ns.delete(&root(), "/t", false, NOW),
        Err(FsError::NotEmptyDirectory(_))
    ));
    assert!(ns
        .delete(&root(), "/missing", true, NOW)
        .expect("ok")
        .is_none());
    assert!(ns.delete(&root(), "/", true, NOW).expect("ok").is_none());
    // The root: non-empty and not recursive is refused as any directory
    // (HDFS checks that first), recursive answers false; empty, false too.
    assert!(matches!(
        ns.delete(&root(), "/", false, NOW),
        Err(FsError::NotEmptyDirectory(_))
    ));
    assert!(ns
        .delete(&root(), "/t", true, NOW + 9)
        .expect("ok")
        .is_some());
    assert!(ns.get_file_info(&root(), "/t/u").expect("ok").is_none());
    assert_eq!(stat(&ns, "/").mtime_ms, NOW + 9);
    assert!(ns.delete(&root(), "/", false, NOW).expect("ok").is_none());
}

#[test]
fn old_rename_moves_into_directories_and_returns_false() {
    let mut ns = ns();
    ns.mkdirs(&root(), "/a", 0o755, true, NOW).expect("mkdir");
    ns.mkdirs(&root(), "/b", 0o755, true, NOW).expect("mkdir");
    assert!(ns.rename(&root(), "/a", "/b", NOW).expect("ok").0);
    assert!(stat(&ns, "/b/a").is_dir);
    assert!(!ns.rename(&root(), "/missing", "/c", NOW).expect("ok").0);
    assert!(
        !ns.rename(&root(), "/b", "/b/a/x", NOW).expect("ok").0,
        "into itself"
    );
    assert!(
        !ns.rename(&root(), "/b", "/nope/x", NOW).expect("ok").0,
        "no parent"
    );
    // As HDFS: a directory renamed to itself would move under itself
    // (false); to its own parent, or a file to itself, is the same path (true).
    assert!(
        !ns.rename(&root(), "/b", "/b", NOW).expect("ok").0,
        "a directory to itself"
    );
    assert!(
        ns.rename(&root(), "/b/a", "/b", NOW).expect("ok").0,
        "to its own parent"
    );
    assert!(stat(&ns, "/b/a").is_dir);
    ns.create(&root(), "/f", 0o644, "c", "m", false, true, 1, 1024, NOW)
        .expect("create");
    assert!(
        ns.rename(&root(), "/f", "/f", NOW).expect("ok").0,
        "a file to itself"
    );
}

#[test]
fn old_rename_checks_permissions_before_it_looks_at_the_source() {
    // As HDFS's renameTo: write access to both parents first, so a
    // missing source is `false` only to a caller allowed there.
    let mut ns = ns();
    ns.mkdirs(&root(), "/tmp", 0o777, true, NOW).expect("mkdir");
    let alice = user("alice", &["staff"]);
    assert!(matches!(
        ns.rename(&alice, "/tmp/missing", "/", NOW),
        Err(FsError::AccessControl(m)) if m.contains("access=WRITE, inode=\"/\"")
    ));
    assert!(
        !ns.rename(&alice, "/tmp/missing", "/tmp/x", NOW)
            .expect("ok")
            .0
    );
}

#[test]
fn rename2_throws_and_overwrites() {
    let mut ns = ns();
    for f in ["/s", "/d"] {
        ns.create(&root(), f, 0o644, "c", "m", false, true, 1, 1024, NOW)
            .expect("create");
        ns.complete(f, 0, "c", None, NOW, &|_| true)
            .expect("complete");
    }
    assert!(matches!(
        ns.rename2(&root(), "/s", "/d", false, NOW),
        Err(FsError::AlreadyExists(_))
    ));
    assert!(matches!(
        ns.rename2(&root(), "/s", "/s", true, NOW),
        Err(FsError::AlreadyExists(_))
    ));
    assert!(matches!(
        ns.rename2(&root(), "/x", "/y", true, NOW),
        Err(FsError::FileNotFound(_))
    ));
    let sid = stat(&ns, "/s").id;
    let (_, removed) = ns
        .rename2(&root(), "/s", "/d", true, NOW)
        .expect("overwrite");
    assert_eq!(removed.files.len(), 1);
    assert_eq!(stat(&ns, "/d").id, sid);
    ns.mkdirs(&root(), "/dir", 0o755, true, NOW).expect("mkdir");
    assert!(matches!(
        ns.rename2(&root(), "/d", "/dir", true, NOW),
        Err(FsError::Io(_))
    ));
    assert!(matches!(
        ns.rename2(&root(), "/d", "/d/x", true, NOW),
        Err(FsError::ParentNotDirectory(_)) | Err(FsError::Io(_))
    ));
    // HDFS compares the kinds before it looks at the flag, and names the
    // destination when its parent is missing.
    assert!(matches!(
        ns.rename2(&root(), "/d", "/dir", false, NOW),
        Err(FsError::Io(m)) if m.contains("must both be directories")
    ));
    assert_eq!(
        ns.rename2(&root(), "/d", "/none/x", false, NOW),
        Err(FsError::FileNotFound(
            "rename destination parent /none/x not found.".into()
        ))
    );
}

#[test]
fn writers_calls_name_the_lease_as_hdfs() {
    let mut ns = ns();
    ns.create(&root(), "/f", 0o644, "c", "m", false, true, 1, 1024, NOW)
        .expect("create");
    let id = stat(&ns, "/f").id.0;
    assert_eq!(
        ns.fsync("/f", id, "other", None),
        Err(FsError::LeaseExpired(format!(
            "Client (=other) is not the lease owner (=c: /f (inode {id}) Holder other does not have any open files."
        )))
    );
    ns.complete("/f", id, "c", None, NOW, &|_| true)
        .expect("complete");
    assert_eq!(
        ns.fsync("/f", id, "c", None),
        Err(FsError::LeaseExpired(format!(
            "File is not open for writing: /f (inode {id}) Holder c does not have any open files."
        )))
    );
    ns.delete(&root(), "/f", false, NOW).expect("delete");
    assert_eq!(
        ns.fsync("/f", id, "c", None),
        Err(FsError::FileNotFound(format!(
            "File does not exist: /f (inode {id}) Holder c does not have any open files."
        )))
    );
    // A directory, by id or by path.
    let dir = stat(&ns, "/").id.0;
    assert_eq!(
        ns.fsync("/x", dir, "c", None),
        Err(FsError::LeaseExpired(format!(
            "INode is not a regular file: / (inode {dir}) Holder c does not have any open files."
        )))
    );
    assert!(matches!(
        ns.fsync("/", 0, "c", None),
        Err(FsError::LeaseExpired(m)) if m.starts_with("INode is not a regular file: / (inode 0)")
    ));
    // setReplication checks the factor before the path.
    assert_eq!(
        ns.set_replication(&user("alice", &[]), "/f/x", 0),
        Err(FsError::Io(
            "Requested replication factor of 0 is less than the required minimum of 1 for /f/x"
                .into()
        ))
    );
}

#[test]
fn permissions_for_non_superusers() {
    let mut ns = ns();
    let alice = user("alice", &["staff"]);
    let bob = user("bob", &["other"]);
    ns.mkdirs(&root(), "/private", 0o700, true, NOW)
        .expect("mkdir");
    let err = ns
        .mkdirs(&alice, "/private/x", 0o755, true, NOW)
        .expect_err("denied");
    assert_eq!(
        err,
        FsError::AccessControl(
            "Permission denied: user=alice, access=EXECUTE, inode=\"/private\":hdfs:supergroup:drwx------".into()
        )
    );
    let err = ns
        .mkdirs(&alice, "/x", 0o755, true, NOW)
        .expect_err("denied");
    assert!(matches!(err, FsError::AccessControl(m) if m.contains("access=WRITE, inode=\"/\"")));
    // Group bits apply to members.
    ns.mkdirs(&root(), "/shared", 0o775, true, NOW)
        .expect("mkdir");
    ns.set_owner(&root(), "/shared", None, Some("staff"))
        .expect("chgrp");
    ns.mkdirs(&alice, "/shared/a", 0o755, true, NOW)
        .expect("group write");
    assert!(ns.mkdirs(&bob, "/shared/b", 0o755, true, NOW).is_err());
    // Only the superuser changes owners; owners change modes.
    assert!(ns
        .set_owner(&alice, "/shared/a", Some("bob"), None)
        .is_err());
    ns.set_owner(&alice, "/shared/a", None, Some("staff"))
        .expect("own group");
    assert!(ns
        .set_owner(&alice, "/shared/a", None, Some("other"))
        .is_err());
    ns.set_permission(&alice, "/shared/a", 0o700)
        .expect("owner chmod");
    assert!(ns.set_permission(&bob, "/shared/a", 0o777).is_err());
    // Deleting a tree needs full access below.
    ns.mkdirs(&alice, "/shared/a/locked", 0o755, true, NOW)
        .expect("mkdir");
    ns.mkdirs(&alice, "/shared/a/locked/in", 0o755, true, NOW)
        .expect("mkdir");
    ns.set_permission(&alice, "/shared/a/locked", 0o555)
        .expect("chmod");
    assert!(ns.delete(&alice, "/shared/a", true, NOW).is_err());
}

#[test]
fn opening_a_directory_is_refused_before_read_access() {
    let mut ns = ns();
    ns.mkdirs(&root(), "/d", 0o711, true, NOW).expect("mkdir");
    let alice = user("alice", &[]);
    // HDFS's getBlockLocations looks at the file before the permission.
    assert_eq!(
        ns.open_for_read(&alice, "/d"),
        Err(FsError::FileNotFound("Path is not a file: /d".into()))
    );
    assert_eq!(
        ns.open_for_read(&alice, "/d/none"),
        Err(FsError::FileNotFound("File does not exist: /d/none".into()))
    );
    // Its walk is not checked before the file is found (HDFS 3.4.1
    // answers a missing file under a directory the caller cannot search
    // with FileNotFound), only the read that follows.
    create_file(&mut ns, &root(), "/d/f").expect("create");
    ns.set_permission(&root(), "/d", 0o700).expect("chmod");
    assert_eq!(
        ns.open_for_read(&alice, "/d/none"),
        Err(FsError::FileNotFound("File does not exist: /d/none".into()))
    );
    assert!(matches!(
        ns.open_for_read(&alice, "/d/f"),
        Err(FsError::AccessControl(m)) if m.contains("access=EXECUTE")
    ));
    // isFileClosed and recoverLease check the walk first.
    assert!(matches!(
        ns.file_after_walk(&alice, "/d/none", false),
        Err(FsError::AccessControl(m)) if m.contains("access=EXECUTE")
    ));
}

/// An empty file at `p` (replication 1, 1 MiB blocks), made by `caller`.
pub(super) fn create_file(ns: &mut Namespace, caller: &Caller, p: &str) -> Result<(), FsError> {
    ns.create(caller, p, 0o644, "c", "m", false, true, 1, 1 << 20, NOW)
        .map(|_| ())
}

#[test]
fn create_checks_the_walk_before_what_the_path_is() {
    let mut ns = ns();
    ns.mkdirs(&root(), "/p/d", 0o755, true, NOW).expect("mkdir");
    ns.set_permission(&root(), "/p", 0o700).expect("chmod");
    let alice = user("alice", &[]);
    // HDFS's resolvePathForStartFile: search and write access first, so
    // alice learns nothing about what lies behind /p.
    let e = create_file(&mut ns, &alice, "/p/d").expect_err("denied");
    assert!(
        matches!(&e, FsError::AccessControl(m) if m.contains("access=EXECUTE, inode=\"/p\"")),
        "{e:?}"
    );
    assert_eq!(
        create_file(&mut ns, &root(), "/p/d"),
        Err(FsError::AlreadyExists(
            "/p/d already exists as a directory".into()
        ))
    );
    // startFile's own name check, worded unlike mkdirs'.
    let e = create_file(&mut ns, &root(), "/p/a:b").expect_err("invalid");
    assert_eq!(e, FsError::InvalidPath("Invalid path name /p/a:b".into()));
}

#[test]
fn mkdirs_over_a_file_names_the_path_as_asked() {
    let mut ns = ns();
    create_file(&mut ns, &root(), "/f").expect("create");
    for p in ["/f", "/f/"] {
        assert_eq!(
            ns.mkdirs(&root(), p, 0o755, true, NOW),
            Err(FsError::AlreadyExists(format!(
                "Path is not a directory: {p}"
            )))
        );
    }
}

#[test]
fn a_read_moves_only_a_stale_access_time() {
    let mut ns = ns();
    ns.mkdirs(&root(), "/d", 0o755, true, NOW).expect("mkdir");
    create_file(&mut ns, &root(), "/d/f").expect("create");
    let hour = 3_600_000;
    let atime = |ns: &Namespace| stat(ns, "/d/f").atime_ms;
    assert!(ns.touch_access_time("/d/f", NOW + hour, hour).is_empty());
    assert!(ns.touch_access_time("/d", NOW + 2 * hour, hour).is_empty());
    assert!(ns
        .touch_access_time("/d/none", NOW + 2 * hour, hour)
        .is_empty());
    let edits = ns.touch_access_time("/d/f", NOW + hour + 1, hour);
    assert_eq!(edits.len(), 1);
    assert_eq!(atime(&ns), NOW + hour + 1);
    assert_eq!(
        stat(&ns, "/d/f").mtime_ms,
        NOW,
        "the modification time stays"
    );
}

#[test]
fn sticky_bit_protects_other_users_entries() {
    let mut ns = ns();
    let alice = user("alice", &[]);
    let bob = user("bob", &[]);
    ns.mkdirs(&root(), "/tmp", 0o1777, true, NOW)
        .expect("mkdir");
    ns.create(
        &alice, "/tmp/f", 0o644, "ca", "m", false, true, 1, 1024, NOW,
    )
    .expect("create");
    ns.complete("/tmp/f", 0, "ca", None, NOW, &|_| true)
        .expect("close");
    let err = ns.delete(&bob, "/tmp/f", false, NOW).expect_err("sticky");
    assert!(
        matches!(&err, FsError::AccessControl(m) if m.starts_with("Permission denied by sticky bit: user=bob")),
        "{err:?}"
    );
    assert!(ns.rename(&bob, "/tmp/f", "/tmp/g", NOW).is_err());
    assert!(ns
        .delete(&alice, "/tmp/f", false, NOW)
        .expect("owner")
        .is_some());
}

#[test]
fn content_summary_counts() {
    let mut ns = ns();
    ns.mkdirs(&root(), "/c/d", 0o755, true, NOW).expect("mkdir");
    ns.create(
        &root(),
        "/c/d/f",
        0o644,
        "c",
        "m",
        false,
        true,
        3,
        1024,
        NOW,
    )
    .expect("create");
    ns.complete("/c/d/f", 0, "c", None, NOW, &|_| true)
        .expect("close");
    let s = ns.content_summary(&root(), "/c").expect("summary");
    assert_eq!((s.directory_count, s.file_count, s.length), (2, 1, 0));
    assert!(matches!(
        ns.content_summary(&root(), "/zz"),
        Err(FsError::FileNotFound(_))
    ));
}

#[test]
fn setters_and_replication_limits() {
    let mut ns = ns();
    ns.create(&root(), "/f", 0o644, "c", "m", false, true, 3, 1024, NOW)
        .expect("create");
    ns.set_times(&root(), "/f", Some(5), None).expect("times");
    assert_eq!(stat(&ns, "/f").mtime_ms, 5);
    assert_eq!(stat(&ns, "/f").atime_ms, NOW);
    // Inodes hold times up to 2^48 - 1 ms; later ones are refused whole.
    let latest = (1u64 << 48) - 1;
    ns.set_times(&root(), "/f", None, Some(latest))
        .expect("latest");
    assert_eq!(stat(&ns, "/f").atime_ms, latest);
    assert!(matches!(
        ns.set_times(&root(), "/f", Some(7), Some(latest + 1)),
        Err(FsError::IllegalArgument(_))
    ));
    assert_eq!(stat(&ns, "/f").mtime_ms, 5);
    assert!(ns.set_replication(&root(), "/f", 2).expect("ok").is_some());
    assert_eq!(stat(&ns, "/f").replication, 2);
    assert!(ns.set_replication(&root(), "/", 2).expect("ok").is_none());
    assert!(ns.set_replication(&root(), "/f", 0).is_err());
    assert!(ns.set_replication(&root(), "/f", 513).is_err());
    assert!(matches!(
        ns.set_times(&root(), "/zz", Some(1), None),
        Err(FsError::FileNotFound(_))
    ));
    assert!(matches!(
        ns.set_permission(&root(), "/zz", 0o1),
        Err(FsError::FileNotFound(_))
    ));
}

#[test]
fn limits_on_names_and_directory_items() {
    let mut ns = Namespace::new(
        "hdfs",
        "supergroup",
        NOW,
        Limits {
            max_directory_items: 2,
            ..Limits::default()
        },
    );
    let long = "x".repeat(256);
    assert!(matches!(
        ns.mkdirs(&root(), &format!("/{long}"), 0o755, true, NOW),
        Err(FsError::PathComponentTooLong(_))
    ));
    ns.mkdirs(&root(), "/a", 0o755, true, NOW).expect("1");
    ns.mkdirs(&root(), "/b", 0o755, true, NOW).expect("2");
    assert!(matches!(
        ns.mkdirs(&root(), "/c", 0o755, true, NOW),
        Err(FsError::MaxDirectoryItems(_))
    ));
    assert!(matches!(
        ns.get_file_info(&root(), "a/b"),
        Err(FsError::InvalidPath(_))
    ));
}

#[test]
fn a_file_among_the_ancestors_is_not_a_directory_to_search() {
    // As HDFS's FSPermissionChecker: the ancestor that is a file is named
    // before its missing execute bit is; creating under it is a
    // ParentNotDirectoryException, anything else an AccessControlException.
    let mut ns = ns();
    ns.mkdirs(&root(), "/home", 0o777, true, NOW)
        .expect("mkdir");
    let alice = user("alice", &["staff"]);
    ns.create(
        &alice, "/home/f", 0o644, "c", "m", false, true, 1, 1024, NOW,
    )
    .expect("create");
    ns.complete("/home/f", 0, "c", None, NOW, &|_| true)
        .expect("complete");
    let not_dir = "/home/f (is not a directory)".to_string();
    assert_eq!(
        ns.mkdirs(&alice, "/home/f/sub", 0o755, true, NOW).err(),
        Some(FsError::ParentNotDirectory(not_dir.clone()))
    );
    assert_eq!(
        ns.get_file_info(&alice, "/home/f/sub").err(),
        Some(FsError::AccessControl(not_dir.clone()))
    );
    assert!(matches!(
        ns.rename2(&alice, "/home/f", "/home/f/x", false, NOW),
        Err(FsError::ParentNotDirectory(m)) if m == not_dir
    ));
    // The superuser is not searched, but the ancestors must still be
    // directories (HDFS's checkSimpleTraverse); only getFileInfo turns
    // that into "not found".
    assert!(ns
        .get_file_info(&root(), "/home/f/sub")
        .expect("ok")
        .is_none());
    assert_eq!(
        ns.get_listing(&root(), "/home/f/sub", "", 10).err(),
        Some(FsError::AccessControl(not_dir.clone()))
    );
    assert_eq!(
        ns.mkdirs(&root(), "/home/f/sub", 0o755, true, NOW).err(),
        Some(FsError::ParentNotDirectory(not_dir.clone()))
    );
    // The old rename throws for a file above either path, as HDFS's
    // resolution does, where it answers `false` for the rest.
    ns.mkdirs(&root(), "/home/d", 0o755, true, NOW)
        .expect("mkdir");
    assert_eq!(
        ns.rename(&root(), "/home/d", "/home/f/x", NOW).err(),
        Some(FsError::ParentNotDirectory(not_dir.clone()))
    );
    assert_eq!(
        ns.rename(&root(), "/home/f/x", "/home/d", NOW).err(),
        Some(FsError::AccessControl(not_dir))
    );
    assert!(
        !ns.rename(&root(), "/home/nope/x", "/home/d", NOW)
            .expect("ok")
            .0
    );
}

#[test]
fn parents_a_create_makes_inherit_the_nearest_ancestors_mode() {
    // As HDFS's createAncestorDirectories: the existing ancestor's
    // permission less the sticky bit, with u+wx; mkdirs -p uses its own.
    let mut ns = ns();
    ns.mkdirs(&root(), "/open", 0o777, true, NOW)
        .expect("mkdir");
    ns.mkdirs(&root(), "/s", 0o755, true, NOW).expect("mkdir");
    ns.set_permission(&root(), "/s", 0o1030).expect("chmod");
    for (f, want) in [("/open/x/y/f", 0o777), ("/s/x/y/f", 0o330)] {
        ns.create(&root(), f, 0o644, "c", "m", false, true, 1, 1024, NOW)
            .expect("create");
        let parent = &f[..f.len() - 2];
        let grandparent = &f[..f.len() - 4];
        for dir in [parent, grandparent] {
            assert_eq!(stat(&ns, dir).permission, want, "{dir}");
        }
        assert_eq!(stat(&ns, f).permission, 0o644);
    }
    ns.mkdirs(&root(), "/open/m/n", 0o700, true, NOW)
        .expect("mkdir");
    assert_eq!(stat(&ns, "/open/m").permission, 0o700);
}

#[test]
fn create_refuses_block_sizes_under_the_minimum() {
    // As HDFS's startFile, after the replication check.
    let mut ns = Namespace::new(
        "hdfs",
        "supergroup",
        NOW,
        Limits {
            min_block_size: 1 << 20,
            ..Limits::default()
        },
    );
    let e = ns
        .create(
            &root(),
            "/small",
            0o644,
            "c",
            "m",
            false,
            true,
            1,
            1024,
            NOW,
        )
        .expect_err("1 KiB blocks");
    assert_eq!(
        e,
        FsError::Io("Specified block size 1024 is less than configured minimum value dfs.namenode.fs-limits.min-block-size=1048576".into())
    );
    ns.create(
        &root(),
        "/ok",
        0o644,
        "c",
        "m",
        false,
        true,
        1,
        1 << 20,
        NOW,
    )
    .expect("1 MiB blocks");
}

#[test]
fn a_content_summary_meets_directories_in_name_order() {
    let mut ns = ns();
    for d in ["/s/a/deep", "/s/b"] {
        ns.mkdirs(&root(), d, 0o755, true, NOW).expect("mkdir");
    }
    for d in ["/s/a/deep", "/s/b"] {
        ns.set_permission(&root(), d, 0o700).expect("chmod");
    }
    let alice = user("alice", &[]);
    // HDFS's content summary walks depth first in name order; its
    // getQuotaUsage checks the subtree with a stack (the last child first).
    let denied = |r: Result<(), FsError>| match r {
        Err(FsError::AccessControl(m)) => m,
        other => panic!("expected a denial, got {other:?}"),
    };
    let summary = denied(ns.content_summary(&alice, "/s").map(|_| ()));
    assert!(summary.contains("inode=\"/s/a/deep\""), "{summary}");
    let usage = denied(ns.quota_usage(&alice, "/s").map(|_| ()));
    assert!(usage.contains("inode=\"/s/b\""), "{usage}");
}

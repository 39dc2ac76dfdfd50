//! The hdfs-native client (a stock HDFS client, used as a user would use it)
//! against a real `cairn namenode` process: every namespace call with exact
//! results, and each error kind HDFS clients rely on.

mod common;

use common::{current_user, now_ms, NameNode};
use hdfs_native::{HdfsError, WriteOptions};

fn rpc_class(e: &HdfsError) -> String {
    match e {
        HdfsError::RPCError(class, _) => class.clone(),
        other => format!("not an RPC error: {other:?}"),
    }
}

fn rpc_message(e: &HdfsError) -> String {
    match e {
        HdfsError::RPCError(_, msg) | HdfsError::AlreadyExists(msg) => msg.clone(),
        other => format!("{other:?}"),
    }
}

#[tokio::test]
async fn mkdirs_and_file_info_report_exact_attributes() {
    // Goal: directories carry the requested mode, the caller as owner, the
    // parent's group, a creation time, and implicit parents get u+wx.
    let nn = NameNode::start(&[]);
    let c = nn.client(None);
    let before = now_ms();
    c.mkdirs("/t/p/q", 0o555, true).await.expect("mkdirs");
    let after = now_ms();
    let q = c.get_file_info("/t/p/q").await.expect("q");
    assert!(q.isdir);
    assert_eq!(q.permission, 0o555);
    assert_eq!(q.owner, current_user());
    assert_eq!(q.group, "supergroup");
    assert!(q.modification_time >= before && q.modification_time <= after);
    assert_eq!(q.access_time, 0, "directories have no access time in HDFS");
    assert_eq!(q.length, 0);
    let p = c.get_file_info("/t/p").await.expect("p");
    assert_eq!(p.permission, 0o755, "implicit parent gets u+wx");
    // Idempotent, like HDFS (mkdir -p relies on it).
    c.mkdirs("/t/p/q", 0o700, true).await.expect("again");
    assert_eq!(
        c.get_file_info("/t/p/q").await.expect("q").permission,
        0o555
    );
    // Without createParent a missing parent is an error.
    let err = c
        .mkdirs("/t/none/x", 0o755, false)
        .await
        .expect_err("no parent");
    assert_eq!(rpc_class(&err), "java.io.FileNotFoundException");
    // A missing path is FileNotFound, reported by the client itself from an
    // empty getFileInfo answer.
    assert!(matches!(
        c.get_file_info("/nope").await,
        Err(HdfsError::FileNotFound(_))
    ));
    let root = c.get_file_info("/").await.expect("root");
    assert_eq!(root.owner, current_user());
    assert_eq!(root.permission, 0o755);
}

#[tokio::test]
async fn listing_is_sorted_and_pages_through_small_limits() {
    // Goal: getListing returns children in name order and pages correctly
    // when the directory holds more entries than dfs.ls.limit.
    let nn = NameNode::start(&["dfs.ls.limit=7"]);
    let c = nn.client(None);
    let mut names: Vec<String> = (0..23).map(|i| format!("d{:02}", (i * 7) % 23)).collect();
    for n in &names {
        c.mkdirs(&format!("/many/{n}"), 0o755, true)
            .await
            .expect("mkdir");
    }
    names.sort();
    let listed = c.list_status("/many", false).await.expect("list");
    let got: Vec<String> = listed.iter().map(|s| s.path.clone()).collect();
    let want: Vec<String> = names.iter().map(|n| format!("/many/{n}")).collect();
    assert_eq!(got, want);
    // Recursive listing, and listing a file lists the file itself.
    c.create("/many/d00/f", WriteOptions::default())
        .await
        .expect("create")
        .close()
        .await
        .expect("close");
    let rec = c.list_status("/many", true).await.expect("recursive");
    assert_eq!(rec.len(), 24);
    let f = c.list_status("/many/d00/f", false).await.expect("file");
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].path, "/many/d00/f");
    assert!(c.list_status("/missing", false).await.is_err());
}

#[tokio::test]
async fn empty_files_setters_and_summaries() {
    // Goal: create/complete of an empty file (touchz), then setTimes,
    // setPermission, setOwner, setReplication and getContentSummary, each
    // read back exactly.
    let nn = NameNode::start(&["dfs.replication=2", "dfs.blocksize=64m"]);
    let c = nn.client(None);
    c.mkdirs("/w", 0o755, true).await.expect("mkdir");
    let before = now_ms();
    let mut w = c
        .create("/w/empty", WriteOptions::default())
        .await
        .expect("create");
    w.close().await.expect("close (complete)");
    let f = c.get_file_info("/w/empty").await.expect("stat");
    assert!(!f.isdir);
    assert_eq!(f.length, 0);
    assert_eq!(f.permission, 0o644);
    assert_eq!(f.owner, current_user());
    assert_eq!(f.group, "supergroup", "files take the parent's group");
    assert_eq!(f.replication, Some(2), "server default replication");
    assert_eq!(
        f.blocksize,
        Some(64 * 1024 * 1024),
        "server default block size"
    );
    assert!(f.modification_time >= before);

    c.set_times("/w/empty", 1_000_000, 2_000_000)
        .await
        .expect("set_times");
    let f = c.get_file_info("/w/empty").await.expect("stat");
    assert_eq!((f.modification_time, f.access_time), (1_000_000, 2_000_000));
    // A directory has no access time until setTimes gives it one (HDFS
    // keeps it on the inode).
    c.set_times("/w", 3_000_000, 4_000_000)
        .await
        .expect("set_times on a directory");
    let d = c.get_file_info("/w").await.expect("stat");
    assert_eq!((d.modification_time, d.access_time), (3_000_000, 4_000_000));

    c.set_permission("/w/empty", 0o600).await.expect("chmod");
    assert_eq!(
        c.get_file_info("/w/empty").await.expect("stat").permission,
        0o600
    );
    c.set_permission("/w", 0o1777).await.expect("sticky");
    assert_eq!(
        c.get_file_info("/w").await.expect("stat").permission,
        0o1777
    );

    c.set_owner("/w/empty", Some("alice"), Some("staff"))
        .await
        .expect("chown");
    let f = c.get_file_info("/w/empty").await.expect("stat");
    assert_eq!((f.owner.as_str(), f.group.as_str()), ("alice", "staff"));
    c.set_owner("/w/empty", None, Some("other"))
        .await
        .expect("chgrp");
    let f = c.get_file_info("/w/empty").await.expect("stat");
    assert_eq!((f.owner.as_str(), f.group.as_str()), ("alice", "other"));

    assert!(c.set_replication("/w/empty", 5).await.expect("setrep"));
    assert_eq!(
        c.get_file_info("/w/empty").await.expect("stat").replication,
        Some(5)
    );
    assert!(
        !c.set_replication("/w", 5).await.expect("dir setrep"),
        "false for directories"
    );
    let err = c.set_replication("/w/empty", 0).await.expect_err("too low");
    assert_eq!(rpc_class(&err), "java.io.IOException");

    c.mkdirs("/w/sub/deeper", 0o755, true).await.expect("mkdir");
    let s = c.get_content_summary("/w").await.expect("summary");
    assert_eq!((s.directory_count, s.file_count, s.length), (3, 1, 0));
    assert_eq!(s.quota, u64::MAX, "no quota is -1");
    let err = c.get_content_summary("/nope").await.expect_err("missing");
    assert_eq!(rpc_class(&err), "java.io.FileNotFoundException");
    let err = c.set_times("/nope", 1, 1).await.expect_err("missing");
    assert_eq!(rpc_class(&err), "java.io.FileNotFoundException");
    let err = c.set_permission("/nope", 0o1).await.expect_err("missing");
    assert_eq!(rpc_class(&err), "java.io.FileNotFoundException");
}

#[tokio::test]
async fn rename_and_delete_follow_hdfs_rules() {
    // Goal: rename2 (what hdfs-native sends) with and without overwrite,
    // and delete's three outcomes: true, false for missing, and
    // PathIsNotEmptyDirectoryException for a non-recursive delete.
    let nn = NameNode::start(&[]);
    let c = nn.client(None);
    for f in ["/r/a", "/r/b"] {
        c.create(f, WriteOptions::default())
            .await
            .expect("create")
            .close()
            .await
            .expect("close");
    }
    let a_id_mtime = c.get_file_info("/r/a").await.expect("a").modification_time;
    let err = c.rename("/r/a", "/r/b", false).await.expect_err("exists");
    assert!(matches!(err, HdfsError::AlreadyExists(_)), "{err:?}");
    c.rename("/r/a", "/r/b", true).await.expect("overwrite");
    assert!(c.get_file_info("/r/a").await.is_err());
    assert_eq!(
        c.get_file_info("/r/b").await.expect("b").modification_time,
        a_id_mtime
    );
    let err = c
        .rename("/r/none", "/r/x", false)
        .await
        .expect_err("missing");
    assert_eq!(rpc_class(&err), "java.io.FileNotFoundException");
    c.mkdirs("/r/dir/sub", 0o755, true).await.expect("mkdir");
    c.rename("/r/dir", "/r/moved", false)
        .await
        .expect("move dir");
    assert!(c.get_file_info("/r/moved/sub").await.expect("sub").isdir);
    let err = c
        .rename("/r/moved", "/r/moved/sub/x", false)
        .await
        .expect_err("into itself");
    assert_eq!(rpc_class(&err), "java.io.IOException");

    let err = c.delete("/r/moved", false).await.expect_err("not empty");
    assert_eq!(
        rpc_class(&err),
        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
    );
    assert!(rpc_message(&err).contains("/r/moved is non empty"));
    assert!(c.delete("/r/moved", true).await.expect("recursive"));
    assert!(!c.delete("/r/moved", true).await.expect("missing is false"));
    assert!(c.delete("/r/b", false).await.expect("file"));
}

#[tokio::test]
async fn error_kinds_carry_hdfs_exception_classes() {
    // Goal: FileAlreadyExists, ParentNotDirectory, AlreadyBeingCreated and
    // InvalidPath reach the client with HDFS's exception classes.
    let nn = NameNode::start(&[]);
    let c = nn.client(None);
    c.create("/e/f", WriteOptions::default())
        .await
        .expect("create")
        .close()
        .await
        .expect("close");
    let err = c.mkdirs("/e/f", 0o755, true).await.expect_err("file");
    assert!(matches!(err, HdfsError::AlreadyExists(_)), "{err:?}");
    let err = c
        .mkdirs("/e/f/g", 0o755, true)
        .await
        .expect_err("parent file");
    assert_eq!(
        rpc_class(&err),
        "org.apache.hadoop.fs.ParentNotDirectoryException"
    );
    assert_eq!(rpc_message(&err), "/e/f (is not a directory)");
    let err = c
        .create("/e/f", WriteOptions::default())
        .await
        .err()
        .expect("exists");
    assert!(matches!(err, HdfsError::AlreadyExists(_)), "{err:?}");
    c.mkdirs("/e/d", 0o755, true).await.expect("mkdir");
    let err = c
        .create("/e/d", WriteOptions::default().overwrite(true))
        .await
        .err()
        .expect("dir");
    assert!(
        matches!(&err, HdfsError::AlreadyExists(m) if m.contains("already exists as a directory")),
        "{err:?}"
    );

    // A file held open by one client cannot be created by another without
    // overwriting it; an overwrite replaces it (HDFS-3755), and its first
    // writer has lost it.
    let mut writer = c
        .create("/e/open", WriteOptions::default())
        .await
        .expect("open");
    let other = nn.client(None);
    let err = other
        .create("/e/open", WriteOptions::default())
        .await
        .err()
        .expect("lease held");
    assert!(
        matches!(&err, HdfsError::AlreadyExists(m) if m.contains("lease is currently owned")),
        "{err:?}"
    );
    other
        .create("/e/open", WriteOptions::default().overwrite(true))
        .await
        .expect("replaced")
        .close()
        .await
        .expect("close");
    let lost = writer
        .close()
        .await
        .expect_err("the first writer lost the file");
    assert!(
        format!("{lost:?}").contains("File does not exist"),
        "{lost:?}"
    );

    let err = c.mkdirs("/e/a:b", 0o755, true).await.expect_err("invalid");
    assert_eq!(rpc_class(&err), "org.apache.hadoop.fs.InvalidPathException");
    let long = "n".repeat(256);
    let err = c
        .mkdirs(&format!("/e/{long}"), 0o755, true)
        .await
        .expect_err("long");
    assert!(
        rpc_class(&err).ends_with("PathComponentTooLongException"),
        "{err:?}"
    );
}

#[tokio::test]
async fn permissions_are_enforced_for_non_superusers() {
    // Goal: POSIX checks on every call for a non-superuser (owner/group/
    // other bits, superuser-only chown, owner-only chmod, sticky bit), with
    // HDFS's exact AccessControlException messages.
    let nn = NameNode::start(&[]);
    let admin = nn.client(None);
    let alice = nn.client(Some("alice"));
    let bob = nn.client(Some("bob"));
    let su = current_user();
    admin.mkdirs("/p", 0o755, true).await.expect("mkdir");

    let err = alice.mkdirs("/p/x", 0o755, true).await.expect_err("denied");
    assert_eq!(
        rpc_class(&err),
        "org.apache.hadoop.security.AccessControlException"
    );
    assert_eq!(
        rpc_message(&err),
        format!(
            "Permission denied: user=alice, access=WRITE, inode=\"/p\":{su}:supergroup:drwxr-xr-x"
        )
    );
    let err = alice
        .create("/p/f", WriteOptions::default())
        .await
        .err()
        .expect("denied");
    assert_eq!(
        rpc_class(&err),
        "org.apache.hadoop.security.AccessControlException"
    );

    admin
        .mkdirs("/p/private", 0o700, true)
        .await
        .expect("mkdir");
    admin
        .mkdirs("/p/private/inner", 0o755, true)
        .await
        .expect("mkdir");
    let err = alice
        .get_file_info("/p/private/inner")
        .await
        .expect_err("traverse");
    assert_eq!(
        rpc_message(&err),
        format!("Permission denied: user=alice, access=EXECUTE, inode=\"/p/private\":{su}:supergroup:drwx------")
    );
    let err = alice
        .list_status("/p/private", false)
        .await
        .expect_err("list");
    assert!(rpc_message(&err).contains("access=READ_EXECUTE"), "{err:?}");
    let err = alice.get_content_summary("/p").await.expect_err("summary");
    assert!(
        rpc_message(&err).contains("inode=\"/p/private\""),
        "{err:?}"
    );

    // A world-writable directory: alice creates, only she (or the
    // superuser) may chmod; nobody but the superuser may give files away.
    admin.mkdirs("/p/open", 0o777, true).await.expect("mkdir");
    admin.set_permission("/p/open", 0o777).await.expect("chmod");
    alice
        .create("/p/open/af", WriteOptions::default())
        .await
        .expect("create")
        .close()
        .await
        .expect("close");
    assert_eq!(
        alice.get_file_info("/p/open/af").await.expect("stat").owner,
        "alice"
    );
    let err = bob
        .set_permission("/p/open/af", 0o777)
        .await
        .expect_err("not owner");
    assert_eq!(
        rpc_message(&err),
        "Permission denied. user=bob is not the owner of inode=/p/open/af"
    );
    alice
        .set_permission("/p/open/af", 0o600)
        .await
        .expect("owner chmod");
    let err = alice
        .set_owner("/p/open/af", Some("bob"), None)
        .await
        .expect_err("chown");
    assert_eq!(
        rpc_message(&err),
        "User alice is not a super user (non-super user cannot change owner)."
    );
    let err = alice
        .set_owner("/p/open/af", None, Some("nosuchgroup"))
        .await
        .expect_err("chgrp");
    assert_eq!(
        rpc_message(&err),
        "User alice does not belong to nosuchgroup"
    );
    // Other bits: bob cannot write alice's 0600 file's times.
    let err = bob.set_times("/p/open/af", 1, 1).await.expect_err("write");
    assert!(rpc_message(&err).contains("access=WRITE"), "{err:?}");

    // Without the sticky bit bob may delete alice's file in a 777 dir.
    alice
        .create("/p/open/gone", WriteOptions::default())
        .await
        .expect("create")
        .close()
        .await
        .expect("close");
    assert!(bob.delete("/p/open/gone", false).await.expect("delete"));
    // With it he may not.
    admin
        .set_permission("/p/open", 0o1777)
        .await
        .expect("sticky");
    let err = bob.delete("/p/open/af", false).await.expect_err("sticky");
    assert_eq!(
        rpc_message(&err),
        format!("Permission denied by sticky bit: user=bob, path=\"/p/open/af\":alice:supergroup:-rw-------, parent=\"/p/open\":{su}:supergroup:drwxrwxrwt")
    );
    let err = bob
        .rename("/p/open/af", "/p/open/bf", false)
        .await
        .expect_err("sticky");
    assert!(rpc_message(&err).starts_with("Permission denied by sticky bit"));
    assert!(alice
        .delete("/p/open/af", false)
        .await
        .expect("owner deletes"));

    // The superuser bypasses every check.
    admin
        .mkdirs("/p/private/inner/more", 0o755, true)
        .await
        .expect("superuser");
    admin
        .set_owner("/p/private", Some("alice"), Some("staff"))
        .await
        .expect("chown");
    alice
        .mkdirs("/p/private/mine", 0o755, true)
        .await
        .expect("now alice owns it");
}

#[tokio::test]
async fn reads_move_stale_access_times_forward() {
    // Goal: as HDFS's getBlockLocations, a read of a file whose access
    // time is older than dfs.namenode.accesstime.precision sets it to the
    // time of the read (written in the background here); a fresher one,
    // or a read through .snapshot, leaves it.
    let nn = NameNode::start(&["dfs.namenode.accesstime.precision=60000"]);
    let c = nn.client(None);
    for p in ["/at/old", "/at/fresh"] {
        let mut w = c.create(p, WriteOptions::default()).await.expect("create");
        w.close().await.expect("close");
    }
    c.set_times("/at/old", 5_000, 7_000)
        .await
        .expect("set_times");
    let fresh = c
        .get_file_info("/at/fresh")
        .await
        .expect("stat")
        .access_time;
    let before = now_ms();
    c.read("/at/old").await.expect("open old");
    c.read("/at/fresh").await.expect("open fresh");
    let mut atime = 7_000;
    for _ in 0..100 {
        atime = c.get_file_info("/at/old").await.expect("stat").access_time;
        if atime != 7_000 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert!(atime >= before, "the read's time, got {atime}");
    let f = c.get_file_info("/at/old").await.expect("stat");
    assert_eq!(f.modification_time, 5_000, "the modification time stays");
    let now = c
        .get_file_info("/at/fresh")
        .await
        .expect("stat")
        .access_time;
    assert_eq!(now, fresh, "a fresh access time stays");
}

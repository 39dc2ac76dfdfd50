//! hdfs-native's ACL calls (modify, remove entries, remove default, remove,
//! set, get) against a real `cairn namenode` process give Apache HDFS's
//! results: the entries getAclStatus returns, the permission bits that
//! carry the mask, the ACL bit of file status, HDFS's exceptions and
//! messages, and ACLs that survive a restart.

mod common;

use common::{current_user, NameNode};
use hdfs_native::acl::{AclEntry, AclEntryScope, AclEntryType, FsAction};
use hdfs_native::{HdfsError, WriteOptions};

const ACL_EXCEPTION: &str = "org.apache.hadoop.hdfs.protocol.AclException";

/// The error of a call that must fail (`AclStatus` is not `Debug`).
fn failure<T>(r: Result<T, HdfsError>, what: &str) -> HdfsError {
    match r {
        Ok(_) => panic!("{what}: expected an error"),
        Err(e) => e,
    }
}

/// Parses `[default:]type:[name]:perm`, comma separated.
fn spec(text: &str) -> Vec<AclEntry> {
    text.split(',')
        .map(|e| {
            let (scope, rest) = match e.strip_prefix("default:") {
                Some(rest) => (AclEntryScope::Default, rest),
                None => (AclEntryScope::Access, e),
            };
            let mut parts = rest.split(':');
            let kind = AclEntryType::from(parts.next().unwrap_or_default());
            let name = parts.next().filter(|n| !n.is_empty()).map(str::to_owned);
            let perm = FsAction::from(parts.next().filter(|p| !p.is_empty()).unwrap_or("---"));
            AclEntry::new(kind, scope, perm, name)
        })
        .collect()
}

/// Entries as `[default:]type:name:perm`, in the order returned.
fn text(entries: &[AclEntry]) -> String {
    entries
        .iter()
        .map(|e| {
            let scope = if e.scope == AclEntryScope::Default {
                "default:"
            } else {
                ""
            };
            format!(
                "{scope}{}:{}:{}",
                e.r#type,
                e.name.as_deref().unwrap_or(""),
                e.permissions
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn rpc(e: &HdfsError) -> (String, String) {
    match e {
        HdfsError::RPCError(class, msg) => (class.clone(), msg.clone()),
        other => (format!("not an RPC error: {other:?}"), String::new()),
    }
}

async fn touch(c: &hdfs_native::Client, path: &str, mode: u32) {
    let options = WriteOptions::default().permission(mode);
    let mut w = c.create(path, options).await.expect("create");
    w.close().await.expect("close");
}

#[tokio::test]
async fn acl_calls_give_hdfs_results() {
    let nn = NameNode::start(&[]);
    let c = nn.client(None);
    c.mkdirs("/a/d", 0o755, true).await.expect("mkdirs");
    touch(&c, "/a/f", 0o640).await;

    // Goal: modify adds a named entry; the mask (the group class's union)
    // lands in the group bits and the ACL bit shows in file status.
    c.modify_acl_entries("/a/f", spec("user:bob:rwx"))
        .await
        .expect("modify");
    let st = c.get_acl_status("/a/f").await.expect("status");
    assert_eq!(text(&st.entries), "user:bob:rwx,group::r--");
    assert_eq!(st.permission, 0o670);
    assert_eq!(st.owner, current_user());
    assert_eq!(st.group, "supergroup");
    assert!(!st.sticky);
    let info = c.get_file_info("/a/f").await.expect("info");
    assert_eq!(info.permission, 0o670 | 0o10000, "FsPermission ACL bit");

    // Goal: chmod sets the mask; remove entries recalculates it.
    c.set_permission("/a/f", 0o640).await.expect("chmod");
    assert_eq!(c.get_acl_status("/a/f").await.expect("s").permission, 0o640);
    c.modify_acl_entries("/a/f", spec("group:staff:rw-"))
        .await
        .expect("modify");
    c.remove_acl_entries("/a/f", spec("user:bob"))
        .await
        .expect("remove entries");
    let st = c.get_acl_status("/a/f").await.expect("status");
    assert_eq!(text(&st.entries), "group::r--,group:staff:rw-");
    assert_eq!(st.permission, 0o660);

    // Goal: a default ACL gets its base entries and mask; remove default
    // keeps the access ACL; remove drops everything and restores the
    // group bits from the group entry.
    c.modify_acl_entries("/a/d", spec("user:bob:r-x,default:user:carol:rwx"))
        .await
        .expect("default");
    assert_eq!(
        text(&c.get_acl_status("/a/d").await.expect("d").entries),
        "user:bob:r-x,group::r-x,default:user::rwx,default:user:carol:rwx,\
         default:group::r-x,default:mask::rwx,default:other::r-x"
    );
    c.remove_default_acl("/a/d").await.expect("remove default");
    assert_eq!(
        text(&c.get_acl_status("/a/d").await.expect("d").entries),
        "user:bob:r-x,group::r-x"
    );
    c.set_permission("/a/d", 0o705).await.expect("chmod");
    c.remove_acl("/a/d").await.expect("remove");
    let st = c.get_acl_status("/a/d").await.expect("d");
    assert!(st.entries.is_empty());
    assert_eq!(st.permission, 0o755);
    assert_eq!(
        c.get_file_info("/a/d").await.expect("d").permission,
        0o755,
        "no ACL bit"
    );

    // Goal: set replaces the access scope; a minimal ACL leaves plain bits.
    c.set_acl(
        "/a/f",
        spec("user::rw-,user:alice:r--,group::---,other::---"),
    )
    .await
    .expect("set");
    let st = c.get_acl_status("/a/f").await.expect("f");
    assert_eq!(text(&st.entries), "user:alice:r--,group::---");
    assert_eq!(st.permission, 0o640);
    c.set_acl("/a/f", spec("user::rw-,group::r--,other::r--"))
        .await
        .expect("minimal");
    assert!(c
        .get_acl_status("/a/f")
        .await
        .expect("f")
        .entries
        .is_empty());
    assert_eq!(c.get_file_info("/a/f").await.expect("f").permission, 0o644);
}

#[tokio::test]
async fn acl_errors_are_hdfs_exceptions() {
    let nn = NameNode::start(&[]);
    let c = nn.client(None);
    c.mkdirs("/e/d", 0o755, true).await.expect("mkdirs");
    touch(&c, "/e/f", 0o644).await;
    let cases = [
        (
            "/e/f",
            "default:user:bob:rwx",
            "Invalid ACL: only directories may have a default ACL. Path: /e/f Path: /e/f",
        ),
        (
            "/e/d",
            "mask:m:rwx",
            "Invalid ACL: this entry type must not have a name: mask:m:rwx. Path: /e/d",
        ),
    ];
    for (path, s, message) in cases {
        let e = c.modify_acl_entries(path, spec(s)).await.expect_err(s);
        assert_eq!(rpc(&e), (ACL_EXCEPTION.to_owned(), message.to_owned()));
    }
    let e = c
        .set_acl("/e/d", spec("user::rwx,group::r--"))
        .await
        .expect_err("no other");
    assert_eq!(
        rpc(&e),
        (
            ACL_EXCEPTION.to_owned(),
            "Invalid ACL: the user, group and other entries are required. Path: /e/d".to_owned()
        )
    );
    c.modify_acl_entries("/e/d", spec("user:bob:r--"))
        .await
        .expect("named");
    let e = c
        .remove_acl_entries("/e/d", spec("mask::"))
        .await
        .expect_err("mask");
    assert_eq!(
        rpc(&e).1,
        "Invalid ACL: mask is required and cannot be deleted. Path: /e/d"
    );
    let many: Vec<String> = (0..29).map(|i| format!("user:u{i}:r--")).collect();
    let e = c
        .modify_acl_entries("/e/f", spec(&many.join(",")))
        .await
        .expect_err("limit");
    assert_eq!(
        rpc(&e).1,
        "Invalid ACL: ACL has 33 access entries, which exceeds maximum of 32. Path: /e/f"
    );
    let e = c
        .modify_acl_entries("/e/missing", spec("user:bob:r--"))
        .await
        .expect_err("missing");
    assert_eq!(
        rpc(&e),
        (
            "java.io.FileNotFoundException".to_owned(),
            "Directory/File does not exist /e/missing".to_owned()
        )
    );
    let e = failure(c.get_acl_status("/e/missing").await, "missing");
    assert_eq!(
        rpc(&e),
        (
            "java.io.FileNotFoundException".to_owned(),
            "cannot find /e/missing".to_owned()
        )
    );
    // Only the owner changes an ACL; anyone may read it.
    let alice = nn.client(Some("alice"));
    let e = alice.remove_acl("/e/d").await.expect_err("not the owner");
    assert_eq!(
        rpc(&e),
        (
            "org.apache.hadoop.security.AccessControlException".to_owned(),
            "Permission denied. user=alice is not the owner of inode=/e/d".to_owned()
        )
    );
    assert_eq!(
        text(&alice.get_acl_status("/e/d").await.expect("read").entries),
        "user:bob:r--,group::r-x"
    );
}

#[tokio::test]
async fn acls_can_be_turned_off() {
    let nn = NameNode::start(&["dfs.namenode.acls.enabled=false"]);
    let c = nn.client(None);
    let e = failure(c.get_acl_status("/").await, "off");
    assert_eq!(
        rpc(&e),
        (
            ACL_EXCEPTION.to_owned(),
            "The ACL operation has been rejected.  Support for ACLs has been disabled by \
             setting dfs.namenode.acls.enabled to false."
                .to_owned()
        )
    );
    assert!(c.remove_acl("/").await.is_err());
}

#[tokio::test]
async fn acls_and_inherited_acls_survive_a_restart() {
    let nn = NameNode::start(&[]);
    let c = nn.client(None);
    c.mkdirs("/r", 0o755, true).await.expect("mkdirs");
    c.modify_acl_entries("/r", spec("user:bob:rwx,default:group:staff:r-x"))
        .await
        .expect("modify");
    // hdfs-native sends the masked mode only: it filters the inherited
    // owner, mask and other entries.
    c.mkdirs("/r/child", 0o750, false).await.expect("child");
    touch(&c, "/r/file", 0o640).await;
    let mut want = Vec::new();
    for p in ["/r", "/r/child", "/r/file"] {
        let st = c.get_acl_status(p).await.expect("status");
        want.push((text(&st.entries), st.permission));
    }
    assert_eq!(
        want[1],
        (
            "group::r-x,group:staff:r-x,default:user::rwx,default:group::r-x,\
             default:group:staff:r-x,default:mask::r-x,default:other::r-x"
                .to_owned(),
            0o750
        )
    );
    assert_eq!(want[2], ("group::r-x,group:staff:r-x".to_owned(), 0o640));
    let dir = nn.kill();
    let nn = NameNode::start_in(dir, &[]);
    let c = nn.client(None);
    for (p, (entries, perm)) in ["/r", "/r/child", "/r/file"].iter().zip(&want) {
        let st = c.get_acl_status(p).await.expect("after restart");
        assert_eq!(&text(&st.entries), entries, "{p}");
        assert_eq!(st.permission, *perm, "{p}");
    }
}

//! Extended attributes: HDFS's flags, namespaces, permissions, limits and
//! order, and that the journal and an image rebuild them exactly.

use super::permission::Caller;
use super::tests::{imaged, ns, replayed, root, user, NOW};
use super::*;

fn x(namespace: XAttrNamespace, name: &str, value: Option<&[u8]>) -> XAttr {
    XAttr {
        namespace,
        name: name.into(),
        value: value.map(<[u8]>::to_vec),
    }
}

fn user_x(name: &str, value: &[u8]) -> XAttr {
    x(XAttrNamespace::User, name, Some(value))
}

pub(super) const CREATE: XAttrSetFlags = XAttrSetFlags {
    create: true,
    replace: false,
};
pub(super) const REPLACE: XAttrSetFlags = XAttrSetFlags {
    create: false,
    replace: true,
};
const BOTH: XAttrSetFlags = XAttrSetFlags {
    create: true,
    replace: true,
};

/// A namespace with /d (0777) holding /d/f (0644) owned by alice.
fn tree() -> (Namespace, Vec<Edit>) {
    let mut n = ns();
    let mut log = n.mkdirs(&root(), "/d", 0o777, false, NOW).expect("mkdir");
    let alice = user("alice", &["staff"]);
    let (_, edits, _) = n
        .create(
            &alice,
            "/d/f",
            0o644,
            "c",
            "m",
            false,
            false,
            1,
            1 << 20,
            NOW,
        )
        .expect("create");
    log.extend(edits);
    (n, log)
}

fn names(list: &[XAttr]) -> Vec<String> {
    list.iter().map(XAttr::prefixed_name).collect()
}

#[test]
fn flags_decide_between_create_and_replace() {
    let (mut n, _) = tree();
    let alice = user("alice", &[]);
    let e = n
        .set_xattr(&alice, "/d/f", user_x("a", b"1"), REPLACE)
        .expect_err("REPLACE of a missing one");
    assert_eq!(
        e,
        FsError::Io("XAttr: a does not exist. The CREATE flag must be specified.".into())
    );
    n.set_xattr(&alice, "/d/f", user_x("a", b"1"), CREATE)
        .expect("create");
    let e = n
        .set_xattr(&alice, "/d/f", user_x("a", b"2"), CREATE)
        .expect_err("CREATE of an existing one");
    assert_eq!(
        e,
        FsError::Io("XAttr: a already exists. The REPLACE flag must be specified.".into())
    );
    n.set_xattr(&alice, "/d/f", user_x("a", b"2"), REPLACE)
        .expect("replace");
    let got = n.get_xattrs(&alice, "/d/f", &[]).expect("get");
    assert_eq!(got, vec![user_x("a", b"2")]);
    let e = n
        .set_xattr(&alice, "/d/f", user_x("a", b"3"), XAttrSetFlags::default())
        .expect_err("no flag");
    assert_eq!(
        e,
        FsError::IllegalArgument("A flag must be specified.".into())
    );
}

#[test]
fn newest_first_and_named_gets_must_all_exist() {
    let (mut n, _) = tree();
    let r = root();
    for name in ["a", "b", "c"] {
        n.set_xattr(&r, "/d/f", user_x(name, name.as_bytes()), BOTH)
            .expect("set");
    }
    // Replacing moves an attribute to the front, as HDFS's list does.
    n.set_xattr(&r, "/d/f", user_x("a", b"A"), BOTH)
        .expect("replace");
    assert_eq!(
        names(&n.list_xattrs(&r, "/d/f").expect("list")),
        ["user.a", "user.c", "user.b"]
    );
    assert!(n
        .list_xattrs(&r, "/d/f")
        .expect("list")
        .iter()
        .all(|x| x.value.is_none()));
    let got = n
        .get_xattrs(&r, "/d/f", &[x(XAttrNamespace::User, "b", None)])
        .expect("get b");
    assert_eq!(got, vec![user_x("b", b"b")]);
    let e = n
        .get_xattrs(
            &r,
            "/d/f",
            &[
                x(XAttrNamespace::User, "b", None),
                x(XAttrNamespace::User, "z", None),
            ],
        )
        .expect_err("z is missing");
    assert_eq!(
        e,
        FsError::XAttrNotFound("At least one of the attributes provided was not found.".into())
    );
    let e = n.get_xattrs(&r, "/nope", &[]).expect_err("missing path");
    assert_eq!(e, FsError::FileNotFound("cannot find /nope".into()));
}

#[test]
fn namespaces_are_guarded_as_hdfs_guards_them() {
    let (mut n, _) = tree();
    let alice = user("alice", &[]);
    for (ns_, name) in [
        (XAttrNamespace::Trusted, "trusted.t"),
        (XAttrNamespace::System, "system.s"),
        (XAttrNamespace::Raw, "raw.r"),
        (XAttrNamespace::Security, "security.s"),
    ] {
        let short = &name[name.find('.').map_or(0, |i| i + 1)..];
        let e = n
            .set_xattr(&alice, "/d/f", x(ns_, short, Some(b"v")), BOTH)
            .expect_err(name);
        assert_eq!(
            e,
            FsError::AccessControl(format!("User doesn't have permission for xattr: {name}"))
        );
    }
    // The superuser may use trusted. and sees it; others do not.
    n.set_xattr(
        &root(),
        "/d/f",
        x(XAttrNamespace::Trusted, "t", Some(b"v")),
        BOTH,
    )
    .expect("trusted as superuser");
    n.set_xattr(&alice, "/d/f", user_x("u", b"v"), BOTH)
        .expect("user");
    assert_eq!(
        names(&n.list_xattrs(&root(), "/d/f").expect("list")),
        ["user.u", "trusted.t"]
    );
    assert_eq!(
        names(&n.list_xattrs(&alice, "/d/f").expect("list")),
        ["user.u"]
    );
    // security.hdfs.unreadable.by.superuser: no value, files only, never removed.
    let marker = x(
        XAttrNamespace::Security,
        "hdfs.unreadable.by.superuser",
        None,
    );
    let e = n
        .set_xattr(
            &alice,
            "/d/f",
            XAttr {
                value: Some(b"1".to_vec()),
                ..marker.clone()
            },
            BOTH,
        )
        .expect_err("a value");
    assert!(matches!(e, FsError::AccessControl(m) if m.contains("Values are not allowed")));
    let e = n
        .set_xattr(&root(), "/d", marker.clone(), BOTH)
        .expect_err("a directory");
    assert!(matches!(e, FsError::Io(m) if m.contains("Can only set")));
    n.set_xattr(&alice, "/d/f", marker.clone(), BOTH)
        .expect("the marker");
    let e = n
        .open_for_read(&root(), "/d/f")
        .expect_err("superuser reads");
    assert!(matches!(e, FsError::AccessControl(m) if m.contains("the superuser is not allowed")));
    n.open_for_read(&alice, "/d/f")
        .expect("the owner still reads");
    let e = n
        .remove_xattr(&alice, "/d/f", &marker)
        .expect_err("removing the marker");
    assert!(matches!(e, FsError::AccessControl(m) if m.contains("can not be deleted")));
}

#[test]
fn user_attributes_follow_the_permission_bits() {
    let (mut n, _) = tree();
    let bob = user("bob", &[]);
    let e = n
        .set_xattr(&bob, "/d/f", user_x("a", b"1"), BOTH)
        .expect_err("no write");
    assert!(matches!(e, FsError::AccessControl(m) if m.contains("access=WRITE")));
    n.set_permission(&root(), "/d/f", 0o600).expect("chmod");
    let e = n.list_xattrs(&bob, "/d/f").expect_err("no read");
    assert!(matches!(e, FsError::AccessControl(m) if m.contains("access=READ")));
    // A sticky directory: only its owner (or the superuser) changes them.
    n.set_permission(&root(), "/d", 0o1777).expect("sticky");
    let e = n
        .set_xattr(&bob, "/d", user_x("a", b"1"), BOTH)
        .expect_err("not the owner");
    assert!(matches!(e, FsError::AccessControl(m) if m.contains("is not the owner")));
    n.set_xattr(&root(), "/d", user_x("a", b"1"), BOTH)
        .expect("superuser");
}

#[test]
fn limits_count_user_visible_attributes_and_bytes() {
    let (mut n, _) = tree();
    n.set_xattr_limits(XAttrLimits {
        enabled: true,
        max_per_inode: 2,
        max_size: 8,
    });
    let r = root();
    n.set_xattr(&r, "/d/f", user_x("a", b"1"), BOTH).expect("1");
    n.set_xattr(&r, "/d/f", x(XAttrNamespace::Trusted, "b", None), BOTH)
        .expect("2");
    // Replacing one does not count twice.
    n.set_xattr(&r, "/d/f", user_x("a", b"22"), BOTH)
        .expect("replace");
    let e = n
        .set_xattr(&r, "/d/f", user_x("c", b"3"), BOTH)
        .expect_err("a third");
    assert_eq!(
        e,
        FsError::Io("Cannot add additional XAttr to inode, would exceed limit of 2".into())
    );
    let e = n
        .set_xattr(&r, "/d/f", user_x("abcd", b"12345"), BOTH)
        .expect_err("9 bytes");
    assert_eq!(
        e,
        FsError::IllegalArgument(
            "The XAttr is too big. The maximum combined size of the name and value is 8, but the \
             total size is 9"
                .into()
        )
    );
    n.set_xattr_limits(XAttrLimits {
        enabled: false,
        ..XAttrLimits::default()
    });
    let e = n.list_xattrs(&r, "/d/f").expect_err("disabled");
    assert!(matches!(e, FsError::Io(m) if m.contains("dfs.namenode.xattrs.enabled")));
}

#[test]
fn journal_and_image_rebuild_them_and_deletes_drop_them() {
    let (mut n, mut log) = tree();
    let r = root();
    for (name, v) in [("a", &b"1"[..]), ("b", b""), ("c", b"3")] {
        log.push(n.set_xattr(&r, "/d/f", user_x(name, v), BOTH).expect("set"));
    }
    log.push(
        n.set_xattr(&r, "/d", x(XAttrNamespace::Trusted, "t", None), BOTH)
            .expect("dir"),
    );
    log.push(
        n.remove_xattr(&r, "/d/f", &user_x("b", b""))
            .expect("remove"),
    );
    let e = n
        .remove_xattr(&r, "/d/f", &user_x("b", b""))
        .expect_err("again");
    assert_eq!(
        e,
        FsError::Io("No matching attributes found for remove operation".into())
    );
    let (_, rename) = n.rename(&r, "/d/f", "/d/g", NOW).expect("rename");
    log.extend(rename);
    for copy in [replayed(&log), replayed(&n.to_edits()), imaged(&n)] {
        assert_eq!(
            copy.get_xattrs(&r, "/d/g", &[]).expect("g"),
            n.get_xattrs(&r, "/d/g", &[]).expect("g")
        );
        assert_eq!(
            names(&copy.get_xattrs(&r, "/d/g", &[]).expect("g")),
            ["user.c", "user.a"]
        );
        assert_eq!(
            names(&copy.list_xattrs(&r, "/d").expect("d")),
            ["trusted.t"]
        );
    }
    let id = n.get_file_info(&r, "/d/g").expect("ok").expect("g").id;
    n.delete(&r, "/d", true, NOW).expect("delete");
    assert!(
        n.xattrs_of(id).is_empty(),
        "a deleted inode keeps no attributes"
    );
    assert!(n.xattrs.is_empty());
}

#[test]
fn callers_other_than_the_superuser_never_see_trusted() {
    let (mut n, _) = tree();
    n.set_xattr(
        &root(),
        "/d/f",
        x(XAttrNamespace::Trusted, "t", Some(b"v")),
        BOTH,
    )
    .expect("set");
    let alice: Caller = user("alice", &[]);
    let e = n
        .get_xattrs(&alice, "/d/f", &[x(XAttrNamespace::Trusted, "t", None)])
        .expect_err("named trusted");
    assert!(matches!(e, FsError::AccessControl(_)));
    assert!(n.get_xattrs(&alice, "/d/f", &[]).expect("all").is_empty());
}

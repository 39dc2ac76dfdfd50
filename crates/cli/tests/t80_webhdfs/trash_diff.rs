//! GETTRASHROOTS (the caller's `.Trash`, or every user's with
//! `allusers=true`, as `JsonUtil`'s client-side FileStatus maps) and
//! GETSNAPSHOTDIFFLISTING (one page of getSnapshotDiffReportListing with its
//! cursor).

use std::net::SocketAddr;

use super::call;

pub(super) fn trash_roots_and_diff_listing(nn: SocketAddr) {
    // No trash yet: no roots, and as HDFS writes it, no list.
    let (code, v) = call(nn, "GET", "/webhdfs/v1/?op=GETTRASHROOTS&user.name=tom");
    assert_eq!(code, 200, "{v}");
    assert_eq!(v, serde_json::json!({"Paths": null}));
    let su = super::common::current_user();
    for user in ["tom", "ann"] {
        for path in [
            format!("/webhdfs/v1/user/{user}/.Trash/Current?op=MKDIRS&user.name={su}"),
            format!("/webhdfs/v1/user/{user}/.Trash?op=SETOWNER&owner={user}&user.name={su}"),
        ] {
            let (code, v) = call(nn, "PUT", &path);
            assert_eq!(code, 200, "{path}: {v}");
        }
    }
    let (_, v) = call(nn, "GET", "/webhdfs/v1/?op=GETTRASHROOTS&user.name=tom");
    let paths = v["Paths"].as_array().expect("Paths");
    assert_eq!(paths.len(), 1, "{v}");
    assert_eq!(paths[0]["path"], "/user/tom/.Trash");
    assert_eq!(paths[0]["isdir"], true);
    assert_eq!(paths[0]["owner"], "tom");
    let (_, v) = call(
        nn,
        "GET",
        "/webhdfs/v1/?op=GETTRASHROOTS&allusers=true&user.name=tom",
    );
    let mut all: Vec<&str> = v["Paths"]
        .as_array()
        .expect("Paths")
        .iter()
        .filter_map(|p| p["path"].as_str())
        .collect();
    all.sort();
    assert!(
        all.contains(&"/user/ann/.Trash") && all.contains(&"/user/tom/.Trash"),
        "{v}"
    );
    let (code, _) = call(nn, "GET", "/webhdfs/v1/?op=GETTRASHROOTS&allusers=maybe");
    assert_eq!(code, 400);

    // A snapshot diff listing: a directory created after s1.
    for (method, path) in [
        ("PUT", format!("/webhdfs/v1/dl?op=MKDIRS&user.name={su}")),
        (
            "PUT",
            format!("/webhdfs/v1/dl?op=ALLOWSNAPSHOT&user.name={su}"),
        ),
        (
            "PUT",
            format!("/webhdfs/v1/dl?op=CREATESNAPSHOT&snapshotname=s1&user.name={su}"),
        ),
        (
            "PUT",
            format!("/webhdfs/v1/dl/new?op=MKDIRS&user.name={su}"),
        ),
    ] {
        let (code, v) = call(nn, method, &path);
        assert_eq!(code, 200, "{method} {path}: {v}");
    }
    let (code, v) = call(
        nn,
        "GET",
        &format!(
            "/webhdfs/v1/dl?op=GETSNAPSHOTDIFFLISTING&oldsnapshotname=s1&snapshotname=&user.name={su}"
        ),
    );
    assert_eq!(code, 200, "{v}");
    let l = &v["SnapshotDiffReportListing"];
    assert_eq!(l["lastIndex"], -1, "{v}");
    assert_eq!(l["lastPath"], "", "{v}");
    assert_eq!(l["isFromEarlier"], true, "{v}");
    let created: Vec<&str> = l["createList"]
        .as_array()
        .expect("createList")
        .iter()
        .filter_map(|e| e["sourcePath"].as_str())
        .collect();
    assert_eq!(created, vec!["new"], "{v}");
    assert!(
        l["modifyList"].as_array().is_some_and(|m| !m.is_empty()),
        "{v}"
    );
    for (method, path) in [
        (
            "DELETE",
            format!("/webhdfs/v1/dl?op=DELETESNAPSHOT&snapshotname=s1&user.name={su}"),
        ),
        (
            "PUT",
            format!("/webhdfs/v1/dl?op=DISALLOWSNAPSHOT&user.name={su}"),
        ),
        (
            "DELETE",
            format!("/webhdfs/v1/dl?op=DELETE&recursive=true&user.name={su}"),
        ),
        (
            "DELETE",
            format!("/webhdfs/v1/user?op=DELETE&recursive=true&user.name={su}"),
        ),
    ] {
        let (code, v) = call(nn, method, &path);
        assert_eq!(code, 200, "{method} {path}: {v}");
    }
}

//! WebHDFS on one cluster (a NameNode and two DataNodes), spoken with a
//! plain HTTP client, curl, Java's WebHdfsFileSystem and Python clients:
//! HDFS's JSON shapes, RemoteException errors and status codes (the values
//! below were read from Apache HDFS 3.4.1 answering the same requests);
//! the two-step 307 data flow; `doas`; hostile requests that get a clear
//! answer and leave the server serving others; the README's curl
//! examples; the FsShell golden scripts over `webhdfs://`; HdfsCLI, fsspec
//! and pandas (tests/python/webhdfs_clients.py).
//!
//! Java needs a JDK and Maven; Python 3 with venv and PyPI (setup.sh),
//! skipped without them unless CI is set.

#[path = "t80_webhdfs/being_written.rs"]
mod being_written;
#[path = "t80_webhdfs/checksum.rs"]
mod checksum;
mod common;
#[path = "t80_webhdfs/create_flags.rs"]
mod create_flags;
#[path = "t80_webhdfs/hostile.rs"]
mod hostile;
#[path = "t80_webhdfs/readme.rs"]
mod readme;
#[path = "t80_webhdfs/trash_diff.rs"]
mod trash_diff;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use common::{http_request, Cluster};
use serde_json::Value;

fn json(body: &[u8]) -> Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(body)))
}

/// A request to the NameNode: status and JSON body.
fn call(nn: SocketAddr, method: &str, path: &str) -> (u16, Value) {
    let (code, _, body) = http_request(nn, method, path, b"");
    let v = if body.is_empty() {
        Value::Null
    } else {
        json(&body)
    };
    (code, v)
}

/// The RemoteException's class and message, after checking the status.
fn remote_error(nn: SocketAddr, method: &str, path: &str, status: u16) -> (String, String) {
    let (code, v) = call(nn, method, path);
    assert_eq!(code, status, "{method} {path}: {v}");
    let e = &v["RemoteException"];
    (
        e["javaClassName"].as_str().unwrap_or_default().to_string(),
        e["message"].as_str().unwrap_or_default().to_string(),
    )
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> &'a str {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no {name} header in {headers:?}"))
}

/// `http://host:port/path?query` → (address, path?query).
fn split_url(url: &str) -> (SocketAddr, String) {
    let rest = url.strip_prefix("http://").expect("http URL");
    let slash = rest.find('/').expect("path");
    let addr = rest[..slash].parse().expect("host:port");
    (addr, rest[slash..].to_string())
}

#[test]
fn webhdfs_on_one_cluster() {
    let cluster = Cluster::start(
        2,
        &[
            "dfs.replication=2",
            "hadoop.proxyuser.hue.users=alice",
            "hadoop.proxyuser.hue.hosts=127.0.0.1",
        ],
    );
    let nn = cluster.nn.http;
    namespace_ops(nn);
    acl_xattr_snapshot_policy_ops(nn);
    data_flow(&cluster);
    being_written::open_at_the_edges(&cluster);
    create_flags::create_flags_and_early_answers(&cluster);
    checksum::file_checksums(&cluster);
    trash_diff::trash_roots_and_diff_listing(nn);
    impersonation(nn);
    hostile::hostile_requests(&cluster);
    readme::curl_examples(nn);
    java_fsshell_over_webhdfs(nn);
    python_clients(nn);
}

fn namespace_ops(nn: SocketAddr) {
    let su = common::current_user();
    let u = format!("user.name={su}");
    // The root's status, as HDFS's JsonUtil writes it.
    let (code, headers, body) = http_request(nn, "GET", "/webhdfs/v1/?op=GETFILESTATUS", b"");
    assert_eq!(code, 200);
    assert!(header(&headers, "content-type").starts_with("application/json"));
    let st = json(&body);
    assert_eq!(st["FileStatus"]["type"], "DIRECTORY");
    assert_eq!(st["FileStatus"]["permission"], "755");
    assert_eq!(st["FileStatus"]["pathSuffix"], "");

    let mk = call(nn, "PUT", &format!("/webhdfs/v1/w/a/b?op=MKDIRS&{u}"));
    assert_eq!(mk, (200, serde_json::json!({"boolean": true})));
    // LISTSTATUS: one entry per line, as HDFS streams it.
    let (code, _, body) = http_request(nn, "GET", "/webhdfs/v1/w?op=LISTSTATUS", b"");
    assert_eq!(code, 200);
    let text = String::from_utf8_lossy(&body);
    assert!(
        text.starts_with("{\"FileStatuses\":{\"FileStatus\":[\n{") && text.ends_with("}\n]}}\n"),
        "{text}"
    );
    let list = json(&body);
    let entry = &list["FileStatuses"]["FileStatus"][0];
    let keys: Vec<&str> = entry
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "accessTime",
            "blockSize",
            "childrenNum",
            "fileId",
            "group",
            "length",
            "modificationTime",
            "owner",
            "pathSuffix",
            "permission",
            "replication",
            "storagePolicy",
            "type"
        ]
    );
    assert_eq!(entry["pathSuffix"], "a");
    assert_eq!(entry["childrenNum"], 1);
    let (code, _, body) = http_request(nn, "GET", "/webhdfs/v1/empty?op=LISTSTATUS", b"");
    assert_eq!(code, 404, "{}", String::from_utf8_lossy(&body));
    assert_eq!(
        json(&body)["RemoteException"]["message"],
        "File /empty does not exist."
    );
    let (_, batch) = call(nn, "GET", "/webhdfs/v1/w?op=LISTSTATUS_BATCH&startAfter=a");
    assert_eq!(
        batch,
        serde_json::json!({"DirectoryListing": {"partialListing": {"FileStatuses": {"FileStatus": []}}, "remainingEntries": 0}})
    );

    let (_, cs) = call(nn, "GET", "/webhdfs/v1/w?op=GETCONTENTSUMMARY");
    assert_eq!(
        cs,
        serde_json::json!({"ContentSummary": {"directoryCount": 3, "ecPolicy": "", "fileCount": 0, "length": 0, "quota": -1,
            "snapshotDirectoryCount": 0, "snapshotFileCount": 0, "snapshotLength": 0, "snapshotSpaceConsumed": 0,
            "spaceConsumed": 0, "spaceQuota": -1, "typeQuota": {}}})
    );
    let (_, qu) = call(nn, "GET", "/webhdfs/v1/w?op=GETQUOTAUSAGE");
    assert_eq!(
        qu,
        serde_json::json!({"QuotaUsage": {"fileAndDirectoryCount": 3, "quota": -1, "spaceConsumed": 0, "spaceQuota": -1, "typeQuota": {}}})
    );
    let home = call(nn, "GET", "/webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=bob");
    assert_eq!(home.1, serde_json::json!({"Path": "/user/bob"}));
    let home = call(nn, "GET", "/webhdfs/v1/?op=GETHOMEDIRECTORY");
    assert_eq!(home.1, serde_json::json!({"Path": "/user/dr.who"}));
    let trash = call(nn, "GET", "/webhdfs/v1/w?op=GETTRASHROOT&user.name=bob");
    assert_eq!(trash.1, serde_json::json!({"Path": "/user/bob/.Trash"}));
    let (_, d) = call(nn, "GET", "/webhdfs/v1/?op=GETSERVERDEFAULTS");
    assert_eq!(d["FsServerDefaults"]["blockSize"], 134_217_728);
    assert_eq!(d["FsServerDefaults"]["replication"], 2);
    assert_eq!(d["FsServerDefaults"]["checksumType"], 2);
    let (_, s) = call(nn, "GET", "/webhdfs/v1/?op=GETSTATUS");
    assert!(s["FsStatus"]["capacity"].as_u64().is_some_and(|c| c > 0));

    // Changes: answers and errors as HDFS.
    let put = |q: &str| call(nn, "PUT", &format!("/webhdfs/v1/w/a?{q}&{u}"));
    assert_eq!(put("op=SETPERMISSION&permission=700"), (200, Value::Null));
    assert_eq!(put("op=SETOWNER&owner=bob&group=g"), (200, Value::Null));
    assert_eq!(put("op=SETTIMES&modificationtime=1000"), (200, Value::Null));
    let (_, st) = call(nn, "GET", "/webhdfs/v1/w/a?op=GETFILESTATUS");
    assert_eq!(st["FileStatus"]["permission"], "700");
    assert_eq!(st["FileStatus"]["owner"], "bob");
    assert_eq!(st["FileStatus"]["modificationTime"], 1000);
    let (_, m) = remote_error(nn, "PUT", &format!("/webhdfs/v1/w/a?op=SETOWNER&{u}"), 400);
    assert_eq!(m, "Both owner and group are empty.");
    let rename = put("op=RENAME&destination=/w/c");
    assert_eq!(rename.1, serde_json::json!({"boolean": true}));
    let missing = call(
        nn,
        "PUT",
        &format!("/webhdfs/v1/w/zz?op=RENAME&destination=/w/x&{u}"),
    );
    assert_eq!(missing.1, serde_json::json!({"boolean": false}));
    let (_, m) = remote_error(
        nn,
        "PUT",
        &format!("/webhdfs/v1/w/c?op=RENAME&destination=rel&{u}"),
        400,
    );
    assert_eq!(m, "Invalid value for webhdfs parameter \"destination\": Invalid parameter value: destination = \"rel\" is not an absolute path.");
    let (_, m) = remote_error(nn, "PUT", &format!("/webhdfs/v1/w/c?op=RENAME&{u}"), 400);
    assert_eq!(
        m,
        "Required param destination for op: RENAME is null or empty"
    );
    let r2 = call(
        nn,
        "PUT",
        &format!("/webhdfs/v1/w/c?op=RENAME&destination=/w/d&renameoptions=OVERWRITE&{u}"),
    );
    assert_eq!(r2, (200, Value::Null));
    let dir_repl = call(
        nn,
        "PUT",
        &format!("/webhdfs/v1/w?op=SETREPLICATION&replication=2&{u}"),
    );
    assert_eq!(dir_repl.1, serde_json::json!({"boolean": false}));
    let (class, m) = remote_error(nn, "DELETE", &format!("/webhdfs/v1/w?op=DELETE&{u}"), 403);
    assert_eq!(
        class,
        "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException"
    );
    assert_eq!(m, "`/w is non empty': Directory is not empty");
    let (class, m) = remote_error(nn, "DELETE", "/webhdfs/v1/w/d?op=DELETE&user.name=eve", 403);
    assert_eq!(class, "org.apache.hadoop.security.AccessControlException");
    assert!(
        m.starts_with("Permission denied: user=eve, access=WRITE"),
        "{m}"
    );
    let ok = call(
        nn,
        "GET",
        "/webhdfs/v1/w?op=CHECKACCESS&fsaction=r-x&user.name=eve",
    );
    assert_eq!(ok, (200, Value::Null));
    let (_, m) = remote_error(nn, "GET", "/webhdfs/v1/w?op=CHECKACCESS&fsaction=bad", 400);
    assert_eq!(m, "Invalid value for webhdfs parameter \"fsaction\": Invalid value: \"bad\" does not belong to the domain [r-][w-][x-]");
    let (_, m) = remote_error(nn, "POST", &format!("/webhdfs/v1/w/f?op=TRUNCATE&{u}"), 400);
    assert_eq!(
        m,
        "Required param newlength for op: TRUNCATE is null or empty"
    );
    let (_, m) = remote_error(nn, "POST", &format!("/webhdfs/v1/w/f?op=CONCAT&{u}"), 400);
    assert_eq!(m, "Required param sources for op: CONCAT is null or empty");
    let (_, m) = remote_error(nn, "GET", "/webhdfs/v1/w?op=GETFILEBLOCKLOCATIONS", 404);
    assert_eq!(m, "Path is not a file: /w");
    let del = call(nn, "DELETE", &format!("/webhdfs/v1/w/zz?op=DELETE&{u}"));
    assert_eq!(del.1, serde_json::json!({"boolean": false}));
}

fn acl_xattr_snapshot_policy_ops(nn: SocketAddr) {
    let u = format!("user.name={}", common::current_user());
    let put = |path: &str, q: &str| call(nn, "PUT", &format!("/webhdfs/v1{path}?{q}&{u}"));
    assert_eq!(put("/x", "op=MKDIRS").0, 200);
    assert_eq!(put("/x", "op=MODIFYACLENTRIES&aclspec=user:bob:rwx").0, 200);
    let (_, acl) = call(nn, "GET", "/webhdfs/v1/x?op=GETACLSTATUS");
    assert_eq!(
        acl["AclStatus"]["entries"],
        serde_json::json!(["user:bob:rwx", "group::r-x"])
    );
    assert_eq!(acl["AclStatus"]["permission"], "775");
    assert_eq!(acl["AclStatus"]["stickyBit"], false);
    let (_, st) = call(nn, "GET", "/webhdfs/v1/x?op=GETFILESTATUS");
    assert_eq!(st["FileStatus"]["aclBit"], true);
    let (_, m) = remote_error(
        nn,
        "PUT",
        &format!("/webhdfs/v1/x?op=MODIFYACLENTRIES&aclspec=junk&{u}"),
        400,
    );
    assert!(m.starts_with("Invalid value for webhdfs parameter \"aclspec\": Invalid value: \"junk\" does not belong to the domain ^(default:)?"), "{m}");
    assert_eq!(put("/x", "op=REMOVEACLENTRIES&aclspec=user:bob:").0, 200);
    assert_eq!(put("/x", "op=REMOVEACL").0, 200);

    assert_eq!(
        put(
            "/x",
            "op=SETXATTR&xattr.name=user.k&xattr.value=v1&flag=CREATE"
        )
        .0,
        200
    );
    assert_eq!(
        put(
            "/x",
            "op=SETXATTR&xattr.name=user.k2&xattr.value=0x0102&flag=CREATE"
        )
        .0,
        200
    );
    let (_, m) = remote_error(
        nn,
        "PUT",
        &format!("/webhdfs/v1/x?op=SETXATTR&xattr.name=user.k&xattr.value=v1&flag=CREATE&{u}"),
        403,
    );
    assert_eq!(
        m,
        "XAttr: k already exists. The REPLACE flag must be specified."
    );
    let (class, _) = remote_error(
        nn,
        "PUT",
        &format!("/webhdfs/v1/x?op=SETXATTR&xattr.name=bad&xattr.value=v&flag=CREATE&{u}"),
        400,
    );
    assert_eq!(class, "org.apache.hadoop.HadoopIllegalArgumentException");
    let (_, x) = call(
        nn,
        "GET",
        &format!(
            "/webhdfs/v1/x?op=GETXATTRS&encoding=base64&xattr.name=user.k&xattr.name=user.k2&{u}"
        ),
    );
    assert_eq!(
        x,
        serde_json::json!({"XAttrs": [{"name": "user.k", "value": "0sdjE="}, {"name": "user.k2", "value": "0sAQI="}]})
    );
    let (_, x) = call(
        nn,
        "GET",
        &format!("/webhdfs/v1/x?op=GETXATTRS&encoding=hex&xattr.name=user.k&{u}"),
    );
    assert_eq!(
        x,
        serde_json::json!({"XAttrs": [{"name": "user.k", "value": "0x7631"}]})
    );
    let (_, m) = remote_error(nn, "GET", "/webhdfs/v1/x?op=GETXATTRS", 400);
    assert_eq!(
        m,
        "Required param encoding for op: GETXATTRS is null or empty"
    );
    // A name the file does not have: HDFS 3.4's XAttrNotFoundException.
    let (class, m) = remote_error(
        nn,
        "GET",
        &format!("/webhdfs/v1/x?op=GETXATTRS&encoding=text&xattr.name=user.none&{u}"),
        403,
    );
    assert_eq!(
        class,
        "org.apache.hadoop.hdfs.protocol.XAttrNotFoundException"
    );
    assert_eq!(m, "At least one of the attributes provided was not found.");
    let (_, names) = call(nn, "GET", &format!("/webhdfs/v1/x?op=LISTXATTRS&{u}"));
    let listed: Vec<String> =
        serde_json::from_str(names["XAttrNames"].as_str().expect("a JSON string")).expect("array");
    assert_eq!(listed.len(), 2);
    assert_eq!(put("/x", "op=REMOVEXATTR&xattr.name=user.k").0, 200);

    assert_eq!(put("/x", "op=ALLOWSNAPSHOT").0, 200);
    let s1 = put("/x", "op=CREATESNAPSHOT&snapshotname=s1");
    assert_eq!(s1.1, serde_json::json!({"Path": "/x/.snapshot/s1"}));
    assert_eq!(put("/x/y", "op=MKDIRS").0, 200);
    let (_, diff) = call(
        nn,
        "GET",
        &format!("/webhdfs/v1/x?op=GETSNAPSHOTDIFF&oldsnapshotname=s1&snapshotname=&{u}"),
    );
    assert_eq!(
        diff,
        serde_json::json!({"SnapshotDiffReport": {"diffList": [{"sourcePath": "", "type": "MODIFY"}, {"sourcePath": "y", "type": "CREATE"}], "fromSnapshot": "s1", "snapshotRoot": "/x", "toSnapshot": ""}})
    );
    // The current tree against itself: HDFS's WebHDFS passes both names
    // as null, and they come back so, with the path asked for.
    let (_, diff) = call(
        nn,
        "GET",
        &format!("/webhdfs/v1/x/y?op=GETSNAPSHOTDIFF&oldsnapshotname=&snapshotname=&{u}"),
    );
    assert_eq!(
        diff,
        serde_json::json!({"SnapshotDiffReport": {"diffList": [], "fromSnapshot": null, "snapshotRoot": "/x/y", "toSnapshot": null}})
    );
    assert_eq!(
        put("/x", "op=RENAMESNAPSHOT&oldsnapshotname=s1&snapshotname=s2").0,
        200
    );
    let (_, dirs) = call(
        nn,
        "GET",
        &format!("/webhdfs/v1/?op=GETSNAPSHOTTABLEDIRECTORYLIST&{u}"),
    );
    assert_eq!(dirs["SnapshottableDirectoryList"][0]["parentFullPath"], "/");
    assert_eq!(dirs["SnapshottableDirectoryList"][0]["snapshotNumber"], 1);
    assert_eq!(
        dirs["SnapshottableDirectoryList"][0]["snapshotQuota"],
        65536
    );
    let (_, list) = call(nn, "GET", &format!("/webhdfs/v1/x?op=GETSNAPSHOTLIST&{u}"));
    assert_eq!(list["SnapshotList"][0]["fullPath"], "/x/.snapshot/s2");
    assert_eq!(list["SnapshotList"][0]["deletionStatus"], "ACTIVE");
    let (class, m) = remote_error(
        nn,
        "DELETE",
        &format!("/webhdfs/v1/x?op=DELETESNAPSHOT&snapshotname=zz&{u}"),
        403,
    );
    assert_eq!(class, "org.apache.hadoop.hdfs.protocol.SnapshotException");
    assert_eq!(
        m,
        "Cannot delete snapshot zz from path /x: the snapshot does not exist."
    );
    assert_eq!(
        call(
            nn,
            "DELETE",
            &format!("/webhdfs/v1/x?op=DELETESNAPSHOT&snapshotname=s2&{u}")
        )
        .0,
        200
    );
    assert_eq!(put("/x", "op=DISALLOWSNAPSHOT").0, 200);

    assert_eq!(put("/x", "op=SETSTORAGEPOLICY&storagepolicy=COLD").0, 200);
    let (_, p) = call(nn, "GET", "/webhdfs/v1/x?op=GETSTORAGEPOLICY");
    assert_eq!(
        p,
        serde_json::json!({"BlockStoragePolicy": {"copyOnCreateFile": false, "creationFallbacks": [], "id": 2, "name": "COLD", "replicationFallbacks": [], "storageTypes": ["ARCHIVE"]}})
    );
    let (_, m) = remote_error(
        nn,
        "PUT",
        &format!("/webhdfs/v1/x?op=SETSTORAGEPOLICY&{u}"),
        400,
    );
    assert_eq!(m, "Storage policy name is empty.");
    assert_eq!(
        call(
            nn,
            "POST",
            &format!("/webhdfs/v1/x?op=UNSETSTORAGEPOLICY&{u}")
        )
        .0,
        200
    );
    let (_, all) = call(nn, "GET", "/webhdfs/v1/?op=GETALLSTORAGEPOLICY");
    let policies = all["BlockStoragePolicies"]["BlockStoragePolicy"]
        .as_array()
        .expect("list");
    assert!(policies
        .iter()
        .any(|p| p["name"] == "LAZY_PERSIST" && p["copyOnCreateFile"] == true));

    assert_eq!(put("/x", "op=SETQUOTA&namespacequota=10").0, 200);
    let (_, q) = call(nn, "GET", "/webhdfs/v1/x?op=GETQUOTAUSAGE");
    assert_eq!(q["QuotaUsage"]["quota"], 10);
    let (_, m) = remote_error(
        nn,
        "PUT",
        &format!("/webhdfs/v1/x?op=SETQUOTABYSTORAGETYPE&storagespacequota=1000&{u}"),
        400,
    );
    assert_eq!(
        m,
        "Required param storagetype for op: SETQUOTABYSTORAGETYPE is null or empty"
    );
    // An unknown type: the enum's own refusal, unwrapped, as HDFS answers.
    let (class, m) = remote_error(
        nn,
        "PUT",
        &format!("/webhdfs/v1/x?op=SETQUOTABYSTORAGETYPE&storagetype=nope&storagespacequota=1&{u}"),
        400,
    );
    assert_eq!(class, "java.lang.IllegalArgumentException");
    assert_eq!(m, "No enum constant org.apache.hadoop.fs.StorageType.NOPE");
    assert_eq!(
        put("/x", "op=SETQUOTA&namespacequota=-1&storagespacequota=-1").0,
        200
    );
    let (_, q) = call(nn, "GET", "/webhdfs/v1/x?op=GETQUOTAUSAGE");
    assert_eq!(q["QuotaUsage"]["quota"], -1);
}

fn data_flow(cluster: &Cluster) {
    let nn = cluster.nn.http;
    let u = format!("user.name={}", common::current_user());
    // Step 1: the NameNode redirects to a DataNode's WebHDFS with HDFS's
    // parameters (sorted after namenoderpcaddress).
    let (code, headers, _) = http_request(
        nn,
        "PUT",
        &format!("/webhdfs/v1/data/f?op=CREATE&{u}&replication=1&permission=600"),
        b"",
    );
    assert_eq!(code, 307);
    let location = header(&headers, "location").to_string();
    let rpc = cluster.nn.addr;
    assert!(
        location.ends_with(&format!("/webhdfs/v1/data/f?op=CREATE&{u}&namenoderpcaddress={rpc}&createflag=&createparent=true&overwrite=false&permission=600&replication=1")),
        "{location}"
    );
    let (dn, path) = split_url(&location);
    assert!(
        cluster.dns.iter().any(|d| d.http == dn),
        "{dn} is a DataNode"
    );
    // Step 2: the data goes to the DataNode, which writes it through the
    // pipeline: 201 and the file's hdfs:// URL.
    let data = common::pattern(7, 3 * 1024 * 1024 + 11);
    let (code, headers, body) = http_request(dn, "PUT", &path, &data);
    assert_eq!(code, 201, "{}", String::from_utf8_lossy(&body));
    assert_eq!(header(&headers, "location"), format!("hdfs://{rpc}/data/f"));
    let (_, st) = call(nn, "GET", "/webhdfs/v1/data/f?op=GETFILESTATUS");
    assert_eq!(st["FileStatus"]["length"], data.len());
    assert_eq!(st["FileStatus"]["permission"], "600");
    assert_eq!(st["FileStatus"]["replication"], 1);
    // A file's summary names its policy "Replicated" (a directory's is empty).
    let (_, cs) = call(nn, "GET", "/webhdfs/v1/data/f?op=GETCONTENTSUMMARY");
    assert_eq!(cs["ContentSummary"]["ecPolicy"], "Replicated");
    assert_eq!(cs["ContentSummary"]["directoryCount"], 0);

    // OPEN: redirected to a DataNode holding the block at the offset.
    let (code, headers, _) = http_request(
        nn,
        "GET",
        &format!("/webhdfs/v1/data/f?op=OPEN&{u}&offset=1000&length=5000"),
        b"",
    );
    assert_eq!(code, 307);
    let location = header(&headers, "location").to_string();
    assert!(
        location.contains(&format!(
            "&namenoderpcaddress={rpc}&length=5000&offset=1000"
        )),
        "{location}"
    );
    let (dn, path) = split_url(&location);
    let (code, headers, body) = http_request(dn, "GET", &path, b"");
    assert_eq!(code, 200);
    assert_eq!(header(&headers, "content-length"), "5000");
    assert_eq!(body, &data[1000..6000]);
    let (code, _, body) = http_request(dn, "GET", &path.replace("&length=5000", ""), b"");
    assert_eq!(code, 200);
    assert_eq!(body, &data[1000..], "the rest of the file, streamed");

    // noredirect: the URL as JSON.
    let (_, loc) = call(
        nn,
        "GET",
        &format!("/webhdfs/v1/data/f?op=OPEN&noredirect=true&{u}"),
    );
    let url = loc["Location"]
        .as_str()
        .unwrap_or_else(|| panic!("no Location: {loc}"));
    assert!(
        url.contains(&format!("?op=OPEN&{u}&namenoderpcaddress=")) && url.ends_with("&offset=0"),
        "{url}"
    );

    // APPEND through the DataNode.
    let (code, headers, _) = http_request(
        nn,
        "POST",
        &format!("/webhdfs/v1/data/f?op=APPEND&{u}"),
        b"",
    );
    assert_eq!(code, 307);
    let (dn, path) = split_url(header(&headers, "location"));
    let (code, _, _) = http_request(dn, "POST", &path, b"tail");
    assert_eq!(code, 200);
    let (_, st) = call(nn, "GET", "/webhdfs/v1/data/f?op=GETFILESTATUS");
    assert_eq!(st["FileStatus"]["length"], data.len() + 4);

    // Errors as HDFS: offset past the end, a missing file, an existing one.
    let (class, m) = remote_error(nn, "GET", "/webhdfs/v1/data/f?op=OPEN&offset=99999999", 403);
    assert_eq!(class, "java.io.IOException");
    assert_eq!(
        m,
        format!(
            "Offset=99999999 out of the range [0, {}); OPEN, path=/data/f",
            data.len() + 4
        )
    );
    let (_, m) = remote_error(nn, "GET", "/webhdfs/v1/data/none?op=OPEN", 404);
    assert_eq!(m, "File /data/none not found.");
    let (code, headers, _) =
        http_request(nn, "PUT", &format!("/webhdfs/v1/data/f?op=CREATE&{u}"), b"");
    assert_eq!(code, 307);
    let (dn, path) = split_url(header(&headers, "location"));
    let (code, _, body) = http_request(dn, "PUT", &path, b"x");
    assert_eq!(code, 403);
    assert_eq!(
        json(&body)["RemoteException"]["exception"],
        "FileAlreadyExistsException"
    );
    // The NameNode's own message, as HDFS's DataNode passes it on.
    let m = json(&body)["RemoteException"]["message"].clone();
    assert!(
        m.as_str().is_some_and(|m| m.starts_with("/data/f for client ") && m.ends_with(" already exists")),
        "{m}"
    );
    // Straight to a DataNode without the NameNode's parameters.
    let (code, _, body) = http_request(dn, "GET", "/webhdfs/v1/data/f?op=OPEN", b"");
    assert_eq!(code, 400);
    assert_eq!(
        json(&body)["RemoteException"]["message"],
        "Required param namenoderpcaddress for op: OPEN is null or empty"
    );
}

fn impersonation(nn: SocketAddr) {
    // hue may act as alice (hadoop.proxyuser.hue.users=alice) from 127.0.0.1.
    let (_, home) = call(
        nn,
        "GET",
        "/webhdfs/v1/?op=GETHOMEDIRECTORY&user.name=hue&doas=alice",
    );
    assert_eq!(home["Path"], "/user/alice");
    let (class, m) = remote_error(
        nn,
        "GET",
        "/webhdfs/v1/?op=GETFILESTATUS&user.name=hue&doas=bob",
        403,
    );
    assert_eq!(
        class,
        "org.apache.hadoop.security.authorize.AuthorizationException"
    );
    assert_eq!(m, "User: hue is not allowed to impersonate bob");
    let (class, m) = remote_error(nn, "GET", "/webhdfs/v1/?op=GETFILESTATUS&doas=bob", 403);
    assert_eq!(class, "java.lang.SecurityException");
    assert_eq!(m, "Failed to obtain user group information: org.apache.hadoop.security.authorize.AuthorizationException: User: dr.who is not allowed to impersonate bob");
    // Changes made as alice are alice's.
    let (code, _) = call(
        nn,
        "PUT",
        "/webhdfs/v1/tmp-alice?op=MKDIRS&user.name=hue&doas=alice",
    );
    assert_eq!(code, 403, "alice may not write in /");
}

fn kit_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/java")
}

/// Java's `hadoop fs -fs webhdfs://...` on the FsShell golden scripts. Over
/// WebHDFS Apache HDFS 3.4.1 prints what it prints over hdfs://, but for
/// the scheme in three messages: fsshell has its own golden
/// (`regenerate-golden.sh webhdfs-fsshell`); xattrs and acls match theirs.
fn java_fsshell_over_webhdfs(nn: SocketAddr) {
    let kit = kit_dir();
    for (script, golden) in [
        ("fsshell", "webhdfs-fsshell"),
        ("xattrs", "xattrs"),
        ("acls", "acls"),
    ] {
        let out = common::output_within(
            Command::new(kit.join("run.sh"))
                .arg("--fs")
                .arg(format!("webhdfs://{nn}"))
                .arg("--script")
                .arg(kit.join(format!("scripts/{script}.txt"))),
            Duration::from_secs(900),
            "run tests/java/run.sh (needs java and mvn)",
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "the Java kit failed: {stderr}");
        let got = String::from_utf8_lossy(&out.stdout).into_owned();
        let want =
            std::fs::read_to_string(kit.join(format!("expected/{golden}.txt"))).expect("golden");
        common::assert_matches_golden(&got, &want, &format!("{script} over webhdfs"));
    }
}

/// HdfsCLI, fsspec's webhdfs and pandas Parquet (webhdfs_clients.py).
fn python_clients(nn: SocketAddr) {
    let Some(python) = common::python::python_venv("t80_webhdfs (Python clients)") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    let local = tmp.path().to_str().expect("UTF-8 temp dir");
    let (http, user) = (nn.to_string(), common::current_user());
    let args = [
        "--http", &http, "--user", &user, "--dir", "/python", "--local", local,
    ];
    let checked = common::python::run_checks(
        &python,
        "webhdfs_clients.py",
        &args,
        Duration::from_secs(600),
        "ALL OK",
    );
    if let Err(report) = checked {
        panic!("{report}");
    }
}

//! WebHDFS on the NameNode's HTTP server, spoken with a plain HTTP client:
//! HDFS's JSON shapes, its RemoteException errors and status codes, and
//! hostile requests that get a clear answer.

mod common;

use common::{http_request, NameNode};

fn json(body: &[u8]) -> serde_json::Value {
    serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(body)))
}

#[test]
fn file_status_errors_and_hostile_requests() {
    let nn = NameNode::start(&[]);
    // The root's status, as HDFS's JsonUtil writes it.
    let (code, headers, body) = http_request(
        nn.http,
        "GET",
        "/webhdfs/v1/?op=GETFILESTATUS&user.name=bob",
        b"",
    );
    assert_eq!(code, 200, "{}", String::from_utf8_lossy(&body));
    assert!(headers
        .iter()
        .any(|(k, v)| k == "content-type" && v.starts_with("application/json")));
    let st = json(&body);
    assert_eq!(st["FileStatus"]["type"], "DIRECTORY");
    assert_eq!(st["FileStatus"]["permission"], "755");
    assert_eq!(st["FileStatus"]["pathSuffix"], "");

    // A missing path: 404 with HDFS's RemoteException (op names are
    // case-insensitive, as in HDFS).
    let (code, _, body) = http_request(nn.http, "GET", "/webhdfs/v1/nope?op=getfilestatus", b"");
    assert_eq!(code, 404);
    let e = json(&body);
    assert_eq!(e["RemoteException"]["exception"], "FileNotFoundException");
    assert_eq!(
        e["RemoteException"]["javaClassName"],
        "java.io.FileNotFoundException"
    );
    assert_eq!(
        e["RemoteException"]["message"],
        "File does not exist: /nope"
    );

    // An op the HTTP method does not have: 400, HDFS's message.
    let (code, _, body) = http_request(nn.http, "GET", "/webhdfs/v1/?op=MKDIRS", b"");
    assert_eq!(code, 400);
    assert_eq!(
        json(&body)["RemoteException"]["message"],
        "Invalid value for webhdfs parameter \"op\": MKDIRS is not a valid GET operation."
    );

    // A URL longer than the 64 KiB request-head limit is refused, and the
    // server goes on answering others.
    let long = format!("/webhdfs/v1/{}?op=GETFILESTATUS", "a".repeat(70_000));
    let (code, _, _) = http_request(nn.http, "GET", &long, b"");
    assert!(code == 414 || code == 431, "status {code}");
    let (code, _, _) = http_request(nn.http, "GET", "/webhdfs/v1/?op=GETFILESTATUS", b"");
    assert_eq!(code, 200);
}

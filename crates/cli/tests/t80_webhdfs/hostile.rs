//! Requests HDFS refuses, refused with HDFS's status and words: bad
//! operations and parameters, features a default HDFS has off, odd path
//! spellings; and clients that stall never hold up the others.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::Value;

use super::common::{http_request, Cluster};
use super::{call, remote_error};

pub(super) fn hostile_requests(cluster: &Cluster) {
    let nn = cluster.nn.http;
    let cases: &[(&str, &str, u16, &str)] = &[
        ("GET", "/webhdfs/v1/?op=FOO", 400, "Invalid value for webhdfs parameter \"op\": FOO is not a valid GET operation."),
        ("GET", "/webhdfs/v1/?op=MKDIRS", 400, "Invalid value for webhdfs parameter \"op\": MKDIRS is not a valid GET operation."),
        ("GET", "/webhdfs/v1/", 400, "op=NULL is not supported"),
        ("PUT", "/webhdfs/v1/s?op=CREATESYMLINK", 400, "Required param destination for op: CREATESYMLINK is null or empty"),
        // Features a default HDFS has off answer as there.
        ("PUT", "/webhdfs/v1/s?op=CREATESYMLINK&destination=/t", 400, "Symlinks not supported"),
        ("GET", "/webhdfs/v1/?op=GETLINKTARGET", 403, "Path / is not a symbolic link"),
        ("GET", "/webhdfs/v1/none?op=GETLINKTARGET", 404, "File does not exist: /none"),
        ("GET", "/webhdfs/v1/none?op=GETECPOLICY", 404, "Path not found: /none"),
        // Each call's own words for a missing path, as HDFS's.
        ("GET", "/webhdfs/v1/none?op=GETQUOTAUSAGE", 404, "File/Directory does not exist: /none"),
        ("GET", "/webhdfs/v1/none?op=GETCONTENTSUMMARY", 404, "File does not exist: /none"),
        ("PUT", "/webhdfs/v1/none?op=SETPERMISSION&permission=711", 404, "Directory/File does not exist /none"),
        ("GET", "/webhdfs/v1/?op=GETENCLOSINGROOT", 400, "Invalid value for webhdfs parameter \"op\": GETENCLOSINGROOT is not a valid GET operation."),
        ("PUT", "/webhdfs/v1/?op=SATISFYSTORAGEPOLICY", 403, "Cannot request to satisfy storage policy when storage policy satisfier feature has been disabled by admin. Seek for an admin help to enable it or use Mover tool."),
        ("PUT", "/webhdfs/v1/?op=SETECPOLICY&ecpolicy=XOR-2-1-1024k", 400, "Policy 'XOR-2-1-1024k' does not match any enabled erasure coding policies: []. An erasure coding policy can be enabled by enableErasureCodingPolicy API."),
        ("PUT", "/webhdfs/v1/?op=ENABLEECPOLICY&ecpolicy=X", 403, "Access denied for user dr.who. Superuser privilege is required for operation enableErasureCodingPolicy"),
        ("GET", "/webhdfs/v1/?op=OPEN&offset=abc", 400, "Invalid value for webhdfs parameter \"offset\": Failed to parse \"abc\" as a radix-10 long integer."),
        ("GET", "/webhdfs/v1/?op=OPEN&offset=99999999999999999999", 400, "Invalid value for webhdfs parameter \"offset\": Failed to parse \"99999999999999999999\" as a radix-10 long integer."),
        ("GET", "/webhdfs/v1/?op=OPEN&offset=-1", 400, "Invalid value for webhdfs parameter \"offset\": Invalid parameter range: offset = -1 < 0"),
        ("PUT", "/webhdfs/v1/p?op=MKDIRS&permission=999", 400, "Invalid value for webhdfs parameter \"permission\": Failed to parse \"999\" as a radix-8 short integer."),
        ("PUT", "/webhdfs/v1/p?op=MKDIRS&permission=2000", 400, "Invalid value for webhdfs parameter \"permission\": Invalid parameter range: permission = 2000 > 1777"),
        ("PUT", "/webhdfs/v1/p?op=CREATE&overwrite=xyz", 400, "Invalid value for webhdfs parameter \"overwrite\": Failed to parse \"xyz\" to Boolean."),
        ("PUT", "/webhdfs/v1/p?op=CREATE&replication=0", 400, "Invalid value for webhdfs parameter \"replication\": Invalid parameter range: replication = 0 < 1"),
        ("GET", "/webhdfs/v1/?op=LISTSTATUS&user.name=b%20b", 400, "Invalid value for webhdfs parameter \"user.name\": Invalid value: \"b b\" does not belong to the domain ^[A-Za-z_][A-Za-z0-9._-]*[$]?$"),
        // HDFS resolves `..` as a name: nothing found, and no such name made.
        ("GET", "/webhdfs/v1/a/../b?op=GETFILESTATUS", 404, "File does not exist: /a/../b"),
        ("PUT", "/webhdfs/v1/a/../b?op=MKDIRS", 400, "Invalid path name Invalid file name: /a/../b"),
        ("PUT", "/webhdfs/v1/a/b:c?op=MKDIRS", 400, "Invalid path name Invalid file name: /a/b:c"),
        ("GET", "/webhdfs/v1/a/b:c?op=LISTSTATUS", 404, "File /a/b:c does not exist."),
        // The four calls HDFS redirects check the path's spelling first.
        ("GET", "/webhdfs/v1/a/../b?op=OPEN", 400, "Invalid path name /a/../b"),
        ("PUT", "/webhdfs/v1/a/./b?op=CREATE", 400, "Invalid path name /a/./b"),
        ("POST", "/webhdfs/v1/a:b?op=APPEND", 400, "Invalid path name /a:b"),
        ("GET", "/webhdfs/v1/a:b?op=GETFILECHECKSUM", 400, "Invalid path name /a:b"),
        ("GET", "/webhdfs/v1/%ff?op=GETFILESTATUS", 400, "Invalid path: /%ff"),
    ];
    for (method, path, status, message) in cases {
        let (_, m) = remote_error(nn, method, path, *status);
        assert_eq!(&m, message, "{method} {path}");
    }
    let (_, m) = remote_error(nn, "POST", "/webhdfs/v1/?op=UNSETECPOLICY", 403);
    assert!(
        m.starts_with("Permission denied: user=dr.who, access=WRITE, inode=\"/\":"),
        "{m}"
    );
    let (code, token) = call(nn, "GET", "/webhdfs/v1/?op=GETDELEGATIONTOKEN");
    assert_eq!((code, token), (200, serde_json::json!({ "Token": null })));
    assert_eq!(
        call(nn, "GET", "/webhdfs/v1/?op=GETECPOLICY"),
        (200, Value::Null)
    );
    let (code, all) = call(nn, "GET", "/webhdfs/v1/?op=GETECPOLICIES");
    let none = serde_json::json!({ "ErasureCodingPolicies": { "ErasureCodingPolicyInfo": null } });
    assert_eq!((code, all), (200, none));
    let (code, codecs) = call(nn, "GET", "/webhdfs/v1/?op=GETECCODECS");
    assert_eq!(
        (code, codecs),
        (200, serde_json::json!({ "ErasureCodingCodecs": {} }))
    );
    let (code, _, _) = http_request(nn, "PATCH", "/webhdfs/v1/?op=GETFILESTATUS", b"");
    assert_eq!(code, 405);
    // HEAD is a GET without its body, OPTIONS names the methods (HDFS's
    // JAX-RS resource answers both so).
    let (code, _, body) = http_request(nn, "HEAD", "/webhdfs/v1/?op=GETFILESTATUS", b"");
    assert_eq!((code, body.len()), (200, 0));
    let (code, headers, _) = http_request(nn, "OPTIONS", "/webhdfs/v1/?op=GETFILESTATUS", b"");
    assert_eq!(code, 200);
    let allow = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("allow"));
    assert_eq!(
        allow.map(|(_, v)| v.as_str()),
        Some("OPTIONS,HEAD,DELETE,POST,GET,PUT")
    );

    // Dot segments route as HDFS's web server (Jetty) routes them: by the
    // path they resolve to, a climb above the root refused; a path that
    // stays WebHDFS's is read as sent (the cases above).
    for path in ["/..", "/%2e%2e", "/../webhdfs/v1/?op=LISTSTATUS"] {
        let (code, _, body) = http_request(nn, "GET", path, b"");
        assert_eq!(code, 400, "{path}");
        assert!(
            String::from_utf8_lossy(&body).contains("Bad Message 400"),
            "{path}"
        );
    }
    for path in [
        "/webhdfs/v1/..?op=LISTSTATUS",
        "/webhdfs/v1/%2E%2e?op=LISTSTATUS",
    ] {
        let (code, headers, body) = http_request(nn, "GET", path, b"");
        assert_eq!(code, 404, "{path}");
        let html = headers
            .iter()
            .any(|(k, v)| k.eq_ignore_ascii_case("content-type") && v.starts_with("text/html"));
        assert!(html, "{path}: {headers:?}");
        assert!(
            String::from_utf8_lossy(&body).contains("Error 404 Not Found"),
            "{path}"
        );
    }
    let (code, _, body) = http_request(
        nn,
        "GET",
        "/logs/../jmx?qry=Hadoop:service=NameNode,name=NameNodeInfo",
        b"",
    );
    assert_eq!(code, 200);
    assert!(String::from_utf8_lossy(&body).contains("NameNodeInfo"));
    let (code, _, _) = http_request(nn, "GET", "/x/./../webhdfs/v1/?op=GETFILESTATUS", b"");
    assert_eq!(code, 200, "resolves to WebHDFS's root");

    // A slow client that never finishes its request head holds only its
    // own connection; others are answered meanwhile.
    let mut slow = TcpStream::connect(nn).expect("connect");
    slow.write_all(b"GET /webhdfs/v1/?op=GETFILESTATUS HTTP/1.1\r\nHost: x\r\n")
        .expect("partial head");
    let mut slow_body = TcpStream::connect(cluster.dns[0].http).expect("connect");
    slow_body
        .write_all(b"PUT /webhdfs/v1/slow?op=CREATE&namenoderpcaddress=127.0.0.1:1 HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nabc")
        .expect("partial body");
    // A URL longer than the 64 KiB head limit, and a far longer header
    // (hyper applies the limit to its read buffer, a read at a time), are
    // refused.
    let long = format!("/webhdfs/v1/{}?op=GETFILESTATUS", "a".repeat(70_000));
    let (code, _, _) = http_request(nn, "GET", &long, b"");
    assert!(code == 414 || code == 431, "status {code}");
    let mut s = TcpStream::connect(nn).expect("connect");
    let head = format!(
        "GET /webhdfs/v1/?op=GETFILESTATUS HTTP/1.1\r\nHost: x\r\nX-Big: {}\r\nConnection: close\r\n\r\n",
        "b".repeat(200_000)
    );
    let _ = s.write_all(head.as_bytes());
    let mut answer = Vec::new();
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let _ = s.read_to_end(&mut answer);
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 431"), "{text}");
    for _ in 0..5 {
        let (code, _, _) = http_request(nn, "GET", "/webhdfs/v1/?op=GETFILESTATUS", b"");
        assert_eq!(code, 200);
    }
    let (code, _, _) = http_request(cluster.dns[0].http, "GET", "/metrics", b"");
    assert_eq!(code, 200, "the DataNode answers beside a stalled upload");
    drop((slow, slow_body));
}

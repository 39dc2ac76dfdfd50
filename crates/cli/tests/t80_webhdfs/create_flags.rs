//! CREATE's `createflag` (sent by Java's FileSystem builder and by
//! create(EnumSet<CreateFlag>), with no `overwrite`), and answers given
//! before a request's body was read, which must end the connection and say
//! so: found by Hadoop's contract tests over `webhdfs://`, whose next
//! streamed PUT on a silently closed keep-alive connection failed with
//! "Unexpected end of file from server".

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use super::common::{self, Cluster};
use super::{header, remote_error, split_url};

pub fn create_flags_and_early_answers(cluster: &Cluster) {
    let nn = cluster.nn.http;
    let u = format!("user.name={}", common::current_user());
    let put = |flags: &str, body: &[u8]| -> (u16, Vec<(String, String)>) {
        let (code, headers, _) = common::http_request(
            nn,
            "PUT",
            &format!("/webhdfs/v1/flags/f?op=CREATE&{u}&createflag={flags}"),
            b"",
        );
        assert_eq!(code, 307, "createflag={flags}");
        let (dn, path) = split_url(header(&headers, "location"));
        keep_alive_request(dn, "PUT", &path, body)
    };
    let (code, headers) = put("CREATE", b"one");
    assert_eq!(code, 201);
    assert!(
        !headers
            .iter()
            .any(|(k, v)| k == "connection" && v == "close"),
        "a create whose body was read keeps the connection: {headers:?}"
    );
    // No OVERWRITE: the file exists. The answer comes before the body is
    // read, so it closes the connection and says so.
    let (code, headers) = put("CREATE", &vec![b'x'; 256 * 1024]);
    assert_eq!(code, 403);
    assert_eq!(header(&headers, "connection"), "close");
    assert_eq!(read(cluster, "/flags/f"), b"one");
    let (code, _) = put("CREATE,OVERWRITE", b"two");
    assert_eq!(code, 201);
    assert_eq!(read(cluster, "/flags/f"), b"two");
    // CREATE|APPEND appends to a file that exists; names in any case.
    let (code, _) = put("create,append", b"three");
    assert_eq!(code, 201);
    assert_eq!(read(cluster, "/flags/f"), b"twothree");
    let (class, message) = remote_error(
        nn,
        "PUT",
        &format!("/webhdfs/v1/flags/g?op=CREATE&{u}&createflag=CREATE,BOGUS"),
        400,
    );
    assert_eq!(class, "java.lang.IllegalArgumentException");
    assert_eq!(
        message,
        "Invalid value for webhdfs parameter \"createflag\": No enum constant org.apache.hadoop.fs.CreateFlag.BOGUS"
    );
    // A body sent to the NameNode, which answers with a redirect without
    // reading it: the connection is closed too.
    let (code, headers) = keep_alive_request(
        nn,
        "PUT",
        &format!("/webhdfs/v1/flags/h?op=CREATE&{u}"),
        &vec![b'y'; 256 * 1024],
    );
    assert_eq!(code, 307);
    assert_eq!(header(&headers, "connection"), "close");
}

fn read(cluster: &Cluster, path: &str) -> Vec<u8> {
    let u = format!("user.name={}", common::current_user());
    let (code, headers, _) = common::http_request(
        cluster.nn.http,
        "GET",
        &format!("/webhdfs/v1{path}?op=OPEN&{u}"),
        b"",
    );
    assert_eq!(code, 307);
    let (dn, p) = split_url(header(&headers, "location"));
    let (code, _, body) = common::http_request(dn, "GET", &p, b"");
    assert_eq!(code, 200);
    body
}

/// One request as a keep-alive client sends it (no `Connection: close` of
/// its own, so the server's header is its own choice): the status and the
/// response headers (names lower-cased). The body is written while the
/// answer may already be on its way; a write the server refused is fine.
fn keep_alive_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    body: &[u8],
) -> (u16, Vec<(String, String)>) {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60)))
        .expect("timeout");
    let head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    s.write_all(head.as_bytes()).expect("request head");
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    let end = loop {
        if let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break end;
        }
        let n = s.read(&mut buf).expect("response");
        assert!(n > 0, "the connection closed before an answer");
        raw.extend_from_slice(&buf[..n]);
    };
    common::parse_response_head(&String::from_utf8_lossy(&raw[..end]))
}

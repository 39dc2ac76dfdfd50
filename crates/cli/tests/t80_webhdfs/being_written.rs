//! OPEN at the edges of a file: an offset past the end of an empty file
//! (the DataNode's seek refuses it; and GETTRASHROOT below a file), and a
//! file still being written, read
//! as HDFS's DataNode reads it through a DFSInputStream: the complete
//! blocks, then the last block's bytes its DataNodes have acknowledged,
//! which the NameNode's file length leaves out.

use std::net::SocketAddr;

use bytes::Bytes;
use hdfs_native::WriteOptions;

use super::common::{current_user, http_request, Cluster};
use super::{header, json, remote_error, split_url};

/// OPEN through the NameNode's redirect: the DataNode's status and body.
fn open(nn: SocketAddr, path: &str, query: &str) -> (u16, Vec<u8>) {
    let u = format!("user.name={}", current_user());
    let (code, headers, body) = http_request(
        nn,
        "GET",
        &format!("/webhdfs/v1{path}?op=OPEN{query}&{u}"),
        b"",
    );
    assert_eq!(code, 307, "{}", String::from_utf8_lossy(&body));
    let (dn, path) = split_url(header(&headers, "location"));
    let (code, _, body) = http_request(dn, "GET", &path, b"");
    (code, body)
}

pub(super) fn open_at_the_edges(cluster: &Cluster) {
    let nn = cluster.nn.http;
    let u = format!("user.name={}", current_user());
    // An empty file passes the NameNode's offset check; the DataNode's
    // seek refuses an offset past its end.
    let (code, headers, _) = http_request(
        nn,
        "PUT",
        &format!("/webhdfs/v1/edge/empty?op=CREATE&{u}"),
        b"",
    );
    assert_eq!(code, 307);
    let (dn, path) = split_url(header(&headers, "location"));
    assert_eq!(http_request(dn, "PUT", &path, b"").0, 201);
    let (code, body) = open(nn, "/edge/empty", "&offset=5");
    assert_eq!(code, 403);
    let e = &json(&body)["RemoteException"];
    assert_eq!(e["javaClassName"], "java.io.EOFException");
    assert_eq!(e["message"], "Cannot seek after EOF");
    // GETTRASHROOT asks for the parent's encryption zone first: a file
    // among the ancestors is refused there.
    let (class, m) = remote_error(nn, "GET", "/webhdfs/v1/edge/empty/x/y?op=GETTRASHROOT", 403);
    assert_eq!(class, "org.apache.hadoop.security.AccessControlException");
    assert_eq!(m, "/edge/empty (is not a directory)");

    // Two whole 1 MiB blocks and half of a third, synced, still open.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let client = cluster.nn.client(None);
    let data: Vec<u8> = (0..2_621_440u32).map(|i| (i % 251) as u8).collect();
    let options = WriteOptions {
        block_size: Some(1024 * 1024),
        ..WriteOptions::default()
    };
    let mut w = rt
        .block_on(client.create("/edge/growing", options))
        .expect("create");
    rt.block_on(w.write_bytes(Bytes::copy_from_slice(&data)))
        .expect("write");
    rt.block_on(w.hsync()).expect("hsync");
    let (code, body) = open(nn, "/edge/growing", "");
    assert_eq!(code, 200);
    assert!(body == data, "read {} of {} bytes", body.len(), data.len());
    for (offset, length) in [(1_048_000, 2_000), (2_000_000, 600_000), (2_200_000, 1)] {
        let (code, body) = open(
            nn,
            "/edge/growing",
            &format!("&offset={offset}&length={length}"),
        );
        assert_eq!(code, 200);
        assert!(
            body[..] == data[offset..offset + length],
            "offset {offset}, length {length}: {} bytes",
            body.len()
        );
    }
    // Past the last acknowledged byte: the rest, none beyond.
    let (code, body) = open(nn, "/edge/growing", "&offset=2621000&length=5000");
    assert_eq!((code, body.len()), (200, 440));
    rt.block_on(w.close()).expect("close");
    let (code, body) = open(nn, "/edge/growing", "&offset=2097152");
    assert_eq!((code, &body[..]), (200, &data[2_097_152..]));
}

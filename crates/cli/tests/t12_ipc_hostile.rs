//! Hostile and malformed input on the NameNode's IPC port: each case gets
//! the HDFS-style error or a closed connection within the timeout, nothing
//! panics, memory stays bounded, and a well-behaved client on another
//! connection keeps working throughout.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use bytes::{BufMut, BytesMut};
use cairn_proto::hadoop::common::{
    rpc_response_header_proto::RpcStatusProto, IpcConnectionContextProto, RequestHeaderProto,
    RpcRequestHeaderProto, RpcResponseHeaderProto, RpcSaslProto, UserInformationProto,
};
use cairn_proto::hadoop::hdfs as pb;
use common::NameNode;
use prost::Message;

/// Idle timeout the NameNode runs with in these tests.
const IDLE: &str = "cairn.ipc.server.idle-timeout=1500ms";
/// Longest we wait for the server to react to anything.
const PATIENCE: Duration = Duration::from_secs(6);

fn delimited<M: Message>(m: &M, out: &mut BytesMut) {
    prost::encoding::encode_varint(m.encoded_len() as u64, out);
    m.encode(out).expect("encode");
}

fn frame(parts: &[&dyn Fn(&mut BytesMut)]) -> Vec<u8> {
    let mut body = BytesMut::new();
    for p in parts {
        p(&mut body);
    }
    let mut out = Vec::with_capacity(body.len() + 4);
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

fn rpc_header(call_id: i32) -> RpcRequestHeaderProto {
    RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(0),
        call_id,
        client_id: vec![7u8; 16].into(),
        retry_count: Some(if call_id < 0 { -1 } else { 0 }),
        ..Default::default()
    }
}

fn context_frame(user: &str) -> Vec<u8> {
    context_frame_as(user, None)
}

/// A connection context for `user`, acting through `real` when given
/// (`doAs`).
fn context_frame_as(user: &str, real: Option<&str>) -> Vec<u8> {
    let ctx = IpcConnectionContextProto {
        user_info: Some(UserInformationProto {
            effective_user: Some(user.into()),
            real_user: real.map(Into::into),
        }),
        protocol: Some("org.apache.hadoop.hdfs.protocol.ClientProtocol".into()),
    };
    frame(&[&|b| delimited(&rpc_header(-3), b), &|b| delimited(&ctx, b)])
}

fn call_frame(call_id: i32, protocol: &str, version: u64, method: &str, req: &[u8]) -> Vec<u8> {
    let h = RequestHeaderProto {
        method_name: method.into(),
        declaring_class_protocol_name: protocol.into(),
        client_protocol_version: version,
    };
    frame(&[
        &|b| delimited(&rpc_header(call_id), b),
        &|b| delimited(&h, b),
        &|b| {
            prost::encoding::encode_varint(req.len() as u64, b);
            b.put_slice(req);
        },
    ])
}

fn get_file_info(call_id: i32, path: &str) -> Vec<u8> {
    let req = pb::GetFileInfoRequestProto { src: path.into() }.encode_to_vec();
    call_frame(
        call_id,
        "org.apache.hadoop.hdfs.protocol.ClientProtocol",
        1,
        "getFileInfo",
        &req,
    )
}

const PREAMBLE: &[u8] = b"hrpc\x09\x00\x00";

fn connect(nn: &NameNode) -> TcpStream {
    let s = TcpStream::connect(nn.addr).expect("connect");
    s.set_read_timeout(Some(PATIENCE)).expect("timeout");
    s
}

/// Reads one response frame: its header and the rest of the body.
fn read_response(s: &mut TcpStream) -> Option<(RpcResponseHeaderProto, Vec<u8>)> {
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let len = u32::from_be_bytes(len) as usize;
    assert!(len < 1 << 20, "absurd response length {len}");
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).ok()?;
    let mut buf = &body[..];
    let header = RpcResponseHeaderProto::decode_length_delimited(&mut buf).expect("header");
    Some((header, buf.to_vec()))
}

/// True when the server closes the connection (EOF or reset) in time.
fn closed_within(s: &mut TcpStream, limit: Duration) -> bool {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return start.elapsed() <= limit,
            Ok(_) => continue,
            Err(e)
                if e.kind() == std::io::ErrorKind::WouldBlock
                    || e.kind() == std::io::ErrorKind::TimedOut =>
            {
                return false
            }
            Err(_) => return start.elapsed() <= limit,
        }
    }
}

/// A well-behaved client on its own connection: must always work.
fn assert_healthy(nn: &mut NameNode) {
    assert!(nn.is_running(), "NameNode died:\n{}", nn.log());
    let mut s = connect(nn);
    s.write_all(PREAMBLE).expect("preamble");
    s.write_all(&context_frame("healthy")).expect("context");
    s.write_all(&get_file_info(0, "/")).expect("call");
    let (h, body) = read_response(&mut s).expect("response");
    assert_eq!(h.status, RpcStatusProto::Success as i32);
    let r = pb::GetFileInfoResponseProto::decode_length_delimited(&body[..]).expect("decode");
    assert!(r.fs.is_some());
}

fn fatal_class(s: &mut TcpStream) -> String {
    let (h, _) = read_response(s).expect("a FATAL response");
    assert_eq!(h.status, RpcStatusProto::Fatal as i32, "{h:?}");
    h.exception_class_name.unwrap_or_default()
}

#[test]
fn malformed_preambles_are_refused_and_closed() {
    // Goal: garbage, HTTP, wrong versions and unknown auth bytes in the
    // preamble get Hadoop's answers and a closed connection.
    let mut nn = NameNode::start(&[IDLE]);
    let mut s = connect(&nn);
    s.write_all(b"\x00\x01garbage-garbage").expect("write");
    assert_eq!(
        fatal_class(&mut s),
        "org.apache.hadoop.ipc.RPC$VersionMismatch"
    );
    assert!(closed_within(&mut s, PATIENCE));
    assert_healthy(&mut nn);

    let mut s = connect(&nn);
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        .expect("write");
    let mut text = String::new();
    s.read_to_string(&mut text).expect("read");
    assert!(text.starts_with("HTTP/1.1 404 Not Found"), "{text}");
    assert!(text.contains("Hadoop IPC port"));

    let mut s = connect(&nn);
    s.write_all(b"hrpc\x0a\x00\x00").expect("write");
    let (h, _) = read_response(&mut s).expect("response");
    assert_eq!(h.call_id, u32::MAX, "callId -1");
    assert_eq!(
        h.error_msg.as_deref(),
        Some("Server IPC version 9 cannot communicate with client version 10")
    );
    assert!(closed_within(&mut s, PATIENCE));

    // Version 8 clients read the pre-protobuf format: callId, status, strings.
    let mut s = connect(&nn);
    s.write_all(b"hrpc\x08\x00\x00").expect("write");
    let mut old = Vec::new();
    s.read_to_end(&mut old).expect("read");
    assert_eq!(&old[..8], &[0xff; 8]);
    assert!(String::from_utf8_lossy(&old).contains("RPC$VersionMismatch"));

    let mut s = connect(&nn);
    s.write_all(b"hrpc\x09\x00\x51").expect("write");
    fatal_class(&mut s);
    assert!(closed_within(&mut s, PATIENCE));
    assert_healthy(&mut nn);
}

#[test]
fn bad_frames_close_only_their_connection() {
    // Goal: a 2 GiB length, a negative length, a truncated frame, a header
    // without required fields and a call before the connection context each
    // end that one connection (FATAL where Hadoop sends one) without
    // allocating what the frame claims.
    let mut nn = NameNode::start(&[IDLE]);
    let rss_before = nn.rss_kib();

    for len in [0x7fff_ffffu32, 0x8000_0000, 0xffff_ffff, 0] {
        let mut s = connect(&nn);
        s.write_all(PREAMBLE).expect("preamble");
        s.write_all(&context_frame("mallory")).expect("context");
        s.write_all(&len.to_be_bytes()).expect("length");
        s.write_all(&[0u8; 64]).expect("some bytes");
        fatal_class(&mut s);
        assert!(closed_within(&mut s, PATIENCE), "length {len:#x}");
    }
    assert_healthy(&mut nn);

    // Truncated: claims 100 bytes, sends 10, then stalls.
    let mut s = connect(&nn);
    s.write_all(PREAMBLE).expect("preamble");
    s.write_all(&100u32.to_be_bytes()).expect("length");
    s.write_all(&[1u8; 10]).expect("part");
    assert!(
        closed_within(&mut s, PATIENCE),
        "stalled frame must be closed"
    );

    // Header missing callId and clientId.
    let mut s = connect(&nn);
    s.write_all(PREAMBLE).expect("preamble");
    let partial = RpcRequestHeaderProto {
        rpc_kind: Some(2),
        rpc_op: Some(0),
        ..Default::default()
    };
    let mut raw = BytesMut::new();
    // Encode rpcKind and rpcOp only (prost would add call_id/client_id).
    raw.put_slice(&[0x08, 0x02, 0x10, 0x00]);
    let _ = partial;
    let mut f = Vec::new();
    f.extend_from_slice(&(raw.len() as u32 + 1).to_be_bytes());
    f.push(raw.len() as u8);
    f.extend_from_slice(&raw);
    s.write_all(&f).expect("frame");
    assert_eq!(
        fatal_class(&mut s),
        "org.apache.hadoop.ipc.RpcServerException"
    );
    assert!(closed_within(&mut s, PATIENCE));

    // A call before the connection context.
    let mut s = connect(&nn);
    s.write_all(PREAMBLE).expect("preamble");
    s.write_all(&get_file_info(5, "/")).expect("call");
    let (h, _) = read_response(&mut s).expect("fatal");
    assert_eq!(h.status, RpcStatusProto::Fatal as i32);
    assert_eq!(h.call_id, 5);
    assert_eq!(
        h.error_msg.as_deref(),
        Some("Connection context not established")
    );
    assert!(closed_within(&mut s, PATIENCE));

    // Garbage where the header should be.
    let mut s = connect(&nn);
    s.write_all(PREAMBLE).expect("preamble");
    s.write_all(&[0, 0, 0, 6, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff])
        .expect("garbage");
    fatal_class(&mut s);
    assert!(closed_within(&mut s, PATIENCE));

    assert_healthy(&mut nn);
    let rss_after = nn.rss_kib();
    assert!(
        rss_after < rss_before + 64 * 1024,
        "memory grew from {rss_before} KiB to {rss_after} KiB"
    );
}

#[test]
fn silent_and_stalled_clients_are_closed_after_the_idle_timeout() {
    // Goal: a client that connects and sends nothing, or stops after its
    // preamble, is disconnected within the idle timeout.
    let mut nn = NameNode::start(&[IDLE]);
    let start = Instant::now();
    let mut silent = connect(&nn);
    let mut after_preamble = connect(&nn);
    after_preamble.write_all(PREAMBLE).expect("preamble");
    assert!(closed_within(&mut silent, PATIENCE));
    assert!(closed_within(&mut after_preamble, PATIENCE));
    assert!(
        start.elapsed() >= Duration::from_millis(1000),
        "closed too early"
    );
    assert_healthy(&mut nn);
}

#[test]
fn protocol_errors_keep_the_connection_open() {
    // Goal: unknown protocol, unknown method, wrong protocol version and a
    // request header missing fields are ERRORs on a connection that stays
    // usable, and many calls in flight on one connection all get answers.
    let mut nn = NameNode::start(&[IDLE]);
    let mut s = connect(&nn);
    s.write_all(PREAMBLE).expect("preamble");
    s.write_all(&context_frame("carol")).expect("context");
    s.write_all(&call_frame(
        1,
        "org.example.NoSuchProtocol",
        1,
        "getFileInfo",
        &[],
    ))
    .expect("call");
    s.write_all(&call_frame(
        2,
        "org.apache.hadoop.hdfs.protocol.ClientProtocol",
        1,
        "noSuchMethod",
        &[],
    ))
    .expect("call");
    s.write_all(&call_frame(
        3,
        "org.apache.hadoop.hdfs.protocol.ClientProtocol",
        2,
        "getFileInfo",
        &[],
    ))
    .expect("call");
    // RequestHeaderProto without its required fields.
    let h = frame(&[&|b| delimited(&rpc_header(4), b), &|b| {
        b.put_slice(&[0x02, 0x0a, 0x00]);
    }]);
    s.write_all(&h).expect("call");
    let mut got = std::collections::BTreeMap::new();
    for _ in 0..4 {
        let (h, _) = read_response(&mut s).expect("reply");
        assert_eq!(h.status, RpcStatusProto::Error as i32);
        got.insert(
            h.call_id,
            (
                h.exception_class_name.unwrap_or_default(),
                h.error_msg.unwrap_or_default(),
                h.error_detail,
            ),
        );
    }
    assert_eq!(
        got[&1].0,
        "org.apache.hadoop.ipc.RpcNoSuchProtocolException"
    );
    assert_eq!(got[&1].1, "Unknown protocol: org.example.NoSuchProtocol");
    assert_eq!(got[&1].2, Some(3));
    assert_eq!(got[&2].0, "org.apache.hadoop.ipc.RpcNoSuchMethodException");
    assert_eq!(got[&2].2, Some(2));
    assert_eq!(got[&3].0, "org.apache.hadoop.ipc.RPC$VersionMismatch");
    assert_eq!(
        got[&3].1,
        "Protocol org.apache.hadoop.hdfs.protocol.ClientProtocol version mismatch. (client = 2, server = 1)"
    );
    assert_eq!(
        got[&4].0,
        "org.apache.hadoop.thirdparty.protobuf.InvalidProtocolBufferException"
    );

    // 200 calls back to back, plus pings, on the same connection.
    let mut batch = Vec::new();
    for id in 10..210 {
        batch.extend(get_file_info(id, "/"));
        if id % 50 == 0 {
            batch.extend(frame(&[&|b| delimited(&rpc_header(-4), b)]));
        }
    }
    s.write_all(&batch).expect("batch");
    let mut ids = Vec::new();
    for _ in 10..210 {
        let (h, _) = read_response(&mut s).expect("reply");
        assert_eq!(h.status, RpcStatusProto::Success as i32);
        assert_eq!(
            h.client_id.as_deref(),
            Some(&[7u8; 16][..]),
            "client id echoed"
        );
        ids.push(h.call_id);
    }
    ids.sort();
    assert_eq!(ids, (10..210).collect::<Vec<u32>>());
    assert_healthy(&mut nn);
}

#[test]
fn sasl_negotiation_falls_back_to_simple() {
    // Goal: the SASL exchange a Java client performs with security off:
    // NEGOTIATE is answered with NEGOTIATE offering SIMPLE (byte-exact),
    // INITIATE is not answered, and the call after it succeeds.
    let mut nn = NameNode::start(&[IDLE]);
    let mut s = connect(&nn);
    s.write_all(b"hrpc\x09\x00\xdf").expect("preamble");
    // The client's NEGOTIATE frame, as captured from Hadoop 3.4.1 clients.
    s.write_all(&[
        0, 0, 0, 0x0e, 0x0a, 0x08, 0x02, 0x10, 0x00, 0x18, 0x41, 0x22, 0x00, 0x28, 0x01, 0x02,
        0x10, 0x01,
    ])
    .expect("negotiate");
    let mut reply = [0u8; 34];
    s.read_exact(&mut reply).expect("reply");
    let want: Vec<u8> = [
        &[
            0u8, 0, 0, 0x1e, 0x0e, 0x08, 0xdf, 0xff, 0xff, 0xff, 0x0f, 0x10, 0x00, 0x18, 0x09,
            0x3a, 0x00, 0x40, 0x01,
        ][..],
        &[0x0e, 0x10, 0x01, 0x22, 0x0a, 0x0a, 0x06],
        b"SIMPLE",
        &[0x12, 0x00],
    ]
    .concat();
    assert_eq!(&reply[..], &want[..]);
    let initiate = RpcSaslProto {
        state: 2,
        auths: vec![cairn_proto::hadoop::common::rpc_sasl_proto::SaslAuth {
            method: "SIMPLE".into(),
            mechanism: String::new(),
            ..Default::default()
        }],
        ..Default::default()
    };
    let mut sasl_header = rpc_header(-33);
    sasl_header.client_id = Default::default();
    s.write_all(&frame(&[&|b| delimited(&sasl_header, b), &|b| {
        delimited(&initiate, b)
    }]))
    .expect("initiate");
    s.write_all(&context_frame("dave")).expect("context");
    s.write_all(&get_file_info(0, "/")).expect("call");
    let (h, _) = read_response(&mut s).expect("reply");
    assert_eq!(h.call_id, 0);
    assert_eq!(h.status, RpcStatusProto::Success as i32);

    // Anything but SIMPLE is refused.
    let mut s = connect(&nn);
    s.write_all(b"hrpc\x09\x00\xdf").expect("preamble");
    let mut bad = initiate.clone();
    bad.auths[0].method = "KERBEROS".into();
    s.write_all(&frame(&[&|b| delimited(&sasl_header, b), &|b| {
        delimited(&bad, b)
    }]))
    .expect("initiate");
    fatal_class(&mut s);
    assert!(closed_within(&mut s, PATIENCE));
    assert_healthy(&mut nn);
}

#[test]
fn a_flood_of_garbage_connections_leaves_the_server_serving() {
    // Goal: many concurrent hostile connections (random bytes, silent,
    // oversized claims) do not stop a good client or grow memory unbounded.
    let mut nn = NameNode::start(&[IDLE]);
    let rss_before = nn.rss_kib();
    let addr = nn.addr;
    let mut threads = Vec::new();
    for t in 0..8u32 {
        threads.push(std::thread::spawn(move || {
            let mut seed = 0x9e37_79b9u32.wrapping_mul(t + 1);
            for i in 0..40u32 {
                let Ok(mut s) = TcpStream::connect(addr) else {
                    continue;
                };
                let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
                let mut junk = vec![0u8; 64 + (i as usize % 7) * 100];
                for b in junk.iter_mut() {
                    seed ^= seed << 13;
                    seed ^= seed >> 17;
                    seed ^= seed << 5;
                    *b = seed as u8;
                }
                if i % 3 == 0 {
                    junk.splice(0..0, PREAMBLE.iter().copied());
                }
                let _ = s.write_all(&junk);
                let mut sink = [0u8; 512];
                let _ = s.read(&mut sink);
            }
        }));
    }
    for _ in 0..20 {
        assert_healthy(&mut nn);
        std::thread::sleep(Duration::from_millis(25));
    }
    for t in threads {
        t.join().expect("flood thread");
    }
    assert_healthy(&mut nn);
    let rss_after = nn.rss_kib();
    assert!(
        rss_after < rss_before + 64 * 1024,
        "memory grew from {rss_before} KiB to {rss_after} KiB"
    );
    assert!(
        !nn.log().contains("panicked"),
        "a task panicked:\n{}",
        nn.log()
    );
}

#[test]
fn acting_for_another_user_needs_a_proxyuser_rule() {
    // Goal: as on HDFS, a connection whose context names a real user (a
    // service acting for its users, `doAs`) is refused with a FATAL
    // AuthorizationException unless `hadoop.proxyuser.<real>.*` allows that
    // user from that address; an allowed one is served as the effective
    // user, and a plain connection needs no rule.
    let nn = NameNode::start(&[
        "hadoop.proxyuser.hue.users=alice",
        "hadoop.proxyuser.hue.hosts=127.0.0.1",
    ]);
    let refused = |user: &str, real: &str| {
        let mut s = connect(&nn);
        s.write_all(PREAMBLE).expect("preamble");
        s.write_all(&context_frame_as(user, Some(real)))
            .expect("context");
        s.write_all(&get_file_info(1, "/")).expect("call");
        let (h, _) = read_response(&mut s).expect("a FATAL response");
        assert_eq!(h.status, RpcStatusProto::Fatal as i32, "{h:?}");
        assert_eq!(
            h.exception_class_name.as_deref(),
            Some("org.apache.hadoop.security.authorize.AuthorizationException")
        );
        assert!(closed_within(&mut s, PATIENCE), "the connection is closed");
        h.error_msg.unwrap_or_default()
    };
    assert_eq!(
        refused("bob", "hue"),
        "User: hue is not allowed to impersonate bob"
    );
    assert_eq!(
        refused("alice", "oozie"),
        "User: oozie is not allowed to impersonate alice"
    );
    for context in [context_frame_as("alice", Some("hue")), context_frame("bob")] {
        let mut s = connect(&nn);
        s.write_all(PREAMBLE).expect("preamble");
        s.write_all(&context).expect("context");
        s.write_all(&get_file_info(1, "/")).expect("call");
        let (h, body) = read_response(&mut s).expect("a response");
        assert_eq!(h.status, RpcStatusProto::Success as i32, "{h:?}");
        let r = pb::GetFileInfoResponseProto::decode_length_delimited(&body[..]).expect("decode");
        assert!(r.fs.is_some());
    }
    // Counted as HDFS's RpcActivity counts them.
    let query = "/jmx?qry=Hadoop:service=NameNode,name=RpcActivityForPort*";
    let (code, _, body) = common::http_request(nn.http, "GET", query, b"");
    assert_eq!(code, 200);
    let jmx: serde_json::Value = serde_json::from_slice(&body).expect("jmx json");
    let rpc = &jmx["beans"][0];
    assert_eq!(rpc["RpcAuthorizationFailures"], 2, "{rpc}");
    assert!(
        rpc["RpcAuthorizationSuccesses"].as_u64() >= Some(2),
        "{rpc}"
    );
}

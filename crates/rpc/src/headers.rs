//! The two headers at the front of every call's frame, read by hand (every
//! call has them): the RpcRequestHeaderProto into [`CallHeader`], the
//! RequestHeaderProto into [`MethodHeader`] with its names as
//! [`MethodName`] slices of the frame. Values are read as protobuf reads
//! them; known fields with another wire type are refused, unknown ones
//! skipped.

use bytes::{Buf, Bytes};

use crate::frame::{fields_checked, skip_field, take_delimited_raw, take_delimited_slice};

/// The fields of a call's RpcRequestHeaderProto that the server acts on.
/// Read by hand rather than by prost (every call has this header): the
/// client id stays a slice of the frame, and the trace and caller
/// context (which nothing here reads) are checked but not kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallHeader {
    pub rpc_kind: Option<i32>,
    pub rpc_op: Option<i32>,
    pub call_id: i32,
    pub client_id: Bytes,
    pub retry_count: Option<i32>,
    pub state_id: Option<i64>,
}

/// Decodes the delimited RpcRequestHeaderProto at the front of a frame and
/// checks the fields Hadoop requires (callId, clientId; the kind and
/// operation are [`check_header_kind`]'s). Values are read as protobuf
/// reads them (`sint32` zigzag, the last of repeated scalars wins);
/// unknown fields are skipped, known ones with another wire type refused.
///
/// # Errors
/// A message saying what is wrong with the header.
pub fn take_request_header(body: &mut Bytes) -> Result<CallHeader, String> {
    let raw = take_delimited_raw(body).map_err(|e| format!("cannot read the RPC header: {e}"))?;
    read_call_header(&raw).map_err(|e| match e {
        HeaderError::Missing => {
            "RPC header is missing required fields (callId, clientId)".to_string()
        }
        HeaderError::Bad(e) => format!("cannot read the RPC header: {e}"),
    })
}

enum HeaderError {
    Missing,
    Bad(String),
}

impl From<String> for HeaderError {
    fn from(e: String) -> Self {
        HeaderError::Bad(e)
    }
}

fn read_call_header(raw: &Bytes) -> Result<CallHeader, HeaderError> {
    // Read through a plain slice (cheaper than `Bytes`' `Buf`); only the
    // client id becomes a `Bytes` of its own.
    let mut buf: &[u8] = raw;
    let varint = |b: &mut &[u8]| prost::encoding::decode_varint(b).map_err(|e| e.to_string());
    // protobuf's sint32: zigzag over the low 32 bits.
    let sint32 = |v: u64| {
        let v = v as u32;
        ((v >> 1) as i32) ^ -((v & 1) as i32)
    };
    let mut h = CallHeader {
        rpc_kind: None,
        rpc_op: None,
        call_id: 0,
        client_id: Bytes::new(),
        retry_count: None,
        state_id: None,
    };
    let (mut call_id, mut client_id) = (None, None);
    while !buf.is_empty() {
        let key = varint(&mut buf)?;
        match (key >> 3, key & 7) {
            (1, 0) => h.rpc_kind = Some(varint(&mut buf)? as i32),
            (2, 0) => h.rpc_op = Some(varint(&mut buf)? as i32),
            (3, 0) => call_id = Some(sint32(varint(&mut buf)?)),
            (4, 2) => {
                let id = take_delimited_slice(&mut buf)?;
                let at = raw.len() - buf.len() - id.len();
                client_id = Some(raw.slice(at..at + id.len()));
            }
            (5, 0) => h.retry_count = Some(sint32(varint(&mut buf)?)),
            // RPCTraceInfoProto: traceId, parentId, spanContext.
            (6, 2) => check_message(take_delimited_slice(&mut buf)?, &[0, 0, 0, 2], &[])?,
            // RPCCallerContextProto: context (required), signature. The
            // Java client sends one with every call; nothing here reads it.
            (7, 2) => check_message(take_delimited_slice(&mut buf)?, &[0, 2, 2], &[1])?,
            (8, 0) => h.state_id = Some(varint(&mut buf)? as i64),
            (9, 2) => {
                take_delimited_slice(&mut buf)?;
            }
            (1..=9, wire) => return Err(format!("invalid wire type value: {wire}").into()),
            (_, wire) => skip_field(wire, &mut buf)?,
        }
    }
    match (call_id, client_id) {
        (Some(call_id), Some(client_id)) => Ok(CallHeader {
            call_id,
            client_id,
            ..h
        }),
        _ => Err(HeaderError::Missing),
    }
}

/// Checks that `msg` is a well-formed message whose known fields (1 up to
/// `wire_types.len() - 1`) have the wire type given at their index and
/// which holds every field of `required`, as protobuf would parse it, without
/// keeping any of it.
fn check_message(msg: &[u8], wire_types: &[u64], required: &[u32]) -> Result<(), String> {
    let present = fields_checked(msg, |tag, wire| {
        match usize::try_from(tag).ok().and_then(|t| wire_types.get(t)) {
            Some(want) if tag > 0 && *want != wire => {
                Err(format!("invalid wire type value: {wire}"))
            }
            _ => Ok(()),
        }
    })?;
    match required.iter().find(|t| !present.contains(**t)) {
        Some(t) => Err(format!("message is missing required field {t}")),
        None => Ok(()),
    }
}

/// A name from a call's method header (the method, the protocol): a slice
/// of the received frame, checked to be UTF-8 when the header is read, so
/// that reading a call's names copies and allocates nothing.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct MethodName(Bytes);

impl MethodName {
    /// `bytes` as a name, if they are UTF-8.
    ///
    /// # Errors
    /// A message when they are not.
    pub fn new(bytes: Bytes) -> Result<Self, String> {
        match std::str::from_utf8(&bytes) {
            Ok(_) => Ok(Self(bytes)),
            Err(_) => Err("invalid string value: data is not UTF-8 encoded".to_string()),
        }
    }

    pub fn as_str(&self) -> &str {
        // Checked in `new` and never changed; checking again costs a few
        // instructions for names this short, and needs no `unsafe`.
        std::str::from_utf8(&self.0).unwrap_or_default()
    }
}

impl std::ops::Deref for MethodName {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for MethodName {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl std::fmt::Display for MethodName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::fmt::Debug for MethodName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl PartialEq<str> for MethodName {
    fn eq(&self, other: &str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl PartialEq<&str> for MethodName {
    fn eq(&self, other: &&str) -> bool {
        self.0 == other.as_bytes()
    }
}

impl From<&'static str> for MethodName {
    fn from(s: &'static str) -> Self {
        Self(Bytes::from_static(s.as_bytes()))
    }
}

impl From<String> for MethodName {
    fn from(s: String) -> Self {
        Self(Bytes::from(s))
    }
}

/// A call's RequestHeaderProto: which method of which protocol, and the
/// protocol version the client speaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodHeader {
    pub method_name: MethodName,
    pub declaring_class_protocol_name: MethodName,
    pub client_protocol_version: u64,
}

/// Decodes the delimited RequestHeaderProto (method, protocol, version)
/// that follows the RPC header of a call, checking its required fields.
/// Read by hand rather than by prost: its two strings stay slices of the
/// frame (every call has this header; prost would allocate both).
///
/// # Errors
/// A message naming the missing fields or the decode error.
pub fn take_method_header(body: &mut Bytes) -> Result<MethodHeader, String> {
    let mut raw = take_delimited_raw(body)?;
    let (mut method, mut protocol, mut version) = (None, None, None);
    let varint = |b: &mut Bytes| prost::encoding::decode_varint(b).map_err(|e| e.to_string());
    while raw.has_remaining() {
        let key = varint(&mut raw)?;
        match (key >> 3, key & 7) {
            (1, 2) => method = Some(take_delimited_raw(&mut raw)?),
            (2, 2) => protocol = Some(take_delimited_raw(&mut raw)?),
            (3, 0) => version = Some(varint(&mut raw)?),
            (1..=3, wire) => return Err(format!("invalid wire type value: {wire}")),
            (_, wire) => skip_field(wire, &mut raw)?,
        }
    }
    match (method, protocol, version) {
        (Some(method), Some(protocol), Some(version)) => Ok(MethodHeader {
            method_name: MethodName::new(method)?,
            declaring_class_protocol_name: MethodName::new(protocol)?,
            client_protocol_version: version,
        }),
        _ => Err(
            "Message missing required fields: methodName, declaringClassProtocolName, clientProtocolVersion"
                .to_string(),
        ),
    }
}

/// Checks the kind and operation of a decoded header (Hadoop accepts only
/// protocol-buffer calls sent as one final packet).
///
/// # Errors
/// A message naming the unsupported value.
pub fn check_header_kind(header: &CallHeader) -> Result<(), String> {
    match header.rpc_kind {
        Some(2) => {}
        Some(k) => return Err(format!("Unsupported RPC kind {k}")),
        None => return Err("RPC header has no rpcKind".to_string()),
    }
    match header.rpc_op {
        Some(0) => Ok(()),
        Some(op) => Err(format!("Unsupported RPC operation {op}")),
        None => Err("RPC header has no rpcOp".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::put_delimited;
    use crate::frame::tests::hex;
    use bytes::{BufMut, BytesMut};

    #[test]
    fn request_header_from_capture_decodes() {
        // hdfs-native's getFileInfo("/") header, PROTOCOL.md §1.7.
        let mut raw = hex("1a 08 02 10 00 18 00 22 10");
        raw.extend(0u8..16);
        raw.extend(hex("28 00"));
        let mut body = Bytes::from(raw);
        let h = take_request_header(&mut body).expect("valid header");
        assert_eq!(h.call_id, 0);
        assert_eq!(h.client_id.len(), 16);
        assert_eq!(h.retry_count, Some(0));
        check_header_kind(&h).expect("kind ok");
        assert!(body.is_empty());
    }

    #[test]
    fn method_header_reads_as_prost_writes_it() {
        let sent = cairn_proto::hadoop::common::RequestHeaderProto {
            method_name: "getFileInfo".into(),
            declaring_class_protocol_name: "org.apache.hadoop.hdfs.protocol.ClientProtocol".into(),
            client_protocol_version: 1,
        };
        let mut out = BytesMut::new();
        put_delimited(&mut out, &sent);
        out.put_slice(b"rest");
        let mut body = out.freeze();
        let h = take_method_header(&mut body).expect("valid header");
        assert_eq!(h.method_name, "getFileInfo");
        assert_eq!(
            h.declaring_class_protocol_name,
            sent.declaring_class_protocol_name.as_str()
        );
        assert_eq!(h.client_protocol_version, 1);
        assert_eq!(&body[..], b"rest");
    }

    #[test]
    fn method_header_skips_unknown_fields_and_refuses_bad_ones() {
        // methodName "m", an unknown field 9 (length 2), protocol "p", version 1.
        let good = hex("0a 01 6d 4a 02 00 00 12 01 70 18 01");
        let mut body = Bytes::from([&[good.len() as u8][..], &good].concat());
        let h = take_method_header(&mut body).expect("unknown fields are skipped");
        assert_eq!(
            (h.method_name.as_str(), h.client_protocol_version),
            ("m", 1)
        );
        // No version.
        let mut body = Bytes::from(hex("06 0a 01 6d 12 01 70"));
        let err = take_method_header(&mut body).expect_err("must fail");
        assert!(err.contains("missing required fields"), "{err}");
        // A method name that is not UTF-8.
        let mut body = Bytes::from(hex("08 0a 01 ff 12 01 70 18 01"));
        let err = take_method_header(&mut body).expect_err("must fail");
        assert!(err.contains("UTF-8"), "{err}");
        // The version as a string; a length past the end.
        let mut body = Bytes::from(hex("09 0a 01 6d 12 01 70 1a 01 31"));
        assert!(take_method_header(&mut body).is_err());
        let mut body = Bytes::from(hex("05 0a 09 6d 12 01"));
        assert!(take_method_header(&mut body).is_err());
    }

    #[test]
    fn request_header_reads_as_prost_writes_it() {
        use cairn_proto::hadoop::common::{
            RpcCallerContextProto, RpcRequestHeaderProto, RpcTraceInfoProto,
        };
        let headers = [
            RpcRequestHeaderProto {
                rpc_kind: Some(2),
                rpc_op: Some(0),
                call_id: 7,
                client_id: Bytes::from_static(&[9; 16]),
                retry_count: Some(-1),
                ..Default::default()
            },
            RpcRequestHeaderProto {
                rpc_kind: Some(2),
                rpc_op: Some(0),
                call_id: -33,
                client_id: Bytes::new(),
                retry_count: Some(i32::MIN),
                trace_info: Some(RpcTraceInfoProto {
                    trace_id: Some(1),
                    parent_id: Some(2),
                    span_context: Some(Bytes::from_static(b"ctx")),
                }),
                caller_context: Some(RpcCallerContextProto {
                    context: "spark_app".into(),
                    signature: Some(Bytes::from_static(b"sig")),
                }),
                state_id: Some(1 << 40),
                router_federated_state: Some(Bytes::from_static(b"r")),
            },
            RpcRequestHeaderProto {
                call_id: i32::MAX,
                client_id: Bytes::from_static(b"c"),
                state_id: Some(-5),
                ..Default::default()
            },
        ];
        for sent in headers {
            let mut out = BytesMut::new();
            put_delimited(&mut out, &sent);
            out.put_slice(b"rest");
            let mut body = out.freeze();
            let h = take_request_header(&mut body).expect("valid header");
            let back = (
                h.rpc_kind,
                h.rpc_op,
                h.call_id,
                h.client_id,
                h.retry_count,
                h.state_id,
            );
            let want = (
                sent.rpc_kind,
                sent.rpc_op,
                sent.call_id,
                sent.client_id.clone(),
                sent.retry_count,
                sent.state_id,
            );
            assert_eq!(back, want);
            assert_eq!(&body[..], b"rest");
        }
    }

    #[test]
    fn request_header_skips_unknown_fields_and_refuses_bad_ones() {
        // callId 1 (zigzag 2), clientId "c", an unknown field 20 (varint).
        let mut body = Bytes::from(hex("08 18 02 22 01 63 a0 01 05"));
        let h = take_request_header(&mut body).expect("unknown fields are skipped");
        assert_eq!((h.call_id, &h.client_id[..]), (1, &b"c"[..]));
        // callId as a length-delimited field.
        let mut body = Bytes::from(hex("06 1a 01 02 22 01 63"));
        let err = take_request_header(&mut body).expect_err("must fail");
        assert!(err.contains("wire type"), "{err}");
        // A caller context that is not a message (its tag 1 cut short),
        // one without its required context, one with the context as a varint.
        for bad in [
            "09 18 02 22 01 63 3a 01 0a",
            "0a 18 02 22 01 63 3a 02 12 00",
            "0a 18 02 22 01 63 3a 02 08 01",
        ] {
            let mut body = Bytes::from(hex(bad));
            let err = take_request_header(&mut body).expect_err(bad);
            assert!(err.contains("cannot read the RPC header"), "{err}");
        }
        // A trace id sent as a length-delimited field.
        let mut body = Bytes::from(hex("0a 18 02 22 01 63 32 02 0a 00"));
        assert!(take_request_header(&mut body).is_err());
        // A client id running past the header.
        let mut body = Bytes::from(hex("04 18 02 22 05"));
        assert!(take_request_header(&mut body).is_err());
    }

    #[test]
    fn header_without_call_id_is_rejected() {
        // rpcKind, rpcOp and clientId only.
        let mut body = Bytes::from(hex("06 08 02 10 00 22 00"));
        let err = take_request_header(&mut body).expect_err("must fail");
        assert!(err.contains("missing required"), "{err}");
    }

    #[test]
    fn truncated_delimited_is_rejected() {
        let mut body = Bytes::from(hex("7f 08 02"));
        assert!(take_request_header(&mut body).is_err());
    }
}

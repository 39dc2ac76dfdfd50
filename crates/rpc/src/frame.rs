//! Byte-level pieces of Hadoop IPC: the 7-byte connection preamble, the
//! length-prefixed frames in both directions, and the headers inside them.
//!
//! Every length read from the network is checked against a limit before
//! anything is allocated, and frames are read in two steps (the whole frame
//! first, then decoding), so a hostile peer can neither make us allocate
//! what it claims nor leave us with half a message.

use bytes::{Buf, BufMut, Bytes, BytesMut};
use cairn_proto::hadoop::common::{
    rpc_response_header_proto::{RpcErrorCodeProto, RpcStatusProto},
    RpcResponseHeaderProto,
};
use prost::Message;
use tokio::io::{AsyncRead, AsyncReadExt};

// The headers inside a request frame (headers.rs), here with the rest of
// the frame's pieces for callers.
pub use crate::headers::{
    check_header_kind, take_method_header, take_request_header, CallHeader, MethodHeader,
    MethodName,
};

/// The IPC magic, "hrpc".
pub const MAGIC: [u8; 4] = *b"hrpc";
/// The only IPC version current clients speak.
pub const IPC_VERSION: u8 = 9;
/// Auth byte: no SASL (SIMPLE authentication).
pub const AUTH_NONE: u8 = 0x00;
/// Auth byte: SASL (−33 as a signed byte).
pub const AUTH_SASL: u8 = 0xDF;

/// Call id of connection-level FATAL replies.
pub const CALL_ID_NONE: i32 = -1;
/// Call id of the connection context frame.
pub const CALL_ID_CONNECTION_CONTEXT: i32 = -3;
/// Call id of a ping (never answered).
pub const CALL_ID_PING: i32 = -4;
/// Call id of every SASL frame, in both directions.
pub const CALL_ID_SASL: i32 = -33;

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    #[error("frame length {len} is outside 1..={max}")]
    BadLength { len: i64, max: usize },
    #[error("connection closed in the middle of a frame")]
    Truncated,
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}

/// Why a connection preamble (`"hrpc" version serviceClass auth`) was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PreambleError {
    /// Right magic, but the version of a pre-protobuf client (3 to 8): it
    /// reads a bare (callId, status, class, message) answer.
    OldVersion(u8),
    /// Wrong magic, or a version we do not speak.
    Version(u8),
    /// An auth byte that is neither NONE nor SASL.
    Auth(u8),
}

/// Whether the first four bytes of a connection are an HTTP `GET`.
pub fn is_http_get(magic: &[u8; 4]) -> bool {
    magic == b"GET "
}

/// Checks the 7-byte connection preamble and returns its auth byte.
///
/// # Errors
/// [`PreambleError`] saying what is wrong.
pub fn parse_preamble(preamble: &[u8; 7]) -> Result<u8, PreambleError> {
    let [m0, m1, m2, m3, version, _service_class, auth] = *preamble;
    let magic = [m0, m1, m2, m3];
    if magic != MAGIC || version != IPC_VERSION {
        if magic == MAGIC && (3..IPC_VERSION).contains(&version) {
            return Err(PreambleError::OldVersion(version));
        }
        return Err(PreambleError::Version(version));
    }
    if auth != AUTH_NONE && auth != AUTH_SASL {
        return Err(PreambleError::Auth(auth));
    }
    Ok(auth)
}

/// Reads one length-prefixed frame. Returns `Ok(None)` on a clean end of
/// stream at a frame boundary.
///
/// # Errors
/// [`FrameError::BadLength`] when the declared length is zero, negative or
/// above `max_len` (nothing is allocated then); [`FrameError::Truncated`]
/// when the stream ends inside the frame.
///
/// # Cancel safety
/// Not cancel safe: a cancelled read loses the bytes already consumed.
pub async fn read_frame<R: AsyncRead + Unpin>(
    reader: &mut R,
    max_len: usize,
) -> Result<Option<Bytes>, FrameError> {
    let mut len_buf = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        let n = reader.read(&mut len_buf[got..]).await?;
        if n == 0 {
            return if got == 0 {
                Ok(None)
            } else {
                Err(FrameError::Truncated)
            };
        }
        got += n;
    }
    let len_usize = body_len(len_buf, max_len)?;
    // Grow the buffer as bytes arrive instead of trusting the declared
    // length up front: a peer that claims 100 MiB and sends 10 bytes costs
    // us 10 bytes.
    let mut body = Vec::with_capacity(len_usize.min(64 * 1024));
    let read = reader.take(len_usize as u64).read_to_end(&mut body).await?;
    if read != len_usize {
        return Err(FrameError::Truncated);
    }
    Ok(Some(Bytes::from(body)))
}

/// The body length a frame's 4-byte prefix declares, if in range
/// (1..=`max_len`; nothing is allocated for one that is not).
fn body_len(prefix: [u8; 4], max_len: usize) -> Result<usize, FrameError> {
    let len = i32::from_be_bytes(prefix);
    match usize::try_from(len) {
        Ok(n) if n > 0 && n <= max_len => Ok(n),
        _ => Err(FrameError::BadLength {
            len: i64::from(len),
            max: max_len,
        }),
    }
}

/// A whole frame (length prefix and body) at the front of `buf`: its body,
/// copied out, and the bytes it took. `None` when `buf` does not hold a
/// whole frame yet, or its length is out of range ([`read_frame`] reports
/// that). Lets a server take the frames one read brought in without
/// waiting, so without arming a timeout for each.
pub fn buffered_frame(buf: &[u8], max_len: usize) -> Option<(Bytes, usize)> {
    let prefix: [u8; 4] = buf.get(..4)?.try_into().ok()?;
    let len = body_len(prefix, max_len).ok()?;
    let body = buf.get(4..4 + len)?;
    Some((Bytes::copy_from_slice(body), 4 + len))
}

/// `fill_buf` that reports whether any byte is available (false at EOF).
pub(crate) trait FillNonEmpty {
    async fn fill_buf_nonempty(&mut self) -> std::io::Result<bool>;
}

impl<R: AsyncRead + Unpin> FillNonEmpty for tokio::io::BufReader<R> {
    async fn fill_buf_nonempty(&mut self) -> std::io::Result<bool> {
        use tokio::io::AsyncBufReadExt;
        Ok(!self.fill_buf().await?.is_empty())
    }
}

/// Decodes a varint-length-delimited message from the front of `buf`,
/// advancing it.
///
/// # Errors
/// A message when the length prefix or the message is malformed.
pub fn take_delimited<M: Message + Default>(buf: &mut Bytes) -> Result<M, String> {
    let body = take_delimited_raw(buf)?;
    M::decode(body).map_err(|e| e.to_string())
}

/// Splits a varint-length-delimited blob from the front of `buf` without
/// decoding it.
///
/// # Errors
/// A decode error when the length prefix is malformed or too long.
pub fn take_delimited_raw(buf: &mut Bytes) -> Result<Bytes, String> {
    let mut rest: &[u8] = buf;
    let len = take_delimited_slice(&mut rest)?.len();
    buf.advance(buf.len() - rest.len() - len);
    Ok(buf.split_to(len))
}

/// [`take_delimited_raw`] over a plain slice: the blob, borrowed.
pub(crate) fn take_delimited_slice<'a>(buf: &mut &'a [u8]) -> Result<&'a [u8], String> {
    let len = prost::encoding::decode_varint(buf).map_err(|e| e.to_string())?;
    let len = usize::try_from(len).map_err(|_| "length overflow".to_string())?;
    if len > buf.len() {
        return Err("delimited message longer than the frame".to_string());
    }
    let (front, rest) = buf.split_at(len);
    *buf = rest;
    Ok(front)
}

/// The field numbers present in an encoded protobuf message.
/// prost does not enforce proto2 `required`, so callers that must reject a
/// message missing a required field check here.
///
/// # Errors
/// A decode error when the message is not well-formed protobuf.
pub fn present_fields(buf: &[u8]) -> Result<FieldSet, String> {
    fields_checked(buf, |_, _| Ok(()))
}

/// [`present_fields`], with `check` asked about each field's tag and wire
/// type before it is skipped.
pub(crate) fn fields_checked(
    mut buf: &[u8],
    mut check: impl FnMut(u32, u64) -> Result<(), String>,
) -> Result<FieldSet, String> {
    let mut tags = FieldSet::default();
    while !buf.is_empty() {
        let key = prost::encoding::decode_varint(&mut buf).map_err(|e| e.to_string())?;
        let tag = u32::try_from(key >> 3).map_err(|_| "bad tag".to_string())?;
        check(tag, key & 7)?;
        skip_field(key & 7, &mut buf)?;
        tags.insert(tag);
    }
    Ok(tags)
}

/// The field numbers a message holds, below 64 (the required fields the
/// RPC headers check are all low): a bit each, so that reading every
/// call's two headers allocates nothing for it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FieldSet(u64);

impl FieldSet {
    fn insert(&mut self, tag: u32) {
        if tag < 64 {
            self.0 |= 1 << tag;
        }
    }

    /// Whether field `tag` is present (always false from 64 on).
    pub fn contains(&self, tag: u32) -> bool {
        tag < 64 && self.0 & (1 << tag) != 0
    }
}

/// Skips one field's value of wire type `wire` at the front of `buf`.
pub(crate) fn skip_field(wire: u64, buf: &mut impl Buf) -> Result<(), String> {
    let len = match wire {
        0 => {
            prost::encoding::decode_varint(buf).map_err(|e| e.to_string())?;
            0
        }
        1 => 8,
        2 => {
            let n = prost::encoding::decode_varint(buf).map_err(|e| e.to_string())?;
            usize::try_from(n).map_err(|_| "length overflow".to_string())?
        }
        5 => 4,
        _ => return Err("unsupported wire type".to_string()),
    };
    if len > buf.remaining() {
        return Err("field runs past the end".to_string());
    }
    buf.advance(len);
    Ok(())
}

/// Appends a varint-length-delimited copy of `msg` to `out`.
pub fn put_delimited<M: Message>(out: &mut BytesMut, msg: &M) {
    let len = msg.encoded_len();
    prost::encoding::encode_varint(len as u64, out);
    // Encoding into a BytesMut cannot fail: it grows as needed.
    let _ = msg.encode(out);
}

/// Builds a whole response frame: length, delimited header, and for
/// successful calls the delimited, already-encoded response message.
pub fn response_frame(header: &RpcResponseHeaderProto, payload: Option<&[u8]>) -> Bytes {
    // The lengths are known up front, so the frame is written into one
    // buffer of the right size (this runs once per call).
    let header_len = header.encoded_len();
    let mut body_len = prost::encoding::encoded_len_varint(header_len as u64) + header_len;
    if let Some(p) = payload {
        body_len += prost::encoding::encoded_len_varint(p.len() as u64) + p.len();
    }
    let mut frame = BytesMut::with_capacity(body_len + 4);
    frame.put_u32(u32::try_from(body_len).unwrap_or(u32::MAX));
    put_delimited(&mut frame, header);
    if let Some(p) = payload {
        prost::encoding::encode_varint(p.len() as u64, &mut frame);
        frame.put_slice(p);
    }
    frame.freeze()
}

/// The whole frame of a successful call: what [`response_frame`] makes of
/// a [`success_header`] (with `state_id` when the server keeps one) and
/// `payload`, written field by field into one buffer of the right size,
/// as every successful call is answered (prost would size the header and
/// then encode it, both through its generic field code).
pub fn success_frame(
    call_id: i32,
    client_id: &[u8],
    retry_count: i32,
    state_id: Option<i64>,
    payload: &[u8],
) -> Bytes {
    use prost::encoding::encoded_len_varint as len_of;
    let call_id = u64::from(call_id as u32);
    // protobuf's sint32: zigzag.
    let retry = u64::from(((retry_count << 1) ^ (retry_count >> 31)) as u32);
    let state = state_id.map(|s| s as u64);
    // Tags 1 (callId), 2 (status SUCCESS = 0), 3 (IPC version), 7 (client
    // id), 8 (retry count), 9 (state id), in field order as prost writes them.
    let header_len = 1
        + len_of(call_id)
        + 5
        + len_of(client_id.len() as u64)
        + client_id.len()
        + 1
        + len_of(retry)
        + state.map_or(0, |s| 1 + len_of(s));
    let body_len =
        len_of(header_len as u64) + header_len + len_of(payload.len() as u64) + payload.len();
    let mut frame = Vec::with_capacity(4 + body_len);
    frame.extend_from_slice(&u32::try_from(body_len).unwrap_or(u32::MAX).to_be_bytes());
    put_varint(&mut frame, header_len as u64);
    frame.push(0x08);
    put_varint(&mut frame, call_id);
    frame.extend_from_slice(&[0x10, RpcStatusProto::Success as u8, 0x18, IPC_VERSION, 0x3a]);
    put_varint(&mut frame, client_id.len() as u64);
    frame.extend_from_slice(client_id);
    frame.push(0x40);
    put_varint(&mut frame, retry);
    if let Some(s) = state {
        frame.push(0x48);
        put_varint(&mut frame, s);
    }
    put_varint(&mut frame, payload.len() as u64);
    frame.extend_from_slice(payload);
    Bytes::from(frame)
}

/// Appends `v` as a protobuf varint (prost's `encode_varint` goes through
/// the generic `BufMut`, several times the instructions for these few
/// bytes).
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// A SUCCESS header for `call_id`, echoing client id and retry count.
pub fn success_header(call_id: i32, client_id: &Bytes, retry_count: i32) -> RpcResponseHeaderProto {
    RpcResponseHeaderProto {
        call_id: call_id as u32,
        status: RpcStatusProto::Success as i32,
        server_ipc_version_num: Some(u32::from(IPC_VERSION)),
        client_id: Some(client_id.clone()),
        retry_count: Some(retry_count),
        ..Default::default()
    }
}

/// An ERROR or FATAL header carrying a Java exception class and message.
pub fn error_header(
    call_id: i32,
    fatal: bool,
    class: &str,
    message: &str,
    detail: RpcErrorCodeProto,
    client_id: &Bytes,
    retry_count: i32,
) -> RpcResponseHeaderProto {
    RpcResponseHeaderProto {
        call_id: call_id as u32,
        status: if fatal {
            RpcStatusProto::Fatal as i32
        } else {
            RpcStatusProto::Error as i32
        },
        server_ipc_version_num: Some(u32::from(IPC_VERSION)),
        exception_class_name: Some(class.to_string()),
        error_msg: Some(message.to_string()),
        error_detail: Some(detail as i32),
        client_id: Some(client_id.clone()),
        retry_count: Some(retry_count),
        ..Default::default()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Bytes from space-separated hex pairs (also the header tests').
    pub(crate) fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).expect("test hex"))
            .collect()
    }

    #[test]
    fn success_header_matches_hadoop_bytes() {
        // PROTOCOL.md §1.8: success header for callId 0 with a 16-byte id.
        let client_id = Bytes::from((0u8..16).collect::<Vec<_>>());
        let frame = response_frame(&success_header(0, &client_id, 0), None);
        let mut want = hex("00 00 00 1b 1a 08 00 10 00 18 09 3a 10");
        want.extend(0u8..16);
        want.extend(hex("40 00"));
        assert_eq!(&frame[..], &want[..]);
    }

    #[test]
    fn sasl_success_frame_matches_brief() {
        let frame = response_frame(&success_header(CALL_ID_SASL, &Bytes::new(), -1), None);
        assert_eq!(
            &frame[..],
            &hex("00 00 00 0f 0e 08 df ff ff ff 0f 10 00 18 09 3a 00 40 01")[..]
        );
    }

    #[test]
    fn success_frame_matches_prost() {
        let ids = [
            Bytes::new(),
            Bytes::from_static(&[7; 16]),
            Bytes::from(vec![1; 200]),
        ];
        for call_id in [0, 1, 127, 128, i32::MAX, -1, CALL_ID_SASL] {
            for retry in [-1, 0, 5, i32::MIN, i32::MAX] {
                for state in [None, Some(0), Some(1 << 40), Some(-3)] {
                    for (client_id, payload) in ids.iter().zip([&b""[..], b"abc", &[5; 300]]) {
                        let mut h = success_header(call_id, client_id, retry);
                        h.state_id = state;
                        assert_eq!(
                            success_frame(call_id, client_id, retry, state, payload),
                            response_frame(&h, Some(payload)),
                            "call {call_id}, retry {retry}, state {state:?}"
                        );
                    }
                }
            }
        }
    }

    #[tokio::test]
    async fn oversized_and_truncated_frames() {
        let mut big: &[u8] = &[0x7f, 0xff, 0xff, 0xff, 1, 2];
        assert!(matches!(
            read_frame(&mut big, 1024).await,
            Err(FrameError::BadLength { .. })
        ));
        let mut neg: &[u8] = &[0xff, 0xff, 0xff, 0xfe];
        assert!(matches!(
            read_frame(&mut neg, 1024).await,
            Err(FrameError::BadLength { .. })
        ));
        let mut short: &[u8] = &[0, 0, 0, 10, 1, 2, 3];
        assert!(matches!(
            read_frame(&mut short, 1024).await,
            Err(FrameError::Truncated)
        ));
        let mut half_len: &[u8] = &[0, 0];
        assert!(matches!(
            read_frame(&mut half_len, 1024).await,
            Err(FrameError::Truncated)
        ));
        let mut empty: &[u8] = &[];
        assert!(matches!(read_frame(&mut empty, 1024).await, Ok(None)));
        let mut ok: &[u8] = &[0, 0, 0, 2, 7, 8];
        let got = read_frame(&mut ok, 1024).await.expect("ok").expect("frame");
        assert_eq!(&got[..], &[7, 8]);
    }

    #[test]
    fn buffered_frames_are_whole_and_in_range() {
        // Two frames and the start of a third, as one read may bring them.
        let buf = [0, 0, 0, 2, 7, 8, 0, 0, 0, 1, 9, 0, 0, 0, 3, 1];
        let (first, used) = buffered_frame(&buf, 1024).expect("first");
        assert_eq!((&first[..], used), (&[7u8, 8][..], 6));
        let (second, used2) = buffered_frame(&buf[used..], 1024).expect("second");
        assert_eq!((&second[..], used2), (&[9u8][..], 5));
        // The third is not all there; a bare or partial prefix is not a frame.
        assert!(buffered_frame(&buf[used + used2..], 1024).is_none());
        assert!(buffered_frame(&[0, 0, 0], 1024).is_none());
        // Zero, negative and oversized lengths are left to `read_frame`.
        for bad in [
            [0u8, 0, 0, 0, 1],
            [0xff, 0xff, 0xff, 0xfe, 1],
            [0, 0, 4, 1, 1],
        ] {
            assert!(buffered_frame(&bad, 1024).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn present_fields_sees_each_tag() {
        // Fields 1 (varint), 3 (length-delimited), 5 (fixed32), 70 (varint).
        let msg = hex("08 01 1a 02 61 62 2d 01 00 00 00 b0 04 05");
        let tags = present_fields(&msg).expect("well-formed");
        assert!(tags.contains(1) && tags.contains(3) && tags.contains(5));
        assert!(!tags.contains(2) && !tags.contains(4) && !tags.contains(70));
        assert!(
            present_fields(&hex("1a 05 61")).is_err(),
            "runs past the end"
        );
    }
}

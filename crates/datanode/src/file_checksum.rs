//! The client half of `FileSystem.getFileChecksum` (HDFS's
//! `FileChecksumHelper.ReplicatedFileChecksumComputer`): the file's block
//! locations from the NameNode as the caller, BLOCK_CHECKSUM (op 85) to a
//! DataNode holding each block ([`crate::transfer::checksum_op`] is the
//! server side), and the per-block answers combined as the Java client
//! combines them, so the result equals what `hadoop fs -checksum` prints
//! for the same file.
//!
//! Used by the DataNode's WebHDFS GETFILECHECKSUM (always MD5MD5CRC, as
//! HDFS's `WebHdfsHandler` asks `DFSClient.getFileChecksum`) and by
//! `cairn dfs -checksum` (`dfs.checksum.combine.mode`).

use std::net::SocketAddr;
use std::time::Duration;

use cairn_proto::hadoop::hdfs::{
    BaseHeaderProto, BlockChecksumOptionsProto, BlockChecksumTypeProto, BlockOpResponseProto,
    DatanodeInfoProto, GetBlockLocationsRequestProto, GetBlockLocationsResponseProto,
    LocatedBlockProto, OpBlockChecksumProto, OpBlockChecksumResponseProto, Status,
};
use cairn_proto::protocols::{op, CLIENT_PROTOCOL};
use cairn_rpc::client::{Client, ClientError};
use md5::{Digest, Md5};

use crate::checksum::ChecksumKind;
use crate::crc_compose::CrcComposer;
use crate::ids::extended_block_name;
use crate::transfer::packet::read_delimited;
use crate::transfer::peer::{connect_datanode, send_op, xfer_name};
use crate::transfer::{timed, XferError};

/// `dfs.client.socket-timeout`'s default; each block also gets 3 s per
/// replica, as the Java client allows.
const SOCKET_TIMEOUT: Duration = Duration::from_secs(60);

/// Largest BLOCK_CHECKSUM answer read (an MD5 or a few CRCs).
const MAX_RESPONSE_BYTES: usize = 64 * 1024;

/// How block checksums are combined (`dfs.checksum.combine.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CombineMode {
    /// MD5 of the blocks' MD5s of their chunk CRCs (HDFS's default).
    Md5Md5Crc,
    /// One CRC of the whole range, composed from the blocks' CRCs.
    CompositeCrc,
}

impl CombineMode {
    /// The mode named by `dfs.checksum.combine.mode` (Java's `valueOf`:
    /// exact names).
    pub fn parse(name: &str) -> Option<CombineMode> {
        match name.trim() {
            "MD5MD5CRC" => Some(CombineMode::Md5Md5Crc),
            "COMPOSITE_CRC" => Some(CombineMode::CompositeCrc),
            _ => None,
        }
    }

    fn block_type(self) -> BlockChecksumTypeProto {
        match self {
            CombineMode::Md5Md5Crc => BlockChecksumTypeProto::Md5crc,
            CombineMode::CompositeCrc => BlockChecksumTypeProto::CompositeCrc,
        }
    }
}

/// A file checksum: Hadoop's algorithm name and serialized bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChecksum {
    /// `MD5-of-<n>MD5-of-<bpc><CRC32|CRC32C>` or `COMPOSITE-<CRC32|CRC32C>`.
    pub algorithm: String,
    /// `MD5MD5CRC32FileChecksum.getBytes()` (bytes per CRC, CRCs per
    /// block, MD5: 28 bytes) or the composite CRC (4 bytes).
    pub bytes: Vec<u8>,
}

impl FileChecksum {
    /// The bytes in lower-case hex, as Hadoop's `byteToHexString`.
    pub fn hex(&self) -> String {
        hex(&self.bytes)
    }

    /// What Hadoop's `getBytes()` returns, in hex: an MD5MD5CRC checksum
    /// is serialized into a `DataOutputBuffer` whose whole 32-byte array
    /// comes back, so its 28 bytes are followed by 4 zeros (WebHDFS's
    /// `bytes`, beside `"length": 28`).
    pub fn java_bytes_hex(&self) -> String {
        let mut bytes = self.bytes.clone();
        if self.algorithm.starts_with("MD5-of-") {
            bytes.resize(32, 0);
        }
        hex(&bytes)
    }

    /// The MD5MD5CRC checksum of `bytes_per_crc`, `crc_per_block` and
    /// `md5` (Hadoop writes the two numbers big-endian before the MD5).
    fn md5_md5_crc(bytes_per_crc: u32, crc_per_block: u64, md5: [u8; 16], kind: &str) -> Self {
        let mut bytes = Vec::with_capacity(28);
        bytes.extend_from_slice(&bytes_per_crc.to_be_bytes());
        bytes.extend_from_slice(&crc_per_block.to_be_bytes());
        bytes.extend_from_slice(&md5);
        FileChecksum {
            algorithm: format!("MD5-of-{crc_per_block}MD5-of-{bytes_per_crc}{kind}"),
            bytes,
        }
    }

    /// What HDFS answers for an empty range: the MD5 of 32 zero bytes
    /// under a CRC32 name, the value earlier HDFS versions returned.
    fn empty() -> Self {
        Self::md5_md5_crc(0, 0, Md5::digest([0u8; 32]).into(), "CRC32")
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why no checksum could be computed: a Java exception class and message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{class}: {message}")]
pub struct ChecksumError {
    pub class: String,
    pub message: String,
}

impl ChecksumError {
    fn io(message: impl Into<String>) -> Self {
        ChecksumError {
            class: "java.io.IOException".into(),
            message: message.into(),
        }
    }
}

impl From<ClientError> for ChecksumError {
    fn from(e: ClientError) -> Self {
        match e {
            ClientError::Remote { class, message } | ClientError::Fatal { class, message } => {
                ChecksumError { class, message }
            }
            other => ChecksumError::io(other.to_string()),
        }
    }
}

/// The checksum of the first `length` bytes of `path` (`u64::MAX`: the
/// whole file), asking the NameNode at `namenode` as `user`.
///
/// `Ok(None)` where Hadoop's answer is null: MD5MD5CRC over blocks of
/// different CRC types.
///
/// # Errors
///
/// The NameNode's exception (`FileNotFoundException` for a missing file),
/// an `IOException` for a file under construction, or a `PathIOException`
/// when no DataNode answered for a block.
pub async fn file_checksum(
    namenode: SocketAddr,
    user: &str,
    path: &str,
    length: u64,
    mode: CombineMode,
) -> Result<Option<FileChecksum>, ChecksumError> {
    if length == 0 {
        return Ok(Some(FileChecksum::empty()));
    }
    let client = Client::connect(namenode, user, CLIENT_PROTOCOL).await?;
    let request = GetBlockLocationsRequestProto {
        src: path.to_string(),
        offset: 0,
        length: length.min(i64::MAX as u64),
    };
    let response: GetBlockLocationsResponseProto =
        client.call("getBlockLocations", &request).await?;
    let Some(located) = response.locations else {
        return Err(ChecksumError {
            class: "java.io.FileNotFoundException".into(),
            message: format!("File does not exist: {path}"),
        });
    };
    if located.under_construction {
        return Err(ChecksumError::io(format!(
            "Fail to get checksum, since file {path} is under construction."
        )));
    }
    if located.blocks.is_empty() {
        return Ok(Some(FileChecksum::empty()));
    }
    let mut remaining = length;
    if path.contains("/.snapshot/") {
        remaining = remaining.min(located.file_length);
    }
    let mut combiner = Combiner::new(mode, located.blocks.len());
    let mut blocks = located.blocks;
    for (index, block) in blocks.iter_mut().enumerate() {
        // The last block asked for may be cut short by `length`.
        block.b.num_bytes = Some(block.b.num_bytes.unwrap_or(0).min(remaining));
        remaining -= block.b.num_bytes.unwrap_or(0);
        let answer = checksum_block(path, block, mode).await?;
        combiner.add(index, &answer)?;
    }
    combiner.finish(&blocks, length)
}

/// BLOCK_CHECKSUM for `block` from each of its replicas in turn until one
/// answers.
async fn checksum_block(
    path: &str,
    block: &LocatedBlockProto,
    mode: CombineMode,
) -> Result<OpBlockChecksumResponseProto, ChecksumError> {
    let replicas = u32::try_from(block.locs.len()).unwrap_or(u32::MAX);
    let limit = SOCKET_TIMEOUT + Duration::from_secs(3).saturating_mul(replicas);
    for dn in &block.locs {
        match ask_datanode(dn, block, mode, limit).await {
            Ok(answer) => return Ok(answer),
            Err(e) => tracing::warn!(
                "src={path}, datanode {}: BLOCK_CHECKSUM failed: {e}",
                xfer_name(dn)
            ),
        }
    }
    Err(ChecksumError {
        class: "org.apache.hadoop.fs.PathIOException".into(),
        message: format!(
            "`{path}': Fail to get block MD5 for {}",
            extended_block_name(&block.b)
        ),
    })
}

async fn ask_datanode(
    dn: &DatanodeInfoProto,
    block: &LocatedBlockProto,
    mode: CombineMode,
    limit: Duration,
) -> Result<OpBlockChecksumResponseProto, XferError> {
    let stream = connect_datanode(dn, limit).await?;
    let (mut rd, mut wr) = stream.into_split();
    let request = OpBlockChecksumProto {
        header: BaseHeaderProto {
            block: block.b.clone(),
            token: Some(block.block_token.clone()),
            trace_info: None,
        },
        block_checksum_options: Some(BlockChecksumOptionsProto {
            block_checksum_type: Some(mode.block_type() as i32),
            stripe_length: None,
        }),
    };
    send_op(&mut wr, op::BLOCK_CHECKSUM, &request, limit).await?;
    let reply: BlockOpResponseProto = timed(
        limit,
        "waiting for a BLOCK_CHECKSUM answer",
        read_delimited(&mut rd, MAX_RESPONSE_BYTES),
    )
    .await?;
    if reply.status() != Status::Success {
        return Err(XferError::Protocol(format!(
            "Got error for OP_BLOCK_CHECKSUM, status={:?}, message={}",
            reply.status(),
            reply.message.unwrap_or_default()
        )));
    }
    reply
        .checksum_response
        .ok_or_else(|| XferError::Protocol("no checksum in the answer".into()))
}

/// Collects the blocks' answers as `FileChecksumComputer` does.
struct Combiner {
    mode: CombineMode,
    blocks: usize,
    bytes_per_crc: u32,
    crc_per_block: u64,
    /// `None` once blocks disagree (Hadoop's `MIXED`).
    kind: Option<ChecksumKind>,
    /// The blocks' MD5s or CRCs, concatenated.
    buf: Vec<u8>,
}

impl Combiner {
    fn new(mode: CombineMode, blocks: usize) -> Self {
        Combiner {
            mode,
            blocks,
            bytes_per_crc: 0,
            crc_per_block: 0,
            kind: None,
            buf: Vec::new(),
        }
    }

    fn add(
        &mut self,
        index: usize,
        answer: &OpBlockChecksumResponseProto,
    ) -> Result<(), ChecksumError> {
        let composite = self.mode == CombineMode::CompositeCrc;
        if index == 0 {
            self.bytes_per_crc = answer.bytes_per_crc;
        } else if answer.bytes_per_crc != self.bytes_per_crc && !composite {
            return Err(ChecksumError::io(format!(
                "Byte-per-checksum not matched: bpc={} but bytesPerCRC={}",
                answer.bytes_per_crc, self.bytes_per_crc
            )));
        }
        if self.blocks > 1 && index == 0 {
            self.crc_per_block = answer.crc_per_block;
        }
        let kind = answer
            .crc_type
            .and_then(ChecksumKind::from_proto)
            .ok_or_else(|| ChecksumError::io("the DataNode named no CRC type"))?;
        if index == 0 {
            self.kind = Some(kind);
        } else if self.kind.is_some_and(|k| k != kind) {
            if composite {
                return Err(ChecksumError::io(
                    "DataChecksum.Type.MIXED is not supported for COMPOSITE_CRC",
                ));
            }
            self.kind = None;
        }
        if composite {
            let returned = answer
                .block_checksum_options
                .as_ref()
                .and_then(|o| o.block_checksum_type)
                .unwrap_or(BlockChecksumTypeProto::Md5crc as i32);
            if returned != BlockChecksumTypeProto::CompositeCrc as i32 {
                return Err(ChecksumError::io(
                    "Unexpected blockChecksumType, expecting COMPOSITE_CRC",
                ));
            }
        } else if answer.block_checksum.len() != 16 {
            return Err(ChecksumError::io("a block MD5 is not 16 bytes"));
        }
        self.buf.extend_from_slice(&answer.block_checksum);
        Ok(())
    }

    fn finish(
        self,
        blocks: &[LocatedBlockProto],
        length: u64,
    ) -> Result<Option<FileChecksum>, ChecksumError> {
        match self.mode {
            CombineMode::Md5Md5Crc => Ok(self.md5_result()),
            CombineMode::CompositeCrc => self.composite_result(blocks, length).map(Some),
        }
    }

    /// The MD5 of the block MD5s. Hadoop digests the whole backing array
    /// of its `DataOutputBuffer` (32 bytes, doubled as it fills), so the
    /// MD5s are followed by zeros up to that capacity.
    fn md5_result(&self) -> Option<FileChecksum> {
        let name = match self.kind? {
            ChecksumKind::Crc32 => "CRC32",
            ChecksumKind::Crc32c => "CRC32C",
            ChecksumKind::Null => return None,
        };
        let mut capacity = 32;
        while capacity < self.buf.len() {
            capacity *= 2;
        }
        let mut padded = self.buf.clone();
        padded.resize(capacity, 0);
        let md5: [u8; 16] = Md5::digest(&padded).into();
        Some(FileChecksum::md5_md5_crc(
            self.bytes_per_crc,
            self.crc_per_block,
            md5,
            name,
        ))
    }

    /// The block CRCs composed, each over its block's length (the last
    /// over what `length` leaves of it).
    fn composite_result(
        &self,
        blocks: &[LocatedBlockProto],
        length: u64,
    ) -> Result<FileChecksum, ChecksumError> {
        let kind = self.kind.unwrap_or(ChecksumKind::Null);
        let size = |b: &LocatedBlockProto| b.b.num_bytes.unwrap_or(0);
        let hint = blocks.first().map_or(0, size);
        let mut composer =
            CrcComposer::new(kind, hint, u64::MAX).map_err(|e| ChecksumError::io(e.to_string()))?;
        let crc_at = |i: usize| -> Result<u32, ChecksumError> {
            self.buf
                .get(i * 4..i * 4 + 4)
                .and_then(|s| <[u8; 4]>::try_from(s).ok())
                .map(u32::from_be_bytes)
                .ok_or_else(|| ChecksumError::io("a block CRC is missing"))
        };
        let Some((last, rest)) = blocks.split_last() else {
            return Err(ChecksumError::io("no blocks"));
        };
        let mut sum = 0u64;
        for (i, block) in rest.iter().enumerate() {
            sum = sum.saturating_add(size(block));
            composer
                .update(crc_at(i)?, size(block))
                .map_err(|e| ChecksumError::io(e.to_string()))?;
        }
        let last_len = length.saturating_sub(sum).min(size(last));
        composer
            .update(crc_at(rest.len())?, last_len)
            .map_err(|e| ChecksumError::io(e.to_string()))?;
        let digest = composer.digest();
        let crc: [u8; 4] = digest
            .get(..4)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(|| ChecksumError::io("nothing to compose"))?;
        let name = match kind {
            ChecksumKind::Crc32 => "CRC32",
            _ => "CRC32C",
        };
        Ok(FileChecksum {
            algorithm: format!("COMPOSITE-{name}"),
            bytes: crc.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_range_has_hadoops_magic_checksum() {
        let c = FileChecksum::empty();
        assert_eq!(c.algorithm, "MD5-of-0MD5-of-0CRC32");
        // MD5 of 32 zero bytes, after the two zero numbers.
        assert_eq!(
            c.hex(),
            "00000000000000000000000070bc8f4b72a86921468bf8e8441dce51"
        );
        assert_eq!(c.java_bytes_hex(), format!("{}00000000", c.hex()));
    }

    #[test]
    fn combine_modes_parse_as_hadoop_names_them() {
        assert_eq!(
            CombineMode::parse("MD5MD5CRC"),
            Some(CombineMode::Md5Md5Crc)
        );
        assert_eq!(CombineMode::parse("md5md5crc"), None);
        assert_eq!(
            CombineMode::parse("COMPOSITE_CRC"),
            Some(CombineMode::CompositeCrc)
        );
        assert_eq!(CombineMode::parse("crc"), None);
    }

    fn answer(md5: [u8; 16]) -> OpBlockChecksumResponseProto {
        OpBlockChecksumResponseProto {
            bytes_per_crc: 512,
            crc_per_block: 2048,
            block_checksum: md5.to_vec().into(),
            crc_type: Some(ChecksumKind::Crc32c.to_proto() as i32),
            block_checksum_options: None,
        }
    }

    #[test]
    fn block_md5s_are_digested_with_the_buffer_padding() {
        let mut c = Combiner::new(CombineMode::Md5Md5Crc, 3);
        for i in 0..3u8 {
            c.add(usize::from(i), &answer([i; 16])).expect("add");
        }
        let got = c.md5_result().expect("a checksum");
        let mut padded = Vec::new();
        for i in 0..3u8 {
            padded.extend_from_slice(&[i; 16]);
        }
        padded.resize(64, 0);
        let md5: [u8; 16] = Md5::digest(&padded).into();
        assert_eq!(got.algorithm, "MD5-of-2048MD5-of-512CRC32C");
        assert_eq!(&got.bytes[12..], &md5);
        assert_eq!(&got.bytes[..4], &512u32.to_be_bytes());
    }

    #[test]
    fn mixed_crc_types_give_no_md5_checksum() {
        let mut c = Combiner::new(CombineMode::Md5Md5Crc, 2);
        c.add(0, &answer([1; 16])).expect("add");
        let mut other = answer([2; 16]);
        other.crc_type = Some(ChecksumKind::Crc32.to_proto() as i32);
        c.add(1, &other).expect("add");
        assert_eq!(c.md5_result(), None);
    }
}

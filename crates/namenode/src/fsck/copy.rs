//! `move`'s copy of a corrupt file's readable blocks (HDFS's
//! `copyBlocksToLostFound` and `copyBlock`): each run of blocks that still
//! have replicas becomes one chain file `/lost+found/<path>/<n>`, `n`
//! counting from 0; a block with no replica ends the chain. The data is
//! read and written by an ordinary HDFS client acting as the fsck caller
//! (as HDFS's fsck uses a DFSClient inside the caller's `doAs`), so the
//! read verifies checksums and the copy takes the normal write pipeline.
//! A block that cannot be read (every replica corrupt) ends its chain and
//! is an internal error, so the report ends "FAILED" as in HDFS.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};

use hdfs_native::file::{FileReader, FileWriter};
use hdfs_native::{Client, ClientBuilder, WriteOptions};

use super::facts::FileFacts;
use super::walk::Walk;

/// How much of a block is read at once: a block of hundreds of megabytes
/// is copied piece by piece, not held whole in memory.
const PIECE: u64 = 4 * 1024 * 1024;

/// The NameNode's own RPC address as a client reaches it (loopback when
/// the server listens on a wildcard address).
fn own_address(addr: SocketAddr) -> SocketAddr {
    match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (Ipv4Addr::LOCALHOST, addr.port()).into(),
        IpAddr::V6(ip) if ip.is_unspecified() => (Ipv6Addr::LOCALHOST, addr.port()).into(),
        _ => addr,
    }
}

/// What went wrong while copying, for the log.
type CopyError = String;

impl Walk<'_> {
    fn copy_client(&self) -> Result<Client, CopyError> {
        let addr = self
            .state
            .rpc_address
            .get()
            .map(|a| own_address(*a))
            .ok_or("the NameNode's RPC address is not known yet")?;
        ClientBuilder::new()
            .with_url(format!("hdfs://{addr}"))
            .with_user(&self.req.user)
            .build()
            .map_err(|e| e.to_string())
    }

    /// Copies the readable blocks of `f` into chain files under `target`
    /// (a directory just made).
    pub(super) async fn copy_blocks_to(&mut self, f: &FileFacts, target: &str) {
        let client = match self.copy_client() {
            Ok(c) => c,
            Err(e) => {
                tracing::error!(path = %f.path, error = %e, "fsck: copyBlocksToLostFound failed");
                self.internal_error = true;
                return;
            }
        };
        let mut chain = 0u32;
        let mut writer: Option<FileWriter> = None;
        let mut copy_error = false;
        let mut offset = 0u64;
        for b in &f.blocks {
            let len = b.block.num_bytes;
            let start = offset;
            offset += len;
            if b.replicas.is_empty() {
                copy_error |= !close_chain(&mut writer).await;
                continue;
            }
            let out = match writer.as_mut() {
                Some(w) => w,
                None => {
                    let name = format!("{target}/{chain}");
                    chain += 1;
                    let options = WriteOptions {
                        overwrite: true,
                        ..WriteOptions::default()
                    };
                    match client.create(&name, options).await {
                        Ok(w) => writer.insert(w),
                        Err(e) => {
                            tracing::error!(%name, error = %e, "fsck: cannot create a chain file");
                            copy_error = true;
                            break;
                        }
                    }
                }
            };
            // A reader per block: one that met a bad replica would shun
            // its DataNode for the blocks after it.
            let copied = match client.read(&f.path).await {
                Ok(reader) => copy_block(&reader, out, start, len).await,
                Err(e) => Err(e.to_string()),
            };
            if let Err(e) = copied {
                tracing::error!(block = %b.block.id, %target, error = %e, "fsck: could not copy block");
                close_chain(&mut writer).await;
                copy_error = true;
            }
        }
        copy_error |= !close_chain(&mut writer).await;
        self.internal_error |= copy_error;
        if copy_error {
            tracing::warn!(path = %f.path, "fsck: there were errors copying the remains of the corrupted file to /lost+found");
        } else {
            tracing::info!(path = %f.path, "fsck: copied the remains of the corrupted file to /lost+found");
        }
    }
}

/// One block's bytes, `len` from `start` in the file, appended to `out`.
async fn copy_block(
    reader: &FileReader,
    out: &mut FileWriter,
    start: u64,
    len: u64,
) -> Result<(), CopyError> {
    let mut done = 0u64;
    while done < len {
        let n = PIECE.min(len - done);
        let at = usize::try_from(start + done).map_err(|e| e.to_string())?;
        let size = usize::try_from(n).map_err(|e| e.to_string())?;
        let bytes = reader
            .read_range(at, size)
            .await
            .map_err(|e| e.to_string())?;
        if bytes.len() != size {
            return Err(format!(
                "Recorded block size is {len}, but the DataNode returned {} bytes",
                done + bytes.len() as u64
            ));
        }
        out.write_bytes(bytes).await.map_err(|e| e.to_string())?;
        done += n;
    }
    Ok(())
}

/// Ends the current chain file, if one is open; false when it failed to.
async fn close_chain(writer: &mut Option<FileWriter>) -> bool {
    match writer.take() {
        Some(mut w) => match w.close().await {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(error = %e, "fsck: cannot close a chain file");
                false
            }
        },
        None => true,
    }
}

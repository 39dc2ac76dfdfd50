//! Raft snapshots are the NameNode's checkpoints: an image
//! ([`crate::image::encode`]) of the namespace at a committed log id,
//! kept in one file of the member's Raft directory so that a restart
//! starts from it (and only replays the entries after it), the log before
//! it can be purged, and a member too far behind is sent it whole.
//!
//! A snapshot is built the way the single NameNode builds its checkpoints
//! (`monitors::checkpointer`), never from the live namespace: the previous
//! snapshot (or the image the member was formatted with) is loaded into a
//! scratch namespace, the committed entries after it are replayed, and the
//! result is written out, on a blocking thread. So a leader, whose live
//! namespace holds edits not committed yet, builds the same snapshot as a
//! follower, and no client waits on the namespace lock meanwhile. The price
//! is a second namespace in memory while one is built.
//!
//! File: `CAIRNSN1`, the length (u32 BE) of the snapshot's openraft
//! metadata in JSON, that JSON, the image, and a CRC32C (u32 BE) of all
//! before it; replaced atomically ([`write_atomic_on`]).

use std::io;
use std::path::PathBuf;
use std::sync::Arc;

use cairn_common::disk::Disk;
use cairn_common::durable::write_atomic_on;
use openraft::{EntryPayload, SnapshotMeta, StorageIOError};

use super::log_store::RaftLogStore;
use super::state_machine::ImageOwner;
use super::{LogId, NodeId, StorageError};
use crate::journal::codec::{decode_record, Decoded};
use crate::namespace::Namespace;

/// The snapshot file in a member's Raft directory.
pub const SNAPSHOT_FILE: &str = "snapshot";
const MAGIC: &[u8; 8] = b"CAIRNSN1";

pub type Meta = SnapshotMeta<NodeId, openraft::BasicNode>;

/// Loads the image a member's namespace started from before any snapshot
/// (its name directory's): the base of its first snapshot.
pub type BaseImage = Arc<dyn Fn() -> io::Result<(Namespace, u64)> + Send + Sync>;

/// The base of a group formed on a new, empty namespace (tests and
/// tools; a NameNode loads its formatted image).
pub fn empty_base(owner: &ImageOwner) -> BaseImage {
    let o = owner.clone();
    Arc::new(move || {
        Ok((
            Namespace::new(&o.superuser, &o.supergroup, 1, o.limits.clone()),
            0,
        ))
    })
}

/// When snapshots are taken and how much log is kept behind them.
#[derive(Debug, Clone, Copy)]
pub struct SnapshotSettings {
    /// Build one every this many log entries (0: never).
    pub every_entries: u64,
    /// Entries kept in the log behind the newest snapshot, so a member a
    /// little behind catches up from entries rather than a whole image.
    pub keep_entries: u64,
}

impl Default for SnapshotSettings {
    fn default() -> Self {
        Self {
            every_entries: 10_000,
            keep_entries: 1_000,
        }
    }
}

/// Where a member keeps its snapshot, and what it builds one from.
#[derive(Clone)]
pub struct SnapshotStore {
    pub disk: Arc<dyn Disk>,
    pub dir: PathBuf,
    pub log: RaftLogStore,
    pub base: BaseImage,
    pub owner: ImageOwner,
    /// The newest snapshot written by this process: a snapshot being
    /// built and one being installed from the leader may finish together;
    /// writes take turns and an older one never replaces a newer one.
    pub written: Arc<std::sync::Mutex<Option<LogId>>>,
}

fn io_to_storage(e: &io::Error) -> StorageError {
    StorageIOError::write_snapshot(None, e).into()
}

impl SnapshotStore {
    /// Writes `image` as the snapshot `meta`, replacing the previous one.
    ///
    /// # Errors
    /// I/O errors.
    pub fn write(&self, meta: &Meta, image: &[u8]) -> io::Result<()> {
        let mut newest = self
            .written
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if newest.is_some() && meta.last_log_id < *newest {
            tracing::info!(snapshot = %meta.snapshot_id, "an older snapshot finished after a newer one: not written");
            return Ok(());
        }
        let json = serde_json::to_vec(meta).map_err(io::Error::other)?;
        let mut data = Vec::with_capacity(16 + json.len() + image.len());
        data.extend_from_slice(MAGIC);
        data.extend_from_slice(&(json.len() as u32).to_be_bytes());
        data.extend_from_slice(&json);
        data.extend_from_slice(image);
        let crc = crc32c::crc32c(&data);
        data.extend_from_slice(&crc.to_be_bytes());
        write_atomic_on(self.disk.as_ref(), &self.dir.join(SNAPSHOT_FILE), &data)?;
        *newest = meta.last_log_id;
        // A purge of the entries this snapshot replaces may run now.
        self.log
            .snapshot_written(meta.last_log_id)
            .map_err(io::Error::other)?;
        Ok(())
    }

    /// The snapshot on disk: its metadata and image.
    ///
    /// # Errors
    /// I/O errors, or a damaged file (with what is wrong).
    pub fn read(&self) -> io::Result<Option<(Meta, Vec<u8>)>> {
        read_file(self.disk.as_ref(), &self.dir)
    }

    /// Decodes a snapshot's image into a namespace and its txid.
    ///
    /// # Errors
    /// A damaged image.
    pub fn decode(&self, image: &[u8]) -> io::Result<(Namespace, u64)> {
        let o = &self.owner;
        crate::image::decode(image, &o.superuser, &o.supergroup, o.limits.clone())
            .map_err(|e| io::Error::other(format!("snapshot image: {e}")))
    }

    /// Builds the snapshot of the state machine at `target` (the last
    /// applied log id, its membership, and the txid the namespace had
    /// there) from the previous snapshot and the log, writes it, and
    /// returns it. When the snapshot on disk is already at or
    /// past `target` (one was installed meanwhile), returns that one.
    ///
    /// # Errors
    /// I/O errors, a damaged snapshot or base image, or log entries that
    /// do not replay to `target_txid` (missing or out of order).
    pub fn build(&self, target: Meta, target_txid: u64) -> Result<(Meta, Vec<u8>), StorageError> {
        let previous = self.read().map_err(|e| io_to_storage(&e))?;
        let (mut ns, txid, after) = match previous {
            Some((meta, image)) if meta.last_log_id >= target.last_log_id => {
                return Ok((meta, image));
            }
            Some((meta, image)) => {
                let (ns, txid) = self.decode(&image).map_err(|e| io_to_storage(&e))?;
                (ns, txid, meta.last_log_id.map(|l| l.index + 1).unwrap_or(0))
            }
            None => {
                let (ns, txid) = (self.base)().map_err(|e| io_to_storage(&e))?;
                (ns, txid, 0)
            }
        };
        let replayed = match target.last_log_id {
            Some(last) => self.replay(&mut ns, txid, after, last.index),
            None => Ok(txid),
        };
        let why = match replayed {
            Ok(t) if t == target_txid => None,
            Ok(t) => Some(format!(
                "the log replays to txid {t}, not the applied {target_txid}"
            )),
            Err(why) => Some(why),
        };
        if let Some(why) = why {
            // A snapshot from the leader installed meanwhile purges the
            // entries this build was replaying; it is at or past `target`
            // (it was written before the purge) and stands for it.
            if let Some((meta, image)) = self.read().map_err(|e| io_to_storage(&e))? {
                if meta.last_log_id >= target.last_log_id {
                    tracing::info!(
                        building = %target.snapshot_id,
                        installed = %meta.snapshot_id,
                        "a snapshot installed from the leader replaced the one being built"
                    );
                    return Ok((meta, image));
                }
            }
            return Err(StorageIOError::write_snapshot(
                Some(target.signature()),
                &io::Error::other(why),
            )
            .into());
        }
        let image = crate::image::encode(&ns, target_txid);
        drop(ns);
        self.write(&target, &image).map_err(|e| io_to_storage(&e))?;
        Ok((target, image))
    }

    /// Applies the edits of log entries `from..=to` after `txid` to `ns`,
    /// returning the txid it reaches (short of the target where entries
    /// were purged under the build); edits out of order are an error.
    fn replay(&self, ns: &mut Namespace, mut txid: u64, from: u64, to: u64) -> Result<u64, String> {
        let entries = self.log.entries(from..=to).map_err(|e| e.to_string())?;
        for entry in &entries {
            let EntryPayload::Normal(batch) = &entry.payload else {
                continue;
            };
            let mut pos = 0;
            while pos < batch.records.len() {
                let Decoded::Record {
                    txid: t,
                    edit,
                    size,
                } = decode_record(&batch.records[pos..])
                else {
                    return Err(format!(
                        "entry {}: bad edit record at byte {pos}",
                        entry.log_id
                    ));
                };
                pos += size;
                if t <= txid {
                    continue;
                }
                if t != txid + 1 {
                    return Err(format!(
                        "entry {}: txid {t} does not follow {txid}",
                        entry.log_id
                    ));
                }
                ns.apply(&edit)
                    .map_err(|e| format!("entry {}: txid {t}: {e:?}", entry.log_id))?;
                txid = t;
            }
        }
        Ok(txid)
    }
}

/// The snapshot in Raft directory `dir`: its metadata and image.
///
/// # Errors
/// I/O errors, or a damaged file (with what is wrong).
pub fn read_file(disk: &dyn Disk, dir: &std::path::Path) -> io::Result<Option<(Meta, Vec<u8>)>> {
    let path = dir.join(SNAPSHOT_FILE);
    if !disk.exists(&path) {
        return Ok(None);
    }
    let data = disk.read(&path)?;
    let bad = |why: &str| io::Error::other(format!("{}: {why}", path.display()));
    if data.len() < 16 || &data[..8] != MAGIC {
        return Err(bad("not a Cairn Raft snapshot"));
    }
    let (body, crc) = data.split_at(data.len() - 4);
    let stored = u32::from_be_bytes([crc[0], crc[1], crc[2], crc[3]]);
    if crc32c::crc32c(body) != stored {
        return Err(bad("checksum mismatch"));
    }
    let len = u32::from_be_bytes([body[8], body[9], body[10], body[11]]) as usize;
    let Some(json) = body.get(12..12 + len) else {
        return Err(bad("metadata length past the end"));
    };
    let meta: Meta = serde_json::from_slice(json).map_err(|e| bad(&format!("metadata: {e}")))?;
    Ok(Some((meta, body[12 + len..].to_vec())))
}

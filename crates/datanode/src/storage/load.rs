//! Loading a block pool at start-up: every finalized replica whose meta
//! file fits its block file, every RBW replica cut back to its chunks that
//! verify, interrupted moves between `rbw/` and `finalized/` completed,
//! and everything else set aside in `quarantine/`.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use tracing::{info, warn};

use super::layout::{self, ReplicaFileName};
use super::{
    io_err, meta, recover_rbw, rename, RbwShared, Replica, ReplicaState, Storage, StorageError,
};
use crate::checksum::DataChecksum;
use crate::ids::{BlockId, BlockPoolId, GenStamp, ReplicaKey};

impl Storage {
    /// Loads one pool's replicas from disk.
    pub(super) fn load_pool(&self, pool: &BlockPoolId) -> Result<(), StorageError> {
        let dirs = self.dirs(pool);
        self.add_pool(pool)?;
        // finalized/ and every subdirectory below it; a block's subdirectory
        // is a function of its id, so ids are unique across them.
        let mut finalized: HashMap<BlockId, Group> = HashMap::new();
        let mut stack = vec![(dirs.finalized(), 0usize)];
        while let Some((dir, depth)) = stack.pop() {
            for (id, g) in scan_dir(&dir, depth, &mut stack)? {
                let e = finalized.entry(id).or_default();
                if g.data.is_some() {
                    e.data = g.data;
                }
                e.metas.extend(g.metas);
            }
        }
        let (mut n_final, mut n_rbw) = (0usize, 0usize);
        for (id, g) in scan_dir(&dirs.rbw(), usize::MAX, &mut Vec::new())? {
            let key = ReplicaKey {
                pool: pool.clone(),
                block: id,
            };
            let newest = g.metas.iter().max_by_key(|(gs, _)| *gs).cloned();
            match (&g.data, newest) {
                (Some(data), None) => {
                    // A move between rbw/ and finalized/ was interrupted
                    // after the meta file went to finalized/: finish it.
                    let fin_meta = finalized
                        .get(&id)
                        .and_then(|f| f.metas.iter().max_by_key(|(gs, _)| *gs).cloned());
                    match fin_meta {
                        Some((gs, _)) if finalized.get(&id).is_some_and(|f| f.data.is_none()) => {
                            let (fdata, _) = self.paths(&key, gs, true);
                            rename(data, &fdata)?;
                            info!(replica = %key, "completed an interrupted move into finalized/");
                            finalized.entry(id).or_default().data = Some(fdata);
                        }
                        _ => self.quarantine(pool, &[data], "block file without meta file"),
                    }
                }
                (Some(data), Some((gs, meta))) => {
                    for (_, other) in g.metas.iter().filter(|(g2, _)| *g2 != gs) {
                        self.quarantine(pool, &[other], "superseded meta file");
                    }
                    match recover_rbw(data, &meta, self.opts.writer.crc) {
                        Ok(r) => {
                            if r.cut_bytes > 0 {
                                warn!(replica = %key, len = r.len, cut = r.cut_bytes, "cut an RBW replica back to its last valid chunk");
                            }
                            self.map().insert(
                                key,
                                Replica {
                                    gs,
                                    state: ReplicaState::Rbw(RbwShared::new(r.len, r.tail_crc)),
                                    checksum: r.checksum,
                                },
                            );
                            n_rbw += 1;
                        }
                        Err(e) => {
                            warn!(replica = %key, error = %e, "cannot recover RBW replica");
                            self.quarantine(pool, &[data, &meta], "unrecoverable RBW replica");
                        }
                    }
                }
                (None, _) => {
                    for (_, m) in &g.metas {
                        self.quarantine(pool, &[m], "meta file without block file");
                    }
                }
            }
        }
        for (id, g) in finalized {
            let key = ReplicaKey {
                pool: pool.clone(),
                block: id,
            };
            let newest = g.metas.iter().max_by_key(|(gs, _)| *gs).cloned();
            let (data, (gs, meta_path)) = match (g.data, newest) {
                (Some(d), Some(m)) => (d, m),
                (Some(d), None) => {
                    self.quarantine(pool, &[&d], "block file without meta file");
                    // The stamp is unknown; the NameNode goes by block id.
                    self.note_bad(key, GenStamp(0));
                    continue;
                }
                (None, newest) => {
                    for (_, m) in &g.metas {
                        self.quarantine(pool, &[m], "meta file without block file");
                    }
                    if let Some((gs, _)) = newest {
                        self.note_bad(key, gs);
                    }
                    continue;
                }
            };
            for (_, other) in g.metas.iter().filter(|(g2, _)| *g2 != gs) {
                self.quarantine(pool, &[other], "superseded meta file");
            }
            if self.map().contains_key(&key) {
                self.quarantine(pool, &[&data, &meta_path], "replica also in rbw/");
                continue;
            }
            match check_finalized(&data, &meta_path) {
                Ok((len, checksum)) => {
                    self.map().insert(
                        key,
                        Replica {
                            gs,
                            state: ReplicaState::Finalized { len },
                            checksum,
                        },
                    );
                    n_final += 1;
                }
                Err(reason) => {
                    self.quarantine(pool, &[&data, &meta_path], &reason);
                    self.note_bad(key, gs);
                }
            }
        }
        info!(pool = %pool, finalized = n_final, rbw = n_rbw, "loaded block pool");
        Ok(())
    }
}

/// The replica files found in one directory, by block id.
#[derive(Debug, Default)]
struct Group {
    data: Option<PathBuf>,
    metas: Vec<(GenStamp, PathBuf)>,
}

/// Lists the replica files of `dir`; subdirectories (up to depth 2) are
/// pushed on `stack` to be scanned next.
fn scan_dir(
    dir: &Path,
    depth: usize,
    stack: &mut Vec<(PathBuf, usize)>,
) -> Result<HashMap<BlockId, Group>, StorageError> {
    let mut out: HashMap<BlockId, Group> = HashMap::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(io_err(dir)(e)),
    };
    for entry in entries {
        let entry = entry.map_err(io_err(dir))?;
        let path = entry.path();
        let Some(name) = entry.file_name().to_str().map(str::to_string) else {
            continue;
        };
        if path.is_dir() {
            if depth < 2 && name.starts_with("subdir") {
                stack.push((path, depth + 1));
            }
            continue;
        }
        match layout::parse_name(&name) {
            Some(ReplicaFileName::Data(id)) => out.entry(id).or_default().data = Some(path),
            Some(ReplicaFileName::Meta(id, gs)) => {
                out.entry(id).or_default().metas.push((gs, path))
            }
            None => {}
        }
    }
    Ok(out)
}

/// Checks a finalized replica's meta file against its block file's length;
/// returns the length and the stored checksum, or why it is refused.
fn check_finalized(data: &Path, meta_path: &Path) -> Result<(u64, DataChecksum), String> {
    let len = std::fs::metadata(data).map_err(|e| e.to_string())?.len();
    let meta = File::open(meta_path).map_err(|e| e.to_string())?;
    let meta_size = meta.metadata().map_err(|e| e.to_string())?.len();
    let mut h = [0u8; 7];
    meta.read_exact_at(&mut h, 0).map_err(|e| e.to_string())?;
    let checksum = meta::decode_header(&h).map_err(|e| e.to_string())?;
    let expected = meta::meta_len(&checksum, len);
    if meta_size != expected {
        return Err(format!(
            "meta file has {meta_size} bytes, {expected} expected for {len} bytes of data"
        ));
    }
    Ok((len, checksum))
}

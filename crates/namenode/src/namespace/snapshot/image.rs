//! Snapshot state in checkpoint images (HDFS's `SnapshotSection` and
//! `SnapshotDiffSection`): one [`SnapshotImage`] edit after the tree's own
//! edits restores the snapshottable directories, the snapshots, every diff,
//! the retained inodes and the pins exactly; the references are counted
//! again from the diffs.

use super::{DirDiff, FileDiff, SnapshotInfo, Snapshottable};
use crate::namespace::storage_policy::UNSPECIFIED_POLICY_ID;
use crate::namespace::{
    ApplyError, BlockSize, Children, FileNode, INode, INodeId, INodeKind, Millis48, Namespace,
};

/// Entries per image part: keeps each stored record far below the
/// journal's record size limit.
pub const IMAGE_PART: usize = 1000;

/// A snapshottable directory in an image.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotImageDir {
    pub id: INodeId,
    pub quota: u32,
    pub snapshots: Vec<SnapshotInfo>,
}

/// A retained inode in an image: a directory's children by name, or a
/// file's blocks (always closed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotImageInode {
    pub id: INodeId,
    pub parent: Option<INodeId>,
    pub name: String,
    pub attrs: super::Attrs,
    /// `None` for a directory.
    pub file: Option<(u16, u64, Vec<crate::namespace::BlockRecord>)>,
    pub children: Vec<(String, INodeId)>,
    /// Its own storage policy (`UNSPECIFIED_POLICY_ID` for none).
    pub storage_policy: u8,
}

/// Everything snapshots keep, as an image stores it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SnapshotImage {
    pub counter: u32,
    pub dirs: Vec<SnapshotImageDir>,
    pub dir_diffs: Vec<(INodeId, Vec<DirDiff>)>,
    pub file_diffs: Vec<(INodeId, Vec<FileDiff>)>,
    pub retained: Vec<SnapshotImageInode>,
    pub pins: Vec<(INodeId, u32)>,
}

fn sorted<T: Clone>(map: &std::collections::HashMap<INodeId, T>) -> Vec<(INodeId, T)> {
    let mut v: Vec<(INodeId, T)> = map.iter().map(|(k, v)| (*k, v.clone())).collect();
    v.sort_by_key(|(k, _)| *k);
    v
}

impl Namespace {
    /// The snapshot state as an image stores it, in parts of at most
    /// [`IMAGE_PART`] entries each; none when there is no state.
    pub(in crate::namespace) fn snapshot_image_parts(&self) -> Vec<SnapshotImage> {
        let Some(whole) = self.snapshot_image() else {
            return Vec::new();
        };
        let mut parts = vec![SnapshotImage {
            counter: whole.counter,
            dirs: whole.dirs,
            pins: whole.pins,
            ..SnapshotImage::default()
        }];
        for chunk in whole.dir_diffs.chunks(IMAGE_PART) {
            parts.push(SnapshotImage {
                dir_diffs: chunk.to_vec(),
                ..SnapshotImage::default()
            });
        }
        for chunk in whole.file_diffs.chunks(IMAGE_PART) {
            parts.push(SnapshotImage {
                file_diffs: chunk.to_vec(),
                ..SnapshotImage::default()
            });
        }
        for chunk in whole.retained.chunks(IMAGE_PART) {
            parts.push(SnapshotImage {
                retained: chunk.to_vec(),
                ..SnapshotImage::default()
            });
        }
        parts
    }

    /// The snapshot state as one image; `None` when there is none.
    pub(in crate::namespace) fn snapshot_image(&self) -> Option<SnapshotImage> {
        let s = &self.snapshots;
        if s.dirs.is_empty() && s.retained.is_empty() && s.counter == 0 {
            return None;
        }
        let mut retained: Vec<SnapshotImageInode> = s
            .retained
            .iter()
            .map(|(id, n)| SnapshotImageInode {
                id: *id,
                parent: n.parent(),
                name: n.name.to_string(),
                attrs: self.attrs_of(*id, n),
                file: n.file().map(|f| {
                    (
                        self.replication_of(n),
                        self.block_size_of(n),
                        f.blocks.to_vec(),
                    )
                }),
                children: n
                    .children()
                    .map(|c| {
                        c.values()
                            .map(|v| (self.name_of(v).to_string(), v))
                            .collect()
                    })
                    .unwrap_or_default(),
                storage_policy: s
                    .retained_policies
                    .get(id)
                    .copied()
                    .unwrap_or(UNSPECIFIED_POLICY_ID),
            })
            .collect();
        retained.sort_by_key(|r| r.id);
        let mut pins: Vec<(INodeId, u32)> = s.pins.iter().map(|(k, v)| (*k, *v)).collect();
        pins.sort_unstable();
        Some(SnapshotImage {
            counter: s.counter,
            dirs: s
                .dirs
                .iter()
                .map(|(id, d)| SnapshotImageDir {
                    id: *id,
                    quota: d.quota,
                    snapshots: d.snapshots.clone(),
                })
                .collect(),
            dir_diffs: sorted(&s.dir_diffs),
            file_diffs: sorted(&s.file_diffs),
            retained,
            pins,
        })
    }

    /// Restores (part of) the snapshot state of an image, after its tree:
    /// an image splits a large state over several edits, each adding to
    /// what the previous ones restored.
    pub(in crate::namespace) fn apply_snapshot_image(
        &mut self,
        image: &SnapshotImage,
    ) -> Result<(), ApplyError> {
        // The diffs can raise what their files are charged (an image of
        // format 1 set its quotas before them; later formats restore the
        // counters afterwards, which this does not change).
        let charged: Vec<_> = image
            .file_diffs
            .iter()
            .filter_map(|(id, _)| self.live_file_usage(*id).map(|u| (*id, u)))
            .collect();
        self.restore_snapshot_image(image)?;
        for (id, (parent, before)) in charged {
            if let Some((_, after)) = self.live_file_usage(id) {
                self.add_usage(parent, &after.minus(&before));
            }
        }
        Ok(())
    }

    fn restore_snapshot_image(&mut self, image: &SnapshotImage) -> Result<(), ApplyError> {
        let s = &mut self.snapshots;
        s.counter = s.counter.max(image.counter);
        for d in &image.dirs {
            if !self.inodes.get(&d.id).is_some_and(INode::is_dir) {
                return Err(ApplyError(format!(
                    "snapshottable directory {} is not in the tree",
                    d.id
                )));
            }
            for info in &d.snapshots {
                s.index.insert(info.id, (d.id, info.last_inode_id));
            }
            // Images before format 3 listed them in unsigned byte order.
            let mut snapshots = d.snapshots.clone();
            snapshots.sort_by(|a, b| crate::namespace::name_order(&a.name, &b.name));
            s.dirs.insert(
                d.id,
                Snapshottable {
                    quota: d.quota,
                    snapshots,
                },
            );
        }
        for (id, diffs) in &image.dir_diffs {
            for d in diffs {
                for (_, c) in &d.deleted {
                    *s.refs.entry(*c).or_default() += 1;
                }
            }
            s.dir_diffs.insert(*id, diffs.clone());
        }
        s.file_diffs.extend(image.file_diffs.iter().cloned());
        s.pins.extend(image.pins.iter().copied());
        for r in &image.retained {
            // Id 0 marks the end of a directory's children (`Children`).
            if let Some((name, _)) = r.children.iter().find(|(_, c)| *c == INodeId::NONE) {
                return Err(ApplyError(format!(
                    "retained inode {}: child {name:?} has inode id 0",
                    r.id
                )));
            }
            let block_size = match &r.file {
                Some((_, bytes, _)) => crate::namespace::tree::block_size_loaded(
                    *bytes,
                    format_args!("retained inode {}", r.id),
                ),
                None => BlockSize::default(),
            };
            let kind = match &r.file {
                Some((_, _, blocks)) => INodeKind::File(FileNode {
                    blocks: blocks.clone().into(),
                    under_construction: None,
                }),
                None => INodeKind::Directory {
                    children: Children::from_named(
                        r.children.iter().map(|(n, c)| (n.as_str(), *c)).collect(),
                    ),
                },
            };
            if let Some(f) = &r.file {
                let top = f.2.iter().map(|b| b.id.0).max().unwrap_or(0);
                self.last_block_id = self.last_block_id.max(top);
            }
            self.last_inode_id = self.last_inode_id.max(r.id.0);
            if !r.attrs.acl.is_empty() || !r.attrs.xattrs.is_empty() {
                let kept = super::KeptFeatures {
                    acl: r.attrs.acl.clone(),
                    xattrs: r.attrs.xattrs.clone(),
                };
                s.retained_features.insert(r.id, kept);
            }
            if r.storage_policy != UNSPECIFIED_POLICY_ID {
                s.retained_policies.insert(r.id, r.storage_policy);
            }
            s.retained.insert(
                r.id,
                INode {
                    parent_id: r.parent.unwrap_or(INodeId::NONE),
                    name: compact_str::CompactString::new(&r.name),
                    attrs: self.names.attrs_of(
                        &r.attrs.owner,
                        &r.attrs.group,
                        r.attrs.permission,
                        r.file.as_ref().map_or(0, |f| f.0),
                        block_size,
                    ),
                    mtime: Millis48::saturating(r.attrs.mtime_ms),
                    atime: Millis48::saturating(r.attrs.atime_ms),
                    kind,
                },
            );
        }
        Ok(())
    }

    /// Every block snapshots hold beyond the tree's: those of retained
    /// files and those only a diff still lists, with their file.
    pub(crate) fn snapshot_blocks(&self) -> Vec<(INodeId, crate::namespace::BlockRecord)> {
        let s = &self.snapshots;
        let mut out = Vec::new();
        for (id, node) in &s.retained {
            if let Some(f) = node.file() {
                out.extend(f.blocks.iter().map(|b| (*id, *b)));
            }
        }
        for id in s.file_diffs.keys() {
            let own = self
                .any_node(*id)
                .and_then(INode::file)
                .map_or(&[][..], |f| &f.blocks[..]);
            out.extend(
                self.blocks_only_in_diffs(*id, own)
                    .into_iter()
                    .map(|b| (*id, b)),
            );
        }
        out
    }

    /// The distinct blocks file `id`'s diffs list that are not among
    /// `own` (the file's blocks), in the order the diffs list them.
    pub(in crate::namespace) fn blocks_only_in_diffs(
        &self,
        id: INodeId,
        own: &[crate::namespace::BlockRecord],
    ) -> Vec<crate::namespace::BlockRecord> {
        let diffs = self.file_diffs_of(id);
        if diffs.iter().all(|d| d.blocks.is_none()) {
            return Vec::new();
        }
        let own: std::collections::HashSet<_> = own.iter().map(|b| b.id).collect();
        let mut seen = std::collections::HashSet::new();
        diffs
            .iter()
            .filter_map(|d| d.blocks.as_deref())
            .flatten()
            .filter(|b| !own.contains(&b.id) && seen.insert(b.id))
            .copied()
            .collect()
    }
}

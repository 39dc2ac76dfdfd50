//! The stored form of the snapshot edits (`cairn.journal` messages 26-31):
//! the five snapshot operations and the snapshot state of an image.

use cairn_proto::cairn::journal as pj;
use pj::edit_proto::Op;

use super::codec::{acl_entry_from, acl_entry_to, block_from, block_to, xattr_from, xattr_to};
use crate::namespace::quota::QuotaCounts;
use crate::namespace::snapshot::{
    Attrs, DirDiff, FileDiff, SnapshotImage, SnapshotImageDir, SnapshotImageInode, SnapshotInfo,
};
use crate::namespace::storage_policy::UNSPECIFIED_POLICY_ID;
use crate::namespace::{Edit, INodeId};

fn quota_to(q: &QuotaCounts) -> pj::SnapshotQuotaRecord {
    pj::SnapshotQuotaRecord {
        namespace: q.namespace,
        storage_space: q.storage_space,
        type_space: q.type_space.to_vec(),
    }
}

fn quota_from(r: &pj::SnapshotQuotaRecord) -> Result<QuotaCounts, String> {
    let type_space = r
        .type_space
        .as_slice()
        .try_into()
        .map_err(|_| format!("{} storage type quotas", r.type_space.len()))?;
    Ok(QuotaCounts {
        namespace: r.namespace,
        storage_space: r.storage_space,
        type_space,
    })
}

fn attrs_to(a: &Attrs) -> pj::SnapshotAttrsRecord {
    pj::SnapshotAttrsRecord {
        permission: u32::from(a.permission),
        owner: a.owner.clone(),
        group: a.group.clone(),
        mtime_ms: a.mtime_ms,
        atime_ms: a.atime_ms,
        acl: a.acl.iter().cloned().map(acl_entry_to).collect(),
        xattrs: a.xattrs.iter().cloned().map(xattr_to).collect(),
        quota: a.quota.as_ref().map(quota_to),
        storage_policy: Some(u32::from(a.storage_policy)),
    }
}

fn attrs_from(a: &pj::SnapshotAttrsRecord) -> Result<Attrs, String> {
    Ok(Attrs {
        permission: u16::try_from(a.permission)
            .map_err(|_| format!("permission {} out of range", a.permission))?,
        owner: a.owner.clone(),
        group: a.group.clone(),
        mtime_ms: a.mtime_ms,
        atime_ms: a.atime_ms,
        acl: a
            .acl
            .iter()
            .cloned()
            .map(acl_entry_from)
            .collect::<Result<_, _>>()?,
        xattrs: a
            .xattrs
            .iter()
            .cloned()
            .map(xattr_from)
            .collect::<Result<_, _>>()?,
        quota: a.quota.as_ref().map(quota_from).transpose()?,
        storage_policy: u8::try_from(a.storage_policy.unwrap_or(0))
            .map_err(|_| format!("storage policy {:?} out of range", a.storage_policy))?,
    })
}

fn children_to(c: &[(String, INodeId)]) -> Vec<pj::ChildRecord> {
    c.iter()
        .map(|(name, id)| pj::ChildRecord {
            name: name.clone(),
            id: id.0,
        })
        .collect()
}

fn children_from(c: &[pj::ChildRecord]) -> Vec<(String, INodeId)> {
    c.iter().map(|r| (r.name.clone(), INodeId(r.id))).collect()
}

/// The stored form of a snapshot edit; `None` for any other edit.
pub fn to_proto(e: &Edit) -> Option<Op> {
    Some(match e {
        Edit::AllowSnapshot { path } => {
            Op::AllowSnapshot(pj::AllowSnapshotEdit { path: path.clone() })
        }
        Edit::DisallowSnapshot { path } => {
            Op::DisallowSnapshot(pj::DisallowSnapshotEdit { path: path.clone() })
        }
        Edit::CreateSnapshot {
            path,
            name,
            mtime_ms,
        } => Op::CreateSnapshot(pj::CreateSnapshotEdit {
            path: path.clone(),
            name: name.clone(),
            mtime_ms: *mtime_ms,
        }),
        Edit::DeleteSnapshot {
            path,
            name,
            mtime_ms,
        } => Op::DeleteSnapshot(pj::DeleteSnapshotEdit {
            path: path.clone(),
            name: name.clone(),
            mtime_ms: *mtime_ms,
        }),
        Edit::RenameSnapshot {
            path,
            old,
            new,
            mtime_ms,
        } => Op::RenameSnapshot(pj::RenameSnapshotEdit {
            path: path.clone(),
            old_name: old.clone(),
            new_name: new.clone(),
            mtime_ms: *mtime_ms,
        }),
        Edit::SnapshotImage(image) => Op::SnapshotImage(image_to(image)),
        _ => return None,
    })
}

fn image_to(i: &SnapshotImage) -> pj::SnapshotImageEdit {
    pj::SnapshotImageEdit {
        counter: i.counter,
        dirs: i
            .dirs
            .iter()
            .map(|d| pj::SnapshottableDirRecord {
                id: d.id.0,
                quota: d.quota,
                snapshots: d
                    .snapshots
                    .iter()
                    .map(|s| pj::SnapshotInfoRecord {
                        id: s.id,
                        name: s.name.clone(),
                        root: attrs_to(&s.root),
                        last_inode_id: s.last_inode_id,
                        quota: s.quota.as_ref().map(quota_to),
                    })
                    .collect(),
            })
            .collect(),
        dir_diffs: i
            .dir_diffs
            .iter()
            .map(|(id, diffs)| pj::DirDiffsRecord {
                id: id.0,
                diffs: diffs
                    .iter()
                    .map(|d| pj::DirDiffRecord {
                        snapshot: d.snapshot,
                        attrs: attrs_to(&d.attrs),
                        created: children_to(&d.created),
                        deleted: children_to(&d.deleted),
                    })
                    .collect(),
            })
            .collect(),
        file_diffs: i
            .file_diffs
            .iter()
            .map(|(id, diffs)| pj::FileDiffsRecord {
                id: id.0,
                diffs: diffs
                    .iter()
                    .map(|d| pj::FileDiffRecord {
                        snapshot: d.snapshot,
                        attrs: attrs_to(&d.attrs),
                        replication: u32::from(d.replication),
                        length: d.length,
                        has_blocks: d.blocks.is_some(),
                        blocks: d.blocks.iter().flatten().map(block_to).collect(),
                    })
                    .collect(),
            })
            .collect(),
        retained: i
            .retained
            .iter()
            .map(|r| pj::RetainedINodeRecord {
                id: r.id.0,
                parent: r.parent.map(|p| p.0),
                name: r.name.clone(),
                attrs: attrs_to(&r.attrs),
                is_file: r.file.is_some(),
                replication: r.file.as_ref().map(|f| u32::from(f.0)),
                block_size: r.file.as_ref().map(|f| f.1),
                blocks: r
                    .file
                    .iter()
                    .flat_map(|f| f.2.iter())
                    .map(block_to)
                    .collect(),
                children: children_to(&r.children),
                storage_policy: (r.storage_policy != UNSPECIFIED_POLICY_ID)
                    .then_some(u32::from(r.storage_policy)),
            })
            .collect(),
        pins: i
            .pins
            .iter()
            .map(|(id, s)| pj::PinRecord {
                id: id.0,
                snapshot: *s,
            })
            .collect(),
    }
}

/// A snapshot edit back from its stored form; `None` for any other op.
///
/// # Errors
/// A value out of range.
pub fn from_proto(op: &Op) -> Option<Result<Edit, String>> {
    Some(Ok(match op {
        Op::AllowSnapshot(a) => Edit::AllowSnapshot {
            path: a.path.clone(),
        },
        Op::DisallowSnapshot(d) => Edit::DisallowSnapshot {
            path: d.path.clone(),
        },
        Op::CreateSnapshot(c) => Edit::CreateSnapshot {
            path: c.path.clone(),
            name: c.name.clone(),
            mtime_ms: c.mtime_ms,
        },
        Op::DeleteSnapshot(d) => Edit::DeleteSnapshot {
            path: d.path.clone(),
            name: d.name.clone(),
            mtime_ms: d.mtime_ms,
        },
        Op::RenameSnapshot(r) => Edit::RenameSnapshot {
            path: r.path.clone(),
            old: r.old_name.clone(),
            new: r.new_name.clone(),
            mtime_ms: r.mtime_ms,
        },
        Op::SnapshotImage(i) => {
            return Some(image_from(i).map(|i| Edit::SnapshotImage(Box::new(i))))
        }
        _ => return None,
    }))
}

fn image_from(i: &pj::SnapshotImageEdit) -> Result<SnapshotImage, String> {
    let narrow = |v: u32, what: &str| -> Result<u16, String> {
        u16::try_from(v).map_err(|_| format!("{what} {v} out of range"))
    };
    let mut dirs = Vec::with_capacity(i.dirs.len());
    for d in &i.dirs {
        let mut snapshots = Vec::with_capacity(d.snapshots.len());
        for s in &d.snapshots {
            snapshots.push(SnapshotInfo {
                id: s.id,
                name: s.name.clone(),
                root: attrs_from(&s.root)?,
                last_inode_id: s.last_inode_id,
                quota: s.quota.as_ref().map(quota_from).transpose()?,
            });
        }
        dirs.push(SnapshotImageDir {
            id: INodeId(d.id),
            quota: d.quota,
            snapshots,
        });
    }
    let mut dir_diffs = Vec::with_capacity(i.dir_diffs.len());
    for r in &i.dir_diffs {
        let mut diffs = Vec::with_capacity(r.diffs.len());
        for d in &r.diffs {
            diffs.push(DirDiff {
                snapshot: d.snapshot,
                attrs: attrs_from(&d.attrs)?,
                created: children_from(&d.created),
                deleted: children_from(&d.deleted),
            });
        }
        dir_diffs.push((INodeId(r.id), diffs));
    }
    let mut file_diffs = Vec::with_capacity(i.file_diffs.len());
    for r in &i.file_diffs {
        let mut diffs = Vec::with_capacity(r.diffs.len());
        for d in &r.diffs {
            diffs.push(FileDiff {
                snapshot: d.snapshot,
                attrs: attrs_from(&d.attrs)?,
                replication: narrow(d.replication, "replication")?,
                length: d.length,
                blocks: d
                    .has_blocks
                    .then(|| d.blocks.iter().map(block_from).collect()),
            });
        }
        file_diffs.push((INodeId(r.id), diffs));
    }
    let mut retained = Vec::with_capacity(i.retained.len());
    for r in &i.retained {
        let file = if r.is_file {
            Some((
                narrow(r.replication.unwrap_or(0), "replication")?,
                r.block_size.unwrap_or(0),
                r.blocks.iter().map(block_from).collect(),
            ))
        } else {
            None
        };
        retained.push(SnapshotImageInode {
            id: INodeId(r.id),
            parent: r.parent.map(INodeId),
            name: r.name.clone(),
            attrs: attrs_from(&r.attrs)?,
            file,
            children: children_from(&r.children),
            storage_policy: match r.storage_policy {
                None => UNSPECIFIED_POLICY_ID,
                Some(p) => {
                    u8::try_from(p).map_err(|_| format!("storage policy {p} out of range"))?
                }
            },
        });
    }
    Ok(SnapshotImage {
        counter: i.counter,
        dirs,
        dir_diffs,
        file_diffs,
        retained,
        pins: i.pins.iter().map(|p| (INodeId(p.id), p.snapshot)).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::codec::{decode_record, encode_record, Decoded};
    use super::*;
    use crate::namespace::{BlockId, BlockRecord, GenStamp};

    fn attrs(p: u16) -> Attrs {
        use crate::namespace::acl::{AclEntry, AclEntryType, AclScope};
        use crate::namespace::{XAttr, XAttrNamespace};
        Attrs {
            permission: p,
            owner: "o".into(),
            group: "g".into(),
            mtime_ms: 5,
            atime_ms: 6,
            // An old ACL and attribute kept by a snapshot round-trip too.
            acl: vec![AclEntry::new(
                AclScope::Access,
                AclEntryType::User,
                Some("bob"),
                5,
            )],
            xattrs: vec![XAttr {
                namespace: XAttrNamespace::User,
                name: "a".into(),
                value: Some(b"1".to_vec()),
            }],
            // A directory's quotas as they were round-trip too.
            quota: p.is_multiple_of(2).then_some(QuotaCounts {
                namespace: 10,
                storage_space: -1,
                type_space: [7; crate::namespace::quota::QUOTA_TYPES.len()],
            }),
            // And the inode's own storage policy as it was.
            storage_policy: if p.is_multiple_of(3) { 2 } else { 0 },
        }
    }

    fn sample() -> Vec<Edit> {
        let block = BlockRecord {
            id: BlockId(1 << 30),
            gs: GenStamp(1001),
            num_bytes: 7,
        };
        vec![
            Edit::AllowSnapshot { path: "/d".into() },
            Edit::CreateSnapshot {
                path: "/d".into(),
                name: "s1".into(),
                mtime_ms: 9,
            },
            Edit::RenameSnapshot {
                path: "/d".into(),
                old: "s1".into(),
                new: "s2".into(),
                mtime_ms: 10,
            },
            Edit::DeleteSnapshot {
                path: "/d".into(),
                name: "s2".into(),
                mtime_ms: 11,
            },
            Edit::DisallowSnapshot { path: "/d".into() },
            Edit::SnapshotImage(Box::new(SnapshotImage {
                counter: 3,
                dirs: vec![SnapshotImageDir {
                    id: INodeId(16386),
                    quota: 65536,
                    snapshots: vec![SnapshotInfo {
                        id: 2,
                        name: "s".into(),
                        root: attrs(0o755),
                        last_inode_id: 16390,
                        quota: Some(QuotaCounts {
                            namespace: 10,
                            storage_space: -1,
                            type_space: [-1, 4096, -1, -1, -1],
                        }),
                    }],
                }],
                dir_diffs: vec![(
                    INodeId(16386),
                    vec![DirDiff {
                        snapshot: 2,
                        attrs: attrs(0o700),
                        created: vec![("n".into(), INodeId(16391))],
                        deleted: vec![("f".into(), INodeId(16387))],
                    }],
                )],
                file_diffs: vec![(
                    INodeId(16388),
                    vec![
                        FileDiff {
                            snapshot: 2,
                            attrs: attrs(0o644),
                            replication: 3,
                            length: 7,
                            blocks: Some(vec![block]),
                        },
                        FileDiff {
                            snapshot: 3,
                            attrs: attrs(0o600),
                            replication: 2,
                            length: 0,
                            blocks: Some(Vec::new()),
                        },
                    ],
                )],
                retained: vec![
                    SnapshotImageInode {
                        id: INodeId(16387),
                        parent: Some(INodeId(16386)),
                        name: "f".into(),
                        attrs: attrs(0o644),
                        file: Some((3, 1024, vec![block])),
                        children: Vec::new(),
                        storage_policy: 2,
                    },
                    SnapshotImageInode {
                        id: INodeId(16389),
                        parent: None,
                        name: "dir".into(),
                        attrs: attrs(0o755),
                        file: None,
                        children: vec![("x".into(), INodeId(16390))],
                        storage_policy: UNSPECIFIED_POLICY_ID,
                    },
                ],
                pins: vec![(INodeId(16387), 2)],
            })),
        ]
    }

    #[test]
    fn snapshot_edits_round_trip() {
        for (i, e) in sample().iter().enumerate() {
            let mut buf = Vec::new();
            encode_record(&mut buf, i as u64 + 1, e);
            match decode_record(&buf) {
                Decoded::Record { txid, edit, .. } => {
                    assert_eq!((txid, &edit), (i as u64 + 1, e));
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    }
}

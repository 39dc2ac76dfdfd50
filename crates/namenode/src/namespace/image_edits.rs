//! A whole namespace as the edits that rebuild it from an empty one (what
//! a checkpoint image stores), and the id counters an image carries.

use super::{Edit, GenStamp, INodeKind, Namespace, ROOT_INODE_ID};

impl Namespace {
    /// The id counters: last inode id, last block id, last generation stamp.
    pub fn counters(&self) -> (u64, u64, GenStamp) {
        (self.last_inode_id, self.last_block_id, self.last_gs)
    }

    /// The generation stamp the next bump hands out (one past the last).
    pub(super) fn next_gs(&self) -> GenStamp {
        GenStamp(self.last_gs.0 + 1)
    }

    /// Restores the id counters (from a checkpoint image), never lowering them.
    pub fn restore_counters(&mut self, inode: u64, block: u64, gs: GenStamp) {
        self.last_inode_id = self.last_inode_id.max(inode);
        self.last_block_id = self.last_block_id.max(block);
        self.last_gs = self.last_gs.max(gs);
    }

    /// The edits that rebuild this namespace from an empty one: what a
    /// checkpoint image stores. Creation in tree order, then the exact
    /// attributes and times of every inode (creating children changes a
    /// directory's mtime, so times come last).
    pub fn to_edits(&self) -> Vec<Edit> {
        let mut create = Vec::new();
        let mut attrs = Vec::new();
        let mut quota_dirs = Vec::new();
        let mut stack = vec![(ROOT_INODE_ID, "/".to_string())];
        while let Some((id, path)) = stack.pop() {
            let node = self.node(id);
            if self.dir_quota(id).is_some() {
                quota_dirs.push((id, path.clone()));
            }
            if id != ROOT_INODE_ID {
                match &node.kind {
                    INodeKind::Directory { .. } => create.push(Edit::Mkdir {
                        id,
                        path: path.clone(),
                        permission: self.permission_of(node),
                        owner: self.owner_of(node).to_string(),
                        group: self.group_of(node).to_string(),
                        mtime_ms: node.mtime_ms(),
                    }),
                    INodeKind::File(f) => {
                        let uc = f.under_construction.clone();
                        create.push(Edit::AddFile {
                            id,
                            path: path.clone(),
                            permission: self.permission_of(node),
                            owner: self.owner_of(node).to_string(),
                            group: self.group_of(node).to_string(),
                            mtime_ms: node.mtime_ms(),
                            replication: self.replication_of(node),
                            block_size: self.block_size_of(node),
                            client_name: uc
                                .as_ref()
                                .map(|u| u.client_name().to_string())
                                .unwrap_or_default(),
                            client_machine: uc
                                .as_ref()
                                .map(|u| u.client_machine().to_string())
                                .unwrap_or_default(),
                            overwrite: false,
                        });
                        for b in f.blocks.iter() {
                            create.push(Edit::AddBlock {
                                path: path.clone(),
                                previous: None,
                                block: *b,
                            });
                        }
                        let truncating = uc
                            .as_ref()
                            .and_then(super::UnderConstruction::truncate_block);
                        if uc.is_none() || truncating.is_some() {
                            create.push(Edit::CloseFile {
                                path: path.clone(),
                                mtime_ms: node.mtime_ms(),
                                last: None,
                                length: Some(f.blocks.iter().map(|b| b.num_bytes).sum()),
                            });
                        }
                        // A truncate waiting for its block recovery: the
                        // same truncate again, cutting nothing more.
                        if let (Some(u), Some(tb)) = (&uc, truncating) {
                            let kept: u64 =
                                f.blocks.iter().rev().skip(1).map(|b| b.num_bytes).sum();
                            create.push(Edit::Truncate {
                                path: path.clone(),
                                new_length: kept + tb.num_bytes,
                                client_name: u.client_name().to_string(),
                                client_machine: u.client_machine().to_string(),
                                mtime_ms: node.mtime_ms(),
                                truncate_block: Some(tb),
                            });
                        }
                    }
                }
            } else {
                attrs.push(Edit::SetPermission {
                    path: "/".into(),
                    permission: self.permission_of(node),
                });
                attrs.push(Edit::SetOwner {
                    path: "/".into(),
                    owner: Some(self.owner_of(node).to_string()),
                    group: Some(self.group_of(node).to_string()),
                });
            }
            // Oldest first: each set puts its attribute in front.
            attrs.extend(self.xattrs_of(id).iter().rev().map(|x| Edit::SetXAttr {
                path: path.clone(),
                xattr: x.clone(),
            }));
            if self.has_acl(id) {
                attrs.push(Edit::SetAcl {
                    path: path.clone(),
                    entries: self.logical_acl(id, node),
                    inherited: false,
                });
            }
            if let Some(policy) = self.storage_policies.get(&id) {
                attrs.push(Edit::SetStoragePolicy {
                    path: path.clone(),
                    policy: *policy,
                });
            }
            attrs.push(Edit::SetTimes {
                path: path.clone(),
                mtime_ms: Some(node.mtime_ms()),
                atime_ms: Some(node.atime_ms()),
            });
            if let Some(children) = node.children() {
                for child in children.values().rev() {
                    let name = &self.node(child).name;
                    let p = if path == "/" {
                        format!("/{name}")
                    } else {
                        format!("{path}/{name}")
                    };
                    stack.push((child, p));
                }
            }
        }
        create.extend(attrs);
        create.extend(self.quota_edits(&quota_dirs));
        create.extend(
            self.snapshot_image_parts()
                .into_iter()
                .map(|p| Edit::SnapshotImage(Box::new(p))),
        );
        create.extend(self.cache_edits());
        create
    }
}

//! ACLs on inodes, as HDFS keeps and checks them (`FSDirAclOp`,
//! `AclStorage`, `FSPermissionChecker.hasAclPermission`): the six
//! ClientProtocol operations, how an ACL is stored, how it takes part in
//! permission checks, and the default ACL a new child inherits.
//!
//! Storage follows HDFS: the permission bits keep the owner, the mask (in
//! the group bits) and other; the remaining entries (named users, the
//! unnamed and named groups, and the whole default ACL) live in a side
//! table keyed by inode id, so an inode without an ACL costs nothing.
//! `chmod` on an inode with an ACL thereby changes its mask, as in HDFS.

use super::acl::{
    base_entry, filter_by_spec, filter_default_entries, merge_entries, minimal_acl,
    replace_entries, split_scopes, AclEntry, AclEntryType, AclScope,
};
use super::edits::ApplyError;
use super::permission::{Access, Caller, STICKY_BIT};
use super::{Edit, FsError, INode, INodeId, Namespace, Required};

/// The extended-ACL bit of a status's permission (HDFS's
/// `FsPermissionExtension`): what makes `ls` print `+`.
pub const ACL_BIT: u16 = 1 << 12;

/// What `getAclStatus` answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclStatus {
    pub owner: String,
    pub group: String,
    pub sticky: bool,
    /// The stored entries: named and group access entries, then defaults.
    pub entries: Vec<AclEntry>,
    /// `None` for a `.snapshot` directory, where HDFS sends no permission.
    pub permission: Option<u16>,
}

/// The ACL operations that change an inode's ACL through a transformation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AclChange {
    Modify,
    RemoveEntries,
    RemoveDefault,
    Set,
}

/// Permission bits for a full ACL: owner, mask (or group, for a minimal
/// ACL) and other from its access entries, the sticky bit kept.
fn permission_for(acl: &[AclEntry], old_permission: u16) -> u16 {
    let (access, _) = split_scopes(acl);
    let n = access.len();
    if n < 3 {
        return old_permission;
    }
    (access[0].permission << 6)
        | (access[n - 2].permission << 3)
        | access[n - 1].permission
        | (old_permission & STICKY_BIT)
}

/// The entries stored beside the permission bits for a full ACL; empty
/// for a minimal one.
fn feature_entries(acl: &[AclEntry]) -> Vec<AclEntry> {
    if acl.len() == 3 {
        return Vec::new();
    }
    let (access, default) = split_scopes(acl);
    let mut out = Vec::with_capacity(acl.len());
    if access.len() > 3 {
        out.extend_from_slice(&access[1..access.len() - 2]);
    }
    out.extend_from_slice(default);
    out
}

impl Namespace {
    /// Turns ACL support on or off (`dfs.namenode.acls.enabled`).
    pub fn set_acls_enabled(&mut self, enabled: bool) {
        self.acls_enabled = enabled;
    }

    /// `dfs.namenode.posix.acl.inheritance.enabled`: off, a new child of a
    /// directory with a default ACL keeps its umask (HDFS before HDFS-6962).
    pub fn set_posix_acl_inheritance(&mut self, enabled: bool) {
        self.posix_acl_inheritance = enabled;
    }

    fn check_acls_enabled(&self) -> Result<(), FsError> {
        if self.acls_enabled {
            return Ok(());
        }
        Err(FsError::Acl(
            "The ACL operation has been rejected.  Support for ACLs has been disabled by \
             setting dfs.namenode.acls.enabled to false."
                .into(),
        ))
    }

    /// The entries stored for an inode (none without an ACL).
    pub fn acl_entries_of(&self, id: INodeId) -> &[AclEntry] {
        self.acls.get(&id).map(Vec::as_slice).unwrap_or_default()
    }

    /// Whether an inode has an ACL (the ACL bit of its status).
    pub fn has_acl(&self, id: INodeId) -> bool {
        !self.acls.is_empty() && self.acls.contains_key(&id)
    }

    /// The full ACL of an inode: the stored entries together with the
    /// owner, mask and other entries its permission bits carry (HDFS's
    /// `readINodeLogicalAcl`).
    pub(super) fn logical_acl(&self, id: INodeId, node: &INode) -> Vec<AclEntry> {
        let Some(stored) = self.acls.get(&id) else {
            return minimal_acl(self.permission_of(node));
        };
        let (access, default) = split_scopes(stored);
        let perm = self.permission_of(node);
        let mut acl = Vec::with_capacity(stored.len() + 3);
        if access.is_empty() {
            acl.extend(minimal_acl(perm));
        } else {
            acl.push(AclEntry::new(
                AclScope::Access,
                AclEntryType::User,
                None,
                perm >> 6,
            ));
            acl.extend_from_slice(access);
            acl.push(AclEntry::new(
                AclScope::Access,
                AclEntryType::Mask,
                None,
                perm >> 3,
            ));
            acl.push(AclEntry::new(
                AclScope::Access,
                AclEntryType::Other,
                None,
                perm,
            ));
        }
        acl.extend_from_slice(default);
        acl
    }

    /// The inode an ACL operation changes: traverse check, then it must
    /// exist and the caller must own it (HDFS's `checkOwner`).
    fn acl_target(&self, caller: &Caller, src: &str) -> Result<(INodeId, String), FsError> {
        let res = self.resolve_as(caller, src)?;
        self.check(caller, &res, Required::default())?;
        let path = res.path();
        let id = res.last().ok_or_else(|| {
            FsError::FileNotFound(format!("Directory/File does not exist {path}"))
        })?;
        self.check_owner(caller, &res)?;
        Ok((id, path))
    }

    /// modifyAclEntries, removeAclEntries, removeDefaultAcl and setAcl:
    /// the new full ACL is journaled, as HDFS's OP_SET_ACL.
    ///
    /// # Errors
    /// AclException when ACLs are disabled or the result is invalid (with
    /// HDFS's " Path: <path>" suffix); FileNotFound; AccessControl when
    /// the caller does not own the inode.
    pub fn change_acl(
        &mut self,
        caller: &Caller,
        src: &str,
        change: AclChange,
        spec: &[AclEntry],
    ) -> Result<Edit, FsError> {
        self.check_acls_enabled()?;
        let (id, path) = self.acl_target(caller, src)?;
        let node = self.node(id);
        let existing = self.logical_acl(id, node);
        let acl = match change {
            AclChange::Modify => merge_entries(&existing, spec),
            AclChange::RemoveEntries => filter_by_spec(&existing, spec),
            AclChange::RemoveDefault => filter_default_entries(&existing),
            AclChange::Set => replace_entries(&existing, spec),
        }
        .map_err(|m| FsError::Acl(format!("{m} Path: {path}")))?;
        let has_default = !split_scopes(&acl).1.is_empty();
        if acl.len() != 3 && has_default && !node.is_dir() {
            return Err(FsError::Acl(format!(
                "Invalid ACL: only directories may have a default ACL. Path: {path} Path: {path}"
            )));
        }
        let edit = Edit::SetAcl {
            path,
            entries: acl,
            inherited: false,
        };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// removeAcl: the group bits get the group entry back in place of the
    /// mask, and the stored entries go (journaled as an empty ACL).
    ///
    /// # Errors
    /// As [`Namespace::change_acl`].
    pub fn remove_acl(&mut self, caller: &Caller, src: &str) -> Result<Edit, FsError> {
        self.check_acls_enabled()?;
        let (_, path) = self.acl_target(caller, src)?;
        let edit = Edit::SetAcl {
            path,
            entries: Vec::new(),
            inherited: false,
        };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// getAclStatus.
    ///
    /// # Errors
    /// AclException when disabled; no search permission; FileNotFound.
    pub fn get_acl_status(&self, caller: &Caller, src: &str) -> Result<AclStatus, FsError> {
        self.check_acls_enabled()?;
        if let Some(sp) = self.snapshot_path(src)? {
            return self.snapshot_acl_status(caller, &sp);
        }
        let res = self.resolve_as(caller, src)?;
        self.check(caller, &res, Required::default())?;
        let id = res
            .last()
            .ok_or_else(|| FsError::FileNotFound(format!("cannot find {}", res.path())))?;
        let node = self.node(id);
        Ok(AclStatus {
            owner: self.owner_of(node).to_string(),
            group: self.group_of(node).to_string(),
            sticky: self.permission_of(node) & STICKY_BIT != 0,
            entries: self.acl_entries_of(id).to_vec(),
            permission: Some(self.permission_of(node)),
        })
    }

    /// Whether `node`'s permissions grant `access` to `caller` (see
    /// [`acl_grants`]).
    pub(super) fn grants(
        &self,
        caller: &Caller,
        id: INodeId,
        node: &INode,
        access: Access,
    ) -> bool {
        let entries = if self.acls.is_empty() {
            &[][..]
        } else {
            self.acl_entries_of(id)
        };
        // Every path component is checked: the set is read once.
        let set = self.names.set(node.attrs);
        acl_grants(
            caller,
            (
                self.names.get(set.owner),
                self.names.get(set.group),
                set.permission,
            ),
            entries,
            access,
        )
    }

    /// What a new child of `parent` gets from the parent's default ACL
    /// (HDFS's `copyINodeDefaultAcl`, with POSIX inheritance: the mode the
    /// client asked for before its umask, when it sent one and inheritance
    /// is on, filters the owner, mask and other entries, else the masked
    /// mode does; without a default ACL the masked mode stands). Returns the permission bits and, when the child gets
    /// an ACL of its own, that full ACL.
    pub(super) fn inherited_acl(
        &self,
        parent: INodeId,
        is_dir: bool,
        modes: CreateModes,
    ) -> (u16, Option<Vec<AclEntry>>) {
        let default = match self.acls.get(&parent) {
            Some(stored) => split_scopes(stored).1,
            None => &[],
        };
        if default.is_empty() {
            return (modes.masked, None);
        }
        let child = match modes.unmasked {
            Some(unmasked) if self.posix_acl_inheritance => unmasked,
            _ => modes.masked,
        };
        let (user, group, other) = ((child >> 6) & 7, (child >> 3) & 7, child & 7);
        let minimal_default = default.len() == 3;
        let mut acl: Vec<AclEntry> = default
            .iter()
            .map(|e| {
                let filter = match (e.kind, &e.name) {
                    (AclEntryType::User, None) => user,
                    (AclEntryType::Group, _) if minimal_default => group,
                    (AclEntryType::Mask, _) => group,
                    (AclEntryType::Other, _) => other,
                    _ => 7,
                };
                AclEntry {
                    scope: AclScope::Access,
                    permission: e.permission & filter,
                    ..e.clone()
                }
            })
            .collect();
        let access_len = acl.len();
        if is_dir {
            acl.extend_from_slice(default);
        }
        let permission = permission_for(&acl, child);
        if access_len == 3 && !is_dir {
            return (permission, None);
        }
        (permission, Some(acl))
    }

    /// Journals and applies the ACL a new inode inherited, if any.
    pub(super) fn apply_inherited_acl(
        &mut self,
        path: impl FnOnce() -> String,
        acl: Option<Vec<AclEntry>>,
        edits: &mut Vec<Edit>,
    ) {
        if let Some(entries) = acl {
            let edit = Edit::SetAcl {
                path: path(),
                entries,
                inherited: true,
            };
            self.apply_checked(&edit);
            edits.push(edit);
        }
    }

    /// Drops an inode's ACL (it is being deleted).
    pub(super) fn forget_acl(&mut self, id: INodeId) {
        if !self.acls.is_empty() {
            self.acls.remove(&id);
        }
    }

    /// [`Namespace::apply`] for `SetAcl`: an empty list removes the ACL
    /// (restoring the group bits from the group entry), any other is the
    /// full new ACL (HDFS's `updateINodeAcl`).
    pub(super) fn apply_acl_edit(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        let Edit::SetAcl { path, entries, .. } = edit else {
            return Err(ApplyError(format!("not an ACL edit: {edit:?}")));
        };
        let (id, _) = self.resolve_existing(path)?;
        // A snapshot that sees the inode keeps its ACL and bits as they were.
        self.record_modification(id);
        if entries.is_empty() {
            if let Some(stored) = self.acls.remove(&id) {
                if stored.first().is_some_and(|e| e.scope == AclScope::Access) {
                    let group = base_entry(&stored, AclScope::Access, AclEntryType::Group)
                        .map_or(0, |g| g.permission);
                    let attrs = self.node(id).attrs;
                    let bits = self.names.permission(attrs);
                    let attrs = self
                        .names
                        .with_permission(attrs, (bits & !0o070) | (group << 3));
                    self.node_mut(id).attrs = attrs;
                }
            }
            return Ok(());
        }
        if split_scopes(entries).0.len() < 3 {
            return Err(ApplyError(format!(
                "{path}: an ACL without its base entries"
            )));
        }
        let attrs = self.node(id).attrs;
        let bits = permission_for(entries, self.names.permission(attrs));
        let attrs = self.names.with_permission(attrs, bits);
        self.node_mut(id).attrs = attrs;
        let stored = feature_entries(entries);
        if stored.is_empty() {
            self.acls.remove(&id);
        } else {
            self.acls.insert(id, stored);
        }
        Ok(())
    }
}

/// Whether an inode with `(owner, group, mode)` and the stored ACL
/// `entries` grants `access` to `caller`: through its access ACL when it
/// has one (owner, then named users, then the owning and named groups, all
/// but the owner limited by the mask, then other), else through the plain
/// bits (HDFS's `FSPermissionChecker.hasPermission`/`hasAclPermission`).
pub(super) fn acl_grants(
    caller: &Caller,
    (owner, owning_group, mode): (&str, &str, u16),
    entries: &[AclEntry],
    access: Access,
) -> bool {
    if entries.first().is_none_or(|f| f.scope != AclScope::Access) {
        return access.granted_by(caller.class_bits(owner, owning_group, mode));
    }
    if *caller.user == *owner {
        return access.granted_by(mode >> 6);
    }
    let mask = (mode >> 3) & 7;
    let mut matched = false;
    for e in entries.iter().take_while(|e| e.scope == AclScope::Access) {
        match e.kind {
            AclEntryType::User if e.name.as_deref() == Some(&*caller.user) => {
                if access.granted_by(e.permission & mask) {
                    return true;
                }
                matched = true;
                break;
            }
            AclEntryType::Group => {
                let group = e.name.as_deref().unwrap_or(owning_group);
                if caller.in_group(group) {
                    if access.granted_by(e.permission & mask) {
                        return true;
                    }
                    matched = true;
                }
            }
            _ => {}
        }
    }
    !matched && access.granted_by(mode & 7)
}

/// The mode a create or mkdirs asked for: after the client's umask, and,
/// from clients that send it, before (`unmasked`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CreateModes {
    pub masked: u16,
    pub unmasked: Option<u16>,
}

impl From<u16> for CreateModes {
    fn from(masked: u16) -> Self {
        Self {
            masked,
            unmasked: None,
        }
    }
}

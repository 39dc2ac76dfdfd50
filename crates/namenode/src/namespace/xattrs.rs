//! Extended attributes as HDFS keeps them (`FSDirXAttrOp`,
//! `XAttrPermissionFilter`): `setXAttr` with its CREATE/REPLACE flags,
//! `getXAttrs`, `listXAttrs`, `removeXAttr`; the five namespaces and who
//! may touch each; the per-inode count and size limits.
//!
//! The attributes live in a side table keyed by inode id, so an inode
//! without any costs nothing: the namespace's memory per file does not
//! grow for clusters that never use them. Renames keep the id (and so the
//! attributes); deleting an inode drops its entry.

use super::authorize::Required;
use super::permission::{Access, Caller, STICKY_BIT};
use super::{Edit, FsError, INodeId, Namespace};
use crate::namespace::edits::ApplyError;

/// The one `security.` attribute users may set (HDFS's
/// `SECURITY_XATTR_UNREADABLE_BY_SUPERUSER`): without a value, on files.
pub const UNREADABLE_BY_SUPERUSER: &str = "security.hdfs.unreadable.by.superuser";

/// Whether `xattrs` hold `security.hdfs.unreadable.by.superuser`.
pub(super) fn marks_unreadable_by_superuser(xattrs: &[XAttr]) -> bool {
    xattrs
        .iter()
        .any(|x| x.prefixed_name() == UNREADABLE_BY_SUPERUSER)
}

/// An attribute's namespace, numbered as `XAttrProto.XAttrNamespaceProto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum XAttrNamespace {
    User,
    Trusted,
    Security,
    System,
    Raw,
}

impl XAttrNamespace {
    /// The wire number.
    pub fn number(self) -> u32 {
        match self {
            XAttrNamespace::User => 0,
            XAttrNamespace::Trusted => 1,
            XAttrNamespace::Security => 2,
            XAttrNamespace::System => 3,
            XAttrNamespace::Raw => 4,
        }
    }

    /// From the wire number; `None` for an unknown one.
    pub fn from_number(n: u32) -> Option<Self> {
        Some(match n {
            0 => XAttrNamespace::User,
            1 => XAttrNamespace::Trusted,
            2 => XAttrNamespace::Security,
            3 => XAttrNamespace::System,
            4 => XAttrNamespace::Raw,
            _ => return None,
        })
    }

    /// The name prefix, as Java's `XAttrHelper.getPrefixedName` writes it.
    pub fn prefix(self) -> &'static str {
        match self {
            XAttrNamespace::User => "user",
            XAttrNamespace::Trusted => "trusted",
            XAttrNamespace::Security => "security",
            XAttrNamespace::System => "system",
            XAttrNamespace::Raw => "raw",
        }
    }
}

/// One extended attribute. The name excludes the namespace prefix; a
/// `None` value is an attribute without one (or a name-only listing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XAttr {
    pub namespace: XAttrNamespace,
    pub name: String,
    pub value: Option<Vec<u8>>,
}

impl XAttr {
    /// `user.name`.
    pub fn prefixed_name(&self) -> String {
        format!("{}.{}", self.namespace.prefix(), self.name)
    }

    fn same_name(&self, other: &XAttr) -> bool {
        self.namespace == other.namespace && self.name == other.name
    }

    /// USER and TRUSTED attributes count against the per-inode limit.
    fn user_visible(&self) -> bool {
        matches!(
            self.namespace,
            XAttrNamespace::User | XAttrNamespace::Trusted
        )
    }
}

/// `setXAttr`'s flags (`XAttrSetFlagProto` bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct XAttrSetFlags {
    pub create: bool,
    pub replace: bool,
}

impl XAttrSetFlags {
    /// From the request's bit set.
    pub fn from_bits(bits: u32) -> Self {
        Self {
            create: bits & 1 != 0,
            replace: bits & 2 != 0,
        }
    }
}

/// Limits from `dfs.namenode.fs-limits.max-xattrs-per-inode` and
/// `max-xattr-size`, and `dfs.namenode.xattrs.enabled`.
#[derive(Debug, Clone)]
pub struct XAttrLimits {
    pub enabled: bool,
    pub max_per_inode: usize,
    pub max_size: usize,
}

impl Default for XAttrLimits {
    fn default() -> Self {
        Self {
            enabled: true,
            max_per_inode: 32,
            max_size: 16384,
        }
    }
}

impl Namespace {
    /// Sets the xattr limits (from the configuration).
    pub fn set_xattr_limits(&mut self, limits: XAttrLimits) {
        self.xattr_limits = limits;
    }

    fn check_xattrs_enabled(&self) -> Result<(), FsError> {
        if self.xattr_limits.enabled {
            return Ok(());
        }
        Err(FsError::Io(
            "The XAttr operation has been rejected.  Support for XAttrs has been disabled by \
             setting dfs.namenode.xattrs.enabled to false."
                .into(),
        ))
    }

    /// Whether `caller` may name `xattr` at all (HDFS's
    /// `checkPermissionForApi`); raw attributes need a `/.reserved/raw`
    /// path, which Cairn does not serve.
    fn check_xattr_api(caller: &Caller, xattr: &XAttr) -> Result<(), FsError> {
        let allowed = match xattr.namespace {
            XAttrNamespace::User => true,
            XAttrNamespace::Trusted => caller.is_superuser,
            _ => xattr.prefixed_name() == UNREADABLE_BY_SUPERUSER,
        };
        if !allowed {
            return Err(FsError::AccessControl(format!(
                "User doesn't have permission for xattr: {}",
                xattr.prefixed_name()
            )));
        }
        if xattr.prefixed_name() == UNREADABLE_BY_SUPERUSER && xattr.value.is_some() {
            return Err(FsError::AccessControl(format!(
                "Attempt to set a value for '{UNREADABLE_BY_SUPERUSER}'. Values are not allowed \
                 for this xattr."
            )));
        }
        Ok(())
    }

    /// The attributes of `src` that `caller` may see (HDFS's
    /// `filterXAttrsForApi`), after the read check; below `.snapshot`, as
    /// the snapshot kept them.
    fn visible_xattrs(&self, caller: &Caller, src: &str) -> Result<Vec<XAttr>, FsError> {
        let all = match self.snapshot_xattrs(caller, src)? {
            Some(kept) => kept,
            None => {
                let (id, _) = self.xattr_target(caller, src, Some(Access::READ))?;
                self.xattrs_of(id).to_vec()
            }
        };
        Ok(all
            .into_iter()
            .filter(|x| match x.namespace {
                XAttrNamespace::User => true,
                XAttrNamespace::Trusted => caller.is_superuser,
                _ => x.prefixed_name() == UNREADABLE_BY_SUPERUSER,
            })
            .collect())
    }

    /// The inode at `src` after the traverse check, or HDFS's
    /// "cannot find" error.
    fn xattr_target(
        &self,
        caller: &Caller,
        src: &str,
        access: Option<Access>,
    ) -> Result<(INodeId, String), FsError> {
        let res = self.resolve_as(caller, src)?;
        self.check(
            caller,
            &res,
            Required {
                access,
                ..Required::default()
            },
        )?;
        let id = res
            .last()
            .ok_or_else(|| FsError::FileNotFound(format!("cannot find {}", res.path())))?;
        Ok((id, res.path()))
    }

    /// Who may change a user attribute: write access to the inode, or for
    /// a directory with the sticky bit, its owner (HDFS's
    /// `checkXAttrChangeAccess`).
    fn check_xattr_change(
        &self,
        caller: &Caller,
        src: &str,
        xattr: &XAttr,
    ) -> Result<(INodeId, String), FsError> {
        if xattr.namespace != XAttrNamespace::User {
            return self.xattr_target(caller, src, None);
        }
        let res = self.resolve_as(caller, src)?;
        let sticky_dir = res
            .last()
            .map(|id| self.node(id))
            .is_some_and(|n| n.is_dir() && self.permission_of(n) & STICKY_BIT != 0);
        if sticky_dir {
            self.check(caller, &res, Required::default())?;
            self.check_owner(caller, &res)?;
            let id = res
                .last()
                .ok_or_else(|| FsError::FileNotFound(format!("cannot find {}", res.path())))?;
            return Ok((id, res.path()));
        }
        self.xattr_target(caller, src, Some(Access::WRITE))
    }

    /// setXAttr.
    ///
    /// # Errors
    /// As HDFS: too big (HadoopIllegalArgumentException), a namespace the
    /// caller may not use or no write access (AccessControlException),
    /// not found, flag mismatches and the per-inode limit (IOException).
    pub fn set_xattr(
        &mut self,
        caller: &Caller,
        src: &str,
        xattr: XAttr,
        flags: XAttrSetFlags,
    ) -> Result<Edit, FsError> {
        self.check_xattrs_enabled()?;
        let size = xattr.name.len() + xattr.value.as_ref().map_or(0, Vec::len);
        if size > self.xattr_limits.max_size {
            return Err(FsError::IllegalArgument(format!(
                "The XAttr is too big. The maximum combined size of the name and value is {}, \
                 but the total size is {size}",
                self.xattr_limits.max_size
            )));
        }
        Self::check_xattr_api(caller, &xattr)?;
        let (id, path) = self.check_xattr_change(caller, src, &xattr)?;
        let existing = self.xattrs.get(&id).map(Vec::as_slice).unwrap_or_default();
        let exists = existing.iter().any(|x| x.same_name(&xattr));
        if !flags.create && !flags.replace {
            return Err(FsError::IllegalArgument("A flag must be specified.".into()));
        }
        if exists && !flags.replace {
            return Err(FsError::Io(format!(
                "XAttr: {} already exists. The REPLACE flag must be specified.",
                xattr.name
            )));
        }
        if !exists && !flags.create {
            return Err(FsError::Io(format!(
                "XAttr: {} does not exist. The CREATE flag must be specified.",
                xattr.name
            )));
        }
        let visible = existing
            .iter()
            .filter(|x| x.user_visible() && !x.same_name(&xattr))
            .count()
            + usize::from(xattr.user_visible());
        if visible > self.xattr_limits.max_per_inode {
            return Err(FsError::Io(format!(
                "Cannot add additional XAttr to inode, would exceed limit of {}",
                self.xattr_limits.max_per_inode
            )));
        }
        if xattr.prefixed_name() == UNREADABLE_BY_SUPERUSER && self.node(id).is_dir() {
            return Err(FsError::Io(format!(
                "Can only set '{UNREADABLE_BY_SUPERUSER}' on a file."
            )));
        }
        let edit = Edit::SetXAttr { path, xattr };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// getXAttrs: every attribute the caller may see, or the named ones
    /// (all of which must exist).
    ///
    /// # Errors
    /// AccessControlException for a namespace the caller may not name or
    /// no read access; FileNotFound; IOException when a name is missing.
    pub fn get_xattrs(
        &self,
        caller: &Caller,
        src: &str,
        names: &[XAttr],
    ) -> Result<Vec<XAttr>, FsError> {
        self.check_xattrs_enabled()?;
        for x in names {
            Self::check_xattr_api(
                caller,
                &XAttr {
                    value: None,
                    ..x.clone()
                },
            )?;
        }
        let visible = self.visible_xattrs(caller, src)?;
        if names.is_empty() {
            return Ok(visible);
        }
        let missing = || {
            FsError::XAttrNotFound("At least one of the attributes provided was not found.".into())
        };
        names
            .iter()
            .map(|want| {
                visible
                    .iter()
                    .find(|x| x.same_name(want))
                    .cloned()
                    .ok_or_else(missing)
            })
            .collect()
    }

    /// listXAttrs: the names of the attributes the caller may see.
    ///
    /// # Errors
    /// FileNotFound, no read access.
    pub fn list_xattrs(&self, caller: &Caller, src: &str) -> Result<Vec<XAttr>, FsError> {
        self.check_xattrs_enabled()?;
        Ok(self
            .visible_xattrs(caller, src)?
            .into_iter()
            .map(|x| XAttr { value: None, ..x })
            .collect())
    }

    /// removeXAttr.
    ///
    /// # Errors
    /// AccessControlException (namespace, write access, the unreadable
    /// marker), FileNotFound, IOException when there is no such attribute.
    pub fn remove_xattr(
        &mut self,
        caller: &Caller,
        src: &str,
        xattr: &XAttr,
    ) -> Result<Edit, FsError> {
        self.check_xattrs_enabled()?;
        Self::check_xattr_api(caller, xattr)?;
        let (id, path) = self.check_xattr_change(caller, src, xattr)?;
        if xattr.prefixed_name() == UNREADABLE_BY_SUPERUSER {
            return Err(FsError::AccessControl(format!(
                "The xattr '{UNREADABLE_BY_SUPERUSER}' can not be deleted."
            )));
        }
        let found = self
            .xattrs
            .get(&id)
            .is_some_and(|list| list.iter().any(|x| x.same_name(xattr)));
        if !found {
            return Err(FsError::Io(
                "No matching attributes found for remove operation".into(),
            ));
        }
        let edit = Edit::RemoveXAttr {
            path,
            namespace: xattr.namespace,
            name: xattr.name.clone(),
        };
        self.apply_checked(&edit);
        Ok(edit)
    }

    /// HDFS's `checkUnreadableBySuperuser`, with permissions on: a
    /// superuser's read of a file that is `marked` (its attributes, as the
    /// path read sees them, carry `security.hdfs.unreadable.by.superuser`)
    /// is refused. `marked` is asked only for a superuser.
    pub(super) fn check_superuser_may_read(
        &self,
        caller: &Caller,
        marked: impl FnOnce() -> bool,
    ) -> Result<(), FsError> {
        if self.permissions_enabled && caller.is_superuser && marked() {
            return Err(FsError::AccessControl(format!(
                "Access is denied for {} since the superuser is not allowed to perform this \
                 operation.",
                caller.user
            )));
        }
        Ok(())
    }

    /// Whether reading the file is denied to the superuser (it carries
    /// `security.hdfs.unreadable.by.superuser`).
    pub fn unreadable_by_superuser(&self, id: INodeId) -> bool {
        self.xattrs
            .get(&id)
            .is_some_and(|l| marks_unreadable_by_superuser(l))
    }

    /// The attributes of an inode in stored order (images, tests).
    pub fn xattrs_of(&self, id: INodeId) -> &[XAttr] {
        self.xattrs.get(&id).map(Vec::as_slice).unwrap_or_default()
    }

    /// Drops an inode's attributes (it is being deleted).
    pub(super) fn forget_xattrs(&mut self, id: INodeId) {
        if !self.xattrs.is_empty() {
            self.xattrs.remove(&id);
        }
    }

    /// [`Namespace::apply`] for the xattr edits. The newest attribute
    /// comes first, as in HDFS's list (`setINodeXAttrs`).
    pub(super) fn apply_xattr_edit(&mut self, edit: &Edit) -> Result<(), ApplyError> {
        match edit {
            Edit::SetXAttr { path, xattr } => {
                let (id, _) = self.resolve_existing(path)?;
                // A snapshot that sees the inode keeps its attributes as they were.
                self.record_modification(id);
                let list = self.xattrs.entry(id).or_default();
                list.retain(|x| !x.same_name(xattr));
                list.insert(0, xattr.clone());
            }
            Edit::RemoveXAttr {
                path,
                namespace,
                name,
            } => {
                let (id, _) = self.resolve_existing(path)?;
                self.record_modification(id);
                if let Some(list) = self.xattrs.get_mut(&id) {
                    list.retain(|x| !(x.namespace == *namespace && x.name == *name));
                    if list.is_empty() {
                        self.xattrs.remove(&id);
                    }
                }
            }
            other => return Err(ApplyError(format!("not an xattr edit: {other:?}"))),
        }
        Ok(())
    }
}

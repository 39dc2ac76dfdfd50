//! HDFS's reserved paths. `/.reserved/.inodes/<id>` names an inode by its
//! id (the NFS gateway and tools that keep file ids use it): it stands for
//! the inode's path, followed by whatever comes after the id, or for the
//! inode's parent when `..` follows the id (NFS lookups). Every path is
//! read through [`Namespace::unreserved`] before it is split, so reads and
//! changes alike work through it, and edits carry the real path. Nothing
//! named `.reserved` can be created at the root. Other `/.reserved` paths
//! (`/.reserved/raw`, which exists for encryption zones) are not served.

use std::borrow::Cow;

use super::tree::INodeId;
use super::{FsError, Namespace};

/// The reserved name at the root.
pub const DOT_RESERVED: &str = ".reserved";

/// HDFS's refusal to create `/.reserved`.
pub const RESERVED_AT_ROOT: &str = "File name \".reserved\" is reserved and cannot be created. \
If this is during upgrade change the name of the existing file or directory to another name \
before upgrading to the new release.";

const INODES_PREFIX: &str = "/.reserved/.inodes/";

impl Namespace {
    /// `src` with a `/.reserved/.inodes/<id>` prefix replaced by that
    /// inode's path; any other path as it is.
    ///
    /// # Errors
    /// `FileNotFoundException` as HDFS words it for an id that is not a
    /// number or names no inode.
    pub(super) fn unreserved<'a>(&self, src: &'a str) -> Result<Cow<'a, str>, FsError> {
        let Some(rest) = src.strip_prefix(INODES_PREFIX) else {
            return Ok(Cow::Borrowed(src));
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (id, tail) = match rest.split_once('/') {
            Some((id, tail)) => (id, Some(tail)),
            None => (rest, None),
        };
        let id: u64 = id
            .parse()
            .map_err(|_| FsError::FileNotFound(format!("Invalid inode path: {src}")))?;
        let missing =
            || FsError::FileNotFound(format!("File for given inode path does not exist: {src}"));
        let id = INodeId(id);
        let node = self.inode(id).ok_or_else(missing)?;
        // `..` right after the id: the parent (what HDFS does for NFS).
        if tail.is_some_and(|t| t == ".." || t.starts_with("../")) {
            let parent = node.parent().and_then(|p| self.path_of(p));
            return Ok(Cow::Owned(parent.unwrap_or_else(|| "/".to_string())));
        }
        let base = self.path_of(id).ok_or_else(missing)?;
        Ok(Cow::Owned(match tail {
            None => base,
            Some(t) if base == "/" => format!("/{t}"),
            Some(t) => format!("{base}/{t}"),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::tests::{ns, root, stat, NOW};
    use crate::namespace::ROOT_INODE_ID;

    #[test]
    fn inode_paths_stand_for_the_inodes_path() {
        let mut ns = ns();
        ns.mkdirs(&root(), "/a/b", 0o755, true, NOW + 1)
            .expect("mkdirs");
        let (a, b) = (stat(&ns, "/a").id.0, stat(&ns, "/a/b").id.0);
        let of = |p: &str| ns.unreserved(p).map(Cow::into_owned);
        assert_eq!(of(&format!("/.reserved/.inodes/{b}")), Ok("/a/b".into()));
        assert_eq!(
            of(&format!("/.reserved/.inodes/{a}/b/c")),
            Ok("/a/b/c".into())
        );
        assert_eq!(of(&format!("/.reserved/.inodes/{b}/..")), Ok("/a".into()));
        assert_eq!(of(&format!("/.reserved/.inodes/{a}/..")), Ok("/".into()));
        let r = ROOT_INODE_ID.0;
        assert_eq!(of(&format!("/.reserved/.inodes/{r}")), Ok("/".into()));
        assert_eq!(of(&format!("/.reserved/.inodes/{r}/a")), Ok("/a".into()));
        assert_eq!(of("/a/b"), Ok("/a/b".into()));
        assert_eq!(
            of("/.reserved/.inodes/x"),
            Err(FsError::FileNotFound(
                "Invalid inode path: /.reserved/.inodes/x".into()
            ))
        );
        assert_eq!(
            of("/.reserved/.inodes/999999"),
            Err(FsError::FileNotFound(
                "File for given inode path does not exist: /.reserved/.inodes/999999".into()
            ))
        );
        // Through the path, a change lands on the real one.
        ns.mkdirs(
            &root(),
            &format!("/.reserved/.inodes/{b}/c"),
            0o755,
            false,
            NOW + 2,
        )
        .expect("mkdirs by id");
        assert!(stat(&ns, "/a/b/c").is_dir);
        assert_eq!(
            ns.mkdirs(&root(), "/.reserved/d", 0o755, true, NOW + 3),
            Err(FsError::IllegalArgument(RESERVED_AT_ROOT.into()))
        );
    }
}

//! Sources and destinations of the copying commands: a path on the
//! cluster or on the local file system, with what a copy needs to know of
//! it (Hadoop's `PathData`).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::super::paths;
use super::super::shell::{FsId, Item, Shell};
use super::super::transfer::io_reason;

/// A path on the cluster or on the local file system.
#[derive(Clone, Debug)]
pub(super) enum Place {
    Local(PathBuf),
    Remote(FsId, String),
}

/// What a copy needs to know of an existing path.
#[derive(Clone, Debug)]
pub(super) struct Meta {
    pub(super) is_dir: bool,
    pub(super) len: u64,
    pub(super) mtime: u64,
    pub(super) atime: u64,
    pub(super) owner: String,
    pub(super) group: String,
    pub(super) permission: u32,
}

/// A source or destination (Hadoop's `PathData`, local or remote).
#[derive(Clone, Debug)]
pub(super) struct Node {
    pub(super) display: String,
    pub(super) place: Place,
    pub(super) meta: Option<Meta>,
}

impl Node {
    pub(super) fn exists(&self) -> bool {
        self.meta.is_some()
    }

    pub(super) fn is_dir(&self) -> bool {
        self.meta.as_ref().is_some_and(|m| m.is_dir)
    }

    pub(super) fn remote(item: Item) -> Node {
        Node {
            meta: item.status.as_ref().map(|s| Meta {
                is_dir: s.isdir,
                len: s.length as u64,
                mtime: s.modification_time,
                atime: s.access_time,
                owner: s.owner.clone(),
                group: s.group.clone(),
                permission: u32::from(s.permission),
            }),
            display: item.display,
            place: Place::Remote(item.fs, item.path),
        }
    }

    /// A local path as typed, looked up.
    pub(super) fn local(display: &str) -> Result<Node, String> {
        let path = local_absolute(display);
        let meta = local_meta(&path)?;
        Ok(Node {
            display: display.to_owned(),
            place: Place::Local(path),
            meta,
        })
    }

    /// The last component of the path.
    pub(super) fn name(&self) -> String {
        match &self.place {
            Place::Local(p) => p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            Place::Remote(_, p) => paths::name(p).to_owned(),
        }
    }

    /// The path `name` under this one, not looked up.
    pub(super) fn child_unchecked(&self, name: &str) -> Node {
        Node {
            display: paths::child_display(&self.display, name),
            place: match &self.place {
                Place::Local(p) => Place::Local(p.join(name)),
                Place::Remote(fs, p) => Place::Remote(*fs, paths::join(p, name)),
            },
            meta: None,
        }
    }

    /// This path with `suffix` appended, not looked up.
    pub(super) fn suffixed(&self, suffix: &str) -> Node {
        Node {
            display: format!("{}{suffix}", self.display),
            place: match &self.place {
                Place::Local(p) => {
                    let mut s = p.clone().into_os_string();
                    s.push(suffix);
                    Place::Local(PathBuf::from(s))
                }
                Place::Remote(fs, p) => Place::Remote(*fs, format!("{p}{suffix}")),
            },
            meta: None,
        }
    }

    /// `hdfs://authority/path` or `file:///path`.
    pub(super) fn qualified(&self, shell: &Shell) -> String {
        match &self.place {
            Place::Local(p) => format!("file://{}", p.display()),
            Place::Remote(fs, p) => shell.qualified(*fs, p),
        }
    }

    pub(super) fn same_fs(&self, other: &Node) -> bool {
        match (&self.place, &other.place) {
            (Place::Local(_), Place::Local(_)) => true,
            (Place::Remote(a, _), Place::Remote(b, _)) => a == b,
            _ => false,
        }
    }
}

/// `path` made absolute against the working directory and normalised
/// (`.` and `..` applied), as Hadoop's local `Path` does.
pub(super) fn local_absolute(typed: &str) -> PathBuf {
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_else(|_| "/".to_owned());
    let path = typed.strip_prefix("file://").unwrap_or(typed);
    PathBuf::from(paths::absolute(&cwd, path))
}

/// The metadata of a local path, `None` if it does not exist.
pub(super) fn local_meta(path: &Path) -> Result<Option<Meta>, String> {
    match std::fs::metadata(path) {
        Ok(m) => Ok(Some(Meta {
            is_dir: m.is_dir(),
            len: m.len(),
            mtime: millis(m.mtime(), m.mtime_nsec()),
            atime: millis(m.atime(), m.atime_nsec()),
            owner: user_name(m.uid()),
            group: group_name(m.gid()),
            permission: m.mode() & 0o7777,
        })),
        Err(e)
            if e.kind() == std::io::ErrorKind::NotFound
                || e.kind() == std::io::ErrorKind::NotADirectory =>
        {
            Ok(None)
        }
        Err(e) => Err(format!("{} ({})", path.display(), io_reason(&e))),
    }
}

fn millis(secs: i64, nanos: i64) -> u64 {
    u64::try_from(secs.saturating_mul(1000) + nanos / 1_000_000).unwrap_or(0)
}

fn user_name(uid: u32) -> String {
    nix::unistd::User::from_uid(nix::unistd::Uid::from_raw(uid))
        .ok()
        .flatten()
        .map_or_else(|| uid.to_string(), |u| u.name)
}

fn group_name(gid: u32) -> String {
    nix::unistd::Group::from_gid(nix::unistd::Gid::from_raw(gid))
        .ok()
        .flatten()
        .map_or_else(|| gid.to_string(), |g| g.name)
}

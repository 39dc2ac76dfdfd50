//! POSIX permission checks as HDFS makes them: owner, group and other bits,
//! the sticky bit on directories, and a superuser who bypasses everything.

use std::fmt;
use std::sync::Arc;

/// An access mode (`FsAction` in Hadoop): a subset of read, write, execute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access(u16);

impl Access {
    pub const READ: Access = Access(4);
    pub const WRITE: Access = Access(2);
    pub const EXECUTE: Access = Access(1);
    pub const READ_EXECUTE: Access = Access(5);
    pub const ALL: Access = Access(7);

    /// An access from three rwx bits (`FsActionProto` values are these bits).
    pub fn from_bits(bits: u16) -> Access {
        Access(bits & 7)
    }

    /// Whether `bits` (three rwx bits) grant this access.
    pub fn granted_by(self, bits: u16) -> bool {
        bits & self.0 == self.0
    }

    pub fn implies(self, other: Access) -> bool {
        self.0 & other.0 == other.0
    }
}

impl fmt::Display for Access {
    /// Hadoop's `FsAction` enum names, which appear in its error messages.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self.0 {
            0 => "NONE",
            1 => "EXECUTE",
            2 => "WRITE",
            3 => "WRITE_EXECUTE",
            4 => "READ",
            5 => "READ_EXECUTE",
            6 => "READ_WRITE",
            _ => "ALL",
        };
        f.write_str(name)
    }
}

/// The sticky bit (`01000`): in such a directory only the owner of an entry
/// (or of the directory) may delete or rename it.
pub const STICKY_BIT: u16 = 0o1000;

/// `rwxr-xr-x`-style rendering, with `t`/`T` for the sticky bit, as
/// Hadoop's `FsPermission.toString`.
pub fn mode_string(perm: u16) -> String {
    let mut s = String::with_capacity(9);
    for shift in [6u16, 3, 0] {
        let bits = (perm >> shift) & 7;
        s.push(if bits & 4 != 0 { 'r' } else { '-' });
        s.push(if bits & 2 != 0 { 'w' } else { '-' });
        s.push(if bits & 1 != 0 { 'x' } else { '-' });
    }
    if perm & STICKY_BIT != 0 {
        let last = if perm & 1 != 0 { 't' } else { 'T' };
        s.pop();
        s.push(last);
    }
    s
}

/// Who is calling: the effective user of the connection and their groups.
/// Both are shared (`Arc`): a caller is made for every call, from the
/// connection's user and the cached groups, without copying any name.
#[derive(Debug, Clone)]
pub struct Caller {
    pub user: Arc<str>,
    pub groups: Arc<[String]>,
    /// The NameNode's own user or a member of the superuser group.
    pub is_superuser: bool,
}

impl Caller {
    /// A caller with every privilege (start-up, replay, tests).
    pub fn superuser(user: &str) -> Self {
        Self {
            user: Arc::from(user),
            groups: Arc::from([]),
            is_superuser: true,
        }
    }

    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// The three permission bits that apply to this caller on an inode.
    pub fn class_bits(&self, owner: &str, group: &str, perm: u16) -> u16 {
        if *self.user == *owner {
            (perm >> 6) & 7
        } else if self.in_group(group) {
            (perm >> 3) & 7
        } else {
            perm & 7
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_strings() {
        assert_eq!(mode_string(0o755), "rwxr-xr-x");
        assert_eq!(mode_string(0o1777), "rwxrwxrwt");
        assert_eq!(mode_string(0o1770), "rwxrwx--T");
        assert_eq!(mode_string(0o640), "rw-r-----");
    }

    #[test]
    fn class_bits_pick_owner_group_other() {
        let c = Caller {
            user: "alice".into(),
            groups: Arc::from(["staff".to_string()]),
            is_superuser: false,
        };
        assert_eq!(c.class_bits("alice", "x", 0o750), 7);
        assert_eq!(c.class_bits("bob", "staff", 0o750), 5);
        assert_eq!(c.class_bits("bob", "other", 0o754), 4);
        assert!(Access::READ_EXECUTE.granted_by(5));
        assert!(!Access::WRITE.granted_by(5));
    }
}

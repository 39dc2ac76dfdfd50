//! HDFS path rules. A path is absolute and `/`-separated; resolving it
//! drops empty components (`/a//b` is `/a/b`) and takes every other one
//! as a name, `.`, `..` and names with `:` included (none can exist, so
//! they are simply not found), as HDFS's `INode.getPathComponents` does.
//! Calls that create a path first check it with [`check_valid_name`]
//! (HDFS's `DFSUtil.isValidName`).

use smallvec::SmallVec;

use super::FsError;

/// A path's components, borrowed from it; on the stack up to 16 (every
/// call resolves a path, so this saves its allocations).
pub type Components<'a> = SmallVec<[&'a str; 16]>;

/// Splits an absolute path into its components. `/` has none.
///
/// # Errors
/// [`FsError::InvalidPath`] for a relative path.
pub fn components(path: &str) -> Result<Components<'_>, FsError> {
    let Some(rest) = path.strip_prefix('/') else {
        return Err(FsError::InvalidPath(format!("Invalid path name {path}")));
    };
    let mut parts = Components::new();
    // One search per component (a byte loop cost more than the path walk
    // on long paths).
    let bytes = rest.as_bytes();
    let mut start = 0;
    while start < bytes.len() {
        let end = memchr::memchr(b'/', &bytes[start..]).map_or(bytes.len(), |i| start + i);
        if end > start {
            parts.push(&rest[start..end]);
        }
        start = end + 1;
    }
    Ok(parts)
}

/// HDFS's `DFSUtil.isValidName`, checked by the calls that create a path
/// (mkdirs, create, a rename's destination): absolute, no `.`, `..` or
/// `:` in a component, no empty component but a trailing one (`..` is
/// allowed below `/.reserved/.inodes/<id>`).
///
/// # Errors
/// [`FsError::InvalidPath`] "Invalid path name Invalid file name: P".
pub fn check_valid_name(path: &str) -> Result<(), FsError> {
    let invalid = || FsError::InvalidPath(format!("Invalid path name Invalid file name: {path}"));
    if !path.starts_with('/') {
        return Err(invalid());
    }
    // Hadoop's StringUtils.split drops trailing empty parts: `/a//` is
    // valid, `/a//b` is not.
    let mut parts: Vec<&str> = path.split('/').collect();
    while parts.last() == Some(&"") {
        parts.pop();
    }
    let by_inode = parts.len() > 4 && parts[1] == ".reserved" && parts[2] == ".inodes";
    for (i, part) in parts.iter().enumerate() {
        let bad = *part == "."
            || part.contains(':')
            || (*part == ".." && !by_inode)
            || (part.is_empty() && i != 0 && i != parts.len() - 1);
        if bad {
            return Err(invalid());
        }
    }
    Ok(())
}

/// Joins components back into an absolute path.
pub fn join(components: &[impl AsRef<str>]) -> String {
    if components.is_empty() {
        return "/".to_string();
    }
    // Sized up front: every mutation joins a path or two.
    let len = components.iter().map(|c| c.as_ref().len() + 1).sum();
    let mut out = String::with_capacity(len);
    for c in components {
        out.push('/');
        out.push_str(c.as_ref());
    }
    out
}

/// What `new Path(p).toUri().getPath()` (and, scheme-less, `toString()`)
/// makes of absolute path `p`:
/// runs of `/` collapsed, a trailing `/` dropped, then `.` segments
/// removed and each `name/..` pair resolved as `java.net.URI` normalizes
/// (a `..` above the root stays; a path that ended in a removed `.` or
/// `..` keeps a trailing `/`).
pub fn hadoop_path(p: &str) -> String {
    let segments: Vec<&str> = p.split('/').filter(|s| !s.is_empty()).collect();
    let mut kept: Vec<&str> = Vec::new();
    let mut trailing = false;
    for (i, s) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *s {
            "." => trailing = last,
            ".." if kept.last().is_some_and(|k| *k != "..") => {
                kept.pop();
                trailing = last;
            }
            s => kept.push(s),
        }
    }
    let mut out = format!("/{}", kept.join("/"));
    if trailing && !kept.is_empty() {
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_paths() {
        assert!(components("/").expect("root").is_empty());
        assert_eq!(components("/a/b").expect("ok").as_slice(), ["a", "b"]);
        assert_eq!(components("/a/b/").expect("ok").as_slice(), ["a", "b"]);
        assert_eq!(
            components("/a.b/..c/d..").expect("ok").as_slice(),
            ["a.b", "..c", "d.."]
        );
        // Past the 16 held on the stack.
        let deep = "/x".repeat(40);
        assert_eq!(components(&deep).expect("ok").len(), 40);
        assert_eq!(join(&["a", "b"]), "/a/b");
        assert_eq!(join(&[] as &[&str]), "/");
    }

    #[test]
    fn paths_resolve_as_hdfs_splits_them() {
        assert!(components("").is_err());
        assert!(components("a/b").is_err());
        for (p, parts) in [
            ("/a//b", &["a", "b"][..]),
            ("//", &[]),
            ("/a///", &["a"]),
            ("/a/./b", &["a", ".", "b"]),
            ("/a/../b", &["a", "..", "b"]),
            ("/a:b", &["a:b"]),
            ("/:/a", &[":", "a"]),
        ] {
            assert_eq!(components(p).expect(p).as_slice(), parts, "{p:?}");
        }
    }

    #[test]
    fn names_a_create_may_use() {
        for p in [
            "/",
            "/a",
            "/a/b/",
            "/a//",
            "/a///",
            "/a..b/c.",
            "/.reserved/.inodes/16385/..",
        ] {
            assert_eq!(check_valid_name(p), Ok(()), "{p:?}");
        }
        for p in [
            "a", "/a//b", "/a/./b", "/a/../b", "/a:b", "/a/b:", "/.", "/a/..",
        ] {
            assert_eq!(
                check_valid_name(p),
                Err(FsError::InvalidPath(format!(
                    "Invalid path name Invalid file name: {p}"
                ))),
                "{p:?}"
            );
        }
    }

    #[test]
    fn paths_normalize_as_hadoop_path_does() {
        // `new Path(p).toUri().getPath()` in Hadoop 3.4.1, p on the left.
        for (p, want) in [
            ("/wfz/./x y", "/wfz/x y"),
            ("/wfz/..", "/"),
            ("/wfz/x/.", "/wfz/x/"),
            ("/wfz/x/..", "/wfz/"),
            ("/../a", "/../a"),
            ("/a//b", "/a/b"),
            ("/a///b/", "/a/b"),
            ("/a/b/", "/a/b"),
            ("/", "/"),
            ("/.", "/"),
            ("/..", "/.."),
            ("/a/./../b", "/b"),
            ("/a/b/../../..", "/.."),
            ("/a/../b/./c/..", "/b/"),
            ("/x y/%20", "/x y/%20"),
            ("/a:b/c", "/a:b/c"),
            ("/a/..b/.c", "/a/..b/.c"),
        ] {
            assert_eq!(hadoop_path(p), want, "{p}");
        }
    }
}

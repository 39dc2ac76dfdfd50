//! HDFS path rules: absolute, `/`-separated, no `.`, `..`, `:` or empty
//! components (a single trailing `/` is tolerated, as in HDFS).

use smallvec::SmallVec;

use super::FsError;

/// A path's components, borrowed from it; on the stack up to 16 (every
/// call resolves a path, so this saves its allocations).
pub type Components<'a> = SmallVec<[&'a str; 16]>;

/// Splits an absolute path into its components. `/` has none.
///
/// # Errors
/// [`FsError::InvalidPath`] for a relative path or a bad component.
pub fn components(path: &str) -> Result<Components<'_>, FsError> {
    let invalid = || FsError::InvalidPath(format!("Invalid path name {path}"));
    let Some(rest) = path.strip_prefix('/') else {
        return Err(invalid());
    };
    if rest.starts_with('/') {
        return Err(invalid());
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let mut parts = Components::new();
    if rest.is_empty() {
        return Ok(parts);
    }
    // One search per component finds both its end and any ':' (no
    // component may hold one): a byte loop, or a search for each of the
    // two, cost more than the path walk on long paths.
    let bad = |part: &str| part.is_empty() || part == "." || part == "..";
    let bytes = rest.as_bytes();
    let mut start = 0;
    loop {
        let end = match memchr::memchr2(b'/', b':', &bytes[start..]) {
            Some(i) if bytes[start + i] == b':' => return Err(invalid()),
            Some(i) => start + i,
            None => bytes.len(),
        };
        let part = &rest[start..end];
        if bad(part) {
            return Err(invalid());
        }
        parts.push(part);
        if end == bytes.len() {
            return Ok(parts);
        }
        start = end + 1;
    }
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
    fn invalid_paths() {
        for p in [
            "", "a/b", "/a//b", "/a/./b", "/a/../b", "/a:b", "//", "/a/..", "/.", "/a/b:", "/:/a",
            "/a///",
        ] {
            assert!(
                matches!(components(p), Err(FsError::InvalidPath(_))),
                "{p:?} must be invalid"
            );
        }
    }
}

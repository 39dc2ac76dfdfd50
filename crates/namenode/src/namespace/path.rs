//! HDFS path rules: absolute, `/`-separated, no `.`, `..`, `:` or empty
//! components (a single trailing `/` is tolerated, as in HDFS).

use super::FsError;

/// Splits an absolute path into its components. `/` has none.
///
/// # Errors
/// [`FsError::InvalidPath`] for a relative path or a bad component.
pub fn components(path: &str) -> Result<Vec<&str>, FsError> {
    let invalid = || FsError::InvalidPath(format!("Invalid path name {path}"));
    let Some(rest) = path.strip_prefix('/') else {
        return Err(invalid());
    };
    if rest.starts_with('/') {
        return Err(invalid());
    }
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.is_empty() {
        return Ok(Vec::new());
    }
    let parts: Vec<&str> = rest.split('/').collect();
    for part in &parts {
        if part.is_empty() || *part == "." || *part == ".." || part.contains(':') {
            return Err(invalid());
        }
    }
    Ok(parts)
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
        assert_eq!(components("/").expect("root"), Vec::<&str>::new());
        assert_eq!(components("/a/b").expect("ok"), vec!["a", "b"]);
        assert_eq!(components("/a/b/").expect("ok"), vec!["a", "b"]);
        assert_eq!(join(&["a", "b"]), "/a/b");
        assert_eq!(join(&[] as &[&str]), "/");
    }

    #[test]
    fn invalid_paths() {
        for p in [
            "", "a/b", "/a//b", "/a/./b", "/a/../b", "/a:b", "//", "/a/..",
        ] {
            assert!(
                matches!(components(p), Err(FsError::InvalidPath(_))),
                "{p:?} must be invalid"
            );
        }
    }
}

//! Path strings as Hadoop's shell handles them (`PathData`, `Path`).
//!
//! A path argument is shown back to the user as typed while it does not
//! exist. Once it exists, it is shown the way Hadoop's glob expansion
//! rewrites it: an absolute path normalised, a relative one relativised to
//! the home directory (`rel/a/..` becomes `rel`, the home itself `.`), a
//! `scheme://authority/path` one qualified. A child of a listed directory is
//! shown as its parent's string plus `/name`. Every rule here is pure string
//! work, tested below.

/// A path argument split the way Hadoop's `PathData.stringToUri` splits it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ArgPath {
    /// `hdfs` in `hdfs://nn:8020/x`; present only when a `/` follows the
    /// colon directly.
    pub scheme: Option<String>,
    /// `nn:8020` in `hdfs://nn:8020/x`; `Some("")` for `hdfs:///x`.
    pub authority: Option<String>,
    /// The path part, as typed: `/x`, `x/y/`, `.`, or empty.
    pub path: String,
}

impl ArgPath {
    /// Splits `arg` into scheme, authority and path.
    pub(crate) fn parse(arg: &str) -> ArgPath {
        let mut start = 0;
        let mut scheme = None;
        if let (Some(colon), Some(slash)) = (arg.find(':'), arg.find('/')) {
            if colon > 0 && slash == colon + 1 {
                scheme = arg.get(..colon).map(str::to_owned);
                start = colon + 1;
            }
        }
        let mut authority = None;
        let rest = arg.get(start..).unwrap_or_default();
        if rest.starts_with("//") && rest.len() > 2 {
            let after = rest.get(2..).unwrap_or_default();
            let end = after.find('/').unwrap_or(after.len());
            authority = after.get(..end).map(str::to_owned);
            start += 2 + end;
        }
        ArgPath {
            scheme,
            authority,
            path: arg.get(start..).unwrap_or_default().to_owned(),
        }
    }
}

/// Resolves `path` against `home` when relative, then removes empty and
/// `.` components and applies `..` (never above the root).
pub(crate) fn absolute(home: &str, path: &str) -> String {
    let joined;
    let full = if path.starts_with('/') {
        path
    } else {
        joined = format!("{home}/{path}");
        &joined
    };
    let mut parts: Vec<&str> = Vec::new();
    for component in full.split('/') {
        match component {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The parent of an absolute normalised path; `None` for the root.
pub(crate) fn parent(path: &str) -> Option<&str> {
    if path == "/" {
        return None;
    }
    match path.rfind('/') {
        Some(0) => Some("/"),
        Some(i) => path.get(..i),
        None => None,
    }
}

/// The last component of an absolute normalised path; empty for the root.
pub(crate) fn name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or_default()
}

/// `dir/name` for an absolute normalised directory path.
pub(crate) fn join(dir: &str, name: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{name}")
    } else {
        format!("{dir}/{name}")
    }
}

/// How a child entry of a directory shown as `parent` is shown: the parent
/// string plus `/name`, or just `name` under `.` (Hadoop's
/// `PathData.getStringForChildPath`).
pub(crate) fn child_display(parent: &str, name: &str) -> String {
    if parent == "." {
        name.to_owned()
    } else if parent.ends_with('/') {
        format!("{parent}{name}")
    } else {
        format!("{parent}/{name}")
    }
}

/// Whether the typed path names a directory by its form (`x/`, `x/.`,
/// `..`): Hadoop checks these through the parent-or-self rules.
pub(crate) fn names_directory(typed_path: &str) -> bool {
    let last = typed_path.rsplit('/').next().unwrap_or_default();
    last.is_empty() || last == "." || last == ".."
}

/// `path` relative to the directory `cwd` (both absolute and normalised), as
/// Hadoop's `PathData.relativize`: `.` for `cwd` itself, `..` steps for
/// paths outside it.
pub(crate) fn relativize(cwd: &str, path: &str, is_dir: bool) -> String {
    if cwd == path {
        return ".".to_owned();
    }
    let last_sep = longest_dir_prefix(cwd, path, is_dir);
    let mut rel = String::new();
    let start = last_sep.map_or(0, |i| i + 1);
    if last_sep.is_none_or(|i| i < path.len()) {
        rel.push_str(path.get(start..).unwrap_or_default());
    }
    if last_sep.is_none_or(|i| i < cwd.len()) {
        let mut sep = last_sep;
        while let Some(i) = sep {
            if !rel.is_empty() {
                rel.insert(0, '/');
            }
            rel.insert_str(0, "..");
            sep = cwd
                .get(i + 1..)
                .and_then(|rest| rest.find('/'))
                .map(|j| i + 1 + j);
        }
    }
    rel
}

/// Index of the last `/` of the longest common directory prefix.
fn longest_dir_prefix(cwd: &str, path: &str, is_dir: bool) -> Option<usize> {
    let cwd = if cwd.ends_with('/') {
        cwd.to_owned()
    } else {
        format!("{cwd}/")
    };
    let path = if is_dir && !path.ends_with('/') {
        format!("{path}/")
    } else {
        path.to_owned()
    };
    let mut last_sep = None;
    for (i, (a, b)) in cwd.bytes().zip(path.bytes()).enumerate() {
        if a != b {
            break;
        }
        if a == b'/' {
            last_sep = Some(i);
        }
    }
    last_sep
}

/// Whether `pattern` is a glob for Hadoop: it has `*`, `?`, `[` or `{`
/// (a `\` escapes the next character).
pub(crate) fn has_glob(pattern: &str) -> bool {
    let mut escaped = false;
    for c in pattern.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '*' | '?' | '[' | '{' => return true,
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_split_like_path_data() {
        let p = ArgPath::parse("hdfs://nn:8020/a/b");
        assert_eq!(p.scheme.as_deref(), Some("hdfs"));
        assert_eq!(p.authority.as_deref(), Some("nn:8020"));
        assert_eq!(p.path, "/a/b");

        let p = ArgPath::parse("hdfs:///a");
        assert_eq!(
            (p.scheme.as_deref(), p.authority.as_deref()),
            (Some("hdfs"), Some(""))
        );
        assert_eq!(p.path, "/a");

        let p = ArgPath::parse("hdfs://nn");
        assert_eq!(p.authority.as_deref(), Some("nn"));
        assert_eq!(p.path, "");

        let p = ArgPath::parse("a:b/c");
        assert_eq!((p.scheme, p.authority), (None, None));
        assert_eq!(p.path, "a:b/c");

        let p = ArgPath::parse("//x");
        assert_eq!(
            p.authority.as_deref(),
            Some("x"),
            "authority without scheme"
        );
        assert_eq!(ArgPath::parse("//").path, "//");
    }

    #[test]
    fn absolute_paths_are_normalised() {
        assert_eq!(absolute("/user/u", "rel/a/.."), "/user/u/rel");
        assert_eq!(absolute("/user/u", "."), "/user/u");
        assert_eq!(absolute("/user/u", ""), "/user/u");
        assert_eq!(absolute("/user/u", "/a//b/"), "/a/b");
        assert_eq!(absolute("/user/u", "/../.."), "/");
        assert_eq!(absolute("/user/u", "../v/./x"), "/user/v/x");
    }

    #[test]
    fn parents_names_and_joins() {
        assert_eq!(parent("/a/b"), Some("/a"));
        assert_eq!(parent("/a"), Some("/"));
        assert_eq!(parent("/"), None);
        assert_eq!(name("/a/b"), "b");
        assert_eq!(name("/"), "");
        assert_eq!(join("/", "a"), "/a");
        assert_eq!(join("/a", "b"), "/a/b");
    }

    #[test]
    fn children_keep_the_parent_string() {
        assert_eq!(child_display("/conf", "a"), "/conf/a");
        assert_eq!(child_display("/", "a"), "/a");
        assert_eq!(child_display(".", "a"), "a");
        assert_eq!(child_display("rel", "a"), "rel/a");
        assert_eq!(child_display("hdfs://nn/", "a"), "hdfs://nn/a");
    }

    #[test]
    fn directory_forms() {
        assert!(names_directory("a/"));
        assert!(names_directory("a/."));
        assert!(names_directory(".."));
        assert!(names_directory(""));
        assert!(!names_directory("/a/b"));
    }

    #[test]
    fn relativize_like_hadoop() {
        assert_eq!(relativize("/user/u", "/user/u", true), ".");
        assert_eq!(relativize("/user/u", "/user/u/rel", true), "rel");
        assert_eq!(relativize("/user/u", "/user/u/rel/f", false), "rel/f");
        assert_eq!(relativize("/user/u", "/user", true), "..");
        assert_eq!(relativize("/user/u", "/", true), "../..");
        assert_eq!(relativize("/user/u", "/conf/a", true), "../../conf/a");
        assert_eq!(relativize("/user/u", "/user/v", false), "../v");
        assert_eq!(relativize("/user/u", "/user/uu", true), "../uu");
    }

    #[test]
    fn globs() {
        assert!(has_glob("/a/*"));
        assert!(has_glob("/a/{b,c}"));
        assert!(has_glob("/a/[bc]"));
        assert!(has_glob("f?"));
        assert!(!has_glob("/a/b"));
        assert!(!has_glob("/a/\\*"));
    }
}

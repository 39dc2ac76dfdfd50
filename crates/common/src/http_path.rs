//! Dot segments (`.`, `..`, also written `%2e`) in a request's path, as
//! HDFS's web server (Jetty) treats them: a request is routed by its path
//! with those segments resolved, so `/webhdfs/v1/..` is the page
//! `/webhdfs/` (not found) and `/logs/../jmx` is `/jmx`; a path whose `..`
//! climbs above the root is a bad request. WebHDFS reads the path as it
//! was sent, so a request whose resolved path is still WebHDFS's keeps its
//! own (`/webhdfs/v1/a/../b` asks for the file `/a/../b`, which HDFS's
//! path checks then refuse as not found, as Cairn's do).

/// The prefix of WebHDFS's requests, whose paths are read as sent.
const WEBHDFS_PREFIX: &str = "/webhdfs/v1";

/// How a request's path is to be routed.
#[derive(Debug, PartialEq, Eq)]
pub enum Routed {
    /// As it is.
    AsSent,
    /// By this path, its dot segments resolved.
    Resolved(String),
    /// A `..` climbs above the root: 400.
    AboveRoot,
}

/// Whether `segment` is `.` or `..`, percent-encoded dots included.
fn dots(segment: &str) -> Option<usize> {
    let mut rest = segment;
    let mut n = 0;
    while !rest.is_empty() {
        if let Some(r) = rest.strip_prefix('.') {
            rest = r;
        } else if rest.len() >= 3 && rest[..3].eq_ignore_ascii_case("%2e") {
            rest = &rest[3..];
        } else {
            return None;
        }
        n += 1;
    }
    (1..=2).contains(&n).then_some(n)
}

/// `path` with its dot segments resolved, or `None` when a `..` climbs
/// above the root. Empty segments (`//`) are kept, as Jetty keeps them.
fn resolve(path: &str) -> Option<String> {
    let mut kept: Vec<&str> = Vec::new();
    let mut trailing_slash = path.ends_with('/');
    let segments: Vec<&str> = path.strip_prefix('/').unwrap_or(path).split('/').collect();
    let last = segments.len().saturating_sub(1);
    for (i, segment) in segments.into_iter().enumerate() {
        match dots(segment) {
            Some(1) => {}
            Some(_) => {
                kept.pop()?;
            }
            None => {
                kept.push(segment);
                continue;
            }
        }
        // A path ending in a dot segment names a directory: `/a/..` is `/`.
        if i == last {
            trailing_slash = true;
        }
    }
    let mut resolved = String::with_capacity(path.len());
    for segment in &kept {
        resolved.push('/');
        resolved.push_str(segment);
    }
    if trailing_slash && !resolved.ends_with('/') {
        resolved.push('/');
    }
    Some(resolved)
}

/// How to route a request for `path` (the URI's path, still
/// percent-encoded).
pub fn route(path: &str) -> Routed {
    let has_dots = path.split('/').any(|segment| dots(segment).is_some());
    if !has_dots {
        return Routed::AsSent;
    }
    let Some(resolved) = resolve(path) else {
        return Routed::AboveRoot;
    };
    let under_webhdfs = |p: &str| {
        p.strip_prefix(WEBHDFS_PREFIX)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
    };
    if under_webhdfs(path) && under_webhdfs(&resolved) {
        return Routed::AsSent;
    }
    Routed::Resolved(resolved)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resolved(p: &str) -> Routed {
        Routed::Resolved(p.to_string())
    }

    #[test]
    fn plain_paths_are_routed_as_sent() {
        for p in [
            "/",
            "/jmx",
            "/webhdfs/v1/a/b",
            "//tmp",
            "/a/.hidden",
            "/a/...",
            "/a.b/c",
        ] {
            assert_eq!(route(p), Routed::AsSent, "{p}");
        }
    }

    #[test]
    fn dot_segments_are_resolved_for_routing() {
        assert_eq!(route("/webhdfs/v1/.."), resolved("/webhdfs/"));
        assert_eq!(route("/webhdfs/v1/%2e%2E"), resolved("/webhdfs/"));
        assert_eq!(route("/webhdfs/v1/a/../../.."), resolved("/"));
        assert_eq!(route("/logs/../jmx"), resolved("/jmx"));
        assert_eq!(route("/./webhdfs/v1/"), resolved("/webhdfs/v1/"));
        assert_eq!(route("/a/./b/."), resolved("/a/b/"));
    }

    #[test]
    fn webhdfs_paths_that_stay_webhdfs_keep_their_form() {
        for p in [
            "/webhdfs/v1/a/../b",
            "/webhdfs/v1/a/..",
            "/webhdfs/v1/./x",
            "/webhdfs/v1/a/%2e%2e/b",
        ] {
            assert_eq!(route(p), Routed::AsSent, "{p}");
        }
    }

    #[test]
    fn climbing_above_the_root_is_refused() {
        for p in ["/..", "/%2e%2e", "/a/../..", "/../webhdfs/v1/"] {
            assert_eq!(route(p), Routed::AboveRoot, "{p}");
        }
    }
}

//! Protected directories (`fs.protected.directories`): directories that
//! must not be deleted or renamed away while they hold anything, HDFS's
//! guard against a mistyped `rm -r` of a warehouse or a home. As HDFS's
//! `DFSUtil.checkProtectedDescendants`, a recursive delete or a rename of
//! a non-empty directory is refused when that directory, or a non-empty
//! directory below it, is protected; with
//! `dfs.protected.subdirectories.enable`, also anything below a protected
//! directory. The superuser is not exempt.

use std::collections::BTreeSet;

use super::{FsError, Namespace};

/// The configured protected directories.
#[derive(Debug, Clone, Default)]
pub struct ProtectedDirs {
    /// Normalised absolute paths, sorted: a directory's descendants are
    /// the range from `dir/` to `dir0` ('0' follows '/').
    dirs: BTreeSet<String>,
    /// `dfs.protected.subdirectories.enable`.
    subdirectories: bool,
}

impl ProtectedDirs {
    /// From the comma-separated `fs.protected.directories` (blank entries
    /// skipped; a trailing slash or repeated slashes normalised; entries
    /// that are not absolute paths ignored, as HDFS keeps only what it can
    /// match against a path).
    pub fn parse(list: &str, subdirectories: bool) -> ProtectedDirs {
        let dirs = list
            .split(',')
            .map(str::trim)
            .filter_map(normalise)
            .collect();
        ProtectedDirs {
            dirs,
            subdirectories,
        }
    }
}

fn normalise(entry: &str) -> Option<String> {
    if !entry.starts_with('/') {
        return None;
    }
    let parts: Vec<&str> = entry.split('/').filter(|p| !p.is_empty()).collect();
    Some(format!("/{}", parts.join("/")))
}

impl Namespace {
    /// Sets the protected directories (from the configuration).
    pub fn set_protected_dirs(&mut self, dirs: ProtectedDirs) {
        self.protected = dirs;
    }

    /// Refuses deleting or renaming the non-empty directory `src` when it
    /// or a non-empty directory below it is protected (or, with
    /// subdirectories protected, when it lies below a protected one).
    ///
    /// # Errors
    /// AccessControl, with HDFS's messages.
    pub(super) fn check_protected_descendants(&self, src: &str) -> Result<(), FsError> {
        let protected = &self.protected;
        if protected.dirs.is_empty() {
            return Ok(());
        }
        if protected.dirs.contains(src) {
            return Err(FsError::AccessControl(format!(
                "Cannot delete/rename non-empty protected directory {src}"
            )));
        }
        let base = src.trim_end_matches('/');
        let (from, to) = (format!("{base}/"), format!("{base}0"));
        for descendant in protected.dirs.range(from..to) {
            let found = self.resolve(descendant).ok().and_then(|r| r.last());
            let non_empty = found.is_some_and(|id| self.is_non_empty_dir(id));
            if non_empty {
                return Err(FsError::AccessControl(format!(
                    "Cannot delete/rename non-empty protected subdirectory {descendant}"
                )));
            }
        }
        if protected.subdirectories {
            let mut ancestor = base;
            while let Some((parent, _)) = ancestor.rsplit_once('/') {
                if protected.dirs.contains(parent) {
                    return Err(FsError::AccessControl(format!(
                        "Cannot delete/rename subdirectory under protected subdirectory {parent}"
                    )));
                }
                ancestor = parent;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::namespace::tests::{ns, root, NOW};

    fn protected(list: &str, subdirectories: bool) -> Namespace {
        let mut ns = ns();
        for d in ["/data/warehouse/t1/part", "/data/tmp/t", "/user/alice/x"] {
            ns.mkdirs(&root(), d, 0o755, true, NOW).expect("mkdirs");
        }
        ns.set_protected_dirs(ProtectedDirs::parse(list, subdirectories));
        ns
    }

    #[test]
    fn parse_normalises_and_skips_what_cannot_match() {
        let p = ProtectedDirs::parse(" /a/b/ , ,//c//d,relative,/", false);
        let dirs: Vec<&str> = p.dirs.iter().map(String::as_str).collect();
        assert_eq!(dirs, ["/", "/a/b", "/c/d"]);
        assert!(ProtectedDirs::parse("", false).dirs.is_empty());
    }

    #[test]
    fn non_empty_protected_directories_and_their_ancestors_stay() {
        let mut ns = protected("/data/warehouse,/user/alice/x", false);
        let refused = |r: Result<_, FsError>| match r {
            Err(FsError::AccessControl(m)) => m,
            other => panic!("expected a refusal, got {other:?}"),
        };
        assert_eq!(
            refused(ns.delete(&root(), "/data/warehouse", true, NOW)),
            "Cannot delete/rename non-empty protected directory /data/warehouse"
        );
        assert_eq!(
            refused(ns.delete(&root(), "/data", true, NOW)),
            "Cannot delete/rename non-empty protected subdirectory /data/warehouse"
        );
        assert!(matches!(
            ns.rename(&root(), "/data", "/moved", NOW),
            Err(FsError::AccessControl(m))
                if m == "Cannot delete/rename non-empty protected subdirectory /data/warehouse"
        ));
        assert!(matches!(
            ns.rename2(&root(), "/data/warehouse", "/w", false, NOW),
            Err(FsError::AccessControl(_))
        ));
        // An empty protected directory may go; so may what is beside one.
        assert!(ns
            .delete(&root(), "/user/alice/x", false, NOW)
            .expect("ok")
            .is_some());
        ns.mkdirs(&root(), "/user/alice/x", 0o755, true, NOW)
            .expect("mkdirs");
        assert!(ns
            .delete(&root(), "/user/alice/x", true, NOW)
            .expect("ok")
            .is_some());
        assert!(ns
            .delete(&root(), "/data/tmp", true, NOW)
            .expect("ok")
            .is_some());
        // Without subdirectory protection, what is inside may be moved.
        assert!(ns
            .delete(&root(), "/data/warehouse/t1", true, NOW)
            .expect("ok")
            .is_some());
        assert!(ns
            .delete(&root(), "/data", true, NOW)
            .expect("ok")
            .is_some());
    }

    #[test]
    fn subdirectories_of_protected_directories_stay_when_asked() {
        let mut ns = protected("/data/warehouse", true);
        assert!(matches!(
            ns.delete(&root(), "/data/warehouse/t1", true, NOW),
            Err(FsError::AccessControl(m))
                if m == "Cannot delete/rename subdirectory under protected subdirectory /data/warehouse"
        ));
        assert!(ns
            .delete(&root(), "/data/tmp", true, NOW)
            .expect("ok")
            .is_some());
    }
}

//! Users and groups of the local OS, as Hadoop's shell-based group mapping
//! sees them: the NameNode's permission checks and the DataNode's
//! superuser check for administrative calls both ask here.

/// Groups of a local user, primary group first; none for unknown users.
pub fn groups_of(user: &str) -> Vec<String> {
    let Ok(Some(pw)) = nix::unistd::User::from_name(user) else {
        return Vec::new();
    };
    let Ok(cname) = std::ffi::CString::new(user) else {
        return Vec::new();
    };
    let gids = nix::unistd::getgrouplist(&cname, pw.gid).unwrap_or_else(|_| vec![pw.gid]);
    let mut names = Vec::new();
    for gid in std::iter::once(pw.gid).chain(gids) {
        if let Ok(Some(g)) = nix::unistd::Group::from_gid(gid) {
            if !names.contains(&g.name) {
                names.push(g.name);
            }
        }
    }
    names
}

/// The name of the user this process runs as (`$USER`, else "cairn", when
/// the OS has no name for its uid).
pub fn process_user() -> String {
    nix::unistd::User::from_uid(nix::unistd::getuid())
        .ok()
        .flatten()
        .map(|u| u.name)
        .or_else(|| std::env::var("USER").ok())
        .unwrap_or_else(|| "cairn".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_process_user_has_its_primary_group_first() {
        let me = process_user();
        let groups = groups_of(&me);
        if let Ok(Some(pw)) = nix::unistd::User::from_name(&me) {
            let primary = nix::unistd::Group::from_gid(pw.gid).ok().flatten();
            assert_eq!(groups.first(), primary.map(|g| g.name).as_ref());
        }
        assert!(groups_of("no-such-user-cairn-test").is_empty());
    }
}

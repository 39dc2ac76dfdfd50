//! Users and groups: who the superuser is, and which groups a user belongs
//! to, looked up in the local OS (as Hadoop's shell-based group mapping
//! does) and cached for a while, because a lookup can be slow (NSS, LDAP).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::namespace::permission::Caller;

/// How long looked-up groups are reused (Hadoop `hadoop.security.groups.cache.secs`).
const GROUP_CACHE_TTL: Duration = Duration::from_secs(300);
/// Bound on cached users, so a stream of made-up user names costs nothing lasting.
const GROUP_CACHE_MAX: usize = 10_000;

/// A user's groups and when they were looked up.
type CachedGroups = (Instant, Arc<[String]>);

/// Resolves callers: superuser status and OS groups.
pub struct UserDirectory {
    superuser: String,
    supergroup: String,
    cache: Mutex<HashMap<String, CachedGroups>>,
}

impl UserDirectory {
    pub fn new(superuser: String, supergroup: String) -> Self {
        Self {
            superuser,
            supergroup,
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The user running this process: the NameNode's superuser.
    pub fn current_user() -> String {
        let uid = nix::unistd::geteuid();
        match nix::unistd::User::from_uid(uid) {
            Ok(Some(u)) => u.name,
            _ => std::env::var("USER").unwrap_or_else(|_| uid.to_string()),
        }
    }

    pub fn superuser(&self) -> &str {
        &self.superuser
    }

    pub fn supergroup(&self) -> &str {
        &self.supergroup
    }

    /// The caller with its groups and superuser status.
    pub fn caller(&self, user: &str) -> Caller {
        self.caller_shared(Arc::from(user))
    }

    /// [`UserDirectory::caller`] for a user name already shared (the
    /// connection's): runs on every call, so nothing is copied.
    pub fn caller_shared(&self, user: Arc<str>) -> Caller {
        let groups = self.groups(&user);
        let is_superuser = *user == *self.superuser || groups.contains(&self.supergroup);
        Caller {
            user,
            groups,
            is_superuser,
        }
    }

    fn groups(&self, user: &str) -> Arc<[String]> {
        if let Ok(cache) = self.cache.lock() {
            if let Some((at, groups)) = cache.get(user) {
                if at.elapsed() < GROUP_CACHE_TTL {
                    return groups.clone();
                }
            }
        }
        let groups: Arc<[String]> = cairn_common::local_users::groups_of(user).into();
        if let Ok(mut cache) = self.cache.lock() {
            if cache.len() >= GROUP_CACHE_MAX {
                cache.clear();
            }
            cache.insert(user.to_string(), (Instant::now(), groups.clone()));
        }
        groups
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn superuser_and_unknown_users() {
        let me = UserDirectory::current_user();
        let dir = UserDirectory::new(me.clone(), "supergroup".into());
        assert!(dir.caller(&me).is_superuser);
        let nobody = dir.caller("no-such-user-cairn-test");
        assert!(!nobody.is_superuser);
        assert!(nobody.groups.is_empty());
    }

    #[test]
    fn root_has_its_primary_group() {
        // Every Linux system has root with group root.
        let dir = UserDirectory::new("someone-else".into(), "supergroup".into());
        let root = dir.caller("root");
        assert!(root.groups.iter().any(|g| g == "root"), "{:?}", root.groups);
    }
}

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

/// Looked up on every call: foldhash (seeded per process, its quality
/// variant, as the names come from clients) instead of SipHash.
type GroupCache = HashMap<String, CachedGroups, foldhash::quality::RandomState>;

/// Resolves callers: superuser status and OS groups.
pub struct UserDirectory {
    superuser: String,
    supergroup: String,
    cache: Mutex<GroupCache>,
}

impl UserDirectory {
    pub fn new(superuser: String, supergroup: String) -> Self {
        Self {
            superuser,
            supergroup,
            cache: Mutex::new(GroupCache::default()),
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
    /// connection's): runs on every call, so nothing is copied. A cache
    /// miss looks the groups up on this thread: async code calls
    /// [`UserDirectory::caller_async`] instead.
    pub fn caller_shared(&self, user: Arc<str>) -> Caller {
        let groups = match self.cached(&user) {
            Some(groups) => groups,
            None => self.remember(&user, cairn_common::local_users::groups_of(&user)),
        };
        self.caller_with(user, groups)
    }

    /// [`UserDirectory::caller_shared`] for an async task: a cache miss
    /// looks the groups up on tokio's blocking pool, so a slow NSS or LDAP
    /// answer holds a blocking thread, not one of the few workers every
    /// connection shares. A lookup that panicked gives no groups (the
    /// caller gets less access, never more).
    pub async fn caller_async(&self, user: Arc<str>) -> Caller {
        let groups = match self.cached(&user) {
            Some(groups) => groups,
            None => {
                let name = user.to_string();
                let found = tokio::task::spawn_blocking(move || {
                    cairn_common::local_users::groups_of(&name)
                })
                .await
                .unwrap_or_default();
                self.remember(&user, found)
            }
        };
        self.caller_with(user, groups)
    }

    fn caller_with(&self, user: Arc<str>, groups: Arc<[String]>) -> Caller {
        let is_superuser = *user == *self.superuser || groups.contains(&self.supergroup);
        Caller {
            user,
            groups,
            is_superuser,
        }
    }

    /// Forgets every cached group list (`dfsadmin
    /// -refreshUserToGroupsMappings`): the next call of each user looks its
    /// groups up again.
    pub fn forget_groups(&self) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.clear();
        }
    }

    /// The user's groups if looked up less than the cache's lifetime ago.
    fn cached(&self, user: &str) -> Option<Arc<[String]>> {
        let cache = self.cache.lock().ok()?;
        let (at, groups) = cache.get(user)?;
        (at.elapsed() < GROUP_CACHE_TTL).then(|| groups.clone())
    }

    /// Caches groups just looked up; returns them.
    fn remember(&self, user: &str, groups: Vec<String>) -> Arc<[String]> {
        let groups: Arc<[String]> = groups.into();
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

    #[tokio::test]
    async fn the_async_lookup_agrees_and_fills_the_cache() {
        let dir = UserDirectory::new("someone-else".into(), "root".into());
        let root = dir.caller_async(Arc::from("root")).await;
        assert!(root.is_superuser, "root is in the supergroup root");
        assert!(dir.cached("root").is_some());
        assert_eq!(root.groups, dir.caller("root").groups);
        let nobody = dir.caller_async(Arc::from("no-such-user-cairn-test")).await;
        assert!(nobody.groups.is_empty() && !nobody.is_superuser);
        // refreshUserToGroupsMappings: the next call looks the groups up again.
        dir.forget_groups();
        assert!(dir.cached("root").is_none());
        assert!(dir.caller("root").is_superuser);
        assert!(dir.cached("root").is_some());
    }

    #[test]
    fn root_has_its_primary_group() {
        // Every Linux system has root with group root.
        let dir = UserDirectory::new("someone-else".into(), "supergroup".into());
        let root = dir.caller("root");
        assert!(root.groups.iter().any(|g| g == "root"), "{:?}", root.groups);
    }
}

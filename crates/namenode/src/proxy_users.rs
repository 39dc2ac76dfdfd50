//! Impersonation as Hadoop's `DefaultImpersonationProvider` allows it: a
//! real user `R` may act as user `U` when `hadoop.proxyuser.R.users` lists
//! `U` or `hadoop.proxyuser.R.groups` lists one of `U`'s groups (`*`: any),
//! and only from the addresses of `hadoop.proxyuser.R.hosts` (`*`, IPs,
//! CIDR ranges, host names). WebHDFS's `doas` and RPC connections that
//! name a real user are checked here. `dfsadmin
//! -refreshSuperUserGroupsConfiguration` reads the rules again from where
//! the NameNode read its configuration ([`ProxyUsers::reload`]).

use std::collections::HashMap;
use std::net::{IpAddr, ToSocketAddrs};
use std::sync::{Arc, RwLock};

use cairn_common::config::Configuration;
use cairn_common::webhdfs as web;

use crate::http::webhdfs::{WebError, WebRequest};
use crate::service::NameNodeState;

const PREFIX: &str = "hadoop.proxyuser.";

/// A list from one key: anything, or these entries.
#[derive(Debug, Clone, Default)]
enum Allowed {
    #[default]
    Nothing,
    Any,
    Some(Vec<String>),
}

impl Allowed {
    fn parse(value: &str) -> Allowed {
        let entries: Vec<String> = value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if entries.iter().any(|e| e == "*") {
            Allowed::Any
        } else {
            Allowed::Some(entries)
        }
    }
}

/// One real user's rules.
#[derive(Debug, Clone, Default)]
struct Rule {
    users: Allowed,
    groups: Allowed,
    hosts: Allowed,
}

/// Reads the configuration again (its files and start-up overrides).
type ConfSource = Arc<dyn Fn() -> Result<Configuration, String> + Send + Sync>;

/// Every `hadoop.proxyuser.*` rule. Clones share the rules, so a reload
/// reaches every holder.
#[derive(Clone, Default)]
pub struct ProxyUsers {
    rules: Arc<RwLock<Arc<HashMap<String, Rule>>>>,
    source: Option<ConfSource>,
}

impl std::fmt::Debug for ProxyUsers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProxyUsers")
            .field("rules", &self.current())
            .field("reloadable", &self.source.is_some())
            .finish()
    }
}

impl ProxyUsers {
    pub fn from_conf(conf: &Configuration) -> ProxyUsers {
        ProxyUsers {
            rules: Arc::new(RwLock::new(Arc::new(Self::rules_of(conf)))),
            source: None,
        }
    }

    /// Where [`ProxyUsers::reload`] reads the configuration from.
    pub fn set_source(
        &mut self,
        source: impl Fn() -> Result<Configuration, String> + Send + Sync + 'static,
    ) {
        self.source = Some(Arc::new(source));
    }

    /// Reads the rules again from the configuration source.
    ///
    /// # Errors
    /// No source was set, or it failed (the rules in force stay).
    pub fn reload(&self) -> Result<(), String> {
        let source = self
            .source
            .as_ref()
            .ok_or("this NameNode has no configuration files to read again")?;
        let rules = Self::rules_of(&source()?);
        let count = rules.len();
        let mut held = self
            .rules
            .write()
            .map_err(|_| "proxy-user rules lock poisoned".to_string())?;
        *held = Arc::new(rules);
        tracing::info!(real_users = count, "hadoop.proxyuser.* rules read again");
        Ok(())
    }

    fn current(&self) -> Arc<HashMap<String, Rule>> {
        match self.rules.read() {
            Ok(r) => Arc::clone(&r),
            Err(p) => Arc::clone(&p.into_inner()),
        }
    }

    fn rules_of(conf: &Configuration) -> HashMap<String, Rule> {
        let mut rules: HashMap<String, Rule> = HashMap::new();
        for (key, value) in conf.iter() {
            let Some(rest) = key.strip_prefix(PREFIX) else {
                continue;
            };
            let Some((user, kind)) = rest.rsplit_once('.') else {
                continue;
            };
            let rule = rules.entry(user.to_string()).or_default();
            match kind {
                "users" => rule.users = Allowed::parse(value),
                "groups" => rule.groups = Allowed::parse(value),
                "hosts" => rule.hosts = Allowed::parse(value),
                _ => {}
            }
        }
        rules
    }

    /// Whether `real` may act as `user` (whose groups are `groups`) from
    /// `addr`; HDFS's AuthorizationException message when not.
    pub fn check(
        &self,
        real: &str,
        user: &str,
        groups: &[String],
        addr: IpAddr,
    ) -> Result<(), String> {
        let denied = || format!("User: {real} is not allowed to impersonate {user}");
        let rules = self.current();
        let rule = rules.get(real).ok_or_else(denied)?;
        let user_ok = match &rule.users {
            Allowed::Any => true,
            Allowed::Some(list) => list.iter().any(|u| u == user),
            Allowed::Nothing => false,
        };
        let group_ok = match &rule.groups {
            Allowed::Any => true,
            Allowed::Some(list) => groups.iter().any(|g| list.contains(g)),
            Allowed::Nothing => false,
        };
        if !user_ok && !group_ok {
            return Err(denied());
        }
        let host_ok = match &rule.hosts {
            Allowed::Any => true,
            Allowed::Some(list) => list.iter().any(|h| host_matches(h, addr)),
            Allowed::Nothing => false,
        };
        if !host_ok {
            return Err(format!(
                "Unauthorized connection for super-user: {real} from IP {addr}"
            ));
        }
        Ok(())
    }

    /// WebHDFS's `doas`: refused with HDFS's 403 unless a rule allows it.
    ///
    /// # Errors
    /// The AuthorizationException (wrapped in a SecurityException for the
    /// static user, as HDFS's `JspHelper.getUGI` does).
    pub fn authorize(&self, state: &NameNodeState, req: &WebRequest) -> Result<(), WebError> {
        let Some(doas) = &req.doas else {
            return Ok(());
        };
        let real = req
            .user_param
            .clone()
            .unwrap_or_else(|| crate::http::webhdfs::STATIC_USER.to_string());
        if doas == &real {
            return Ok(());
        }
        let groups = state.users.caller(doas).groups;
        let Err(message) = self.check(&real, doas, &groups, req.peer.ip()) else {
            return Ok(());
        };
        Err(if req.user_param.is_some() {
            WebError::new(web::AUTHORIZATION, message)
        } else {
            WebError::new(
                web::SECURITY,
                format!(
                    "Failed to obtain user group information: {}: {message}",
                    web::AUTHORIZATION
                ),
            )
        })
    }
}

/// One `hosts` entry against the caller's address: an IP, a CIDR range,
/// or a host name resolved now.
fn host_matches(entry: &str, addr: IpAddr) -> bool {
    if let Ok(ip) = entry.parse::<IpAddr>() {
        return ip == addr;
    }
    if let Some((net, bits)) = entry.split_once('/') {
        let (Ok(net), Ok(bits)) = (net.parse::<IpAddr>(), bits.parse::<u32>()) else {
            return false;
        };
        return in_cidr(net, bits, addr);
    }
    (entry, 0u16)
        .to_socket_addrs()
        .map(|mut addrs| addrs.any(|a| a.ip() == addr))
        .unwrap_or(false)
}

fn in_cidr(net: IpAddr, bits: u32, addr: IpAddr) -> bool {
    match (net, addr) {
        (IpAddr::V4(n), IpAddr::V4(a)) if bits <= 32 => {
            let mask = u32::MAX.checked_shl(32 - bits).unwrap_or(0);
            u32::from(n) & mask == u32::from(a) & mask
        }
        (IpAddr::V6(n), IpAddr::V6(a)) if bits <= 128 => {
            let mask = u128::MAX.checked_shl(128 - bits).unwrap_or(0);
            u128::from(n) & mask == u128::from(a) & mask
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pairs: &[(&str, &str)]) -> ProxyUsers {
        let mut conf = Configuration::new();
        for (k, v) in pairs {
            conf.set(k, v);
        }
        ProxyUsers::from_conf(&conf)
    }

    #[test]
    fn reload_reads_the_rules_again_for_every_holder() {
        let local: IpAddr = "127.0.0.1".parse().expect("ip");
        let mut p = rules(&[]);
        assert!(p.reload().is_err(), "no source: nothing to read again");
        let files = Arc::new(std::sync::Mutex::new(Configuration::new()));
        let source = Arc::clone(&files);
        p.set_source(move || Ok(source.lock().map_err(|e| e.to_string())?.clone()));
        let held = p.clone();
        assert!(held.check("hue", "alice", &[], local).is_err());
        files
            .lock()
            .expect("conf")
            .set("hadoop.proxyuser.hue.users", "alice");
        files
            .lock()
            .expect("conf")
            .set("hadoop.proxyuser.hue.hosts", "*");
        p.reload().expect("reload");
        assert!(held.check("hue", "alice", &[], local).is_ok());
        assert!(held.check("hue", "bob", &[], local).is_err());
    }

    #[test]
    fn users_groups_and_hosts_as_hadoop() {
        let local: IpAddr = "127.0.0.1".parse().expect("ip");
        let p = rules(&[
            ("hadoop.proxyuser.hue.users", "alice"),
            ("hadoop.proxyuser.hue.groups", "staff"),
            ("hadoop.proxyuser.hue.hosts", "10.0.0.0/8,127.0.0.1"),
            ("hadoop.proxyuser.oozie.groups", "*"),
            ("hadoop.proxyuser.oozie.hosts", "*"),
        ]);
        assert!(p.check("hue", "alice", &[], local).is_ok());
        assert!(p.check("hue", "bob", &["staff".into()], local).is_ok());
        assert_eq!(
            p.check("hue", "bob", &[], local),
            Err("User: hue is not allowed to impersonate bob".into())
        );
        assert!(p
            .check("hue", "alice", &[], "10.1.2.3".parse().expect("ip"))
            .is_ok());
        assert_eq!(
            p.check("hue", "alice", &[], "192.168.0.1".parse().expect("ip")),
            Err("Unauthorized connection for super-user: hue from IP 192.168.0.1".into())
        );
        assert!(p.check("oozie", "anyone", &[], local).is_ok());
        assert!(p.check("nobody", "alice", &[], local).is_err());
        // No hosts key: no address is allowed.
        let p = rules(&[("hadoop.proxyuser.x.users", "*")]);
        assert!(p.check("x", "y", &[], local).is_err());
    }
}

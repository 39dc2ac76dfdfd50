//! Impersonation as Hadoop's `DefaultImpersonationProvider` allows it: a
//! real user `R` may act as user `U` when `hadoop.proxyuser.R.users` lists
//! `U` or `hadoop.proxyuser.R.groups` lists one of `U`'s groups (`*`: any),
//! and only from the addresses of `hadoop.proxyuser.R.hosts` (`*`, IPs,
//! CIDR ranges, host names). WebHDFS's `doas` is checked here.

use std::collections::HashMap;
use std::net::{IpAddr, ToSocketAddrs};

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

/// Every `hadoop.proxyuser.*` rule.
#[derive(Debug, Clone, Default)]
pub struct ProxyUsers {
    rules: HashMap<String, Rule>,
}

impl ProxyUsers {
    pub fn from_conf(conf: &Configuration) -> ProxyUsers {
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
        ProxyUsers { rules }
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
        let rule = self.rules.get(real).ok_or_else(denied)?;
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

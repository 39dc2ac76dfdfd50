//! HA nameservices as HDFS configures them: `dfs.nameservices` lists the
//! logical names, `dfs.ha.namenodes.<ns>` the NameNode ids of one, and
//! `dfs.namenode.rpc-address.<ns>.<nn>` where each serves RPC. A
//! nameservice is highly available when it names two NameNodes or more
//! (HDFS's `HAUtil.isHAEnabled`); clients fail over among them, and
//! `haadmin`-style tools address them by id.

use super::{value, ConfigError, Configuration, HostPort, NAMENODE_RPC_PORT_DEFAULT};

/// `dfs.nameservices`.
pub const DFS_NAMESERVICES: &str = "dfs.nameservices";
/// `dfs.nameservice.id`: which of several nameservices this node is in.
pub const DFS_NAMESERVICE_ID: &str = "dfs.nameservice.id";
/// Prefix of `dfs.ha.namenodes.<ns>`.
pub const DFS_HA_NAMENODES_PREFIX: &str = "dfs.ha.namenodes.";

/// One NameNode of a nameservice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HaNameNode {
    /// Its id in `dfs.ha.namenodes.<ns>`.
    pub id: String,
    /// `dfs.namenode.rpc-address.<ns>.<id>`.
    pub rpc_address: HostPort,
}

/// `dfs.ha.namenode.id`: which NameNode of the nameservice this process is.
pub const DFS_HA_NAMENODE_ID: &str = "dfs.ha.namenode.id";

/// The per-NameNode keys ([`Configuration::use_own_namenode_keys`]).
const NAMENODE_SPECIFIC_KEYS: [&str; 3] = [
    crate::keys::DFS_NAMENODE_RPC_ADDRESS,
    crate::keys::DFS_NAMENODE_HTTP_ADDRESS,
    "dfs.namenode.servicerpc-address",
];

impl Configuration {
    /// HDFS's `NameNode.initializeGenericKeys`: in a NameNode process
    /// whose `dfs.ha.namenode.id` names it, each per-NameNode key set for
    /// it (`dfs.namenode.rpc-address.<ns>.<nn>`, `...http-address...`)
    /// becomes the generic key's value, so a NameNode listens where the
    /// nameservice says without flags. Nothing changes without a
    /// nameservice or an id.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] if substitution failed.
    pub fn use_own_namenode_keys(&mut self) -> Result<(), ConfigError> {
        let Some(ns) = self.nameservice()? else {
            return Ok(());
        };
        let Some(nn) = self
            .get_str(DFS_HA_NAMENODE_ID)?
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
        else {
            return Ok(());
        };
        for key in NAMENODE_SPECIFIC_KEYS {
            let own = self
                .get_str(&format!("{key}.{ns}.{nn}"))?
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string);
            if let Some(v) = own {
                self.set(key, &v);
            }
        }
        Ok(())
    }

    /// The nameservice this configuration is about: `dfs.nameservice.id`
    /// if set, else the only entry of `dfs.nameservices`; none when there
    /// is no nameservice or several without a choice.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] if substitution failed.
    pub fn nameservice(&self) -> Result<Option<String>, ConfigError> {
        if let Some(id) = self.get_str(DFS_NAMESERVICE_ID)? {
            if !id.trim().is_empty() {
                return Ok(Some(id.trim().to_string()));
            }
        }
        let all = self.get_strings(DFS_NAMESERVICES)?;
        Ok(match all.as_slice() {
            [only] => Some(only.clone()),
            _ => None,
        })
    }

    /// The NameNodes of nameservice `ns` with their RPC addresses, in the
    /// order `dfs.ha.namenodes.<ns>` lists them (empty if it is unset).
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming `dfs.namenode.rpc-address.<ns>.<nn>`
    /// when one is missing or malformed.
    pub fn ha_namenodes(&self, ns: &str) -> Result<Vec<HaNameNode>, ConfigError> {
        let ids = self.get_strings(&format!("{DFS_HA_NAMENODES_PREFIX}{ns}"))?;
        ids.into_iter()
            .map(|id| {
                let key = format!("{}.{ns}.{id}", crate::keys::DFS_NAMENODE_RPC_ADDRESS);
                let Some(text) = self.get_str(&key)?.filter(|v| !v.trim().is_empty()) else {
                    return Err(self.invalid_value(
                        &key,
                        "",
                        "every NameNode of an HA nameservice needs an RPC address",
                    ));
                };
                let rpc_address = value::parse_host_port(text, Some(NAMENODE_RPC_PORT_DEFAULT))
                    .map_err(|reason| self.invalid_value(&key, text, reason))?;
                Ok(HaNameNode { id, rpc_address })
            })
            .collect()
    }

    /// Whether this configuration puts the node in an HA nameservice (one
    /// of two NameNodes or more).
    ///
    /// # Errors
    ///
    /// As [`Configuration::ha_namenodes`].
    pub fn is_ha_enabled(&self) -> Result<bool, ConfigError> {
        Ok(match self.nameservice()? {
            Some(ns) => self.ha_namenodes(&ns)?.len() >= 2,
            None => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_namenodes_make_an_ha_nameservice() {
        let mut c = Configuration::new();
        assert!(!c.is_ha_enabled().expect("parses"));
        c.set(DFS_NAMESERVICES, "ns1");
        c.set("dfs.ha.namenodes.ns1", "nn1, nn2");
        c.set("dfs.namenode.rpc-address.ns1.nn1", "127.0.0.1:9000");
        c.set("dfs.namenode.rpc-address.ns1.nn2", "localhost");
        let nns = c.ha_namenodes("ns1").expect("parses");
        assert_eq!(nns.len(), 2);
        assert_eq!(nns[1].id, "nn2");
        assert_eq!(nns[1].rpc_address.port(), NAMENODE_RPC_PORT_DEFAULT);
        assert!(c.is_ha_enabled().expect("parses"));
        c.set("dfs.ha.namenodes.ns1", "nn1, nn3");
        let e = c
            .ha_namenodes("ns1")
            .expect_err("nn3 has no address")
            .to_string();
        assert!(e.contains("dfs.namenode.rpc-address.ns1.nn3"), "{e}");
    }

    #[test]
    fn a_namenode_takes_its_own_addresses_from_the_nameservice() {
        let mut c = Configuration::new();
        c.set("dfs.namenode.http-address", "0.0.0.0:9870");
        c.use_own_namenode_keys().expect("no nameservice");
        assert_eq!(c.get("dfs.namenode.http-address"), Some("0.0.0.0:9870"));
        c.set(DFS_NAMESERVICES, "ns1");
        c.set("dfs.ha.namenodes.ns1", "nn1,nn2");
        c.set("dfs.namenode.rpc-address.ns1.nn2", "127.0.0.1:9002");
        c.set("dfs.namenode.http-address.ns1.nn2", "127.0.0.1:9872");
        c.use_own_namenode_keys().expect("no id");
        assert_eq!(c.get("dfs.namenode.rpc-address"), None);
        c.set(DFS_HA_NAMENODE_ID, "nn2");
        c.use_own_namenode_keys().expect("nn2");
        assert_eq!(c.get("dfs.namenode.rpc-address"), Some("127.0.0.1:9002"));
        assert_eq!(c.get("dfs.namenode.http-address"), Some("127.0.0.1:9872"));
        assert_eq!(c.get("dfs.namenode.servicerpc-address"), None);
    }
}

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

impl Configuration {
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
}

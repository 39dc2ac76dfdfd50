//! Which NameNodes a DataNode serves, worked out from the configuration
//! as HDFS's `DFSUtil.getNNServiceRpcAddressesForCluster` does: the
//! nameservice named by `dfs.internal.nameservices` (else
//! `dfs.nameservices`), its NameNodes in `dfs.ha.namenodes.<ns>`, and for
//! each `dfs.namenode.servicerpc-address.<ns>.<nn>`, else
//! `dfs.namenode.rpc-address.<ns>.<nn>`. A DataNode serves one block
//! pool, so one nameservice (federation is not supported).

use std::net::SocketAddr;

use cairn_common::config::{ConfigError, Configuration};

/// `dfs.nameservices`: the nameservices the cluster knows.
pub const DFS_NAMESERVICES: &str = "dfs.nameservices";
/// `dfs.internal.nameservices`: the ones this cluster's DataNodes serve.
pub const DFS_INTERNAL_NAMESERVICES: &str = "dfs.internal.nameservices";
/// `dfs.ha.namenodes.<ns>`: the NameNode ids of a nameservice.
pub const DFS_HA_NAMENODES_PREFIX: &str = "dfs.ha.namenodes";
/// `dfs.namenode.servicerpc-address[.<ns>[.<nn>]]`: where DataNodes call.
pub const DFS_NAMENODE_SERVICE_RPC_ADDRESS: &str = "dfs.namenode.servicerpc-address";
/// `dfs.namenode.rpc-address[.<ns>[.<nn>]]`: the client address, used by
/// DataNodes when no service address is set.
pub const DFS_NAMENODE_RPC_ADDRESS: &str = "dfs.namenode.rpc-address";

/// The NameNodes of the configured nameservice, in `dfs.ha.namenodes`
/// order; `None` when no nameservice is configured (the caller then uses
/// the single NameNode of `dfs.namenode.rpc-address` / `fs.defaultFS`).
///
/// # Errors
/// [`ConfigError::InvalidValue`] for several nameservices, a NameNode with
/// no address, or an address that is not `host:port`.
pub fn namenode_addresses(conf: &Configuration) -> Result<Option<Vec<SocketAddr>>, ConfigError> {
    let mut key = DFS_INTERNAL_NAMESERVICES;
    let mut services = conf.get_strings(key)?;
    if services.is_empty() {
        key = DFS_NAMESERVICES;
        services = conf.get_strings(key)?;
    }
    let ns = match services.as_slice() {
        [] => return Ok(None),
        [one] => one,
        _ => {
            return Err(conf.invalid_value(
                key,
                services.join(","),
                "a Cairn DataNode serves one nameservice (federation is not supported); \
                 name it in dfs.internal.nameservices",
            ))
        }
    };
    let ids = conf.get_strings(&format!("{DFS_HA_NAMENODES_PREFIX}.{ns}"))?;
    let suffixes: Vec<String> = if ids.is_empty() {
        vec![ns.clone()]
    } else {
        ids.iter().map(|nn| format!("{ns}.{nn}")).collect()
    };
    let mut out = Vec::with_capacity(suffixes.len());
    for suffix in suffixes {
        let service = format!("{DFS_NAMENODE_SERVICE_RPC_ADDRESS}.{suffix}");
        let rpc = format!("{DFS_NAMENODE_RPC_ADDRESS}.{suffix}");
        let key = [&service, &rpc]
            .into_iter()
            .find(|k| conf.get(k).is_some_and(|v| !v.trim().is_empty()))
            .ok_or_else(|| {
                conf.invalid_value(
                    &rpc,
                    "",
                    format!(
                        "Incorrect configuration: namenode address {service} or {rpc} \
                         is not configured"
                    ),
                )
            })?;
        out.push(conf.get_socket_addr(key, "")?);
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf(pairs: &[(&str, &str)]) -> Configuration {
        let mut c = Configuration::new();
        for (k, v) in pairs {
            c.set(k, v);
        }
        c
    }

    #[test]
    fn no_nameservice_means_the_single_namenode_path() {
        assert_eq!(namenode_addresses(&conf(&[])).ok(), Some(None));
    }

    #[test]
    fn service_rpc_address_wins_over_rpc_address_per_namenode() {
        let c = conf(&[
            ("dfs.nameservices", "ns1"),
            ("dfs.ha.namenodes.ns1", "nn1, nn2"),
            ("dfs.namenode.rpc-address.ns1.nn1", "127.0.0.1:8020"),
            ("dfs.namenode.servicerpc-address.ns1.nn1", "127.0.0.1:8021"),
            ("dfs.namenode.rpc-address.ns1.nn2", "127.0.0.2:8020"),
        ]);
        let got = namenode_addresses(&c).ok().flatten();
        let want: Vec<SocketAddr> = vec![
            "127.0.0.1:8021".parse().expect("addr"),
            "127.0.0.2:8020".parse().expect("addr"),
        ];
        assert_eq!(got, Some(want));
    }

    #[test]
    fn internal_nameservices_picks_one_of_several() {
        let c = conf(&[
            ("dfs.nameservices", "ns1,remote"),
            ("dfs.internal.nameservices", "ns1"),
            ("dfs.namenode.rpc-address.ns1", "127.0.0.1:9000"),
        ]);
        assert_eq!(
            namenode_addresses(&c).ok().flatten().map(|v| v.len()),
            Some(1)
        );
        let both = conf(&[("dfs.nameservices", "ns1,ns2")]);
        assert!(namenode_addresses(&both).is_err());
    }

    #[test]
    fn a_namenode_without_an_address_is_an_error_naming_the_keys() {
        let c = conf(&[
            ("dfs.nameservices", "ns1"),
            ("dfs.ha.namenodes.ns1", "nn1,nn2"),
            ("dfs.namenode.rpc-address.ns1.nn1", "127.0.0.1:8020"),
        ]);
        let e = namenode_addresses(&c).err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("dfs.namenode.rpc-address.ns1.nn2")),
            "{e:?}"
        );
    }
}

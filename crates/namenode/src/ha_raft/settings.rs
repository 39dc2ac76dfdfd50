//! Which Raft group a NameNode belongs to, from the nameservice HDFS
//! clients already configure (`dfs.nameservices`, `dfs.ha.namenodes.<ns>`)
//! plus one Cairn key per member naming the address its Raft messages go
//! to, and HDFS's `dfs.ha.namenode.id` for which member this process is.
//! A nameservice without Raft addresses keeps the single-journal NameNode
//! (and t55's manual HA between NameNodes that share nothing).

use std::collections::BTreeMap;
use std::time::Duration;

use cairn_common::config::{ConfigError, Configuration, TimeUnit};

use crate::journal::raft::member::MemberTiming;
use crate::journal::raft::snapshot::SnapshotSettings;
use crate::journal::raft::NodeId;

/// Prefix of `cairn.namenode.raft-address.<ns>.<nn>`: where member `<nn>`
/// of nameservice `<ns>` takes Raft messages (HOST:PORT).
pub const CAIRN_RAFT_ADDRESS_PREFIX: &str = "cairn.namenode.raft-address";
/// Which NameNode of the nameservice this process is (HDFS's key).
pub use cairn_common::config::DFS_HA_NAMENODE_ID;
/// Raft heartbeat interval, milliseconds (default 150).
pub const CAIRN_RAFT_HEARTBEAT: &str = "cairn.namenode.raft.heartbeat-interval";
/// Lowest election timeout, milliseconds (default 600; the highest is
/// twice it).
pub const CAIRN_RAFT_ELECTION_TIMEOUT: &str = "cairn.namenode.raft.election-timeout";
/// Raft log entries between snapshots (checkpoints); 0 turns them off.
pub const CAIRN_RAFT_SNAPSHOT_ENTRIES: &str = "cairn.namenode.raft.snapshot.entries";
/// Raft log entries kept behind the newest snapshot.
pub const CAIRN_RAFT_SNAPSHOT_KEEP: &str = "cairn.namenode.raft.snapshot.keep-entries";

/// This NameNode's place in its Raft group.
#[derive(Debug, Clone)]
pub struct RaftSettings {
    /// The nameservice.
    pub nameservice: String,
    /// This member's NameNode id (`nn1`) and Raft node id (its position in
    /// `dfs.ha.namenodes.<ns>`, from 1).
    pub name: String,
    pub id: NodeId,
    /// Every member's Raft address by node id, this one's included.
    pub members: BTreeMap<NodeId, String>,
    pub timing: MemberTiming,
    pub snapshots: SnapshotSettings,
}

/// One member of a Raft nameservice, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Its id in `dfs.ha.namenodes.<ns>`.
    pub name: String,
    /// Its Raft node id (position in that list, from 1).
    pub id: NodeId,
    pub raft_address: String,
}

impl RaftSettings {
    /// The settings, or `None` when the configuration names no Raft
    /// addresses for its nameservice.
    ///
    /// # Errors
    /// When some members have a Raft address and others not, or
    /// `dfs.ha.namenode.id` is missing or names no member.
    pub fn from_conf(conf: &Configuration) -> Result<Option<Self>, ConfigError> {
        let Some(ns) = conf.nameservice()? else {
            return Ok(None);
        };
        let Some(listed) = Self::members_of(conf)? else {
            return Ok(None);
        };
        let names = conf.ha_namenodes(&ns)?;
        let members: BTreeMap<NodeId, String> = listed
            .iter()
            .map(|m| (m.id, m.raft_address.clone()))
            .collect();
        let me = conf
            .get_str(DFS_HA_NAMENODE_ID)?
            .map(str::trim)
            .unwrap_or("")
            .to_string();
        let Some(pos) = names.iter().position(|n| n.id == me) else {
            let ids: Vec<&str> = names.iter().map(|n| n.id.as_str()).collect();
            return Err(conf.invalid_value(
                DFS_HA_NAMENODE_ID,
                &me,
                format!(
                    "must name this NameNode among dfs.ha.namenodes.{ns} ({})",
                    ids.join(", ")
                ),
            ));
        };
        let heartbeat = conf.get_duration(
            CAIRN_RAFT_HEARTBEAT,
            TimeUnit::Milliseconds,
            Duration::from_millis(150),
        )?;
        let election = conf.get_duration(
            CAIRN_RAFT_ELECTION_TIMEOUT,
            TimeUnit::Milliseconds,
            Duration::from_millis(600),
        )?;
        let defaults = SnapshotSettings::default();
        let snapshots = SnapshotSettings {
            every_entries: conf.get_u64(CAIRN_RAFT_SNAPSHOT_ENTRIES, defaults.every_entries)?,
            keep_entries: conf.get_u64(CAIRN_RAFT_SNAPSHOT_KEEP, defaults.keep_entries)?,
        };
        Ok(Some(Self {
            nameservice: ns,
            name: me,
            id: pos as NodeId + 1,
            members,
            timing: MemberTiming {
                heartbeat,
                election_min: election,
                election_max: election * 2,
            },
            snapshots,
        }))
    }

    /// The members of the configured Raft nameservice: name, node id
    /// (position in `dfs.ha.namenodes.<ns>`, from 1) and Raft address;
    /// `None` when it names no Raft addresses.
    ///
    /// # Errors
    /// When some members have a Raft address and others not.
    pub fn members_of(conf: &Configuration) -> Result<Option<Vec<Member>>, ConfigError> {
        let Some(ns) = conf.nameservice()? else {
            return Ok(None);
        };
        let names = conf.ha_namenodes(&ns)?;
        let mut members = Vec::new();
        let mut missing = Vec::new();
        for (i, nn) in names.iter().enumerate() {
            let key = format!("{CAIRN_RAFT_ADDRESS_PREFIX}.{ns}.{}", nn.id);
            match conf.get_str(&key)?.map(str::trim).filter(|v| !v.is_empty()) {
                Some(addr) => members.push(Member {
                    name: nn.id.clone(),
                    id: i as NodeId + 1,
                    raft_address: addr.to_string(),
                }),
                None => missing.push(key),
            }
        }
        if members.is_empty() {
            return Ok(None);
        }
        if let Some(key) = missing.first() {
            return Err(conf.invalid_value(
                key,
                "",
                "every NameNode of a Raft nameservice needs a Raft address",
            ));
        }
        Ok(Some(members))
    }

    /// This member's own Raft address.
    pub fn own_address(&self) -> &str {
        self.members.get(&self.id).map(String::as_str).unwrap_or("")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nameservice() -> Configuration {
        let mut c = Configuration::new();
        c.set("dfs.nameservices", "ns1");
        c.set("dfs.ha.namenodes.ns1", "nn1,nn2,nn3");
        for (i, nn) in ["nn1", "nn2", "nn3"].iter().enumerate() {
            c.set(
                &format!("dfs.namenode.rpc-address.ns1.{nn}"),
                &format!("127.0.0.1:{}", 9000 + i),
            );
        }
        c
    }

    #[test]
    fn members_come_from_the_nameservice() {
        let mut c = nameservice();
        assert!(RaftSettings::from_conf(&c).expect("parses").is_none());
        for (i, nn) in ["nn1", "nn2", "nn3"].iter().enumerate() {
            c.set(
                &format!("{CAIRN_RAFT_ADDRESS_PREFIX}.ns1.{nn}"),
                &format!("127.0.0.1:{}", 7000 + i),
            );
        }
        let e = RaftSettings::from_conf(&c).expect_err("no id").to_string();
        assert!(e.contains(DFS_HA_NAMENODE_ID), "{e}");
        c.set(DFS_HA_NAMENODE_ID, "nn2");
        let s = RaftSettings::from_conf(&c).expect("parses").expect("raft");
        assert_eq!(s.id, 2);
        assert_eq!(s.own_address(), "127.0.0.1:7001");
        assert_eq!(s.members.len(), 3);
        assert_eq!(s.timing.election_max, Duration::from_millis(1200));
    }

    #[test]
    fn a_member_without_an_address_is_an_error() {
        let mut c = nameservice();
        c.set(
            &format!("{CAIRN_RAFT_ADDRESS_PREFIX}.ns1.nn1"),
            "127.0.0.1:7000",
        );
        c.set(DFS_HA_NAMENODE_ID, "nn1");
        let e = RaftSettings::from_conf(&c)
            .expect_err("nn2 missing")
            .to_string();
        assert!(e.contains("raft-address.ns1.nn2"), "{e}");
    }
}

//! `cairn namenode -bootstrapStandby`: prepares the metadata directories
//! of a NameNode joining an existing Raft nameservice, as HDFS's command
//! of that name does for a new standby: the namespace identity (cluster
//! id, namespace id, block pool id, creation time) comes from another
//! NameNode of the nameservice (`versionRequest`, the call DataNodes
//! start with), the directories are formatted with it and marked as
//! joining. The namespace itself arrives once `cairn admin -addNameNode`
//! adds the member: the leader's snapshot, then its log.

use std::time::Duration;

use anyhow::{bail, Context};
use cairn_common::config::Configuration;
use cairn_common::keys;
use cairn_namenode::storage::VersionInfo;
use cairn_proto::hadoop::hdfs::{VersionRequestProto, VersionResponseProto};
use cairn_proto::protocols::DATANODE_PROTOCOL;
use cairn_rpc::client::Client;

/// How long one NameNode gets to answer.
const ASK_LIMIT: Duration = Duration::from_secs(10);

pub async fn run(mut conf: Configuration, dir: Option<String>, force: bool) -> anyhow::Result<()> {
    if let Some(d) = &dir {
        conf.set(keys::DFS_NAMENODE_NAME_DIR, d);
    }
    let config = cairn_namenode::config::NameNodeConfig::from_conf(&conf)?;
    let Some(raft) = config.raft.clone() else {
        bail!(
            "-bootstrapStandby needs a Raft nameservice (dfs.nameservices, \
             cairn.namenode.raft-address.<ns>.<nn>, dfs.ha.namenode.id)"
        );
    };
    let user = cairn_namenode::users::UserDirectory::current_user();
    let mut tried = Vec::new();
    for nn in conf.ha_namenodes(&raft.nameservice)? {
        if nn.id == raft.name {
            continue;
        }
        match identity_from(&nn.rpc_address, &user).await {
            Ok(info) => {
                // Not over the directories of a NameNode running on them.
                for d in &config.name_dirs {
                    std::fs::create_dir_all(d)?;
                }
                let _locks = cairn_common::dir_lock::lock_existing(&config.name_dirs)?;
                cairn_namenode::ha_raft::bootstrap_standby(&config, &info, force)?;
                println!(
                    "Formatted {} for {} of nameservice {} (cluster {}, block pool {}, from {}); \
                     start it, then: cairn admin -addNameNode {}",
                    crate::dir_list(&config.name_dirs),
                    raft.name,
                    raft.nameservice,
                    info.cluster_id,
                    info.block_pool_id,
                    nn.id,
                    raft.name
                );
                return Ok(());
            }
            Err(e) => tried.push(format!("{}: {e:#}", nn.id)),
        }
    }
    bail!(
        "no NameNode of nameservice {} told its namespace: {}",
        raft.nameservice,
        tried.join("; ")
    )
}

/// The namespace identity the NameNode at `addr` reports.
async fn identity_from(
    addr: &cairn_common::config::HostPort,
    user: &str,
) -> anyhow::Result<VersionInfo> {
    let socket = addr
        .resolve()
        .with_context(|| format!("resolving {}:{}", addr.host(), addr.port()))?;
    let ask = async {
        let client = Client::connect(socket, user, DATANODE_PROTOCOL).await?;
        client
            .call::<_, VersionResponseProto>("versionRequest", &VersionRequestProto {})
            .await
    };
    let reply = tokio::time::timeout(ASK_LIMIT, ask)
        .await
        .context("no answer")??;
    let ns = reply.info;
    Ok(VersionInfo {
        cluster_id: ns.storage_info.cluster_id,
        block_pool_id: ns.block_pool_id,
        namespace_id: ns.storage_info.namespace_id,
        created_ms: ns.storage_info.c_time,
    })
}

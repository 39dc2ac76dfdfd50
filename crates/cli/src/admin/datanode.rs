//! `hdfs dfsadmin`'s commands that talk to one DataNode's IPC port
//! (ClientDatanodeProtocol) rather than the NameNode:
//! `-refreshNamenodes <datanode_host:ipc_port>` makes the DataNode read its
//! configuration again and serve the NameNodes it names now (after
//! `-addNameNode` / `-removeNameNode`, without restarting it).

use std::net::ToSocketAddrs;

use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_DATANODE_PROTOCOL;
use cairn_rpc::client::Client;

/// The commands this module runs.
pub const COMMANDS: &[&str] = &["-refreshNamenodes"];

/// Whether `cmd` is one of [`COMMANDS`].
pub fn is_command(cmd: &str) -> bool {
    COMMANDS.contains(&cmd)
}

/// Runs `cmd` with `args` as `user`; the exit status.
pub async fn run(cmd: &str, args: Vec<String>, user: &str) -> i32 {
    let [datanode] = args.as_slice() else {
        eprintln!("Usage: cairn admin {cmd} <datanode_host:ipc_port>");
        return 255;
    };
    let addr = match datanode.to_socket_addrs().map(|mut a| a.next()) {
        Ok(Some(a)) => a,
        Ok(None) | Err(_) => {
            eprintln!("{cmd}: {datanode} is not a host:port");
            return 255;
        }
    };
    let client = match Client::connect(addr, user, CLIENT_DATANODE_PROTOCOL).await {
        Ok(c) => c,
        Err(e) => {
            eprintln!("{cmd}: cannot reach DataNode {datanode}: {e}");
            return 1;
        }
    };
    let r = client
        .call::<_, pb::RefreshNamenodesResponseProto>(
            "refreshNamenodes",
            &pb::RefreshNamenodesRequestProto {},
        )
        .await;
    match r {
        // HDFS's dfsadmin prints nothing on success either.
        Ok(_) => 0,
        Err(e) => {
            eprintln!(
                "{cmd}: {}",
                e.to_string().lines().next().unwrap_or_default()
            );
            1
        }
    }
}

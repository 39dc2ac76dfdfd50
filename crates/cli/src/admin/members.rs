//! `cairn admin -addNameNode <nnId>` and `-removeNameNode <nnId>`: Raft
//! membership changes of the configured nameservice (issue 15 item 5).
//! The NameNode to add must be in the configuration already (in
//! `dfs.ha.namenodes.<ns>`, with its `cairn.namenode.raft-address`;
//! member ids follow that list's order) and running, formatted by
//! `cairn namenode -bootstrapStandby`. The request goes to each member's
//! Raft port until the leader takes it; adding waits until the new member
//! has caught up.

use std::time::Duration;

use cairn_common::config::Configuration;
use cairn_namenode::ha_raft::settings::RaftSettings;
use cairn_namenode::journal::raft::membership::MemberChange;
use cairn_namenode::journal::raft::network::ask_members;

/// The commands this module runs.
pub const COMMANDS: &[&str] = &["-addNameNode", "-removeNameNode"];

/// How long a change may take (adding waits for the new member to catch
/// up).
const LIMIT: Duration = Duration::from_secs(300);

/// Whether `cmd` is one of [`COMMANDS`].
pub fn is_command(cmd: &str) -> bool {
    COMMANDS.contains(&cmd)
}

/// Runs `cmd` with `args`; the exit status.
pub async fn run(conf: &Configuration, cmd: &str, args: Vec<String>) -> i32 {
    let [target] = args.as_slice() else {
        eprintln!("Usage: cairn admin {cmd} <nnId>");
        return 255;
    };
    let members = match RaftSettings::members_of(conf) {
        Ok(Some(m)) => m,
        Ok(None) => {
            eprintln!("{cmd}: the configuration names no Raft nameservice");
            return 255;
        }
        Err(e) => {
            eprintln!("{cmd}: {e}");
            return 255;
        }
    };
    let Some(member) = members.iter().find(|m| m.name == *target) else {
        eprintln!("{cmd}: {target} is not a NameNode of the nameservice");
        return 255;
    };
    let change = match cmd {
        "-addNameNode" => MemberChange::Add {
            id: member.id,
            address: member.raft_address.clone(),
        },
        _ => MemberChange::Remove { id: member.id },
    };
    let mut refusals = Vec::new();
    for m in members.iter().filter(|m| m.name != *target) {
        let name = &m.name;
        match ask_members(&m.raft_address, change.clone(), LIMIT).await {
            Ok(Ok(done)) => {
                println!("{cmd} {target}: {done}");
                return 0;
            }
            Ok(Err(why)) => refusals.push(format!("{name}: {why}")),
            Err(e) => refusals.push(format!("{name}: {e}")),
        }
    }
    eprintln!("{cmd} {target} failed: {}", refusals.join("; "));
    1
}

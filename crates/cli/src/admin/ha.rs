//! The `hdfs haadmin` commands, over `HAServiceProtocol` on each
//! NameNode's RPC port, for manual HA (no failover controllers):
//! `-getServiceState`, `-checkHealth`, `-transitionToActive`,
//! `-transitionToStandby`, `-transitionToObserver` and `-failover <from>
//! <to>`. A NameNode is named by its id in the nameservice
//! (`dfs.nameservices`, `dfs.ha.namenodes.<ns>`,
//! `dfs.namenode.rpc-address.<ns>.<nn>`) or by `host:port`.
//!
//! `-failover` does what haadmin's FailoverController does without a
//! fencer: checks that the target is healthy and ready (unless
//! `--forceactive`), asks the old active to step down, makes the target
//! active, and puts the old one back if that fails.

use cairn_common::config::{Configuration, HostPort};
use cairn_proto::hadoop::common as pb;
use cairn_proto::protocols::HA_SERVICE_PROTOCOL;
use cairn_rpc::client::{Client, ClientError};

/// The commands this module runs.
pub const COMMANDS: &[&str] = &[
    "-getServiceState",
    "-checkHealth",
    "-transitionToActive",
    "-transitionToStandby",
    "-transitionToObserver",
    "-failover",
];

/// Whether `cmd` is one of [`COMMANDS`].
pub fn is_command(cmd: &str) -> bool {
    COMMANDS.contains(&cmd)
}

fn user() -> String {
    std::env::var("HADOOP_USER_NAME")
        .ok()
        .filter(|u| !u.is_empty())
        .unwrap_or_else(cairn_namenode::users::UserDirectory::current_user)
}

/// The RPC address of NameNode `target`: an id of the configured
/// nameservice, else `host:port`.
fn resolve(conf: &Configuration, target: &str) -> Result<std::net::SocketAddr, String> {
    let from_ns = match conf.nameservice().map_err(|e| e.to_string())? {
        Some(ns) => conf
            .ha_namenodes(&ns)
            .map_err(|e| e.to_string())?
            .into_iter()
            .find(|nn| nn.id == target)
            .map(|nn| nn.rpc_address),
        None => None,
    };
    let addr = match from_ns {
        Some(a) => a,
        None => target
            .rsplit_once(':')
            .and_then(|(h, p)| Some(HostPort::new(h.trim_matches(['[', ']']), p.parse().ok()?)))
            .ok_or_else(|| {
                format!("Unable to determine service address for namenode '{target}'")
            })?,
    };
    resolve_addr(&addr)
}

fn resolve_addr(addr: &HostPort) -> Result<std::net::SocketAddr, String> {
    addr.resolve()
        .map_err(|e| format!("cannot resolve {}:{}: {e}", addr.host(), addr.port()))
}

fn first_line(e: &ClientError) -> String {
    match e {
        ClientError::Remote { message, .. } => message.lines().next().unwrap_or_default().into(),
        other => other.to_string(),
    }
}

/// One NameNode's HAServiceProtocol.
struct Target {
    name: String,
    client: Client,
}

impl Target {
    async fn connect(conf: &Configuration, name: &str) -> Result<Self, String> {
        let addr = resolve(conf, name)?;
        let client = Client::connect(addr, &user(), HA_SERVICE_PROTOCOL)
            .await
            .map_err(|e| format!("cannot reach {name} at {addr}: {e}"))?;
        Ok(Self {
            name: name.to_string(),
            client,
        })
    }

    async fn status(&self) -> Result<pb::GetServiceStatusResponseProto, ClientError> {
        self.client
            .call("getServiceStatus", &pb::GetServiceStatusRequestProto {})
            .await
    }

    async fn health(&self) -> Result<(), ClientError> {
        self.client
            .call::<_, pb::MonitorHealthResponseProto>(
                "monitorHealth",
                &pb::MonitorHealthRequestProto {},
            )
            .await
            .map(|_| ())
    }

    /// `transitionTo<To>`, as a user request (`to`: Active, Standby or
    /// Observer).
    async fn transition(&self, to: &str) -> Result<(), ClientError> {
        let req_info = pb::HaStateChangeRequestInfoProto {
            req_source: pb::HaRequestSource::RequestByUser as i32,
        };
        use prost::Message;
        let body = match to {
            "Active" => pb::TransitionToActiveRequestProto { req_info }.encode_to_vec(),
            "Standby" => pb::TransitionToStandbyRequestProto { req_info }.encode_to_vec(),
            _ => pb::TransitionToObserverRequestProto { req_info }.encode_to_vec(),
        };
        self.client
            .call_raw(&format!("transitionTo{to}"), &body)
            .await
            .map(|_| ())
    }
}

fn state_name(state: i32) -> &'static str {
    match pb::HaServiceStateProto::try_from(state) {
        Ok(pb::HaServiceStateProto::Active) => "active",
        Ok(pb::HaServiceStateProto::Standby) => "standby",
        Ok(pb::HaServiceStateProto::Observer) => "observer",
        _ => "initializing",
    }
}

/// Runs one haadmin command; returns the exit code (255 as haadmin's -1).
pub async fn run(conf: &Configuration, cmd: &str, args: Vec<String>) -> i32 {
    let force_active = args.iter().any(|a| a == "--forceactive");
    let names: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let wanted = if cmd == "-failover" { 2 } else { 1 };
    if names.len() != wanted {
        eprintln!(
            "{cmd}: incorrect number of arguments\nUsage: cairn admin {cmd} {}",
            if wanted == 2 {
                "[--forceactive] <serviceId> <serviceId>"
            } else {
                "<serviceId>"
            }
        );
        return 255;
    }
    let verb = cmd.trim_start_matches('-');
    let result = match cmd {
        "-failover" => failover(conf, names[0], names[1], force_active).await,
        _ => single(conf, cmd, names[0]).await,
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{verb}: {e}");
            255
        }
    }
}

async fn single(conf: &Configuration, cmd: &str, name: &str) -> Result<(), String> {
    let t = Target::connect(conf, name).await?;
    let e = |e: ClientError| first_line(&e);
    match cmd {
        "-getServiceState" => {
            let s = t.status().await.map_err(e)?;
            println!("{}", state_name(s.state));
        }
        "-checkHealth" => t.health().await.map_err(e)?,
        "-transitionToActive" => t.transition("Active").await.map_err(e)?,
        "-transitionToStandby" => t.transition("Standby").await.map_err(e)?,
        _ => t.transition("Observer").await.map_err(e)?,
    }
    Ok(())
}

/// haadmin's graceful failover without fencing.
async fn failover(
    conf: &Configuration,
    from: &str,
    to: &str,
    force_active: bool,
) -> Result<(), String> {
    let from_t = Target::connect(conf, from).await?;
    let to_t = Target::connect(conf, to).await?;
    // FailoverController.preFailoverChecks.
    let status = to_t.status().await.map_err(|e| {
        format!(
            "Failover failed: Unable to get service status of {to}: {}",
            first_line(&e)
        )
    })?;
    if status.state == pb::HaServiceStateProto::Active as i32 {
        return Err("Failover failed: Can't failover to an active service".into());
    }
    to_t.health().await.map_err(|e| {
        format!(
            "Failover failed: Can't failover to an unhealthy service: {}",
            first_line(&e)
        )
    })?;
    if !force_active && status.ready_to_become_active != Some(true) {
        return Err(format!(
            "Failover failed: {to} is not ready to become active: {}",
            status.not_ready_reason.unwrap_or_default()
        ));
    }
    from_t.transition("Standby").await.map_err(|e| {
        format!(
            "Failover failed: {from} did not step down: {}",
            first_line(&e)
        )
    })?;
    if let Err(e) = to_t.transition("Active").await {
        // Failback: the old active takes over again.
        let back = from_t.transition("Active").await;
        return Err(format!(
            "Failover failed: Unable to make {} active ({}).{}",
            to_t.name,
            first_line(&e),
            match back {
                Ok(()) => format!(" Failed back to {}", from_t.name),
                Err(b) => format!(
                    " Failback to {} failed too: {}",
                    from_t.name,
                    first_line(&b)
                ),
            }
        ));
    }
    println!("Failover from {from} to {to} successful");
    Ok(())
}

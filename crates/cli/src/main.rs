//! `cairn`: one binary for every role. Thin by design: it parses flags,
//! loads the Hadoop-style configuration, sets up logging and calls the
//! library entry points.

mod admin;
mod admin_snapshot;
mod bench;
mod bootstrap;
mod dfs;
mod fsck;
mod logging;
mod malloc_env;
mod up;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use cairn_common::config::Configuration;
use cairn_common::keys;
use clap::{Parser, Subcommand};
use tokio_util::sync::CancellationToken;

/// Cairn: a distributed file system that speaks HDFS's protocols.
#[derive(Parser, Debug)]
#[command(name = "cairn", version, about)]
struct Cli {
    /// Directory with core-site.xml / hdfs-site.xml (default: $HADOOP_CONF_DIR).
    #[arg(long, global = true, value_name = "DIR")]
    conf: Option<PathBuf>,
    /// Override a configuration key (Hadoop's names), e.g. -D dfs.replication=2.
    #[arg(short = 'D', global = true, value_name = "KEY=VALUE", action = clap::ArgAction::Append)]
    define: Vec<String>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a NameNode.
    Namenode(NamenodeArgs),
    /// Run a DataNode.
    Datanode(DatanodeArgs),
    /// Run a local cluster: a NameNode and DataNodes on loopback, data
    /// under one folder; Ctrl-C stops it, running it again resumes it.
    Up {
        /// Number of DataNodes.
        #[arg(long, default_value_t = 3)]
        datanodes: usize,
        /// Folder for all of the cluster's data and logs.
        #[arg(long, default_value = "./cairn-data")]
        dir: PathBuf,
        /// NameNode RPC address.
        #[arg(long, default_value = "127.0.0.1:8020")]
        rpc_address: String,
        /// Seconds before a DataNode that exited is started again (0: never).
        #[arg(long, default_value_t = 30)]
        datanode_restart_delay: u64,
        /// Three NameNodes in one HA nameservice (a Raft group) instead of
        /// one; the client configuration goes to DIR/conf. With --ha,
        /// --rpc-address names the first NameNode's port (the others take
        /// the next two; port 0: free ports).
        #[arg(long)]
        ha: bool,
        /// The nameservice's name with --ha (clients use hdfs://NAME).
        #[arg(long, default_value = "cairn", value_name = "NAME")]
        nameservice: String,
        /// With --ha: seconds before a NameNode that exited is started
        /// again (the other two elect an active meanwhile).
        #[arg(long, default_value_t = 2)]
        namenode_restart_delay: u64,
    },
    /// Benchmarks: dfsio, limits, journal (add --json for one JSON object).
    Bench {
        #[command(subcommand)]
        command: bench::BenchCommand,
    },
    /// Cluster administration (`-report`, `-refreshNodes`), like `hdfs dfsadmin`.
    #[command(disable_help_flag = true)]
    Admin {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// Check the file system's health, like `hdfs fsck` (reads the
    /// NameNode's /fsck; `-http HOST:PORT` or dfs.namenode.http-address).
    #[command(disable_help_flag = true)]
    Fsck {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
    /// A file shell in the spirit of `hdfs dfs` (run `cairn dfs -help`).
    #[command(disable_help_flag = true)]
    Dfs {
        #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
        args: Vec<String>,
    },
}

#[derive(clap::Args, Debug)]
struct NamenodeArgs {
    /// Metadata directory (default: dfs.namenode.name.dir; several
    /// comma-separated directories keep copies of the edit log).
    #[arg(long, value_name = "DIR[,DIR...]")]
    dir: Option<String>,
    /// Create a new, empty namespace in the directories and exit
    /// (Hadoop's `-format` is accepted too).
    #[arg(long)]
    format: bool,
    /// With --format: overwrite an existing namespace.
    #[arg(long)]
    force: bool,
    /// Recovery mode: load the metadata, ask on stdin what to do at each
    /// damaged spot of the edit log, save the result and exit (Hadoop's
    /// `-recover` is accepted too).
    #[arg(long)]
    recover: bool,
    /// A new member of a Raft nameservice: format the directories
    /// with the namespace identity another NameNode of the nameservice
    /// reports and exit; its first start waits for `cairn admin
    /// -addNameNode` (Hadoop's `-bootstrapStandby` is accepted too).
    #[arg(long)]
    bootstrap_standby: bool,
    /// Address to serve RPC on (default: dfs.namenode.rpc-address,
    /// else fs.defaultFS, else 127.0.0.1:8020). Port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT")]
    rpc_address: Option<String>,
    /// Address of the HTTP server: WebHDFS and the web UI (default:
    /// dfs.namenode.http-address, else port 9870 on the RPC host, or a
    /// free port when the RPC port is 0). Port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT")]
    http_address: Option<String>,
}

#[derive(clap::Args, Debug)]
struct DatanodeArgs {
    /// Storage directory for block replicas.
    #[arg(long, value_name = "DIR")]
    dir: PathBuf,
    /// NameNode RPC address (default: dfs.namenode.rpc-address, else
    /// fs.defaultFS).
    #[arg(long, value_name = "HOST:PORT")]
    namenode: Option<String>,
    /// Data-transfer address (default: dfs.datanode.address, else
    /// 127.0.0.1:0). Port 0 picks a free port.
    #[arg(long, value_name = "HOST:PORT")]
    data_address: Option<String>,
    /// ClientDatanodeProtocol address (default: dfs.datanode.ipc.address,
    /// else 127.0.0.1:0).
    #[arg(long, value_name = "HOST:PORT")]
    ipc_address: Option<String>,
    /// HTTP address for /metrics (default: dfs.datanode.http.address,
    /// else 127.0.0.1:0).
    #[arg(long, value_name = "HOST:PORT")]
    http_address: Option<String>,
}

fn load_conf(cli: &Cli) -> anyhow::Result<Configuration> {
    conf_loader(cli)()
}

/// Reads the configuration as the command line names it, again at every
/// call (servers reload it on `-reconfig` and `-refresh*`).
fn conf_loader(cli: &Cli) -> impl Fn() -> anyhow::Result<Configuration> + Send + Sync + 'static {
    let (conf_dir, define) = (cli.conf.clone(), cli.define.clone());
    // The messages carry their causes already: no error chain under them
    // (printed with `{:#}`, a chain would repeat each cause).
    move || {
        let mut conf = Configuration::load(conf_dir.as_deref())
            .map_err(|e| anyhow::anyhow!("loading configuration: {e}"))?;
        conf.apply_overrides(&define)
            .map_err(|e| anyhow::anyhow!("applying -D overrides: {e}"))?;
        Ok(conf)
    }
}

fn init_tracing() {
    logging::init();
}

/// Cancels the token on SIGINT or SIGTERM.
fn shutdown_on_signals(token: CancellationToken) {
    tokio::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return;
        };
        tokio::select! {
            _ = term.recv() => {},
            _ = int.recv() => {},
        }
        tracing::info!("signal received, shutting down");
        token.cancel();
    });
}

/// Directories as `a,b,c`.
fn dir_list(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(",")
}

async fn run_namenode(
    mut conf: Configuration,
    reload: impl Fn() -> Result<Configuration, String> + Send + Sync + 'static,
    dir: Option<String>,
    format: bool,
    force: bool,
    recover: bool,
    (rpc_address, http_address): (Option<String>, Option<String>),
) -> anyhow::Result<()> {
    if let Some(d) = &dir {
        conf.set(keys::DFS_NAMENODE_NAME_DIR, d);
    }
    conf.use_own_namenode_keys()?;
    let mut config = cairn_namenode::config::NameNodeConfig::from_conf(&conf)?;
    // `dfsadmin -refreshSuperUserGroupsConfiguration` reads the rules again.
    config.proxy_users.set_source(reload);
    if config.name_dirs.is_empty() {
        anyhow::bail!(
            "no metadata directory: pass --dir DIR or set {}",
            keys::DFS_NAMENODE_NAME_DIR
        );
    }
    // HDFS's `in_use.lock`: a second NameNode (or a format or recovery) on
    // directories a running one uses stops here, before touching them.
    if format {
        for d in &config.name_dirs {
            std::fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
    }
    let _locks = cairn_common::dir_lock::lock_existing(&config.name_dirs)?;
    if recover {
        use std::io::{BufRead, Write};
        let mut stdin = std::io::stdin().lock();
        let mut ask = |problem: &str| {
            eprint!(
                "The edit log is damaged: {problem}\n\
                 (s)kip the damage and continue with the next whole record, \
                 s(t)op here and drop everything after it, or (q)uit? "
            );
            let _ = std::io::stderr().flush();
            let mut answer = String::new();
            let _ = stdin.read_line(&mut answer);
            match answer.trim() {
                "s" | "skip" => cairn_namenode::storage::RecoveryChoice::Skip,
                "t" | "stop" => cairn_namenode::storage::RecoveryChoice::Stop,
                _ => cairn_namenode::storage::RecoveryChoice::Quit,
            }
        };
        if config.raft.is_some() {
            let done = cairn_namenode::ha_raft::recover_log(&config, &mut ask)?;
            match done.saved_in {
                Some(saved) => println!(
                    "Recovered the Raft log up to entry {}; this NameNode gets the rest from its group when it starts; the damaged log is kept in {}",
                    done.last_kept.map_or("none".to_string(), |i| i.to_string()),
                    saved.display()
                ),
                None => println!("The Raft log needs no recovery"),
            }
            return Ok(());
        }
        let last = cairn_namenode::storage::recover(
            &cairn_common::disk::RealDisk,
            &config.name_dirs,
            &cairn_namenode::users::UserDirectory::current_user(),
            &config.superuser_group,
            config.limits.clone(),
            &mut ask,
        )?;
        println!("Recovered the namespace up to transaction {last}; the old edit log is kept in recovered-*/");
        return Ok(());
    }
    if format {
        let info = cairn_namenode::format(&config, force)?;
        println!(
            "Formatted {} (cluster {}, block pool {})",
            dir_list(&config.name_dirs),
            info.cluster_id,
            info.block_pool_id
        );
        return Ok(());
    }
    let addr: SocketAddr = match rpc_address {
        Some(a) => {
            let mut c = Configuration::new();
            c.set(keys::DFS_NAMENODE_RPC_ADDRESS, &a);
            c.get_socket_addr(keys::DFS_NAMENODE_RPC_ADDRESS, "127.0.0.1:8020")
                .context("--rpc-address")?
        }
        None if conf.get(keys::DFS_NAMENODE_RPC_ADDRESS).is_some()
            || conf
                .get(keys::FS_DEFAULT_FS)
                .is_some_and(|v| v.starts_with("hdfs://")) =>
        {
            conf.namenode_rpc_address()?
                .resolve()
                .context("resolving the NameNode address")?
        }
        None => SocketAddr::from(([127, 0, 0, 1], 8020)),
    };
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr()?;
    let http_addr = namenode_http_address(&conf, http_address, addr)?;
    let http = tokio::net::TcpListener::bind(http_addr)
        .await
        .with_context(|| format!("binding the HTTP address {http_addr}"))?;
    // The lines scripts and tests wait for, in ONE write(2) (println! would
    // write each piece with a newline separately): a reader that stops after
    // the RPC line and closes the pipe must not make a later write fail.
    // Errors are ignored: a closed stdout is no reason to stop serving.
    {
        use std::io::Write;
        let announce = format!(
            "NameNode RPC listening on hdfs://{local}\nNameNode HTTP listening on http://{}\n",
            http.local_addr()?
        );
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(announce.as_bytes());
        let _ = out.flush();
    }
    let token = CancellationToken::new();
    shutdown_on_signals(token.clone());
    let listeners = cairn_namenode::Listeners {
        rpc: listener,
        http: Some(http),
    };
    cairn_namenode::run(config, listeners, token).await?;
    Ok(())
}

/// `--http-address`, else `dfs.namenode.http-address`, else HDFS's port
/// 9870 on the RPC host (a free port when the RPC port was free-chosen, so
/// that NameNodes started side by side do not collide).
fn namenode_http_address(
    conf: &Configuration,
    flag: Option<String>,
    rpc: SocketAddr,
) -> anyhow::Result<SocketAddr> {
    let mut c = conf.clone();
    if let Some(a) = flag {
        c.set(keys::DFS_NAMENODE_HTTP_ADDRESS, &a);
    }
    if c.get(keys::DFS_NAMENODE_HTTP_ADDRESS).is_some() {
        return c
            .get_socket_addr(keys::DFS_NAMENODE_HTTP_ADDRESS, "127.0.0.1:9870")
            .context(keys::DFS_NAMENODE_HTTP_ADDRESS);
    }
    let port = if rpc.port() == 0 { 0 } else { 9870 };
    Ok(SocketAddr::new(rpc.ip(), port))
}

/// The NameNodes a DataNode serves per `conf`: every NameNode of the
/// nameservice (as HDFS), else the one of dfs.namenode.rpc-address /
/// fs.defaultFS.
fn configured_namenodes(conf: &Configuration) -> anyhow::Result<Vec<SocketAddr>> {
    Ok(
        match cairn_datanode::nameservice::namenode_addresses(conf)? {
            Some(list) => list,
            None => vec![conf
                .namenode_rpc_address()
                .context("no NameNode: pass --namenode HOST:PORT or set fs.defaultFS")?
                .resolve()
                .context("resolving the NameNode address")?],
        },
    )
}

async fn run_datanode(
    mut conf: Configuration,
    reload: impl Fn() -> anyhow::Result<Configuration> + Send + Sync + 'static,
    dir: PathBuf,
    namenode: Option<String>,
    addresses: [(&str, Option<String>); 3],
) -> anyhow::Result<()> {
    for (key, flag) in addresses {
        match flag {
            Some(a) => conf.set(key, &a),
            None if conf.get(key).is_none() => conf.set(key, "127.0.0.1:0"),
            None => {}
        }
    }
    // `--namenode`, else what the configuration names, read again at each
    // `refreshNamenodes`.
    let (nns, source) = match namenode {
        Some(a) => {
            let mut c = Configuration::new();
            c.set(keys::DFS_NAMENODE_RPC_ADDRESS, &a);
            let nn = c
                .get_socket_addr(keys::DFS_NAMENODE_RPC_ADDRESS, "127.0.0.1:8020")
                .context("--namenode")?;
            (vec![nn], None)
        }
        None => {
            let source = cairn_datanode::refresh::NameNodeSource::new(move || {
                reload()
                    .and_then(|c| configured_namenodes(&c))
                    .map_err(|e| format!("{e:#}"))
            });
            (configured_namenodes(&conf)?, Some(source))
        }
    };
    let nn = *nns.first().context("the nameservice lists no NameNode")?;
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    // HDFS's `in_use.lock`: two DataNodes on one directory would each
    // overwrite the other's replicas.
    let _lock = cairn_common::dir_lock::lock(&dir)?;
    let mut config = cairn_datanode::config::DataNodeConfig::from_conf(&conf, dir, nn)?;
    config.namenodes = nns;
    config.namenode_source = source;
    let dn = cairn_datanode::DataNode::bind(config).await?;
    // The one line scripts and tests wait for.
    println!(
        "DataNode {} xfer {} ipc {} http {}",
        dn.uuid(),
        dn.xfer_addr(),
        dn.ipc_addr(),
        dn.http_addr()
    );
    let token = CancellationToken::new();
    shutdown_on_signals(token.clone());
    dn.run(token).await?;
    Ok(())
}

/// Success, or `what`'s error with its causes on stderr and a failure.
fn exit_code(what: &str, result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{what}: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// `cairn datanode`.
fn datanode_main(cli: &Cli, runtime: &tokio::runtime::Runtime, args: &DatanodeArgs) -> ExitCode {
    if let Ok(conf) = load_conf(cli) {
        // Before anything else runs: the process may be replaced.
        let retain = conf
            .get_bool(malloc_env::RETAIN_FREED_MEMORY, true)
            .unwrap_or(true);
        malloc_env::reexec_with(retain, "cairn datanode", malloc_env::DATANODE);
    }
    init_tracing();
    let reload = conf_loader(cli);
    let result = load_conf(cli).and_then(|conf| {
        runtime.block_on(run_datanode(
            conf,
            reload,
            args.dir.clone(),
            args.namenode.clone(),
            [
                (keys::DFS_DATANODE_ADDRESS, args.data_address.clone()),
                (keys::DFS_DATANODE_IPC_ADDRESS, args.ipc_address.clone()),
                (keys::DFS_DATANODE_HTTP_ADDRESS, args.http_address.clone()),
            ],
        ))
    });
    exit_code("cairn datanode", result)
}

/// `cairn namenode`.
fn namenode_main(cli: &Cli, runtime: &tokio::runtime::Runtime, args: &NamenodeArgs) -> ExitCode {
    if let Ok(conf) = load_conf(cli) {
        // Before the NameNode starts: the process may be replaced
        // (the runtime's idle threads end with the exec).
        let unmap = conf
            .get_bool(malloc_env::UNMAP_LARGE_BUFFERS, true)
            .unwrap_or(true);
        malloc_env::reexec_with(unmap, "cairn namenode", malloc_env::NAMENODE);
    }
    init_tracing();
    let result = load_conf(cli).and_then(|conf| {
        if args.bootstrap_standby {
            return runtime.block_on(bootstrap::run(conf, args.dir.clone(), args.force));
        }
        let load = conf_loader(cli);
        let reload = move || load().map_err(|e| format!("{e:#}"));
        runtime.block_on(run_namenode(
            conf,
            reload,
            args.dir.clone(),
            args.format,
            args.force,
            args.recover,
            (args.rpc_address.clone(), args.http_address.clone()),
        ))
    });
    exit_code("cairn namenode", result)
}

/// `cairn admin`, `fsck` and `dfs`: the tool's exit code, 255 when the
/// configuration cannot be read (as Hadoop's tools).
fn tool_main<F: std::future::Future<Output = i32>>(
    cli: &Cli,
    runtime: &tokio::runtime::Runtime,
    tool: impl FnOnce(Configuration) -> F,
) -> ExitCode {
    let conf = match load_conf(cli) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("cairn: {e:#}");
            return ExitCode::from(255);
        }
    };
    let code = runtime.block_on(tool(conf));
    ExitCode::from(u8::try_from(code & 0xff).unwrap_or(1))
}

/// Raises this process's soft limit on open files to its hard limit, as
/// the JVM does for every Java process (HDFS's servers among them): a
/// NameNode holds two descriptors per client connection (the socket and
/// the handle its edit-log thread writes answers through).
fn raise_open_files_limit() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        if soft < hard {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
        }
    }
}

fn main() -> ExitCode {
    // A panic anywhere (any thread, any task) stops the process: a server
    // never keeps serving on state a panic left half changed.
    cairn_common::fatal::exit_on_panic();
    // Hadoop spells the NameNode's one-word options with one dash.
    let is_namenode = std::env::args().any(|a| a == "namenode");
    let args = std::env::args().map(|a| match a.as_str() {
        "-format" if is_namenode => "--format".to_string(),
        "-force" if is_namenode => "--force".to_string(),
        "-recover" if is_namenode => "--recover".to_string(),
        "-bootstrapStandby" if is_namenode => "--bootstrap-standby".to_string(),
        _ => a,
    });
    let cli = Cli::parse_from(args);
    raise_open_files_limit();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cairn: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut passthrough = Vec::new();
    if let Some(c) = &cli.conf {
        passthrough.push("--conf".to_string());
        passthrough.push(c.display().to_string());
    }
    for d in &cli.define {
        passthrough.push("-D".to_string());
        passthrough.push(d.clone());
    }
    match &cli.command {
        Command::Up {
            datanodes,
            dir,
            rpc_address,
            datanode_restart_delay,
            ha,
            nameservice,
            namenode_restart_delay,
        } => exit_code(
            "cairn up",
            up::run(up::UpArgs {
                dir: dir.clone(),
                datanodes: *datanodes,
                rpc_address: rpc_address.clone(),
                datanode_restart_delay: *datanode_restart_delay,
                passthrough,
                ha: *ha,
                nameservice: nameservice.clone(),
                namenode_restart_delay: *namenode_restart_delay,
            }),
        ),
        Command::Datanode(args) => datanode_main(&cli, &runtime, args),
        Command::Bench { command } => exit_code("cairn bench", bench::run(command, &runtime)),
        Command::Admin { args } => tool_main(&cli, &runtime, |c| admin::run(c, args.clone())),
        Command::Fsck { args } => tool_main(&cli, &runtime, |c| fsck::run(c, args.clone())),
        Command::Dfs { args } => tool_main(&cli, &runtime, |c| dfs::run(c, args.clone())),
        Command::Namenode(args) => namenode_main(&cli, &runtime, args),
    }
}

//! Measures NameNode RPC throughput against `dfs.namenode.handler.count`.
//!
//! For each handler count it starts a real `cairn namenode` process (the
//! release binary next to this example), opens `--connections` IPC
//! connections, and runs `--clients` concurrent callers that each issue
//! `--ops` calls: a mix of mkdirs (a mutation, write lock) and getFileInfo
//! (a read), one in `--write-every` being a mkdirs. Prints ops/s and mean
//! latency per handler count. The NameNode is durable: every mkdirs waits
//! for its edit-log group commit (fdatasync), so with `--write-every 1` this
//! measures how handler count bounds group-commit batching.
//!
//! ```sh
//! cargo build --release && cargo run --release --example handler_sweep -- \
//!     --handlers 1,2,4,10,16,32,64 --clients 64 --connections 8 --ops 2000
//! ```

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn_proto::hadoop::hdfs as pb;
use cairn_proto::protocols::CLIENT_PROTOCOL;
use cairn_rpc::client::Client;

struct Args {
    handlers: Vec<usize>,
    clients: usize,
    connections: usize,
    ops: usize,
    write_every: usize,
}

fn parse_args() -> anyhow::Result<Args> {
    let mut a = Args {
        handlers: vec![1, 2, 4, 10, 16, 32, 64],
        clients: 64,
        connections: 8,
        ops: 2000,
        write_every: 4,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let v = it
            .next()
            .ok_or_else(|| anyhow::anyhow!("{flag} needs a value"))?;
        match flag.as_str() {
            "--handlers" => {
                a.handlers = v.split(',').map(str::parse).collect::<Result<_, _>>()?;
            }
            "--clients" => a.clients = v.parse()?,
            "--connections" => a.connections = v.parse()?,
            "--ops" => a.ops = v.parse()?,
            "--write-every" => a.write_every = v.parse::<usize>()?.max(1),
            other => anyhow::bail!("unknown flag {other}"),
        }
    }
    Ok(a)
}

fn cairn_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    // target/release/examples/handler_sweep -> target/release/cairn
    let dir = exe
        .parent()
        .and_then(|p| p.parent())
        .ok_or_else(|| anyhow::anyhow!("cannot locate target dir"))?;
    Ok(dir.join("cairn"))
}

async fn run_one(args: &Args, handlers: usize) -> anyhow::Result<(f64, f64)> {
    let dir = tempfile::tempdir()?;
    let formatted = Command::new(cairn_binary()?)
        .args(["namenode", "--format", "--dir"])
        .arg(dir.path())
        .stdout(Stdio::null())
        .status()?;
    anyhow::ensure!(formatted.success(), "format failed");
    let child = Command::new(cairn_binary()?)
        .args(["-D", &format!("dfs.namenode.handler.count={handlers}")])
        .args(["namenode", "--dir"])
        .arg(dir.path())
        .args(["--rpc-address", "127.0.0.1:0"])
        .env("CAIRN_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()?;
    // Killed on every way out of this function, errors included.
    struct Guard(std::process::Child);
    impl Drop for Guard {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Guard(child);
    let mut line = String::new();
    {
        use std::io::BufRead;
        let out = child
            .0
            .stdout
            .take()
            .ok_or_else(|| anyhow::anyhow!("no stdout"))?;
        std::io::BufReader::new(out).read_line(&mut line)?;
    }
    let addr: SocketAddr = line
        .trim()
        .rsplit("hdfs://")
        .next()
        .ok_or_else(|| anyhow::anyhow!("no address in {line:?}"))?
        .parse()?;
    let mut conns = Vec::new();
    for _ in 0..args.connections {
        // As the NameNode's own user: the superuser, so no permission setup.
        let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
        conns.push(Arc::new(
            Client::connect(addr, &user, CLIENT_PROTOCOL).await?,
        ));
    }
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..args.clients {
        let conn = conns[c % conns.len()].clone();
        let (ops, every) = (args.ops, args.write_every);
        tasks.push(tokio::spawn(async move {
            let mut total = Duration::ZERO;
            for i in 0..ops {
                let t = Instant::now();
                if i % every == 0 {
                    let req = pb::MkdirsRequestProto {
                        src: format!("/bench/c{c}/d{i}"),
                        masked: pb::FsPermissionProto { perm: 0o755 },
                        create_parent: true,
                        unmasked: None,
                    };
                    conn.call::<_, pb::MkdirsResponseProto>("mkdirs", &req)
                        .await?;
                } else {
                    let req = pb::GetFileInfoRequestProto {
                        src: format!("/bench/c{c}/d{}", i - i % every),
                    };
                    conn.call::<_, pb::GetFileInfoResponseProto>("getFileInfo", &req)
                        .await?;
                }
                total += t.elapsed();
            }
            Ok::<_, anyhow::Error>(total)
        }));
    }
    let mut latency = Duration::ZERO;
    for t in tasks {
        latency += t.await??;
    }
    let elapsed = start.elapsed();
    drop(child);
    let n = (args.clients * args.ops) as f64;
    Ok((n / elapsed.as_secs_f64(), latency.as_secs_f64() * 1e6 / n))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = parse_args()?;
    println!(
        "# handler sweep: {} clients on {} connections, {} ops each, 1 in {} a mkdirs; durable edit log",
        args.clients, args.connections, args.ops, args.write_every
    );
    println!("{:>9} {:>12} {:>14}", "handlers", "ops/s", "mean_lat_us");
    for &h in &args.handlers {
        let (ops, lat) = run_one(&args, h).await?;
        println!("{h:>9} {ops:>12.0} {lat:>14.1}");
    }
    Ok(())
}

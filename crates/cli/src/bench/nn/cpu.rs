//! A process's CPU time (utime + stime from `/proc/<pid>/stat`, all its
//! threads, in clock ticks: 10 ms on Linux), and finding the NameNode's
//! process from its RPC port: the LISTEN socket's inode in
//! `/proc/net/tcp` / `/proc/net/tcp6`, then the process holding an fd that
//! links to `socket:[inode]` under `/proc/*/fd`. That lookup sees only this
//! network namespace and the processes this user may inspect (its own, or
//! all as root); `--nn-pid` names the process where it cannot.

use std::time::Duration;

use anyhow::Context;

/// Clock ticks per second of `/proc/<pid>/stat`'s times.
pub(super) fn clock_ticks() -> f64 {
    match nix::unistd::sysconf(nix::unistd::SysconfVar::CLK_TCK) {
        Ok(Some(t)) if t > 0 => t as f64,
        _ => 100.0,
    }
}

/// A process's CPU time so far (user + system), from `/proc/<pid>/stat`.
pub(super) fn cpu_time(pid: u32) -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .with_context(|| format!("reading /proc/{pid}/stat"))?;
    // The command name may hold spaces: fields count from after its ')'.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or_else(|| anyhow::anyhow!("/proc/{pid}/stat: no ')'"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // utime and stime are fields 14 and 15; `rest` starts at field 3.
    let tick = |i: usize| -> anyhow::Result<f64> {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .map(|v| v as f64)
            .ok_or_else(|| anyhow::anyhow!("/proc/{pid}/stat: field {} unreadable", i + 3))
    };
    Ok(Duration::from_secs_f64(
        (tick(11)? + tick(12)?) / clock_ticks(),
    ))
}

/// Inodes of the sockets listening on TCP `port` (IPv4 and IPv6).
fn listening_inodes(port: u16) -> Vec<u64> {
    let mut inodes = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) = (f.get(1), f.get(3), f.get(9)) else {
                continue;
            };
            let local_port = local
                .rsplit_once(':')
                .and_then(|(_, p)| u16::from_str_radix(p, 16).ok());
            // State 0A is TCP_LISTEN.
            if local_port == Some(port) && *state == "0A" {
                if let Ok(i) = inode.parse::<u64>() {
                    if i != 0 {
                        inodes.push(i);
                    }
                }
            }
        }
    }
    inodes
}

/// The process listening on TCP `port` of this host, if this user can see it.
pub(super) fn listener_pid(port: u16) -> Option<u32> {
    let wanted: Vec<String> = listening_inodes(port)
        .into_iter()
        .map(|i| format!("socket:[{i}]"))
        .collect();
    if wanted.is_empty() {
        return None;
    }
    let procs = std::fs::read_dir("/proc").ok()?;
    for p in procs.flatten() {
        let Some(pid) = p.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        let Ok(fds) = std::fs::read_dir(p.path().join("fd")) else {
            continue;
        };
        for fd in fds.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                if wanted.iter().any(|w| target.as_os_str() == w.as_str()) {
                    return Some(pid);
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_process_listening_on_a_port() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        assert_eq!(listener_pid(port), Some(std::process::id()));
        drop(listener);
        assert_eq!(listener_pid(port), None);
    }

    #[test]
    fn reads_this_process_cpu_time() {
        let pid = std::process::id();
        let before = cpu_time(pid).expect("cpu time");
        // Spin until a tick is counted: it must be, long before 20 s of wall
        // time even on a busy machine.
        let start = std::time::Instant::now();
        let mut x = 0u64;
        let mut now = before;
        while now <= before && start.elapsed() < Duration::from_secs(20) {
            for _ in 0..100_000 {
                x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            }
            now = cpu_time(pid).expect("cpu time");
        }
        std::hint::black_box(x);
        assert!(now > before, "CPU time did not grow: {before:?} -> {now:?}");
    }
}

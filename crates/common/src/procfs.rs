//! Finding a local process by the TCP port it listens on: the LISTEN
//! socket's inode in `/proc/net/tcp` / `/proc/net/tcp6`, then the process
//! holding an fd that links to `socket:[inode]` under `/proc/*/fd`. That
//! sees only this network namespace and the processes this user may
//! inspect (its own, or all as root). `cairn bench nn` uses it to find the
//! NameNode whose CPU it measures, tests to find the NameNode to kill.

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
pub fn listener_pid(port: u16) -> Option<u32> {
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
}

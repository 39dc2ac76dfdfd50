//! What the NameNode's and the DataNodes' web servers share besides the
//! connection loop ([`crate::http`]): HDFS's servlets that do not depend on
//! the server (`/jmx` rendering, `/conf`, `/stacks`, `/logLevel`) and the
//! HTML page shell of the web UI.

pub mod conf;
pub mod jmx;
pub mod loglevel;
pub mod page;
pub mod stacks;

/// This host's name, as HDFS's `tag.Hostname` (`localhost` when unknown).
pub fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

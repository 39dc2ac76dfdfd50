//! Pieces shared by every Cairn server and tool: Hadoop-style configuration
//! (`core-site.xml`/`hdfs-site.xml`, `-D key=value`, size and time suffixes)
//! and the names of the Hadoop configuration keys we read; durable file
//! helpers and the disk they write to; the fatal-stop path; typed
//! identifiers shared by the servers.

pub mod clock;
pub mod config;
pub mod dir_lock;
pub mod disk;
pub mod durable;
pub mod fatal;
pub mod http;
pub mod http_path;
pub mod ids;
pub mod keys;
pub mod local_users;
pub mod metrics;
pub mod procfs;
pub mod storage_type;
pub mod web;
pub mod webhdfs;
pub mod xattr_codec;

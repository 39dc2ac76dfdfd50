//! The allocator settings of the DataNode and NameNode processes.
//!
//! glibc reads `MALLOC_TRIM_THRESHOLD_` and `MALLOC_MMAP_THRESHOLD_` only
//! when the process starts, and setting them later (`mallopt`) needs
//! `unsafe`, so `cairn datanode` and `cairn namenode` start themselves
//! again with them set. Values the user already set are kept, and a
//! setting turns each off.
//!
//! DataNode: a DataNode receiving writes allocates one buffer per 64 KiB
//! packet on its network task and frees it on its disk thread. With
//! glibc's dynamic thresholds (the 256 KiB receive buffer of each
//! connection sets the trim threshold to 512 KiB), the freed packets at the
//! top of each arena are handed back to the kernel and faulted in, zeroed,
//! for the next packets: a third of the DataNode's CPU per MiB written
//! (page faults, page clearing, `madvise`; docs/datanode-write-path.md).
//! Fixed thresholds keep them in the heap
//! (`cairn.datanode.retain-freed-memory`).
//!
//! NameNode: its namespace lives in a few large tables and many small
//! allocations; what is large and short-lived is a saved image's buffers
//! (tens of MiB). glibc's dynamic threshold rises with every large buffer
//! freed, until such buffers come from the heap, whose freed pages stay
//! resident among the namespace's: each saveNamespace or checkpoint left
//! about 12 bytes per file of resident memory behind (500,000 files:
//! 176 → 188 B per file of RSS; docs/namenode-memory.md). A fixed 256 KiB
//! threshold maps every large buffer on its own and unmaps it when freed
//! (`cairn.namenode.unmap-large-buffers`). Fixing it also fixes the trim
//! threshold, at glibc's 128 KiB unless set: the heap's top was then handed
//! back and faulted in again around every block report (~20% more NameNode
//! CPU per 10,000-replica report), so 2 MiB of free memory may stay there.

use std::ffi::OsString;

/// The DataNode's switch (default on).
pub const RETAIN_FREED_MEMORY: &str = "cairn.datanode.retain-freed-memory";
/// The NameNode's switch (default on).
pub const UNMAP_LARGE_BUFFERS: &str = "cairn.namenode.unmap-large-buffers";

/// glibc keeps up to this much free memory at the top of an arena.
const TRIM_THRESHOLD: &str = "MALLOC_TRIM_THRESHOLD_";
/// Allocations from this size up get their own mapping.
const MMAP_THRESHOLD: &str = "MALLOC_MMAP_THRESHOLD_";

/// The DataNode's: packets and receive buffers stay below the mapping
/// threshold, and 64 MiB of free memory stays at the top of an arena.
pub const DATANODE: &[(&str, u64)] = &[(TRIM_THRESHOLD, 64 << 20), (MMAP_THRESHOLD, 4 << 20)];
/// The NameNode's: buffers of 256 KiB and more are mapped on their own,
/// and up to 2 MiB of free memory stays at the top of an arena.
pub const NAMENODE: &[(&str, u64)] = &[(TRIM_THRESHOLD, 2 << 20), (MMAP_THRESHOLD, 256 << 10)];

/// With `on` and neither variable set, replaces this process by itself
/// with `vars` set; returns only when it did not (or the exec failed,
/// which is reported and otherwise harmless: the process runs with
/// glibc's defaults). `who` names the process in that report.
pub fn reexec_with(on: bool, who: &str, vars: &[(&str, u64)]) {
    if !on
        || !cfg!(all(target_os = "linux", target_env = "gnu"))
        || std::env::var_os(TRIM_THRESHOLD).is_some()
        || std::env::var_os(MMAP_THRESHOLD).is_some()
    {
        return;
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("{who}: keeping glibc's allocator defaults: {e}");
            return;
        }
    };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    use std::os::unix::process::CommandExt;
    let mut command = std::process::Command::new(exe);
    command.args(args);
    for (name, value) in vars {
        command.env(name, value.to_string());
    }
    let e = command.exec();
    eprintln!("{who}: keeping glibc's allocator defaults: {e}");
}

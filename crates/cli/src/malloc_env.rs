//! The DataNode process's allocator settings.
//!
//! A DataNode receiving writes allocates one buffer per 64 KiB packet on
//! its network task and frees it on its disk thread. With glibc's dynamic
//! thresholds (the 256 KiB receive buffer of each connection sets the trim
//! threshold to 512 KiB), the freed packets at the top of each arena are
//! handed back to the kernel and faulted in, zeroed, for the next packets:
//! a third of the DataNode's CPU per MiB written (page faults, page
//! clearing, `madvise`; docs/datanode-write-path.md). Fixed thresholds
//! keep them in the heap. glibc reads `MALLOC_TRIM_THRESHOLD_` and
//! `MALLOC_MMAP_THRESHOLD_` only when the process starts, and setting them
//! later (`mallopt`) needs `unsafe`, so `cairn datanode` starts itself
//! again with them set. Values the user already set are kept;
//! `cairn.datanode.retain-freed-memory=false` turns this off.

use std::ffi::OsString;

/// The switch (default on).
pub const RETAIN_FREED_MEMORY: &str = "cairn.datanode.retain-freed-memory";

/// glibc keeps up to this much free memory at the top of an arena.
const TRIM_THRESHOLD: &str = "MALLOC_TRIM_THRESHOLD_";
const TRIM_BYTES: u64 = 64 << 20;
/// Allocations from this size up get their own mapping (receive buffers
/// and packets stay below it).
const MMAP_THRESHOLD: &str = "MALLOC_MMAP_THRESHOLD_";
const MMAP_BYTES: u64 = 4 << 20;

/// With `retain` on and neither variable set, replaces this process by
/// itself with both set; returns only when it did not (or the exec failed,
/// which is reported and otherwise harmless: the DataNode runs with
/// glibc's defaults).
pub fn reexec_with_fixed_thresholds(retain: bool) {
    if !retain
        || !cfg!(all(target_os = "linux", target_env = "gnu"))
        || std::env::var_os(TRIM_THRESHOLD).is_some()
        || std::env::var_os(MMAP_THRESHOLD).is_some()
    {
        return;
    }
    let exe = match std::env::current_exe() {
        Ok(p) => p,
        Err(e) => {
            eprintln!("cairn datanode: keeping glibc's allocator defaults: {e}");
            return;
        }
    };
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(exe)
        .args(args)
        .env(TRIM_THRESHOLD, TRIM_BYTES.to_string())
        .env(MMAP_THRESHOLD, MMAP_BYTES.to_string())
        .exec();
    eprintln!("cairn datanode: keeping glibc's allocator defaults: {e}");
}

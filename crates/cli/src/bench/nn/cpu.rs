//! A process's CPU time (utime + stime from `/proc/<pid>/stat`, all its
//! threads, in clock ticks: 10 ms on Linux). The NameNode's process is
//! found from its RPC port by `cairn_common::procfs::listener_pid`;
//! `--nn-pid` names the process where that cannot see it.

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

#[cfg(test)]
mod tests {
    use super::*;

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

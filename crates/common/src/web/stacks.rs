//! `/stacks`, HDFS's thread dump, as far as Rust allows honestly: a Rust
//! process cannot walk another thread's stack without stopping it, and
//! tokio tasks have no stacks of their own while parked. So the dump lists
//! every OS thread of the process (from `/proc/self/task`: name, state,
//! CPU time, the kernel function it waits in) and the tokio runtime's
//! figures (workers, live tasks, the global queue, time each worker was
//! busy). Enough to see a spinning or blocked thread and a task pile-up.

use std::fmt::Write as _;

/// One OS thread of this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadInfo {
    pub tid: u32,
    pub name: String,
    /// The `/proc` state letter and its meaning ("S (sleeping)").
    pub state: String,
    pub user_ms: u64,
    pub system_ms: u64,
    /// The kernel function the thread sleeps in ("0" when running).
    pub wchan: String,
}

fn state_name(c: char) -> &'static str {
    match c {
        'R' => "running",
        'S' => "sleeping",
        'D' => "disk sleep",
        'T' | 't' => "stopped",
        'Z' => "zombie",
        'I' => "idle",
        _ => "other",
    }
}

/// Parses `/proc/<pid>/task/<tid>/stat` text: the state and CPU times
/// (clock ticks) after the parenthesised name.
fn parse_stat(text: &str) -> Option<(char, u64, u64)> {
    let after = text.get(text.rfind(')')? + 1..)?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    // Fields 14 and 15 of stat(5); `after` starts at field 3.
    let utime = fields.get(11)?.parse().ok()?;
    let stime = fields.get(12)?.parse().ok()?;
    Some((state, utime, stime))
}

/// The threads of this process (empty where `/proc` is missing).
pub fn threads() -> Vec<ThreadInfo> {
    let ticks_ms = 1000 / clock_ticks().max(1);
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    let mut out: Vec<ThreadInfo> = dir
        .filter_map(Result::ok)
        .filter_map(|e| {
            let tid: u32 = e.file_name().to_str()?.parse().ok()?;
            let read = |f: &str| std::fs::read_to_string(e.path().join(f)).unwrap_or_default();
            let (state, user, system) = parse_stat(&read("stat"))?;
            Some(ThreadInfo {
                tid,
                name: read("comm").trim().to_string(),
                state: format!("{state} ({})", state_name(state)),
                user_ms: user * ticks_ms,
                system_ms: system * ticks_ms,
                wchan: read("wchan").trim().to_string(),
            })
        })
        .collect();
    out.sort_by_key(|t| t.tid);
    out
}

/// `/proc` reports CPU times in USER_HZ, which Linux fixes at 100.
fn clock_ticks() -> u64 {
    100
}

/// The dump as text (`title` names the process, "NameNode").
pub fn dump(title: &str) -> String {
    let threads = threads();
    let mut out = format!(
        "Process Thread Dump: Cairn {title}\n\
         {} OS threads (from /proc/self/task; Rust cannot capture another thread's stack,\n\
         so each thread shows its name, state, CPU time and the kernel function it waits in)\n\n",
        threads.len()
    );
    for t in &threads {
        let _ = write!(
            out,
            "Thread {} ({}):\n  State: {}\n  CPU time: user {} ms, system {} ms\n  Waiting in: {}\n",
            t.tid,
            t.name,
            t.state,
            t.user_ms,
            t.system_ms,
            if t.wchan.is_empty() || t.wchan == "0" { "-" } else { &t.wchan }
        );
    }
    if let Ok(handle) = tokio::runtime::Handle::try_current() {
        let m = handle.metrics();
        let _ = write!(
            out,
            "\nTokio runtime:\n  Worker threads: {}\n  Live tasks: {}\n  Global queue depth: {}\n",
            m.num_workers(),
            m.num_alive_tasks(),
            m.global_queue_depth()
        );
        for w in 0..m.num_workers() {
            let _ = writeln!(
                out,
                "  Worker {w}: busy {} ms, parked {} times",
                m.worker_total_busy_duration(w).as_millis(),
                m.worker_park_count(w)
            );
        }
    }
    out
}

/// The `/stacks` response.
pub fn respond(title: &str) -> axum::response::Response {
    use axum::response::IntoResponse;
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; charset=utf-8",
        )],
        dump(title),
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_parse() {
        let line = "1234 (tokio (rt) 1) S 1 2 3 4 5 6 7 8 9 10 250 30 0 0 20 0 1";
        assert_eq!(parse_stat(line), Some(('S', 250, 30)));
        assert_eq!(parse_stat("garbage"), None);
        let me = threads();
        assert!(!me.is_empty());
        assert!(dump("Test").starts_with("Process Thread Dump: Cairn Test"));
    }
}

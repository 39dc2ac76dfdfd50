//! "This node must stop": the path for errors after which a server's state
//! can no longer be trusted (a panic in any task, a poisoned lock, a broken
//! invariant). The process logs one clear line and exits with
//! [`EXIT_FATAL`], so a supervisor (`cairn up`, systemd) restarts it from
//! its durable state, instead of a server that keeps answering on state it
//! half changed.
//!
//! Tokio catches panics in spawned tasks and carries on; the panic hook
//! installed by [`exit_on_panic`] runs before any unwinding, so a panic
//! anywhere ends the process before another task can see its poisoned
//! locks.
//!
//! Tests can make a server panic on purpose: with the `fault-injection`
//! feature, [`inject`] panics when the environment variable
//! `CAIRN_FAULT_PANIC` is `<component>.<point>` for the point it is called
//! with (e.g. `namenode.getFsStats`, `datanode.writeBlock`).

/// The exit status of a fatal stop (EX_SOFTWARE, "internal software error").
pub const EXIT_FATAL: i32 = 70;

/// Logs `what` as fatal and ends the process with [`EXIT_FATAL`].
pub fn stop(what: &str) -> ! {
    tracing::error!("FATAL: {what}; stopping the process");
    eprintln!("FATAL: {what}; stopping the process");
    std::process::exit(EXIT_FATAL)
}

/// Makes every panic, in any thread or task, a fatal stop (after the
/// default hook has printed the message and, if asked, a backtrace).
pub fn exit_on_panic() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        previous(info);
        let place = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let message = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".to_string());
        stop(&format!("panic{place}: {message}"));
    }));
}

/// Panics when `CAIRN_FAULT_PANIC` is `<component>.<point>` (only with
/// the `fault-injection` feature; otherwise does nothing).
#[inline]
pub fn inject(component: &str, point: &str) {
    #[cfg(feature = "fault-injection")]
    {
        static TARGET: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
        let target = TARGET.get_or_init(|| std::env::var("CAIRN_FAULT_PANIC").ok());
        if target.as_deref().and_then(|t| t.split_once('.')) == Some((component, point)) {
            panic!("fault injected at {component}.{point}");
        }
    }
    #[cfg(not(feature = "fault-injection"))]
    let _ = (component, point);
}

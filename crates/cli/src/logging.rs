//! The servers' log output: tracing to stderr, filtered by `CAIRN_LOG`
//! (EnvFilter directives; `info` when unset or invalid), through
//! tracing-subscriber's reload layer so that `/logLevel` on the web
//! servers can change a module's level while the process runs.

use std::sync::Mutex;

use cairn_common::web::loglevel::{Directives, LogControl};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{reload, EnvFilter, Registry};

/// `/logLevel`'s hold on the filter.
struct ReloadControl {
    handle: reload::Handle<EnvFilter, Registry>,
    /// The directives in force; changed and reapplied as a whole.
    directives: Mutex<Directives>,
}

impl LogControl for ReloadControl {
    fn effective(&self, target: &str) -> String {
        self.directives
            .lock()
            .map(|d| d.effective(target))
            .unwrap_or_else(|_| "unknown".to_string())
    }

    fn set(&self, target: &str, level: &str) -> Result<(), String> {
        let mut d = self
            .directives
            .lock()
            .map_err(|_| "log directives lock poisoned".to_string())?;
        let mut next = d.clone();
        next.set(target, level);
        let filter = EnvFilter::try_new(next.to_filter_string()).map_err(|e| e.to_string())?;
        self.handle.reload(filter).map_err(|e| e.to_string())?;
        *d = next;
        tracing::info!(target = target, level = level, "log level changed");
        Ok(())
    }
}

/// Installs the subscriber and hands its control to `/logLevel`.
pub fn init() {
    let text = std::env::var("CAIRN_LOG")
        .ok()
        .filter(|t| EnvFilter::try_new(t).is_ok())
        .unwrap_or_else(|| "info".to_string());
    let filter = EnvFilter::try_new(&text).unwrap_or_else(|_| EnvFilter::new("info"));
    let (filter, handle) = reload::Layer::new(filter);
    use std::io::IsTerminal;
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_ansi(std::io::stderr().is_terminal())
                .with_writer(std::io::stderr),
        )
        .init();
    cairn_common::web::loglevel::install(Box::new(ReloadControl {
        handle,
        directives: Mutex::new(Directives::parse(&text)),
    }));
}

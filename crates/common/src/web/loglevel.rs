//! `/logLevel`, HDFS's `LogLevel` servlet: `?log=<module>` shows the
//! module's effective level, `&level=<LEVEL>` sets it first. Cairn's
//! modules are Rust module paths (`cairn_namenode::service`); a level set
//! on a module applies to everything below it, as a log4j logger does.
//!
//! Libraries never install a subscriber (STYLE rule 11), so the binary
//! that does (`cairn`, with tracing-subscriber's reload layer) hands a
//! [`LogControl`] to [`install`]; the directive bookkeeping is
//! [`Directives`], kept here so it is tested without a subscriber.

use std::collections::HashMap;
use std::sync::OnceLock;

use crate::web::page::{esc, kv_table};

/// Levels HDFS's servlet accepts, and what each becomes here (log4j's
/// FATAL is our ERROR, ALL our TRACE).
pub fn normalize_level(level: &str) -> Option<&'static str> {
    match level.to_ascii_uppercase().as_str() {
        "TRACE" | "ALL" => Some("TRACE"),
        "DEBUG" => Some("DEBUG"),
        "INFO" => Some("INFO"),
        "WARN" => Some("WARN"),
        "ERROR" | "FATAL" => Some("ERROR"),
        "OFF" => Some("OFF"),
        _ => None,
    }
}

/// An EnvFilter directive string split into the default level and
/// per-target levels; other directives (span filters) are kept verbatim.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Directives {
    default: Option<String>,
    targets: Vec<(String, String)>,
    other: Vec<String>,
}

impl Directives {
    /// Parses `info,cairn_namenode=debug,...`.
    pub fn parse(s: &str) -> Directives {
        let mut d = Directives::default();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part.split_once('=') {
                Some((t, l)) if !t.contains(['[', '{']) && normalize_level(l).is_some() => {
                    d.set(t, l);
                }
                None if normalize_level(part).is_some() => {
                    d.default = normalize_level(part).map(str::to_string);
                }
                _ => d.other.push(part.to_string()),
            }
        }
        d
    }

    /// Sets `target`'s level (replacing an earlier one for it).
    pub fn set(&mut self, target: &str, level: &str) {
        let level = normalize_level(level).unwrap_or("INFO").to_string();
        let target = target.replace('.', "::");
        match self.targets.iter_mut().find(|(t, _)| *t == target) {
            Some(entry) => entry.1 = level,
            None => self.targets.push((target, level)),
        }
    }

    /// The level that applies to `target`: that of the longest target
    /// directive it starts with, else the default (ERROR when none, as
    /// EnvFilter).
    pub fn effective(&self, target: &str) -> String {
        let target = target.replace('.', "::");
        self.targets
            .iter()
            .filter(|(t, _)| target == *t || target.starts_with(&format!("{t}::")))
            .max_by_key(|(t, _)| t.len())
            .map(|(_, l)| l.clone())
            .or_else(|| self.default.clone())
            .unwrap_or_else(|| "ERROR".to_string())
    }

    /// Back to directive text for EnvFilter.
    pub fn to_filter_string(&self) -> String {
        let mut parts: Vec<String> = self.default.iter().map(|l| l.to_lowercase()).collect();
        parts.extend(
            self.targets
                .iter()
                .map(|(t, l)| format!("{t}={}", l.to_lowercase())),
        );
        parts.extend(self.other.iter().cloned());
        parts.join(",")
    }
}

/// Run-time control of the process's log filter.
pub trait LogControl: Send + Sync {
    /// `target`'s effective level.
    fn effective(&self, target: &str) -> String;
    /// Sets `target`'s level.
    ///
    /// # Errors
    /// A message when the filter could not be changed.
    fn set(&self, target: &str, level: &str) -> Result<(), String>;
}

static CONTROL: OnceLock<Box<dyn LogControl>> = OnceLock::new();

/// Installs the process's log control (once; later calls are ignored and
/// return false).
pub fn install(control: Box<dyn LogControl>) -> bool {
    CONTROL.set(control).is_ok()
}

/// The form on top of every `/logLevel` page.
fn form(log: &str) -> String {
    let options: String = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF"]
        .iter()
        .map(|l| format!("<option>{l}</option>"))
        .collect();
    format!(
        "<form method=\"get\" action=\"/logLevel\"><label>Module: \
         <input name=\"log\" size=\"40\" value=\"{}\" placeholder=\"cairn_namenode::service\"></label> \
         <button type=\"submit\">Get level</button></form>\
         <form method=\"get\" action=\"/logLevel\"><label>Module: \
         <input name=\"log\" size=\"40\" value=\"{}\"></label> <label>Level: <select name=\"level\">{options}</select></label> \
         <button type=\"submit\">Set level</button></form>",
        esc(log),
        esc(log)
    )
}

/// The `/logLevel` page body (HTML) for a query.
pub fn body(query: &HashMap<String, String>) -> String {
    let log = query.get("log").map(String::as_str).unwrap_or("").trim();
    let mut out = form(log);
    if log.is_empty() {
        out.push_str("<p class=\"muted\">Modules are Rust module paths; a level set on one applies below it.</p>");
        return out;
    }
    let Some(control) = CONTROL.get() else {
        out.push_str("<p class=\"bad\">This process has no run-time log control.</p>");
        return out;
    };
    let mut rows = vec![
        ("Submitted Class Name", format!("<b>{}</b>", esc(log))),
        (
            "Log Class",
            "<b>tracing_subscriber::EnvFilter</b>".to_string(),
        ),
    ];
    if let Some(level) = query.get("level").filter(|l| !l.is_empty()) {
        rows.push(("Submitted Level", format!("<b>{}</b>", esc(level))));
        match normalize_level(level) {
            Some(l) => match control.set(log, l) {
                Ok(()) => rows.push(("Setting Level to", format!("{l} ..."))),
                Err(e) => rows.push(("Error", format!("<span class=\"bad\">{}</span>", esc(&e)))),
            },
            None => rows.push(("Bad Level", format!("<b class=\"bad\">{}</b>", esc(level)))),
        }
    }
    rows.push((
        "Effective Level",
        format!(
            "<b id=\"effective-level\">{}</b>",
            esc(&control.effective(log))
        ),
    ));
    out.push_str(&kv_table(&rows));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_resolve_like_envfilter() {
        let mut d =
            Directives::parse("info,hyper=warn,cairn_namenode::service=debug,x[span]=trace");
        assert_eq!(d.effective("cairn_namenode::service::admin"), "DEBUG");
        assert_eq!(d.effective("cairn_namenode::journal"), "INFO");
        assert_eq!(d.effective("hyper"), "WARN");
        assert_eq!(d.effective("hyperx"), "INFO");
        d.set("cairn_namenode", "warn");
        assert_eq!(d.effective("cairn_namenode::journal"), "WARN");
        d.set("cairn_namenode.service", "ERROR");
        assert_eq!(d.effective("cairn_namenode::service"), "ERROR");
        assert_eq!(
            d.to_filter_string(),
            "info,hyper=warn,cairn_namenode::service=error,cairn_namenode=warn,x[span]=trace"
        );
        assert_eq!(Directives::parse("").effective("a"), "ERROR");
        assert_eq!(normalize_level("fatal"), Some("ERROR"));
        assert_eq!(normalize_level("loud"), None);
    }
}

//! Hadoop-style configuration: the key/value map every Cairn server and tool
//! starts from.
//!
//! [`Configuration::load`] reads `core-site.xml` and then `hdfs-site.xml` from
//! a configuration directory (or `$HADOOP_CONF_DIR`), so an existing Hadoop
//! deployment's files work unchanged; `-D key=value` flags are layered on top
//! with [`Configuration::apply_overrides`]. Keys are Hadoop's own names (see
//! [`crate::keys`]); keys we do not know are kept and never cause an error,
//! as in Hadoop.
//!
//! Values are stored as text and parsed when read, by typed getters that take
//! the default to use when the key is unset. Every getter failure is a
//! [`ConfigError`] that names the key, the offending value and where it was
//! set, because a server refuses to start with exactly that message. Servers
//! build their typed, validated config structs from these getters (STYLE rule
//! 12); nothing here knows which keys a given server needs.
//!
//! Hadoop semantics kept on purpose:
//! * a value marked `<final>true</final>` cannot be overridden by a later
//!   file (the attempt is logged and ignored), but `-D` and [`Configuration::set`]
//!   still override it, as Hadoop's `GenericOptionsParser` does;
//! * `${other.key}`, `${env.VAR}` (also `${env.VAR:-default}` and
//!   `${env.VAR-default}`) and `${user.name}` are expanded, left to right, at
//!   most [`MAX_SUBSTITUTIONS`] times per value; an unknown variable is left
//!   as written, and a value that refers to itself is left unexpanded;
//! * values are trimmed; an empty value reads as unset in the typed getters.
//!
//! Deliberate departures: bad booleans are errors (Hadoop silently uses the
//! default), negative sizes and durations are errors, `<xi:include>` is
//! refused, and an explicitly named configuration directory must exist.

mod getters;
mod nameservice;
mod value;
mod xml;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

pub use nameservice::{
    HaNameNode, DFS_HA_NAMENODES_PREFIX, DFS_HA_NAMENODE_ID, DFS_NAMESERVICES, DFS_NAMESERVICE_ID,
};
pub use value::{HostPort, TimeUnit, NAMENODE_RPC_PORT_DEFAULT};

use crate::keys;

/// Environment variable naming the configuration directory when
/// [`Configuration::load`] is given none, as for Hadoop's own scripts.
pub const HADOOP_CONF_DIR_ENV: &str = "HADOOP_CONF_DIR";

/// The files [`Configuration::load`] reads, in order: later ones override
/// earlier ones unless a value was marked final.
pub const SITE_FILES: [&str; 2] = ["core-site.xml", "hdfs-site.xml"];

/// Most `${...}` expansions done for one value, as Hadoop's `MAX_SUBST`.
/// Bounds the work a reference loop (`a = ${b}`, `b = ${a}`) can cause.
pub const MAX_SUBSTITUTIONS: usize = 20;

/// Longest a value may grow to through substitution. Hadoop has no such
/// limit; we have one so that a handful of doubling references cannot eat
/// memory (STYLE rule 6).
const MAX_EXPANDED_BYTES: usize = 1024 * 1024;

/// Built-in values `${...}` can refer to when no file sets the key. Hadoop
/// finds these in `core-default.xml`; without them the common
/// `file://${hadoop.tmp.dir}/dfs/name` would stay unexpanded.
const SUBSTITUTION_DEFAULTS: [(&str, &str); 1] =
    [(keys::HADOOP_TMP_DIR, keys::HADOOP_TMP_DIR_DEFAULT)];

/// What went wrong reading or interpreting the configuration. Each variant's
/// message names the file, flag or key at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The configuration directory given (or named by `$HADOOP_CONF_DIR`)
    /// does not exist or is not a directory.
    #[error("configuration directory {}: {reason}", path.display())]
    ConfDir {
        /// The directory.
        path: PathBuf,
        /// Why it cannot be used.
        reason: String,
    },
    /// A configuration file exists but could not be read.
    #[error("cannot read configuration file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A configuration file is not well-formed XML.
    #[error("malformed XML in configuration file {}: {source}", path.display())]
    Xml {
        /// The file.
        path: PathBuf,
        /// The parser's error, with line and column.
        source: roxmltree::Error,
    },
    /// A configuration file is XML but not a Hadoop configuration.
    #[error("invalid configuration file {}: {reason}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        reason: String,
    },
    /// A `-D` argument is not `key=value`.
    #[error("invalid -D argument {arg:?}: {reason}")]
    Override {
        /// The argument as given.
        arg: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A key's value cannot be used as the getter's type.
    #[error("invalid value {value:?} for configuration key {key} ({origin}): {reason}")]
    InvalidValue {
        /// The key, e.g. `dfs.blocksize`.
        key: String,
        /// The value after substitution (before, if substitution failed).
        value: String,
        /// Where the value was set.
        origin: Origin,
        /// Why it was refused.
        reason: String,
    },
}

/// Where a value came from, for error messages and logs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A configuration file.
    File(PathBuf),
    /// A `-D key=value` argument, see [`Configuration::apply_overrides`].
    Override,
    /// A value passed straight to a parser such as [`parse_hdfs_uri`], for
    /// example from a dedicated command-line flag.
    Argument,
    /// [`Configuration::set`].
    Programmatic,
    /// The default a getter was called with.
    Default,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::File(path) => write!(f, "set in {}", path.display()),
            Origin::Override => f.write_str("set by -D on the command line"),
            Origin::Argument => f.write_str("given as an argument"),
            Origin::Programmatic => f.write_str("set programmatically"),
            Origin::Default => f.write_str("built-in default"),
        }
    }
}

/// Why `${...}` expansion of a value was abandoned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SubstitutionError {
    TooDeep,
    TooLong,
}

impl fmt::Display for SubstitutionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SubstitutionError::TooDeep => write!(
                f,
                "variable substitution needs more than {MAX_SUBSTITUTIONS} steps \
                 (do two keys refer to each other?)"
            ),
            SubstitutionError::TooLong => write!(
                f,
                "variable substitution makes the value longer than {MAX_EXPANDED_BYTES} bytes"
            ),
        }
    }
}

#[derive(Clone, Debug)]
struct Entry {
    /// As set, trimmed, before substitution.
    raw: String,
    /// After substitution and trimming. Kept up to date on every change, so
    /// that [`Configuration::get`] can hand out a plain `&str`.
    resolved: Result<String, SubstitutionError>,
    origin: Origin,
}

/// Where `${env.VAR}` and `${user.name}` look. Tests use a fixed map so they
/// neither depend on nor modify the process environment.
#[derive(Clone, Debug, Default)]
struct Env {
    fixed: Option<BTreeMap<String, String>>,
}

impl Env {
    fn var(&self, name: &str) -> Option<String> {
        // std may panic on such names; they are never real variables anyway.
        if name.is_empty() || name.contains(['=', '\0']) {
            return None;
        }
        match &self.fixed {
            Some(vars) => vars.get(name).cloned(),
            None => std::env::var(name).ok(),
        }
    }

    /// Java's `user.name` system property, approximated from the usual
    /// variables (std offers no portable `getpwuid`).
    fn user_name(&self) -> Option<String> {
        ["USER", "LOGNAME", "USERNAME"]
            .iter()
            .find_map(|v| self.var(v).filter(|s| !s.is_empty()))
    }
}

/// An ordered map of Hadoop configuration properties (keys sorted), with the
/// final-marks of loaded files and the origin of every value.
///
/// Cheap to clone; not shared between threads by design: load it once at
/// startup, read everything into a typed config struct, then drop it.
#[derive(Clone, Debug, Default)]
pub struct Configuration {
    entries: BTreeMap<String, Entry>,
    finals: BTreeSet<String>,
    env: Env,
    defaults_read: DefaultsRead,
}

/// The defaults the getters fell back on, by key, as text: what a server's
/// `/conf` shows for the keys it reads and nobody set (HDFS's shows its
/// `*-default.xml` values). Shared by clones, so a server that keeps a
/// clone sees what was read through the original too.
#[derive(Clone, Debug, Default)]
struct DefaultsRead(std::sync::Arc<std::sync::Mutex<BTreeMap<String, String>>>);

impl DefaultsRead {
    fn note(&self, key: &str, text: String) {
        let mut m = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        m.entry(key.to_owned()).or_insert(text);
    }

    fn snapshot(&self) -> BTreeMap<String, String> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl Configuration {
    /// An empty configuration: every getter returns its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Reads `core-site.xml` and then `hdfs-site.xml` from `conf_dir`, or,
    /// when that is `None`, from `$HADOOP_CONF_DIR` if set and not empty.
    /// With neither, the result is empty (all defaults). A missing file is
    /// skipped; a missing directory is not, since a mistyped path would
    /// otherwise start a server on defaults.
    ///
    /// # Errors
    ///
    /// [`ConfigError::ConfDir`] if the directory does not exist or is not a
    /// directory; [`ConfigError::Read`], [`ConfigError::Xml`] or
    /// [`ConfigError::File`], naming the file, if a file cannot be read, is
    /// malformed XML or is not a `<configuration>`.
    pub fn load(conf_dir: Option<&Path>) -> Result<Self, ConfigError> {
        Self::load_with_env(conf_dir, Env::default())
    }

    fn load_with_env(conf_dir: Option<&Path>, env: Env) -> Result<Self, ConfigError> {
        let mut conf = Configuration {
            env,
            ..Self::default()
        };
        let dir = match conf_dir {
            Some(dir) => Some(dir.to_path_buf()),
            None => conf
                .env
                .var(HADOOP_CONF_DIR_ENV)
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
        };
        let Some(dir) = dir else {
            return Ok(conf);
        };
        match std::fs::metadata(&dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(ConfigError::ConfDir {
                    path: dir,
                    reason: "not a directory".to_owned(),
                })
            }
            Err(e) => {
                return Err(ConfigError::ConfDir {
                    path: dir,
                    reason: e.to_string(),
                })
            }
        }
        for name in SITE_FILES {
            conf.read_file(&dir.join(name))?;
        }
        conf.refresh();
        Ok(conf)
    }

    /// Layers one Hadoop XML configuration file over the current values,
    /// with final semantics: a key a previous file marked final keeps its
    /// value. Returns `false` if the file does not exist.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Read`], [`ConfigError::Xml`] or [`ConfigError::File`],
    /// naming the file; nothing is applied then.
    pub fn merge_file(&mut self, path: &Path) -> Result<bool, ConfigError> {
        let found = self.read_file(path)?;
        self.refresh();
        Ok(found)
    }

    /// Parses the text of one configuration file into a configuration of its
    /// own, as [`merge_file`](Self::merge_file) would read it (`path` is only
    /// recorded as the origin of the values), with an empty environment for
    /// `${env.*}`: what fuzzing and tests run hostile files through.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Xml`] or [`ConfigError::File`] naming `path`.
    #[doc(hidden)]
    pub fn from_xml_text(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let mut conf = Configuration {
            env: Env {
                fixed: Some(BTreeMap::new()),
            },
            ..Self::default()
        };
        let properties = xml::parse(text).map_err(|p| file_problem(path, p))?;
        conf.merge_properties(path, properties);
        conf.refresh();
        Ok(conf)
    }

    fn read_file(&mut self, path: &Path) -> Result<bool, ConfigError> {
        let properties = match xml::read_file(path) {
            Ok(Some(properties)) => properties,
            Ok(None) => return Ok(false),
            Err(problem) => return Err(file_problem(path, problem)),
        };
        self.merge_properties(path, properties);
        Ok(true)
    }

    fn merge_properties(&mut self, path: &Path, properties: Vec<xml::Property>) {
        for property in properties {
            if let Some(value) = property.value {
                if self.finals.contains(&property.name) {
                    if self.get_raw(&property.name) != Some(value.as_str()) {
                        tracing::warn!(
                            file = %path.display(),
                            key = %property.name,
                            "ignoring attempt to override final configuration key"
                        );
                    }
                } else {
                    self.insert(&property.name, value, Origin::File(path.to_path_buf()));
                }
            }
            if property.is_final {
                self.finals.insert(property.name);
            }
        }
    }

    /// Sets `key` to `value` (both trimmed), overriding any earlier value,
    /// final or not.
    pub fn set(&mut self, key: &str, value: &str) {
        self.insert(key.trim(), value.trim().to_owned(), Origin::Programmatic);
        self.refresh();
    }

    /// Applies `-D key=value` arguments in order (the text after the first
    /// `=` is the value, so values may contain `=`). Like Hadoop's
    /// `GenericOptionsParser`, these override even final values.
    ///
    /// # Errors
    ///
    /// [`ConfigError::Override`] naming the first argument without `=` or
    /// with an empty key; nothing is applied then.
    pub fn apply_overrides(&mut self, pairs: &[String]) -> Result<(), ConfigError> {
        let mut parsed = Vec::with_capacity(pairs.len());
        for arg in pairs {
            let Some((key, value)) = arg.split_once('=') else {
                return Err(ConfigError::Override {
                    arg: arg.clone(),
                    reason: "expected key=value".to_owned(),
                });
            };
            let key = key.trim();
            if key.is_empty() {
                return Err(ConfigError::Override {
                    arg: arg.clone(),
                    reason: "the key is empty; expected key=value".to_owned(),
                });
            }
            parsed.push((key, value.trim()));
        }
        for (key, value) in parsed {
            self.insert(key, value.to_owned(), Origin::Override);
        }
        self.refresh();
        Ok(())
    }

    fn insert(&mut self, key: &str, raw: String, origin: Origin) {
        self.entries.insert(
            key.to_owned(),
            Entry {
                resolved: Ok(raw.clone()),
                raw,
                origin,
            },
        );
    }

    /// Re-expands every value. Any change can affect any value through
    /// `${...}`, and configurations are small, so redoing all is simplest.
    fn refresh(&mut self) {
        let resolved: Vec<(String, Result<String, SubstitutionError>)> = self
            .entries
            .iter()
            .filter(|(_, entry)| entry.raw.contains("${"))
            .map(|(key, entry)| (key.clone(), self.substitute(&entry.raw)))
            .collect();
        for (key, value) in resolved {
            if let Some(entry) = self.entries.get_mut(&key) {
                entry.resolved = value.map(|v| v.trim().to_owned());
            }
        }
    }

    /// Hadoop's expansion: repeatedly replace the left-most `${var}` whose
    /// name is known. Stops at the first unknown name (leaving it as
    /// written), returns `expr` unchanged if a value refers to itself.
    fn substitute(&self, expr: &str) -> Result<String, SubstitutionError> {
        let mut eval = expr.to_owned();
        for _ in 0..MAX_SUBSTITUTIONS {
            let Some((start, end)) = find_variable(&eval) else {
                return Ok(eval);
            };
            let (Some(reference), Some(name)) = (
                eval.get(start..end),
                eval.get(start + 2..end.saturating_sub(1)),
            ) else {
                return Ok(eval);
            };
            let Some(value) = self.variable(name) else {
                return Ok(eval);
            };
            if value.contains(reference) {
                return Ok(expr.to_owned());
            }
            let (before, after) = (
                eval.get(..start).unwrap_or_default(),
                eval.get(end..).unwrap_or_default(),
            );
            if before.len() + value.len() + after.len() > MAX_EXPANDED_BYTES {
                return Err(SubstitutionError::TooLong);
            }
            eval = format!("{before}{value}{after}");
        }
        match find_variable(&eval) {
            None => Ok(eval),
            Some(_) => Err(SubstitutionError::TooDeep),
        }
    }

    /// The text `${name}` stands for, in Hadoop's order: environment for
    /// `env.` names, then "system properties" (only `user.name` here), then
    /// configuration keys, then the built-in substitution defaults.
    fn variable(&self, name: &str) -> Option<String> {
        if let Some(spec) = name.strip_prefix("env.").filter(|s| !s.is_empty()) {
            if let Some(value) = self.env_variable(spec) {
                return Some(value);
            }
        } else if name == "user.name" {
            if let Some(user) = self.env.user_name() {
                return Some(user);
            }
        }
        if let Some(entry) = self.entries.get(name) {
            return Some(entry.raw.clone());
        }
        SUBSTITUTION_DEFAULTS
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| (*value).to_owned())
    }

    /// `VAR`, `VAR:-default` (default when unset or empty) or `VAR-default`
    /// (default when unset), split at the first `:-` or `-`.
    fn env_variable(&self, spec: &str) -> Option<String> {
        let dash = spec.find('-');
        let colon_dash = spec.find(":-");
        match (colon_dash, dash) {
            (Some(c), Some(d)) if c < d => {
                let (var, default) = (spec.get(..c)?, spec.get(c + 2..)?);
                Some(
                    self.env
                        .var(var)
                        .filter(|v| !v.is_empty())
                        .unwrap_or_else(|| default.to_owned()),
                )
            }
            (_, Some(d)) => {
                let (var, default) = (spec.get(..d)?, spec.get(d + 1..)?);
                Some(self.env.var(var).unwrap_or_else(|| default.to_owned()))
            }
            (_, None) => self.env.var(spec),
        }
    }

    /// The value of `key` after substitution, or `None` if unset. When
    /// substitution failed (a reference loop), this is the value as written;
    /// the `get_*` getters report that case as an error instead.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries
            .get(key)
            .map(|entry| entry.resolved.as_deref().unwrap_or(&entry.raw))
    }

    /// The value of `key` as written, before substitution.
    pub fn get_raw(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(|entry| entry.raw.as_str())
    }

    /// Where the value of `key` came from.
    pub fn origin(&self, key: &str) -> Option<&Origin> {
        self.entries.get(key).map(|entry| &entry.origin)
    }

    /// Whether a loaded file marked `key` final.
    pub fn is_final(&self, key: &str) -> bool {
        self.finals.contains(key)
    }

    /// All keys with their values after substitution, sorted by key.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(key, entry)| {
            (
                key.as_str(),
                entry.resolved.as_deref().unwrap_or(&entry.raw),
            )
        })
    }

    /// Every key set, and every key a getter read without finding it set
    /// with the default it used, sorted by key: what the server runs with.
    pub fn effective(&self) -> Vec<(String, String, Origin)> {
        let mut all: BTreeMap<String, (String, Origin)> = self
            .defaults_read
            .snapshot()
            .into_iter()
            .map(|(k, v)| (k, (v, Origin::Default)))
            .collect();
        for (key, value) in self.iter() {
            let origin = self.origin(key).cloned().unwrap_or(Origin::Default);
            all.insert(key.to_owned(), (value.to_owned(), origin));
        }
        all.into_iter().map(|(k, (v, o))| (k, v, o)).collect()
    }

    /// Number of keys set.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// An [`ConfigError::InvalidValue`] for a value that parsed but is out of
    /// the range a server can run with (`dfs.replication = 0`), for use in a
    /// config struct's `validate()`. The origin is looked up, so the message
    /// says which file or flag to fix, or "built-in default" if `key` is
    /// unset.
    pub fn invalid_value(
        &self,
        key: &str,
        value: impl fmt::Display,
        reason: impl Into<String>,
    ) -> ConfigError {
        ConfigError::InvalidValue {
            key: key.to_owned(),
            value: value.to_string(),
            origin: self.origin(key).cloned().unwrap_or(Origin::Default),
            reason: reason.into(),
        }
    }

    /// The value of `key` after substitution and where it came from.
    fn lookup(&self, key: &str) -> Result<Option<(&str, &Origin)>, ConfigError> {
        let Some(entry) = self.entries.get(key) else {
            return Ok(None);
        };
        match &entry.resolved {
            Ok(value) => Ok(Some((value, &entry.origin))),
            Err(e) => Err(ConfigError::InvalidValue {
                key: key.to_owned(),
                value: entry.raw.clone(),
                origin: entry.origin.clone(),
                reason: e.to_string(),
            }),
        }
    }

    /// Like [`lookup`](Self::lookup), with an empty value read as unset.
    fn lookup_set(&self, key: &str) -> Result<Option<(&str, &Origin)>, ConfigError> {
        Ok(self.lookup(key)?.filter(|(value, _)| !value.is_empty()))
    }

    /// [`lookup_set`](Self::lookup_set), noting the text `default` for
    /// [`effective`](Self::effective) when the key is unset.
    fn lookup_set_or_note(
        &self,
        key: &str,
        default: &str,
    ) -> Result<Option<(&str, &Origin)>, ConfigError> {
        let found = self.lookup_set(key)?;
        if found.is_none() && !default.is_empty() {
            self.defaults_read.note(key, default.to_owned());
        }
        Ok(found)
    }

    /// Parses the value of `key` with `parse`, or returns `default` when the
    /// key is unset or empty. `shown` writes the default as text, noted for
    /// [`effective`](Self::effective) when it is used (`None`: not noted).
    fn parsed<T>(
        &self,
        key: &str,
        default: T,
        shown: impl FnOnce(&T) -> Option<String>,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, ConfigError> {
        match self.lookup_set(key)? {
            None => {
                if let Some(text) = shown(&default) {
                    self.defaults_read.note(key, text);
                }
                Ok(default)
            }
            Some((value, origin)) => {
                parse(value).map_err(|reason| invalid(key, value, origin, reason))
            }
        }
    }

    /// Parses the value of `key`, or the text `default` when unset or empty.
    fn parsed_or_text<T>(
        &self,
        key: &str,
        default: &str,
        parse: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, ConfigError> {
        let found = self.lookup_set_or_note(key, default)?;
        let (value, origin) = found.unwrap_or((default, &Origin::Default));
        parse(value).map_err(|reason| invalid(key, value, origin, reason))
    }
}

/// Parses an `hdfs://host[:port]` URI (see
/// [`Configuration::get_hdfs_uri`]) found under `key`, for values that do
/// not come from a [`Configuration`], such as a command-line flag.
///
/// # Errors
///
/// [`ConfigError::InvalidValue`] naming `key` for any other scheme, a missing
/// host or a bad port.
pub fn parse_hdfs_uri(key: &str, value: &str) -> Result<HostPort, ConfigError> {
    value::parse_hdfs_uri(value).map_err(|reason| invalid(key, value, &Origin::Argument, reason))
}

fn invalid(key: &str, value: &str, origin: &Origin, reason: String) -> ConfigError {
    ConfigError::InvalidValue {
        key: key.to_owned(),
        value: value.to_owned(),
        origin: origin.clone(),
        reason,
    }
}

fn file_problem(path: &Path, problem: xml::FileProblem) -> ConfigError {
    let path = path.to_path_buf();
    match problem {
        xml::FileProblem::Io(source) => ConfigError::Read { path, source },
        xml::FileProblem::Syntax(source) => ConfigError::Xml { path, source },
        xml::FileProblem::Structure(reason) => ConfigError::File { path, reason },
    }
}

/// Byte range of the left-most `${name}` in `s`, as Hadoop finds it: a name
/// is one or more characters other than `}`, `$` and space. Returns the
/// range from `$` to past `}`.
fn find_variable(s: &str) -> Option<(usize, usize)> {
    let bytes = s.as_bytes();
    let mut from = 0;
    while let Some(offset) = s.get(from..).and_then(|rest| rest.find("${")) {
        let start = from + offset;
        let name_start = start + 2;
        let mut i = name_start;
        loop {
            match bytes.get(i) {
                None => return None,
                Some(b'}') if i > name_start => return Some((start, i + 1)),
                Some(b'}' | b'$' | b' ') => break,
                Some(_) => i += 1,
            }
        }
        // Resume at the character that ended the attempt: a `$` there may
        // itself open the next `${`.
        from = i;
    }
    None
}

#[cfg(test)]
mod config_getters_test;
#[cfg(test)]
mod config_test;

//! The typed getters of [`Configuration`]: each reads one key as a string,
//! boolean, number, size, duration, list or address, with the default to
//! use when it is unset, and names the key, value and origin when it does
//! not parse.

use std::net::SocketAddr;
use std::time::Duration;

use super::{
    invalid, value, ConfigError, Configuration, HostPort, TimeUnit, NAMENODE_RPC_PORT_DEFAULT,
};
use crate::keys;

impl Configuration {
    /// The value of `key` after substitution, `None` if unset.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] if substitution failed (a reference loop).
    pub fn get_str(&self, key: &str) -> Result<Option<&str>, ConfigError> {
        Ok(self.lookup(key)?.map(|(value, _)| value))
    }

    /// The value of `key` after substitution, or `default` if unset or empty.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] if substitution failed (a reference loop).
    pub fn get_str_or<'a>(&'a self, key: &str, default: &'a str) -> Result<&'a str, ConfigError> {
        let found = self.lookup_set_or_note(key, default)?;
        Ok(found.map_or(default, |(value, _)| value))
    }

    /// `true` or `false` in any case; `default` if unset or empty.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key for any other text.
    pub fn get_bool(&self, key: &str, default: bool) -> Result<bool, ConfigError> {
        self.parsed(key, default, shown, value::parse_bool)
    }

    /// [`Self::get_bool`] for keys whose absence means something of its
    /// own: `None` if unset or empty.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key for any other text.
    pub fn get_bool_opt(&self, key: &str) -> Result<Option<bool>, ConfigError> {
        self.parsed(key, None, |_| None, |v| value::parse_bool(v).map(Some))
    }

    /// A non-negative decimal or `0x` hexadecimal integer; `default` if unset
    /// or empty.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key if the value is not such a
    /// number, is negative, or exceeds `u32::MAX`.
    pub fn get_u32(&self, key: &str, default: u32) -> Result<u32, ConfigError> {
        self.parsed(key, default, shown, value::parse_u32)
    }

    /// A non-negative decimal or `0x` hexadecimal integer; `default` if unset
    /// or empty. Size suffixes are not accepted here; see
    /// [`get_bytes`](Self::get_bytes).
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key if the value is not such a
    /// number, is negative, or exceeds `u64::MAX`.
    pub fn get_u64(&self, key: &str, default: u64) -> Result<u64, ConfigError> {
        self.parsed(key, default, shown, value::parse_u64)
    }

    /// A signed decimal or `0x` hexadecimal integer; `default` if unset or
    /// empty.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key if the value is not such a
    /// number or does not fit in `i64`.
    pub fn get_i64(&self, key: &str, default: i64) -> Result<i64, ConfigError> {
        self.parsed(key, default, shown, value::parse_i64)
    }

    /// A finite decimal number, as Hadoop's `getFloat`; `default` if unset
    /// or empty.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key if the value is not a
    /// finite number.
    pub fn get_f32(&self, key: &str, default: f32) -> Result<f32, ConfigError> {
        self.parsed(key, default, shown, |v| {
            v.parse::<f32>()
                .ok()
                .filter(|f| f.is_finite())
                .ok_or_else(|| "not a number".to_string())
        })
    }

    /// A byte count, plain or with a binary suffix `k`, `m`, `g`, `t`, `p`
    /// or `e` (any case: `128m` is 134217728), as Hadoop's `getLongBytes`;
    /// `default` if unset or empty.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key for fractions, unknown
    /// suffixes, negatives, and values above `i64::MAX` (Hadoop's limit).
    pub fn get_bytes(&self, key: &str, default: u64) -> Result<u64, ConfigError> {
        self.parsed(key, default, shown, value::parse_bytes)
    }

    /// A duration with a Hadoop time suffix (`ns`, `us`, `ms`, `s`, `m`, `h`,
    /// `d`, any case), or a bare number in `default_unit`, which must be the
    /// unit the key is documented in (`dfs.heartbeat.interval` is seconds,
    /// `ipc.client.connection.maxidletime` milliseconds; see
    /// [`crate::keys`]). `default` if unset or empty.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key for fractions, negatives,
    /// unknown suffixes and durations too large to represent.
    pub fn get_duration(
        &self,
        key: &str,
        default_unit: TimeUnit,
        default: Duration,
    ) -> Result<Duration, ConfigError> {
        let shown = |d: &Duration| Some(duration_text(*d, default_unit));
        self.parsed(key, default, shown, |v| {
            value::parse_duration(v, default_unit)
        })
    }

    /// Hadoop's `getTrimmedStrings`: the value split on commas (and
    /// newlines), each piece trimmed, empty pieces dropped; empty if unset.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] if substitution failed (a reference loop).
    pub fn get_strings(&self, key: &str) -> Result<Vec<String>, ConfigError> {
        Ok(self
            .lookup(key)?
            .map(|(value, _)| value::split_list(value))
            .unwrap_or_default())
    }

    /// A `host:port` (or `[v6addr]:port`) address, without name resolution;
    /// the text `default` is parsed if the key is unset or empty.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key if the value (or
    /// `default`) is not `host:port` with a port from 0 to 65535.
    pub fn get_host_port(&self, key: &str, default: &str) -> Result<HostPort, ConfigError> {
        self.parsed_or_text(key, default, |v| value::parse_host_port(v, None))
    }

    /// [`get_host_port`](Self::get_host_port), then resolved to a socket
    /// address with [`HostPort::resolve`]: IP literals as they are,
    /// `localhost` as `127.0.0.1`, other names through the system resolver
    /// (blocking; call at startup).
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key if the value is not
    /// `host:port` or the host cannot be resolved.
    pub fn get_socket_addr(&self, key: &str, default: &str) -> Result<SocketAddr, ConfigError> {
        self.parsed_or_text(key, default, |v| {
            value::parse_host_port(v, None)?
                .resolve()
                .map_err(|e| format!("cannot resolve host: {e}"))
        })
    }

    /// An `hdfs://host[:port]` URI, as in `fs.defaultFS`, reduced to the
    /// NameNode's address; the port defaults to 8020. The text `default` is
    /// parsed if the key is unset or empty.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming the key for any other scheme
    /// (`file:///`, `viewfs://`, ...), a missing host or a bad port.
    pub fn get_hdfs_uri(&self, key: &str, default: &str) -> Result<HostPort, ConfigError> {
        self.parsed_or_text(key, default, value::parse_hdfs_uri)
    }

    /// Where the NameNode serves client RPC, as Hadoop works it out:
    /// `dfs.namenode.rpc-address` if set (port 8020 if it names none),
    /// otherwise the authority of `fs.defaultFS`. HA name services
    /// (`dfs.nameservices`) are not supported.
    ///
    /// # Errors
    ///
    /// [`ConfigError::InvalidValue`] naming `dfs.namenode.rpc-address` if
    /// that is malformed, or naming `fs.defaultFS` if it is used and is not
    /// an `hdfs://` URI (its default, `file:///`, is not).
    pub fn namenode_rpc_address(&self) -> Result<HostPort, ConfigError> {
        let key = keys::DFS_NAMENODE_RPC_ADDRESS;
        if let Some((value, origin)) = self.lookup_set(key)? {
            return value::parse_host_port(value, Some(NAMENODE_RPC_PORT_DEFAULT))
                .map_err(|reason| invalid(key, value, origin, reason));
        }
        self.get_hdfs_uri(keys::FS_DEFAULT_FS, keys::FS_DEFAULT_FS_DEFAULT)
    }
}

/// A default as its text.
fn shown<T: ToString>(default: &T) -> Option<String> {
    Some(default.to_string())
}

/// A default duration as a value of `unit` would be written: a bare number
/// of that unit when it divides exactly, else with the largest exact
/// suffix of `ms`, `us`, `ns`.
fn duration_text(d: Duration, unit: TimeUnit) -> String {
    let nanos = d.as_nanos();
    let exact = |u: TimeUnit| {
        u.duration(1)
            .map(|one| one.as_nanos())
            .filter(|n| *n > 0 && nanos.is_multiple_of(*n))
            .map(|n| nanos / n)
    };
    if let Some(n) = exact(unit) {
        return n.to_string();
    }
    [
        TimeUnit::Milliseconds,
        TimeUnit::Microseconds,
        TimeUnit::Nanoseconds,
    ]
    .into_iter()
    .find_map(|u| exact(u).map(|n| format!("{n}{}", u.suffix())))
    .unwrap_or_else(|| format!("{nanos}ns"))
}

//! Parsers for the textual forms Hadoop configuration values take: booleans,
//! decimal or `0x` hexadecimal integers, sizes with binary suffixes (`128m`),
//! durations with time suffixes (`3s`, `10000ms`), `host:port` addresses and
//! `hdfs://host:port` URIs.
//!
//! Every parser is a pure function from text to a value or to a short reason
//! (the "why" half of an error message). The caller, which knows the key and
//! where the value came from, wraps the reason into a
//! [`ConfigError`](super::ConfigError). Keeping these free of the key makes them
//! easy to test exhaustively and reusable for command-line flags.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::time::Duration;

/// Port a NameNode listens on for client RPC when an address names none.
///
/// Hadoop's `HdfsClientConfigKeys.DFS_NAMENODE_RPC_PORT_DEFAULT`.
pub const NAMENODE_RPC_PORT_DEFAULT: u16 = 8020;

/// Largest value a size may take. Hadoop parses sizes into a Java `long`, so
/// anything above `i64::MAX` would be accepted by us and refused by a stock
/// Hadoop tool reading the same file; we refuse it too.
const SIZE_MAX: u64 = i64::MAX as u64;

/// The unit of a time duration, used for the suffix of a configured value and
/// for the unit a bare number is read in.
///
/// The suffixes are Hadoop's (`Configuration.ParsedTimeDuration`): `ns`, `us`,
/// `ms`, `s`, `m`, `h`, `d`. Note that `m` is minutes, never months or metres.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    /// `ns`
    Nanoseconds,
    /// `us`
    Microseconds,
    /// `ms`
    Milliseconds,
    /// `s`
    Seconds,
    /// `m`
    Minutes,
    /// `h`
    Hours,
    /// `d`
    Days,
}

/// Suffixes in the order Hadoop tries them. Order matters: `ns`, `us` and `ms`
/// must be tried before `s`, because every one of them also ends in `s`.
const TIME_SUFFIXES: [(&str, TimeUnit); 7] = [
    ("ns", TimeUnit::Nanoseconds),
    ("us", TimeUnit::Microseconds),
    ("ms", TimeUnit::Milliseconds),
    ("s", TimeUnit::Seconds),
    ("m", TimeUnit::Minutes),
    ("h", TimeUnit::Hours),
    ("d", TimeUnit::Days),
];

impl TimeUnit {
    /// The suffix Hadoop writes and reads for this unit, e.g. `"ms"`.
    pub const fn suffix(self) -> &'static str {
        match self {
            TimeUnit::Nanoseconds => "ns",
            TimeUnit::Microseconds => "us",
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Seconds => "s",
            TimeUnit::Minutes => "m",
            TimeUnit::Hours => "h",
            TimeUnit::Days => "d",
        }
    }

    /// `count` of this unit as a [`Duration`], or `None` when that does not
    /// fit (only possible for minutes, hours and days).
    pub fn duration(self, count: u64) -> Option<Duration> {
        let secs_per = match self {
            TimeUnit::Nanoseconds => return Some(Duration::from_nanos(count)),
            TimeUnit::Microseconds => return Some(Duration::from_micros(count)),
            TimeUnit::Milliseconds => return Some(Duration::from_millis(count)),
            TimeUnit::Seconds => 1,
            TimeUnit::Minutes => 60,
            TimeUnit::Hours => 60 * 60,
            TimeUnit::Days => 24 * 60 * 60,
        };
        count.checked_mul(secs_per).map(Duration::from_secs)
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            TimeUnit::Nanoseconds => "nanoseconds",
            TimeUnit::Microseconds => "microseconds",
            TimeUnit::Milliseconds => "milliseconds",
            TimeUnit::Seconds => "seconds",
            TimeUnit::Minutes => "minutes",
            TimeUnit::Hours => "hours",
            TimeUnit::Days => "days",
        };
        f.write_str(name)
    }
}

/// A host name or IP address with a port, as written in Hadoop address keys
/// (`dfs.namenode.rpc-address`, `dfs.datanode.address`, ...).
///
/// Parsing does no name resolution; call [`HostPort::resolve`] for that. The
/// host is kept without the brackets an IPv6 address is written in;
/// [`Display`](fmt::Display) puts them back.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostPort {
    host: String,
    port: u16,
}

impl HostPort {
    /// An address from its parts. The host is not validated: use this for
    /// values the program itself produced, and the configuration getters for
    /// text from a user.
    pub fn new(host: impl Into<String>, port: u16) -> Self {
        HostPort {
            host: host.into(),
            port,
        }
    }

    /// The host name or IP address, without IPv6 brackets.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The port; 0 asks the operating system for a free one when binding.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Turns the address into a socket address.
    ///
    /// IP literals are used as they are and `localhost` (any case) becomes
    /// `127.0.0.1` without asking the resolver, so tests and single-machine
    /// setups never depend on `/etc/hosts`. Other names go through the
    /// system resolver, which blocks: call this at startup or from
    /// `spawn_blocking`, never on an async task. When a name has several
    /// addresses the first IPv4 one wins, as with Java's usual
    /// `preferIPv4Stack` setting in Hadoop deployments.
    ///
    /// # Errors
    ///
    /// The resolver's error, or `NotFound` when it returned no address.
    pub fn resolve(&self) -> std::io::Result<SocketAddr> {
        if let Ok(ip) = self.host.parse::<IpAddr>() {
            return Ok(SocketAddr::new(ip, self.port));
        }
        if self.host.eq_ignore_ascii_case("localhost") {
            return Ok(SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), self.port));
        }
        let addrs: Vec<SocketAddr> = (self.host.as_str(), self.port).to_socket_addrs()?.collect();
        addrs
            .iter()
            .find(|a| a.is_ipv4())
            .or_else(|| addrs.first())
            .copied()
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("host {} has no addresses", self.host),
                )
            })
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') {
            write!(f, "[{}]:{}", self.host, self.port)
        } else {
            write!(f, "{}:{}", self.host, self.port)
        }
    }
}

/// `true`/`false` in any case, as Hadoop's `getBoolean`. Unlike Hadoop, which
/// silently falls back to the default on anything else, other text is an
/// error: a typo in `dfs.permissions.enabled` must not quietly pick a value.
pub(crate) fn parse_bool(text: &str) -> Result<bool, String> {
    let t = text.trim();
    if t.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if t.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err("expected true or false".to_owned())
    }
}

/// A non-negative integer in decimal or, with a `0x`/`0X` prefix, hexadecimal
/// (Hadoop's `getInt`/`getLong` accept both). A leading `+` is allowed, as
/// Java's `Long.parseLong` allows it.
pub(crate) fn parse_u64(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if t.starts_with('-') {
        return Err("must not be negative".to_owned());
    }
    parse_magnitude(t.strip_prefix('+').unwrap_or(t), u64::MAX)
}

/// As [`parse_u64`], limited to `u32`.
pub(crate) fn parse_u32(text: &str) -> Result<u32, String> {
    let n = parse_u64(text)?;
    u32::try_from(n).map_err(|_| format!("too large (maximum {})", u32::MAX))
}

/// A signed integer in decimal or hexadecimal (`-0x10` is -16, as in Hadoop).
pub(crate) fn parse_i64(text: &str) -> Result<i64, String> {
    let t = text.trim();
    let (negative, body) = match t.strip_prefix('-') {
        Some(body) => (true, body),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let magnitude = parse_magnitude(body, u64::MAX)?;
    let value = if negative {
        0i64.checked_sub_unsigned(magnitude)
    } else {
        i64::try_from(magnitude).ok()
    };
    value.ok_or_else(|| format!("out of range ({} to {})", i64::MIN, i64::MAX))
}

/// Digits with an optional `0x` prefix, no sign, at most `max`.
fn parse_magnitude(body: &str, max: u64) -> Result<u64, String> {
    let (digits, radix) = match body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (body, 10),
    };
    let n = parse_digits(digits, radix)?;
    if n > max {
        return Err(format!("too large (maximum {max})"));
    }
    Ok(n)
}

/// Only digits of `radix`, at least one, without overflowing `u64`.
fn parse_digits(digits: &str, radix: u32) -> Result<u64, String> {
    let what = if radix == 16 {
        "a hexadecimal integer"
    } else {
        "an integer"
    };
    if digits.is_empty() {
        return Err(format!("expected {what}"));
    }
    let mut n: u64 = 0;
    for c in digits.chars() {
        let d = c
            .to_digit(radix)
            .ok_or_else(|| format!("expected {what}, found {c:?}"))?;
        n = n
            .checked_mul(u64::from(radix))
            .and_then(|n| n.checked_add(u64::from(d)))
            .ok_or_else(|| format!("too large (maximum {})", u64::MAX))?;
    }
    Ok(n)
}

/// A byte count: a plain decimal number, or one followed by one of Hadoop's
/// binary prefixes `k`, `m`, `g`, `t`, `p`, `e` (any case; `128m` is
/// 134217728). As in Hadoop's `StringUtils.TraditionalBinaryPrefix`, there is
/// no fraction and no trailing `b`. Unlike Hadoop, negatives are refused: no
/// size in HDFS can be negative.
pub(crate) fn parse_bytes(text: &str) -> Result<u64, String> {
    const HINT: &str = "expected a number of bytes, optionally followed by k, m, g, t, p or e";
    let t = text.trim();
    let Some(last) = t.chars().next_back() else {
        return Err(HINT.to_owned());
    };
    let (number, shift) = if last.is_ascii_digit() {
        (t, 0u32)
    } else {
        let shift = match last.to_ascii_lowercase() {
            'k' => 10,
            'm' => 20,
            'g' => 30,
            't' => 40,
            'p' => 50,
            'e' => 60,
            other => return Err(format!("unknown size suffix {other:?}; {HINT}")),
        };
        let number = t.strip_suffix(last).unwrap_or(t).trim_end();
        (number, shift)
    };
    if number.starts_with('-') {
        return Err("must not be negative".to_owned());
    }
    let n = parse_digits(number.strip_prefix('+').unwrap_or(number), 10)
        .map_err(|reason| format!("{reason}; {HINT}"))?;
    n.checked_mul(1u64 << shift)
        .filter(|&bytes| bytes <= SIZE_MAX)
        .ok_or_else(|| format!("too large (maximum {SIZE_MAX} bytes, Hadoop's limit)"))
}

/// A duration: a non-negative whole number followed by one of Hadoop's time
/// suffixes (`ns`, `us`, `ms`, `s`, `m`, `h`, `d`, any case), or a bare number
/// read in `default_unit`, the unit the key is documented in.
pub(crate) fn parse_duration(text: &str, default_unit: TimeUnit) -> Result<Duration, String> {
    let lower = text.trim().to_ascii_lowercase();
    let (number, unit) = TIME_SUFFIXES
        .iter()
        .find_map(|&(suffix, unit)| lower.strip_suffix(suffix).map(|n| (n.trim_end(), unit)))
        .unwrap_or((lower.as_str(), default_unit));
    if number.starts_with('-') {
        return Err("must not be negative".to_owned());
    }
    let n = parse_digits(number.strip_prefix('+').unwrap_or(number), 10).map_err(|reason| {
        format!(
            "{reason}; expected a whole number followed by ns, us, ms, s, m, h or d, \
             or a bare number of {default_unit}"
        )
    })?;
    unit.duration(n)
        .ok_or_else(|| format!("too large ({n} {unit} does not fit)"))
}

/// Hadoop's `getTrimmedStrings`: split on commas and newlines, trim each
/// piece. Unlike Hadoop's array form, empty pieces are dropped, so a trailing
/// comma or a blank line in a list never yields an empty entry.
pub(crate) fn split_list(text: &str) -> Vec<String> {
    text.split([',', '\n'])
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// `host:port`, `[v6addr]:port`, or a host alone when `default_port` is given.
pub(crate) fn parse_host_port(text: &str, default_port: Option<u16>) -> Result<HostPort, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty address; expected host:port".to_owned());
    }
    let (host, port_text) = if let Some(rest) = t.strip_prefix('[') {
        let (host, after) = rest
            .split_once(']')
            .ok_or("unterminated '[' in IPv6 address")?;
        if host.parse::<Ipv6Addr>().is_err() {
            return Err(format!("{host:?} is not an IPv6 address"));
        }
        let port_text = if after.is_empty() {
            None
        } else {
            Some(after.strip_prefix(':').ok_or("expected ':' after ']'")?)
        };
        (host, port_text)
    } else {
        let (host, port_text) = match t.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (t, None),
        };
        if host.contains(':') {
            return Err("an IPv6 address must be written in brackets, e.g. [::1]:8020".to_owned());
        }
        check_host_name(host)?;
        (host, port_text)
    };
    let port = match (port_text, default_port) {
        (Some(p), _) if !p.is_empty() => parse_port(p)?,
        (_, Some(default)) => default,
        (_, None) => return Err("missing port; expected host:port".to_owned()),
    };
    Ok(HostPort::new(host, port))
}

/// Host names and IPv4 literals: letters, digits, `-`, `.` and `_` (the last
/// is not valid DNS but appears in container and cloud host names, and Java
/// accepts it).
fn check_host_name(host: &str) -> Result<(), String> {
    if host.is_empty() {
        return Err("missing host; expected host:port".to_owned());
    }
    match host
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')))
    {
        Some(c) => Err(format!("invalid character {c:?} in host name")),
        None => Ok(()),
    }
}

fn parse_port(text: &str) -> Result<u16, String> {
    parse_digits(text, 10)
        .ok()
        .and_then(|n| u16::try_from(n).ok())
        .ok_or_else(|| format!("port {text:?} is not a number from 0 to 65535"))
}

/// An `hdfs://host[:port][/path]` URI, as in `fs.defaultFS`, to the NameNode
/// address; the port defaults to [`NAMENODE_RPC_PORT_DEFAULT`]. Scheme case
/// does not matter, user info and path are ignored. A bare `host[:port]`
/// without scheme is read as `hdfs://host[:port]`, as Hadoop's
/// `FileSystem.fixName` still does for old configurations.
pub(crate) fn parse_hdfs_uri(text: &str) -> Result<HostPort, String> {
    let t = text.trim();
    let rest = if let Some((scheme, rest)) = t.split_once("://") {
        if !scheme.eq_ignore_ascii_case("hdfs") {
            return Err(format!(
                "file system scheme {scheme:?} is not supported; expected hdfs://host:port"
            ));
        }
        rest
    } else if t.is_empty() || t.contains('/') || t.eq_ignore_ascii_case("local") {
        return Err("not an hdfs:// URI; expected hdfs://host:port".to_owned());
    } else {
        t
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    if authority.is_empty() {
        return Err("the URI names no host; expected hdfs://host:port".to_owned());
    }
    parse_host_port(authority, Some(NAMENODE_RPC_PORT_DEFAULT))
}

#[cfg(test)]
mod value_test;

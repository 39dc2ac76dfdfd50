//! `cairn admin -setQuota/-clrQuota/-setSpaceQuota/-clrSpaceQuota`, as
//! `hdfs dfsadmin` runs them: each directory in turn through
//! ClientProtocol's `setQuota`, DFSClient's argument checks first, errors
//! printed as `CMD: message` and the exit status 255 (Java's -1) when any
//! directory failed.

use cairn_proto::hadoop::hdfs as pb;
use cairn_rpc::client::{Client, ClientError};

/// HDFS's `QUOTA_DONT_SET` and `QUOTA_RESET`.
const DONT_SET: i64 = i64::MAX;
const RESET: i64 = -1;

/// Storage types that take a quota, with their `StorageTypeProto` numbers.
const QUOTA_TYPES: [(&str, i32); 5] = [
    ("SSD", 2),
    ("DISK", 1),
    ("ARCHIVE", 3),
    ("PROVIDED", 5),
    ("NVDIMM", 6),
];

/// Whether `cmd` is one of the quota commands.
pub(crate) fn is_quota_command(cmd: &str) -> bool {
    matches!(
        cmd,
        "-setQuota" | "-clrQuota" | "-setSpaceQuota" | "-clrSpaceQuota"
    )
}

/// Hadoop's `TraditionalBinaryPrefix.string2long`: a number with an
/// optional k, m, g, t, p or e (binary) suffix.
fn string2long(s: &str) -> Option<i64> {
    let s = s.trim();
    let last = s.chars().last()?;
    let shift = match last.to_ascii_lowercase() {
        'k' => 10,
        'm' => 20,
        'g' => 30,
        't' => 40,
        'p' => 50,
        'e' => 60,
        _ => return s.parse().ok(),
    };
    let n: i64 = s[..s.len() - 1].parse().ok()?;
    n.checked_mul(1i64 << shift)
}

/// One command's values for each directory: (namespace, space, type).
struct Request {
    name: &'static str,
    ns: i64,
    ss: i64,
    storage_type: Option<i32>,
}

/// Parses a quota command's arguments (after the command itself).
fn parse(cmd: &str, mut args: Vec<String>) -> Result<(Request, Vec<String>), String> {
    let name = match cmd {
        "-setQuota" => "setQuota",
        "-clrQuota" => "clrQuota",
        "-setSpaceQuota" => "setSpaceQuota",
        _ => "clrSpaceQuota",
    };
    let mut storage_type = None;
    if let Some(i) = args.iter().position(|a| a == "-storageType") {
        if cmd == "-setSpaceQuota" || cmd == "-clrSpaceQuota" {
            let t = args
                .get(i + 1)
                .cloned()
                .ok_or_else(|| format!("{name}: -storageType needs a storage type"))?;
            args.drain(i..i + 2);
            let upper = t.to_ascii_uppercase();
            if upper == "RAM_DISK" {
                return Err(format!(
                    "{name}: Don't support Quota for storage type : RAM_DISK"
                ));
            }
            let found = QUOTA_TYPES.iter().find(|(n, _)| *n == upper).ok_or_else(|| {
                format!(
                    "{name}: Storage type {t} is not available. Available storage types are [SSD, DISK, ARCHIVE, PROVIDED, NVDIMM]"
                )
            })?;
            storage_type = Some(found.1);
        }
    }
    let needs_value = cmd.starts_with("-set");
    let value = if needs_value {
        if args.len() < 2 {
            return Err(format!(
                "{name}: Not enough arguments: expected 2 but got {}",
                args.len()
            ));
        }
        let v = args.remove(0);
        string2long(&v)
            .ok_or_else(|| format!("{name}: \"{}\" is not a valid value for a quota.", v.trim()))?
    } else {
        if args.is_empty() {
            return Err(format!(
                "{name}: Not enough arguments: expected 1 but got 0"
            ));
        }
        RESET
    };
    let (ns, ss) = match cmd {
        "-setQuota" | "-clrQuota" => (value, DONT_SET),
        _ => (DONT_SET, value),
    };
    // DFSClient's own checks before any call.
    let invalid = match storage_type {
        Some(_) => (ss <= 0 && ss != DONT_SET && ss != RESET)
            .then(|| format!("Invalid values for quota :{ss}")),
        None => ((ns <= 0 && ns != DONT_SET && ns != RESET)
            || (ss < 0 && ss != DONT_SET && ss != RESET))
            .then(|| format!("Invalid values for quota : {ns} and {ss}")),
    };
    if let Some(message) = invalid {
        return Err(format!("{name}: {message}"));
    }
    Ok((
        Request {
            name,
            ns,
            ss,
            storage_type,
        },
        args,
    ))
}

fn wire(v: i64) -> u64 {
    u64::from_ne_bytes(v.to_ne_bytes())
}

/// Runs a quota command on each directory; returns the exit status.
pub(crate) async fn run(client: &Client, cmd: &str, args: Vec<String>) -> i32 {
    let (req, dirs) = match parse(cmd, args) {
        Ok(parsed) => parsed,
        Err(message) => {
            eprintln!("{message}");
            return 255;
        }
    };
    let mut status = 0;
    for dir in dirs {
        let request = pb::SetQuotaRequestProto {
            path: dir,
            namespace_quota: wire(req.ns),
            storagespace_quota: wire(req.ss),
            storage_type: req.storage_type,
        };
        let reply = client
            .call::<_, pb::SetQuotaResponseProto>("setQuota", &request)
            .await;
        if let Err(e) = reply {
            let message = match e {
                ClientError::Remote { message, .. } | ClientError::Fatal { message, .. } => {
                    message.lines().next().unwrap_or_default().to_owned()
                }
                other => other.to_string(),
            };
            eprintln!("{}: {message}", req.name);
            status = 255;
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn arguments_as_dfsadmin_reads_them() {
        assert_eq!(string2long("1k"), Some(1024));
        assert_eq!(string2long("3G"), Some(3 << 30));
        assert_eq!(string2long("12"), Some(12));
        assert_eq!(string2long("x"), None);
        let (r, dirs) = parse(
            "-setSpaceQuota",
            args(&["1m", "-storageType", "ssd", "/a", "/b"]),
        )
        .expect("parse");
        assert_eq!((r.ns, r.ss, r.storage_type), (DONT_SET, 1 << 20, Some(2)));
        assert_eq!(dirs, args(&["/a", "/b"]));
        let (r, _) = parse("-clrQuota", args(&["/a"])).expect("parse");
        assert_eq!((r.ns, r.ss), (RESET, DONT_SET));
        assert_eq!(
            parse("-setQuota", args(&["0", "/a"])).err(),
            Some("setQuota: Invalid values for quota : 0 and 9223372036854775807".into())
        );
        assert_eq!(
            parse(
                "-setSpaceQuota",
                args(&["1k", "-storageType", "RAM_DISK", "/a"])
            )
            .err(),
            Some("setSpaceQuota: Don't support Quota for storage type : RAM_DISK".into())
        );
    }
}

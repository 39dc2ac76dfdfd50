//! `-getfattr` and `-setfattr`: Hadoop's `XAttrCommands`.
//!
//! hdfs-native has no extended-attribute calls, so these go to the
//! NameNode over our own IPC client. What they print follows the Java
//! shell exactly, including one accident of it: `-getfattr -d` lists the
//! attributes in the iteration order of the `java.util.HashMap` the Java
//! client puts them in ([`java_hash_map_order`]).

use cairn_common::xattr_codec::{self, decode_value, Encoding};
use cairn_proto::hadoop::hdfs as pb;

use super::args::{check_one_path, pop_option_with_argument, CommandFormat, UsageError};
use super::shell::{not_found, Item, Shell, Step, Walk};

pub(crate) const GETFATTR_USAGE: &str = "[-R] {-n name | -d} [-e en] <path>";
pub(crate) const GETFATTR_DESCRIPTION: &str = "\
Displays the file name, and the set of extended attribute names (and
optionally values) which are associated with that file or directory.
-R: List the attributes of all files and directories recursively.
-n name: Dump the value of the named extended attribute.
-d: Dump the values of all extended attributes associated with pathname.
-e en: Encode values after retrieving them. Valid values of en are \"text\",
\"hex\", and \"base64\". Values encoded as text strings are enclosed in double
quotes (\"), while strings encoded as hexadecimal and base64 are prefixed with
0x and 0s, respectively.
<path>: File or directory to list.
";

pub(crate) const SETFATTR_USAGE: &str = "{-n name [-v value] | -x name} <path>";
pub(crate) const SETFATTR_DESCRIPTION: &str = "\
Associates a new value with an extended attribute name for file or directory.
-n name: Specifies the name of the extended attribute to set.
-v value: Specifies the new value of the extended attribute. There are three
methods available for encoding the value. If the given string is enclosed in
double quotes, the inner string is treated as text. If the given string begins
with 0x or 0X, it expresses a hexadecimal number. If the given string begins
with 0s or 0S, base64 encoding is expected.
-x name: Remove the named extended attribute entirely.
<path>: File or directory to list.
";

const GETFATTR_FORMAT: CommandFormat = CommandFormat::new(0, usize::MAX, &["d", "R"]);

/// `setXAttr` flags of `FileSystem.setXAttr(path, name, value)`.
const CREATE_OR_REPLACE: u32 = 1 | 2;

/// Java's `XAttrHelper.buildXAttr`; errors are usage errors, as the
/// shell shows them.
fn parse_name(full: &str) -> Result<(i32, String), UsageError> {
    xattr_codec::parse_name(full).map_err(UsageError::new)
}

/// The prefixed name of an attribute the NameNode returned.
fn prefixed(x: &pb::XAttrProto) -> String {
    let prefix = match x.namespace {
        1 => "trusted",
        2 => "security",
        3 => "system",
        4 => "raw",
        _ => "user",
    };
    format!("{prefix}.{}", x.name)
}

/// Java's `XAttrCommands.convert(name, value, encoding)`.
fn show(name: &str, value: &[u8], encoding: Encoding) -> String {
    if value.is_empty() {
        return name.to_owned();
    }
    let shown = xattr_codec::encode_value(value, encoding);
    format!("{name}={shown}")
}

/// Java's `String.hashCode` (over UTF-16 code units).
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, c| h.wrapping_mul(31).wrapping_add(i32::from(c)))
}

/// The order a `java.util.HashMap` (default capacity 16, load factor
/// 0.75) iterates `keys` put in this order: by bucket of the final table,
/// and within a bucket in insertion order. Later duplicates keep the
/// first one's place. Returns indexes into `keys`.
fn java_hash_map_order(keys: &[String]) -> Vec<usize> {
    let mut first: Vec<usize> = Vec::new();
    for (i, k) in keys.iter().enumerate() {
        if !first.iter().any(|&j| keys[j] == *k) {
            first.push(i);
        }
    }
    let mut capacity: usize = 16;
    while first.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    let bucket = |k: &str| {
        let h = java_string_hash(k);
        let spread = h ^ ((h as u32) >> 16) as i32;
        (spread as u32 as usize) & (capacity - 1)
    };
    // A stable sort keeps insertion order within a bucket.
    first.sort_by_key(|&i| bucket(&keys[i]));
    first
}

/// `-getfattr`.
///
/// # Errors
///
/// A [`UsageError`] for bad options or attribute names.
pub(crate) async fn getfattr(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let name = pop_option_with_argument("-n", &mut args)?;
    let encoding = match pop_option_with_argument("-e", &mut args)? {
        None => Encoding::Text,
        Some(e) => match e.to_ascii_uppercase().as_str() {
            "TEXT" => Encoding::Text,
            "HEX" => Encoding::Hex,
            "BASE64" => Encoding::Base64,
            other => {
                return Err(UsageError::new(format!(
                    "No enum constant org.apache.hadoop.fs.shell.XAttrCommands.ENCODE.{other}"
                )))
            }
        },
    };
    let flags = GETFATTR_FORMAT.parse(&mut args)?;
    let (dump, recursive) = (flags.has("d"), flags.has("R"));
    if !dump && name.is_none() {
        return Err(UsageError::new("Must specify '-n name' or '-d' option."));
    }
    check_one_path(&args)?;
    let want = Want {
        name,
        dump,
        encoding,
    };
    for item in shell.expand_all(&args).await? {
        if !item.exists() {
            shell.error(&not_found(&item.display));
            continue;
        }
        if !(show_item(shell, &item, &want).await? && recursive && item.is_dir()) {
            continue;
        }
        let mut walk = Walk::new(Some(1), None);
        walk.descend(shell, &item);
        while let Some(step) = walk.next(shell).await {
            if let Step::Entry(entry) = step {
                if show_item(shell, &entry, &want).await? && entry.is_dir() {
                    walk.descend(shell, &entry);
                }
            }
        }
    }
    Ok(())
}

/// What `-getfattr` prints of each path.
struct Want {
    name: Option<String>,
    dump: bool,
    encoding: Encoding,
}

/// Prints one path's attributes; `false` (after printing why) if the call
/// failed, so a recursive walk does not go into it.
async fn show_item(shell: &mut Shell, item: &Item, want: &Want) -> Result<bool, UsageError> {
    shell.out(&format!("# file: {}", item.display));
    let requested = match (&want.name, want.dump) {
        (Some(name), false) => vec![name.clone()],
        _ => Vec::new(),
    };
    let mut names = Vec::with_capacity(requested.len());
    for n in &requested {
        let (namespace, name) = parse_name(n)?;
        names.push(pb::XAttrProto {
            namespace,
            name,
            value: None,
        });
    }
    let request = pb::GetXAttrsRequestProto {
        src: item.path.clone(),
        x_attrs: names,
    };
    let reply: Result<pb::GetXAttrsResponseProto, String> =
        shell.call(item.fs, "getXAttrs", &request).await;
    let xattrs = match reply {
        Ok(r) => r.x_attrs,
        Err(message) => {
            shell.error(&message);
            return Ok(false);
        }
    };
    let entries: Vec<(String, Vec<u8>)> = xattrs
        .iter()
        .map(|x| {
            (
                prefixed(x),
                x.value.as_ref().map(|v| v.to_vec()).unwrap_or_default(),
            )
        })
        .collect();
    if let Some(name) = requested.first() {
        // `getXAttr(name)`: the value under the name as typed.
        if let Some((_, value)) = entries.first() {
            shell.out(&show(name, value, want.encoding));
        }
        return Ok(true);
    }
    let keys: Vec<String> = entries.iter().map(|(k, _)| k.clone()).collect();
    for i in java_hash_map_order(&keys) {
        // A later duplicate's value wins, as `HashMap.put` does.
        let value = entries
            .iter()
            .rev()
            .find(|(k, _)| *k == keys[i])
            .map(|(_, v)| v.as_slice())
            .unwrap_or_default();
        shell.out(&show(&keys[i], value, want.encoding));
    }
    Ok(true)
}

/// `-setfattr`.
///
/// # Errors
///
/// A [`UsageError`] for bad options or attribute names.
pub(crate) async fn setfattr(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let name = pop_option_with_argument("-n", &mut args)?;
    let value = pop_option_with_argument("-v", &mut args)?;
    let value = match value.as_deref().map(decode_value) {
        None => None,
        Some(Ok(v)) => Some(v),
        Some(Err(message)) => {
            shell.error(&message);
            return Ok(());
        }
    };
    let remove = pop_option_with_argument("-x", &mut args)?;
    if name.is_some() && remove.is_some() {
        return Err(UsageError::new(
            "Can not specify both '-n name' and '-x name' option.",
        ));
    }
    if name.is_none() && remove.is_none() {
        return Err(UsageError::new(
            "Must specify '-n name' or '-x name' option.",
        ));
    }
    check_one_path(&args)?;
    for item in shell.expand_all(&args).await? {
        if !item.exists() {
            shell.error(&not_found(&item.display));
            continue;
        }
        let result = match (&name, &remove) {
            (Some(n), _) => {
                let (namespace, short) = parse_name(n)?;
                let request = pb::SetXAttrRequestProto {
                    src: item.path.clone(),
                    x_attr: Some(pb::XAttrProto {
                        namespace,
                        name: short,
                        value: value.clone().map(Into::into),
                    }),
                    flag: Some(CREATE_OR_REPLACE),
                };
                shell
                    .call::<_, pb::SetXAttrResponseProto>(item.fs, "setXAttr", &request)
                    .await
                    .map(drop)
            }
            (None, Some(x)) => {
                let (namespace, short) = parse_name(x)?;
                let request = pb::RemoveXAttrRequestProto {
                    src: item.path.clone(),
                    x_attr: Some(pb::XAttrProto {
                        namespace,
                        name: short,
                        value: None,
                    }),
                };
                shell
                    .call::<_, pb::RemoveXAttrResponseProto>(item.fs, "removeXAttr", &request)
                    .await
                    .map(drop)
            }
            (None, None) => Ok(()),
        };
        if let Err(message) = result {
            shell.error(&message);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_show_as_the_java_shell_shows_them() {
        assert_eq!(show("user.a", b"123", Encoding::Text), "user.a=\"123\"");
        assert_eq!(show("user.a", b"123", Encoding::Hex), "user.a=0x313233");
        assert_eq!(show("user.a", b"123", Encoding::Base64), "user.a=0sMTIz");
        assert_eq!(show("user.b", b"", Encoding::Text), "user.b");
    }

    #[test]
    fn names_need_a_known_prefix() {
        assert_eq!(parse_name("user.a").expect("user"), (0, "a".to_owned()));
        assert_eq!(
            parse_name("TRUSTED.x.y").expect("trusted"),
            (1, "x.y".to_owned())
        );
        for bad in ["user", "ab.c", "bogus.x", "user."] {
            assert!(parse_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hash_map_order_matches_what_the_java_shell_printed() {
        // From tests/java/expected/xattrs.txt (Apache HDFS 3.4.1).
        let keys = |ks: &[&str]| ks.iter().map(|k| (*k).to_owned()).collect::<Vec<_>>();
        let order = |ks: &[&str]| {
            let ks = keys(ks);
            java_hash_map_order(&ks)
                .into_iter()
                .map(|i| ks[i].clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            order(&["user.d", "user.c", "user.b", "user.a"]),
            ["user.b", "user.a", "user.d", "user.c"]
        );
        assert_eq!(
            order(&["user.alice", "trusted.t", "user.a", "user.d", "user.c"]),
            ["user.a", "user.alice", "user.d", "user.c", "trusted.t"]
        );
    }
}

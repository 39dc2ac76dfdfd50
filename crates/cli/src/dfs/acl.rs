//! `-getfacl` and `-setfacl`: Hadoop's `AclCommands`, on hdfs-native's
//! ACL calls. The ACL spec is parsed as Java's `AclEntry.parseAclSpec`
//! parses it (with its messages), and `-getfacl` prints the full ACL the
//! way the Java shell rebuilds it from the permission bits and the
//! entries the NameNode keeps, `#effective` masks included.

use hdfs_native::acl::{AclEntry, AclEntryScope, AclEntryType, FsAction};

use super::args::{check_one_path, CommandFormat, UsageError};
use super::shell::{not_found, Item, Shell, Step, Walk};

pub(crate) const GETFACL_USAGE: &str = "[-R] <path>";
pub(crate) const GETFACL_DESCRIPTION: &str = "\
Displays the Access Control Lists (ACLs) of files and directories. If a
directory has a default ACL, then getfacl also displays the default ACL.
-R: List the ACLs of all files and directories recursively.
<path>: File or directory to list.
";

pub(crate) const SETFACL_USAGE: &str =
    "[-R] [{-b|-k} {-m|-x <acl_spec>} <path>]|[--set <acl_spec> <path>]";
pub(crate) const SETFACL_DESCRIPTION: &str = "\
Sets Access Control Lists (ACLs) of files and directories.
Options:
-b :Remove all but the base ACL entries. The entries for user, group and
others are retained for compatibility with permission bits.
-k :Remove the default ACL.
-R :Apply operations to all files and directories recursively.
-m :Modify ACL. New entries are added to the ACL, and existing entries are
retained.
-x :Remove specified ACL entries. Other ACL entries are retained.
--set :Fully replace the ACL, discarding all existing entries. The <acl_spec>
must include entries for user, group, and others for compatibility with
permission bits. If the ACL spec contains only access entries, then the
existing default entries are retained. If the ACL spec contains only default
entries, then the existing access entries are retained. If the ACL spec
contains both access and default entries, then both are replaced.
<acl_spec>: Comma separated list of ACL entries.
<path>: File or directory to modify.
";

const GETFACL_FORMAT: CommandFormat = CommandFormat::new(0, usize::MAX, &["R"]);
const SETFACL_FORMAT: CommandFormat =
    CommandFormat::new(0, usize::MAX, &["b", "k", "R", "m", "x", "-set"]);

/// The extended-ACL bit of a status's permission.
const ACL_BIT: u16 = 1 << 12;
const STICKY_BIT: u16 = 0o1000;

fn action(bits: u16) -> FsAction {
    match bits & 7 {
        0 => FsAction::None,
        1 => FsAction::Execute,
        2 => FsAction::Write,
        3 => FsAction::WriteExecute,
        4 => FsAction::Read,
        5 => FsAction::ReadExecute,
        6 => FsAction::ReadWrite,
        _ => FsAction::PermAll,
    }
}

/// The rwx bits of an action.
fn bits(a: &FsAction) -> u16 {
    match a {
        FsAction::None => 0,
        FsAction::Execute => 1,
        FsAction::Write => 2,
        FsAction::WriteExecute => 3,
        FsAction::Read => 4,
        FsAction::ReadExecute => 5,
        FsAction::ReadWrite => 6,
        FsAction::PermAll => 7,
    }
}

/// `rwx` symbols, as Java's `FsAction.SYMBOL`.
fn symbol(a: &FsAction) -> String {
    let bits = bits(a);
    let bit = |m: u16, c: char| if bits & m != 0 { c } else { '-' };
    [bit(4, 'r'), bit(2, 'w'), bit(1, 'x')].iter().collect()
}

fn from_symbol(s: &str) -> Option<FsAction> {
    (0..8u16).map(action).find(|a| symbol(a) == s)
}

/// Java's `AclEntry.toString`: `default:user:bob:rwx`.
fn entry_text(e: &AclEntry) -> String {
    let scope = if e.scope == AclEntryScope::Default {
        "default:"
    } else {
        ""
    };
    let kind = match e.r#type {
        AclEntryType::User => "user",
        AclEntryType::Group => "group",
        AclEntryType::Mask => "mask",
        AclEntryType::Other => "other",
    };
    let name = e.name.as_deref().unwrap_or("");
    format!("{scope}{kind}:{name}:{}", symbol(&e.permissions))
}

/// Java's `AclEntry.parseAclEntry`: `[default:]type:[name][:perm]`, with
/// the permission when `with_permission`.
fn parse_entry(text: &str, with_permission: bool) -> Result<AclEntry, UsageError> {
    let invalid = || UsageError::new(format!("Invalid <aclSpec> : {text}"));
    // Java's String.split drops trailing empty fields.
    let mut fields: Vec<&str> = text.split(':').collect();
    while fields.last().is_some_and(|f| f.is_empty()) {
        fields.pop();
    }
    let mut at = 0;
    let mut scope = AclEntryScope::Access;
    if fields.first() == Some(&"default") {
        scope = AclEntryScope::Default;
        at += 1;
    }
    let kind = fields.get(at).ok_or_else(invalid)?;
    let kind = match kind.to_ascii_uppercase().as_str() {
        "USER" => AclEntryType::User,
        "GROUP" => AclEntryType::Group,
        "MASK" => AclEntryType::Mask,
        "OTHER" => AclEntryType::Other,
        _ => {
            return Err(UsageError::new(format!(
                "Invalid type of acl in <aclSpec> :{text}"
            )))
        }
    };
    at += 1;
    let mut name = None;
    if let Some(n) = fields.get(at) {
        name = Some(n.to_string()).filter(|n| !n.is_empty());
        at += 1;
    }
    let mut permissions = FsAction::None;
    if with_permission {
        let p = fields.get(at).ok_or_else(invalid)?;
        permissions = from_symbol(p)
            .ok_or_else(|| UsageError::new(format!("Invalid permission in <aclSpec> : {text}")))?;
        at += 1;
    }
    if fields.len() > at {
        return Err(invalid());
    }
    Ok(AclEntry::new(kind, scope, permissions, name))
}

/// Java's `AclEntry.parseAclSpec`: comma-separated entries, empty ones
/// skipped.
fn parse_spec(spec: &str, with_permission: bool) -> Result<Vec<AclEntry>, UsageError> {
    spec.split(',')
        .filter(|e| !e.is_empty())
        .map(|e| parse_entry(e, with_permission))
        .collect()
}

/// `-getfacl`.
///
/// # Errors
///
/// A [`UsageError`] for bad options or not exactly one path.
pub(crate) async fn getfacl(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let recursive = GETFACL_FORMAT.parse(&mut args)?.has("R");
    check_one_path(&args)?;
    for item in shell.expand_all(&args).await? {
        visit(shell, &item, recursive, &Action::Show).await;
    }
    Ok(())
}

/// What a visit does to each path.
enum Action<'s> {
    Show,
    Change { op: SetOp, spec: &'s [AclEntry] },
}

impl Action<'_> {
    /// Runs on one path; `false` (after printing why) if it failed.
    async fn run(&self, shell: &mut Shell, item: &Item, recursive: bool) -> bool {
        match self {
            Action::Show => show_acl(shell, item).await,
            Action::Change { op, spec } => set_acl(shell, item, *op, spec, recursive).await,
        }
    }
}

/// Runs `action` on `item` and, with `recursive`, below it, as Hadoop's
/// `Command.processPaths`: a path whose call failed is not descended into.
async fn visit(shell: &mut Shell, item: &Item, recursive: bool, action: &Action<'_>) {
    if !item.exists() {
        shell.error(&not_found(&item.display));
        return;
    }
    if !(action.run(shell, item, recursive).await && recursive && item.is_dir()) {
        return;
    }
    let mut walk = Walk::new(Some(1), None);
    walk.descend(shell, item);
    while let Some(step) = walk.next(shell).await {
        if let Step::Entry(entry) = step {
            if action.run(shell, &entry, recursive).await && entry.is_dir() {
                walk.descend(shell, &entry);
            }
        }
    }
}

/// Prints one path's ACL; `false` (after printing why) if it failed.
async fn show_acl(shell: &mut Shell, item: &Item) -> bool {
    let Some(status) = &item.status else {
        return false;
    };
    let perm = status.permission;
    let entries = if perm & ACL_BIT != 0 {
        let Some(client) = shell.client(item.fs) else {
            return false;
        };
        match client.get_acl_status(&item.path).await {
            Ok(acl) => acl.entries,
            Err(e) => {
                let message = shell.describe(&e, &item.display, item.fs);
                shell.error(&message);
                return false;
            }
        }
    } else {
        Vec::new()
    };
    shell.out(&format!("# file: {}", item.display));
    shell.out(&format!("# owner: {}", status.owner));
    shell.out(&format!("# group: {}", status.group));
    if perm & STICKY_BIT != 0 {
        let flag = if perm & 1 != 0 { 't' } else { 'T' };
        shell.out(&format!("# flags: --{flag}"));
    }
    let (access, default) = full_acl(perm, entries);
    for scope in [access, default] {
        for line in scope_lines(&scope) {
            shell.out(&line);
        }
    }
    shell.out("");
    true
}

/// Java's `AclUtil.getAclFromPermAndEntries`, split by scope: the owner,
/// mask (or group) and other entries come from the permission bits.
fn full_acl(perm: u16, entries: Vec<AclEntry>) -> (Vec<AclEntry>, Vec<AclEntry>) {
    let entry = |kind, bits: u16| AclEntry::new(kind, AclEntryScope::Access, action(bits), None);
    let (named, default): (Vec<AclEntry>, Vec<AclEntry>) = entries
        .into_iter()
        .partition(|e| e.scope == AclEntryScope::Access);
    let middle = if named.is_empty() {
        AclEntryType::Group
    } else {
        AclEntryType::Mask
    };
    let mut access = vec![entry(AclEntryType::User, perm >> 6)];
    access.extend(named);
    access.push(entry(middle, perm >> 3));
    access.push(entry(AclEntryType::Other, perm));
    (access, default)
}

/// One scope's lines: named entries and the group entry that the mask
/// restricts show their effective permission.
fn scope_lines(entries: &[AclEntry]) -> Vec<String> {
    if entries.len() <= 3 {
        return entries.iter().map(entry_text).collect();
    }
    let mask = bits(&entries[entries.len() - 2].permissions);
    entries
        .iter()
        .map(|e| {
            let bits = bits(&e.permissions);
            let maskable = e.name.is_some() || e.r#type == AclEntryType::Group;
            if maskable && bits & mask != bits {
                format!(
                    "{}\t#effective:{}",
                    entry_text(e),
                    symbol(&action(bits & mask))
                )
            } else {
                entry_text(e)
            }
        })
        .collect()
}

/// What `-setfacl` does to each path.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SetOp {
    RemoveAll,
    RemoveDefault,
    Modify,
    RemoveEntries,
    Set,
}

/// Java's `SetfaclCommand.processOptions`: which operation, and its spec.
fn parse_set_options(args: &mut Vec<String>) -> Result<(SetOp, Vec<AclEntry>, bool), UsageError> {
    let flags = SETFACL_FORMAT.parse(args)?;
    let (b, k, m, x, set) = (
        flags.has("b"),
        flags.has("k"),
        flags.has("m"),
        flags.has("x"),
        flags.has("-set"),
    );
    let one_remove = b || k;
    let one_modify = m || x;
    if (b && k) || (m && x) || (one_remove && one_modify) || (set && (one_remove || one_modify)) {
        return Err(UsageError::new(
            "Specified flags contains both remove and modify flags",
        ));
    }
    let mut spec = Vec::new();
    if one_modify || set {
        if args.is_empty() {
            return Err(UsageError::new("Missing arguments: <acl_spec> <path>"));
        }
        if args.len() < 2 {
            return Err(UsageError::new("Missing either <acl_spec> or <path>"));
        }
        spec = parse_spec(&args.remove(0), !x)?;
        if spec.is_empty() {
            return Err(UsageError::new("Missing <acl_spec> entry"));
        }
    }
    check_one_path(args)?;
    let op = match (b, k, m, x, set) {
        (true, ..) => SetOp::RemoveAll,
        (_, true, ..) => SetOp::RemoveDefault,
        (_, _, true, ..) => SetOp::Modify,
        (_, _, _, true, _) => SetOp::RemoveEntries,
        (.., true) => SetOp::Set,
        _ => {
            return Err(UsageError::new(
                "Expected one of -b, -k, -m, -x or --set options",
            ))
        }
    };
    Ok((op, spec, flags.has("R")))
}

/// `-setfacl`.
///
/// # Errors
///
/// A [`UsageError`] for bad options, a bad ACL spec or not one path.
pub(crate) async fn setfacl(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let (op, spec, recursive) = parse_set_options(&mut args)?;
    let action = Action::Change { op, spec: &spec };
    for item in shell.expand_all(&args).await? {
        visit(shell, &item, recursive, &action).await;
    }
    Ok(())
}

/// Changes one path's ACL; `false` (after printing why) if it failed. In
/// a recursive run, files get only the access entries of the spec.
async fn set_acl(
    shell: &mut Shell,
    item: &Item,
    op: SetOp,
    spec: &[AclEntry],
    recursive: bool,
) -> bool {
    let Some(client) = shell.client(item.fs) else {
        return false;
    };
    let entries: Vec<AclEntry> = if recursive && !item.is_dir() {
        spec.iter()
            .filter(|e| e.scope == AclEntryScope::Access)
            .cloned()
            .collect()
    } else {
        spec.to_vec()
    };
    let path = item.path.as_str();
    let result = match op {
        SetOp::RemoveAll => client.remove_acl(path).await,
        SetOp::RemoveDefault => client.remove_default_acl(path).await,
        _ if entries.is_empty() => Ok(()),
        SetOp::Modify => client.modify_acl_entries(path, entries).await,
        SetOp::RemoveEntries => client.remove_acl_entries(path, entries).await,
        SetOp::Set => client.set_acl(path, entries).await,
    };
    match result {
        Ok(()) => true,
        Err(e) => {
            let message = shell.describe(&e, &item.display, item.fs);
            shell.error(&message);
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_as_the_java_shell_parses_them() {
        let spec =
            parse_spec("user::rwx,default:group:staff:r-x,,mask::r--", true).unwrap_or_default();
        let shown: Vec<String> = spec.iter().map(entry_text).collect();
        assert_eq!(shown, ["user::rwx", "default:group:staff:r-x", "mask::r--"]);
        let removal = parse_spec("user:bob,default:mask::", false).unwrap_or_default();
        let shown: Vec<String> = removal.iter().map(entry_text).collect();
        assert_eq!(shown, ["user:bob:---", "default:mask::---"]);
        let message = |s: &str, p: bool| parse_spec(s, p).err().map(|e| e.0).unwrap_or_default();
        assert_eq!(
            message("user:bob:rwz", true),
            "Invalid permission in <aclSpec> : user:bob:rwz"
        );
        assert_eq!(
            message("owner:bob:rwx", true),
            "Invalid type of acl in <aclSpec> :owner:bob:rwx"
        );
        assert_eq!(message("user:bob", true), "Invalid <aclSpec> : user:bob");
        assert_eq!(
            message("user:bob:rwx", false),
            "Invalid <aclSpec> : user:bob:rwx"
        );
    }

    #[test]
    fn getfacl_lines_show_effective_permissions() {
        let named = AclEntry::new(
            AclEntryType::User,
            AclEntryScope::Access,
            FsAction::PermAll,
            Some("bob".into()),
        );
        let group = AclEntry::new(
            AclEntryType::Group,
            AclEntryScope::Access,
            FsAction::ReadExecute,
            None,
        );
        let (access, default) = full_acl(0o640 | ACL_BIT, vec![named, group]);
        assert!(default.is_empty());
        assert_eq!(
            scope_lines(&access),
            [
                "user::rw-",
                "user:bob:rwx\t#effective:r--",
                "group::r-x\t#effective:r--",
                "mask::r--",
                "other::---"
            ]
        );
        let (access, _) = full_acl(0o755, Vec::new());
        assert_eq!(
            scope_lines(&access),
            ["user::rwx", "group::r-x", "other::r-x"]
        );
    }
}

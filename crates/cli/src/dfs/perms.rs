//! `-chmod`, `-chown` and `-chgrp`: Hadoop's `FsShellPermissions`.
//!
//! Each path is changed only if the change does anything (so `-chown alice`
//! on alice's own file makes no call and cannot be refused), and with `-R`
//! the walk goes into a directory only after the directory itself was
//! changed.

use super::args::{CommandFormat, UsageError};
use super::chmod::ChmodMode;
use super::format::PERMISSION_MASK;
use super::shell::{not_found, Item, Shell, Step, Walk};

pub(crate) const CHMOD_USAGE: &str = "[-R] <MODE[,MODE]... | OCTALMODE> PATH...";
pub(crate) const CHMOD_DESCRIPTION: &str = "\
Changes permissions of a file. This works similar to the shell's chmod command
with a few exceptions.
  -R           modifies the files recursively. This is the only option
               currently supported.
  <MODE>       Mode is the same as mode used for the shell's command. The only
               letters recognized are 'rwxXt', e.g. +t,a+r,g-w,+rwx,o=r.
  <OCTALMODE>  Mode specifed in 3 or 4 digits. If 4 digits, the first may be 1
               or 0 to turn the sticky bit on or off, respectively. Unlike the
               shell command, it is not possible to specify only part of the
               mode, e.g. 754 is same as u=rwx,g=rx,o=r.

If none of 'augo' is specified, 'a' is assumed and unlike the shell command, no
umask is applied.";

pub(crate) const CHOWN_USAGE: &str = "[-R] [OWNER][:[GROUP]] PATH...";
pub(crate) const CHOWN_DESCRIPTION: &str = "\
Changes owner and group of a file. This is similar to the shell's chown command
with a few exceptions.
  -R  modifies the files recursively. This is the only option currently
      supported.

If only the owner or group is specified, then only the owner or group is
modified. The owner and group names may only consist of digits, alphabet, and
any of -+_./@. The names are case sensitive.

WARNING: Avoid using '.' to separate user name and group though Linux allows
it. If user names have dots in them and you are using local file system, you
might see surprising results since the shell command 'chown' is used for local
files.";

pub(crate) const CHGRP_USAGE: &str = "[-R] GROUP PATH...";
pub(crate) const CHGRP_DESCRIPTION: &str = "\
This is equivalent to -chown ... :GROUP ...";

/// `-chmod` leaves unknown `-x` words in place: they may be modes (`-w`).
const CHMOD_FORMAT: CommandFormat = CommandFormat::ignoring_unknown(2, usize::MAX, &["R"]);
const CHOWN_FORMAT: CommandFormat = CommandFormat::new(2, usize::MAX, &["R"]);

/// The change one command applies to each path.
enum Change {
    Mode(ChmodMode),
    Owner {
        owner: Option<String>,
        group: Option<String>,
    },
}

/// Runs `-chmod`.
///
/// # Errors
///
/// A [`UsageError`] for too few arguments or a malformed mode.
pub(crate) async fn chmod(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let recursive = CHMOD_FORMAT.parse(&mut args)?.has("R");
    let mode_text = args.remove(0);
    let mode = ChmodMode::parse(&mode_text).ok_or_else(|| {
        UsageError::new(format!(
            "chmod : mode '{mode_text}' does not match the expected pattern."
        ))
    })?;
    change_all(shell, &args, recursive, &Change::Mode(mode)).await
}

/// Runs `-chown`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags, too few arguments or a malformed
/// `OWNER:GROUP`.
pub(crate) async fn chown(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let recursive = CHOWN_FORMAT.parse(&mut args)?.has("R");
    let (owner, group) = parse_owner_group(&args.remove(0))?;
    change_all(shell, &args, recursive, &Change::Owner { owner, group }).await
}

/// Runs `-chgrp`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags, too few arguments or a malformed
/// group.
pub(crate) async fn chgrp(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let recursive = CHOWN_FORMAT.parse(&mut args)?.has("R");
    let group = parse_group(&args.remove(0))?;
    let change = Change::Owner {
        owner: None,
        group: Some(group),
    };
    change_all(shell, &args, recursive, &change).await
}

async fn change_all(
    shell: &mut Shell,
    args: &[String],
    recursive: bool,
    change: &Change,
) -> Result<(), UsageError> {
    for item in shell.expand_all(args).await? {
        if !item.exists() {
            shell.error(&not_found(&item.display));
            continue;
        }
        let changed = apply(shell, &item, change).await;
        if !(changed && recursive && item.is_dir()) {
            continue;
        }
        let mut walk = Walk::new(Some(1), None);
        walk.descend(shell, &item);
        while let Some(step) = walk.next(shell).await {
            if let Step::Entry(entry) = step {
                if apply(shell, &entry, change).await && entry.is_dir() {
                    walk.descend(shell, &entry);
                }
            }
        }
    }
    Ok(())
}

/// Applies `change` to one path; `false` (after printing why) if it failed.
async fn apply(shell: &mut Shell, item: &Item, change: &Change) -> bool {
    let (Some(status), Some(client)) = (&item.status, shell.client(item.fs)) else {
        return false;
    };
    let (result, what) = match change {
        Change::Mode(mode) => {
            let current = status.permission & PERMISSION_MASK;
            let wanted = mode.apply(status.permission, status.isdir);
            if wanted == current {
                return true;
            }
            (
                client.set_permission(&item.path, u32::from(wanted)).await,
                "changing permissions of",
            )
        }
        Change::Owner { owner, group } => {
            let owner = owner.as_deref().filter(|o| *o != status.owner);
            let group = group.as_deref().filter(|g| *g != status.group);
            if owner.is_none() && group.is_none() {
                return true;
            }
            (
                client.set_owner(&item.path, owner, group).await,
                "changing ownership of",
            )
        }
    };
    match result {
        Ok(()) => true,
        Err(e) => {
            let message = format!(
                "{what} '{}': {}",
                item.display,
                shell.describe(&e, &item.display, item.fs)
            );
            shell.error(&message);
            false
        }
    }
}

/// Characters Hadoop allows in user and group names (its Unix set).
fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '_' | '.' | '/' | '@')
}

fn is_java_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// `[OWNER][:[GROUP]]`, either part optional but not both.
fn parse_owner_group(text: &str) -> Result<(Option<String>, Option<String>), UsageError> {
    let trimmed = text.trim_matches(is_java_space);
    let (owner, group) = match trimmed.split_once(':') {
        Some((owner, group)) => (owner, Some(group)),
        None => (trimmed, None),
    };
    let valid =
        owner.chars().all(is_name_char) && group.is_none_or(|g| g.chars().all(is_name_char));
    if !valid {
        return Err(UsageError::new(format!(
            "'{text}' does not match expected pattern for [owner][:group]."
        )));
    }
    let owner = Some(owner).filter(|o| !o.is_empty()).map(str::to_owned);
    let group = group.filter(|g| !g.is_empty()).map(str::to_owned);
    if owner.is_none() && group.is_none() {
        return Err(UsageError::new(format!(
            "'{text}' does not specify owner or group."
        )));
    }
    Ok((owner, group))
}

/// A group name for `-chgrp`.
fn parse_group(text: &str) -> Result<String, UsageError> {
    let trimmed = text.trim_matches(is_java_space);
    if trimmed.is_empty() || !trimmed.chars().all(is_name_char) {
        return Err(UsageError::new(format!(
            "'{text}' does not match expected pattern for group"
        )));
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owner_and_group_forms() {
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            parse_owner_group("carol:staff").expect("valid"),
            (some("carol"), some("staff"))
        );
        assert_eq!(
            parse_owner_group(":admins").expect("valid"),
            (None, some("admins"))
        );
        assert_eq!(
            parse_owner_group("dave").expect("valid"),
            (some("dave"), None)
        );
        assert_eq!(
            parse_owner_group("dave:").expect("valid"),
            (some("dave"), None)
        );
        assert_eq!(
            parse_owner_group("a+b@EXAMPLE.COM").expect("valid"),
            (some("a+b@EXAMPLE.COM"), None)
        );
        assert_eq!(
            parse_owner_group(":").expect_err("nothing").0,
            "':' does not specify owner or group."
        );
        for bad in ["a b", "a$b", "a:b:c", "ü", "a\\b"] {
            assert_eq!(
                parse_owner_group(bad).expect_err("bad").0,
                format!("'{bad}' does not match expected pattern for [owner][:group].")
            );
        }
    }

    #[test]
    fn group_forms() {
        assert_eq!(parse_group("wheel").expect("valid"), "wheel");
        assert_eq!(
            parse_group("a:b").expect_err("bad").0,
            "'a:b' does not match expected pattern for group"
        );
        assert!(parse_group("").is_err());
    }
}

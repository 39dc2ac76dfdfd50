//! `-stat` and `-test`: Hadoop's `Stat` and `Test` commands, which only
//! look at file statuses.

use super::args::{CommandFormat, UsageError};
use super::format::stat_line;
use super::paths;
use super::shell::{not_found, Item, Shell, Step, Walk};

pub(crate) const STAT_USAGE: &str = "[format] <path> ...";
pub(crate) const STAT_DESCRIPTION: &str = "\
Print statistics about the file/directory at <path>
in the specified format. Format accepts permissions in
octal (%a) and symbolic (%A), filesize in
bytes (%b), type (%F), group name of owner (%g),
name (%n), block size (%o), replication (%r), user name
of owner (%u), access date (%x, %X).
modification date (%y, %Y).
%x and %y show UTC date as \"yyyy-MM-dd HH:mm:ss\" and
%X and %Y show milliseconds since January 1, 1970 UTC.
If the format is not specified, %y is used by default.
  -R  Print statistics for the directories' contents too.";

pub(crate) const TEST_USAGE: &str = "-[defsz] <path>";
pub(crate) const TEST_DESCRIPTION: &str = "\
Answer various questions about <path>, with result via exit status.
  -d  return 0 if <path> is a directory.
  -e  return 0 if <path> exists.
  -f  return 0 if <path> is a file.
  -s  return 0 if file <path> is greater than zero bytes in size.
  -z  return 0 if file <path> is zero bytes in size, else return 1.";

const STAT_FORMAT: CommandFormat = CommandFormat::new(1, usize::MAX, &["R"]);
const TEST_FORMAT: CommandFormat = CommandFormat::new(1, 1, &["d", "e", "f", "s", "z"]);

/// Runs `-stat`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags or no path.
pub(crate) async fn stat(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let recursive = STAT_FORMAT.parse(&mut args)?.has("R");
    let mut format = "%y".to_owned();
    if args.first().is_some_and(|a| a.contains('%')) {
        format = args.remove(0);
    }
    // Hadoop parses again: a format alone is not enough.
    STAT_FORMAT.parse(&mut args)?;
    for item in shell.expand_all(&args).await? {
        if !item.exists() {
            shell.error(&not_found(&item.display));
            continue;
        }
        print_stat(shell, &format, &item);
        if recursive && item.is_dir() {
            let mut walk = Walk::new(Some(1), None);
            walk.descend(shell, &item);
            while let Some(step) = walk.next(shell).await {
                if let Step::Entry(entry) = step {
                    print_stat(shell, &format, &entry);
                    if entry.is_dir() {
                        walk.descend(shell, &entry);
                    }
                }
            }
        }
    }
    Ok(())
}

fn print_stat(shell: &Shell, format: &str, item: &Item) {
    if let Some(status) = &item.status {
        shell.out(&stat_line(format, status, paths::name(&item.path)));
    }
}

/// Runs `-test`: exit status 0 when the test holds, 1 when it does not or
/// the path does not exist; nothing is printed unless the lookup fails.
///
/// # Errors
///
/// A [`UsageError`] unless exactly one test flag and one path are given.
pub(crate) async fn test(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let flags = TEST_FORMAT.parse(&mut args)?;
    let flag = match flags.len() {
        0 => return Err(UsageError::new("No test flag given")),
        1 => flags.iter().next().unwrap_or_default(),
        _ => return Err(UsageError::new("Only one test flag is allowed")),
    };
    for item in shell.expand_all(&args).await? {
        let holds = item.status.as_ref().is_some_and(|st| match flag {
            "d" => st.isdir,
            "f" => !st.isdir,
            "s" => st.length > 0,
            "z" => st.length == 0,
            _ => true,
        });
        if !holds {
            shell.set_exit_code(1);
        }
    }
    Ok(())
}

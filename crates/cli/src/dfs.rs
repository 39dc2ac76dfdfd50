//! `cairn dfs`: a file shell in the spirit of `hdfs dfs`, built on the
//! hdfs-native client.
//!
//! Behaviour, output and exit codes follow Hadoop's `FsShell` (3.4), checked
//! against the golden transcript the Java conformance kit recorded from real
//! HDFS (`tests/java/expected/fsshell.txt`): `<cmd>: <message>` on standard
//! error for each path that fails while the others go on, exit code 1 if any
//! failed, 255 (Hadoop's -1) for a usage error, printed with the usage.
//!
//! Layout: [`args`] parses generic options and command flags, [`shell`]
//! holds what every command shares (file systems, argument expansion, error
//! texts, directory walks), [`format`], [`chmod`] and [`paths`] are pure,
//! and the commands live in [`ls`], [`stat`], [`usage`], [`modify`] and
//! [`perms`]; [`copy`] and [`display`] move file data through
//! [`transfer`]. A new command is one entry in [`COMMANDS`] and one
//! `async fn(&mut Shell, Vec<String>)`.

mod acl;
mod args;
mod checksum;
mod chmod;
mod copy;
mod display;
mod expunge;
mod format;
mod ls;
mod modify;
mod paths;
mod perms;
mod quota;
mod shell;
mod snapshot;
mod stat;
mod transfer;
mod unmasked;
mod usage;
mod xattr;

use std::io::Write;
use std::path::Path;

use cairn_common::config::Configuration;
use cairn_common::keys;

use args::UsageError;
use shell::Shell;

/// Prints a line on standard error; a closed stream is no reason to panic.
macro_rules! say_err {
    ($($arg:tt)*) => {{
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

/// How usage lines start.
const USAGE_PREFIX: &str = "Usage: cairn dfs [generic options]";

/// One shell command: its name (without the dash), usage and help text.
struct CommandInfo {
    name: &'static str,
    usage: &'static str,
    description: &'static str,
}

/// Every command, in name order (the order `-help` lists them).
const COMMANDS: &[CommandInfo] = &[
    CommandInfo {
        name: "appendToFile",
        usage: copy::APPEND_USAGE,
        description: copy::APPEND_DESCRIPTION,
    },
    CommandInfo {
        name: "cat",
        usage: display::CAT_USAGE,
        description: display::CAT_DESCRIPTION,
    },
    CommandInfo {
        name: "checksum",
        usage: checksum::CHECKSUM_USAGE,
        description: checksum::CHECKSUM_DESCRIPTION,
    },
    CommandInfo {
        name: "chgrp",
        usage: perms::CHGRP_USAGE,
        description: perms::CHGRP_DESCRIPTION,
    },
    CommandInfo {
        name: "chmod",
        usage: perms::CHMOD_USAGE,
        description: perms::CHMOD_DESCRIPTION,
    },
    CommandInfo {
        name: "chown",
        usage: perms::CHOWN_USAGE,
        description: perms::CHOWN_DESCRIPTION,
    },
    CommandInfo {
        name: "copyFromLocal",
        usage: copy::PUT_USAGE,
        description: copy::COPY_FROM_LOCAL_DESCRIPTION,
    },
    CommandInfo {
        name: "copyToLocal",
        usage: copy::GET_USAGE,
        description: copy::COPY_TO_LOCAL_DESCRIPTION,
    },
    CommandInfo {
        name: "count",
        usage: usage::COUNT_USAGE,
        description: usage::COUNT_DESCRIPTION,
    },
    CommandInfo {
        name: "cp",
        usage: copy::CP_USAGE,
        description: copy::CP_DESCRIPTION,
    },
    CommandInfo {
        name: "createSnapshot",
        usage: snapshot::CREATE_USAGE,
        description: snapshot::CREATE_DESCRIPTION,
    },
    CommandInfo {
        name: "deleteSnapshot",
        usage: snapshot::DELETE_USAGE,
        description: snapshot::DELETE_DESCRIPTION,
    },
    CommandInfo {
        name: "du",
        usage: usage::DU_USAGE,
        description: usage::DU_DESCRIPTION,
    },
    CommandInfo {
        name: "expunge",
        usage: expunge::EXPUNGE_USAGE,
        description: expunge::EXPUNGE_DESCRIPTION,
    },
    CommandInfo {
        name: "get",
        usage: copy::GET_USAGE,
        description: copy::GET_DESCRIPTION,
    },
    CommandInfo {
        name: "getfacl",
        usage: acl::GETFACL_USAGE,
        description: acl::GETFACL_DESCRIPTION,
    },
    CommandInfo {
        name: "getfattr",
        usage: xattr::GETFATTR_USAGE,
        description: xattr::GETFATTR_DESCRIPTION,
    },
    CommandInfo {
        name: "head",
        usage: display::HEAD_USAGE,
        description: display::HEAD_DESCRIPTION,
    },
    CommandInfo {
        name: "help",
        usage: "[cmd ...]",
        description: "Displays help for given command or all commands if none\nis specified.",
    },
    CommandInfo {
        name: "ls",
        usage: ls::USAGE,
        description: ls::DESCRIPTION,
    },
    CommandInfo {
        name: "mkdir",
        usage: modify::MKDIR_USAGE,
        description: modify::MKDIR_DESCRIPTION,
    },
    CommandInfo {
        name: "mv",
        usage: modify::MV_USAGE,
        description: modify::MV_DESCRIPTION,
    },
    CommandInfo {
        name: "put",
        usage: copy::PUT_USAGE,
        description: copy::PUT_DESCRIPTION,
    },
    CommandInfo {
        name: "renameSnapshot",
        usage: snapshot::RENAME_USAGE,
        description: snapshot::RENAME_DESCRIPTION,
    },
    CommandInfo {
        name: "rm",
        usage: modify::RM_USAGE,
        description: modify::RM_DESCRIPTION,
    },
    CommandInfo {
        name: "rmdir",
        usage: modify::RMDIR_USAGE,
        description: modify::RMDIR_DESCRIPTION,
    },
    CommandInfo {
        name: "setfacl",
        usage: acl::SETFACL_USAGE,
        description: acl::SETFACL_DESCRIPTION,
    },
    CommandInfo {
        name: "setfattr",
        usage: xattr::SETFATTR_USAGE,
        description: xattr::SETFATTR_DESCRIPTION,
    },
    CommandInfo {
        name: "setrep",
        usage: modify::SETREP_USAGE,
        description: modify::SETREP_DESCRIPTION,
    },
    CommandInfo {
        name: "stat",
        usage: stat::STAT_USAGE,
        description: stat::STAT_DESCRIPTION,
    },
    CommandInfo {
        name: "tail",
        usage: display::TAIL_USAGE,
        description: display::TAIL_DESCRIPTION,
    },
    CommandInfo {
        name: "test",
        usage: stat::TEST_USAGE,
        description: stat::TEST_DESCRIPTION,
    },
    CommandInfo {
        name: "touch",
        usage: modify::TOUCH_USAGE,
        description: modify::TOUCH_DESCRIPTION,
    },
    CommandInfo {
        name: "touchz",
        usage: modify::TOUCHZ_USAGE,
        description: modify::TOUCHZ_DESCRIPTION,
    },
    CommandInfo {
        name: "usage",
        usage: "[cmd ...]",
        description: "Displays the usage for given command or all commands if none\nis specified.",
    },
];

/// Runs one `cairn dfs` command line and returns the process exit code.
///
/// `conf` already holds `--conf DIR`/`$HADOOP_CONF_DIR` and the `-D` flags
/// given before `dfs`; `args` may start with Hadoop's generic options.
/// Returns 0 on success, 1 if any path failed, -1 (exit status 255) for a
/// usage error.
///
/// # Cancel safety
///
/// Not cancel safe: a command stopped midway may have changed some paths
/// and not others.
pub async fn run(mut conf: Configuration, mut args: Vec<String>) -> i32 {
    let generic = match args::parse_generic_options(&mut args) {
        Ok(generic) => generic,
        Err(message) => {
            say_err!("dfs: {message}");
            print_all_usage(&mut std::io::stderr().lock(), false);
            return -1;
        }
    };
    for file in &generic.conf_files {
        match conf.merge_file(Path::new(file)) {
            Ok(true) => {}
            Ok(false) => {
                say_err!("dfs: File {file} does not exist.");
                return -1;
            }
            Err(e) => {
                say_err!("dfs: {e}");
                return -1;
            }
        }
    }
    // Hadoop's order: files, then -fs, then -D (so -D fs.defaultFS wins).
    if let Some(fs) = &generic.fs {
        conf.set(keys::FS_DEFAULT_FS, &fix_fs_name(fs));
    }
    if let Err(e) = conf.apply_overrides(&generic.defines) {
        say_err!("dfs: {e}");
        return -1;
    }
    if args.is_empty() {
        print_all_usage(&mut std::io::stderr().lock(), false);
        return -1;
    }
    let typed = args.remove(0);
    let Some(info) = typed
        .strip_prefix('-')
        .and_then(|name| COMMANDS.iter().find(|c| c.name == name))
    else {
        say_err!("{typed}: Unknown command");
        if COMMANDS.iter().any(|c| c.name == typed) {
            say_err!("Did you mean -{typed}?  This command begins with a dash.");
        }
        print_all_usage(&mut std::io::stderr().lock(), false);
        return -1;
    };
    let mut shell = Shell::new(info.name, conf);
    match dispatch(info.name, &mut shell, args).await {
        Ok(()) => shell.exit_code(),
        Err(UsageError(message)) => {
            let mut err = std::io::stderr().lock();
            for line in message.lines() {
                let _ = writeln!(err, "{typed}: {line}");
            }
            print_all_usage(&mut err, false);
            let _ = writeln!(err, "{USAGE_PREFIX} -{} {}", info.name, info.usage);
            -1
        }
    }
}

/// Hadoop's `FileSystem.fixName` for `-fs`: a bare `host:port` is the
/// deprecated spelling of `hdfs://host:port`.
fn fix_fs_name(fs: &str) -> String {
    if fs.contains("://") {
        fs.to_owned()
    } else {
        say_err!("dfs: \"{fs}\" is a deprecated filesystem name. Use \"hdfs://{fs}/\" instead.");
        format!("hdfs://{fs}")
    }
}

async fn dispatch(name: &str, shell: &mut Shell, args: Vec<String>) -> Result<(), UsageError> {
    match name {
        "appendToFile" => copy::append_to_file(shell, args).await,
        "cat" => display::cat(shell, args).await,
        "checksum" => checksum::checksum(shell, args).await,
        "chgrp" => perms::chgrp(shell, args).await,
        "chmod" => perms::chmod(shell, args).await,
        "chown" => perms::chown(shell, args).await,
        "copyFromLocal" | "put" => copy::put(shell, args).await,
        "copyToLocal" | "get" => copy::get(shell, args).await,
        "count" => usage::count(shell, args).await,
        "cp" => copy::cp(shell, args).await,
        "createSnapshot" => snapshot::create(shell, args).await,
        "deleteSnapshot" => snapshot::delete(shell, args).await,
        "du" => usage::du(shell, args).await,
        "expunge" => expunge::expunge(shell, args).await,
        "head" => display::head(shell, args).await,
        "getfacl" => acl::getfacl(shell, args).await,
        "getfattr" => xattr::getfattr(shell, args).await,
        "help" => help(&args, true),
        "ls" => ls::run(shell, args).await,
        "mkdir" => modify::mkdir(shell, args).await,
        "mv" => modify::mv(shell, args).await,
        "renameSnapshot" => snapshot::rename(shell, args).await,
        "rm" => modify::rm(shell, args).await,
        "rmdir" => modify::rmdir(shell, args).await,
        "setfacl" => acl::setfacl(shell, args).await,
        "setfattr" => xattr::setfattr(shell, args).await,
        "setrep" => modify::setrep(shell, args).await,
        "stat" => stat::stat(shell, args).await,
        "tail" => display::tail(shell, args).await,
        "test" => stat::test(shell, args).await,
        "touch" => modify::touch(shell, args).await,
        "touchz" => modify::touchz(shell, args).await,
        "usage" => help(&args, false),
        other => Err(UsageError::new(format!("`{other}': Unknown command"))),
    }
}

/// `-help` (`long`) and `-usage`: for the named commands, or all of them.
fn help(args: &[String], long: bool) -> Result<(), UsageError> {
    let mut out = std::io::stdout().lock();
    if args.is_empty() {
        print_all_usage(&mut out, long);
        return Ok(());
    }
    for name in args {
        let Some(info) = COMMANDS.iter().find(|c| c.name == name.as_str()) else {
            return Err(UsageError::new(format!("`{name}': Unknown command")));
        };
        if long {
            print_help(&mut out, info);
        } else {
            let _ = writeln!(out, "{USAGE_PREFIX} -{} {}", info.name, info.usage);
        }
    }
    Ok(())
}

/// One command's long help: its usage line, then its description indented.
fn print_help(out: &mut dyn Write, info: &CommandInfo) {
    let _ = writeln!(out, "-{} {} :", info.name, info.usage);
    for line in info.description.lines() {
        if line.is_empty() {
            let _ = writeln!(out);
        } else {
            let _ = writeln!(out, "  {line}");
        }
    }
}

/// The list of every command's usage, then (with `long`) each command's
/// help, then the generic options.
fn print_all_usage(out: &mut dyn Write, long: bool) {
    let _ = writeln!(out, "{USAGE_PREFIX}");
    for info in COMMANDS {
        let _ = writeln!(out, "\t[-{} {}]", info.name, info.usage);
    }
    if long {
        for info in COMMANDS {
            let _ = writeln!(out);
            print_help(out, info);
        }
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "Generic options supported are:");
    let _ = writeln!(
        out,
        "-conf <configuration file>        specify an application configuration file"
    );
    let _ = writeln!(
        out,
        "-D <property=value>               define a value for a given property"
    );
    let _ = writeln!(
        out,
        "-fs <hdfs://namenode:port>        specify default filesystem URL to use, overrides \
         'fs.defaultFS' property from configurations."
    );
    let _ = writeln!(out);
    let _ = writeln!(out, "The general command line syntax is:");
    let _ = writeln!(out, "command [genericOptions] [commandOptions]");
    let _ = writeln!(out);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_are_sorted_and_unique() {
        let names: Vec<&str> = COMMANDS.iter().map(|c| c.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(names, sorted);
    }

    #[test]
    fn usage_lists_every_command() {
        let mut buf = Vec::new();
        print_all_usage(&mut buf, false);
        let text = String::from_utf8(buf).expect("utf-8");
        assert!(text.starts_with(
            "Usage: cairn dfs [generic options]\n\t[-appendToFile [-n] <localsrc> ... <dst>]\n"
        ));
        for info in COMMANDS {
            assert!(text.contains(&format!("\t[-{} {}]\n", info.name, info.usage)));
        }
    }

    #[test]
    fn bare_fs_names_get_the_hdfs_scheme() {
        assert_eq!(fix_fs_name("hdfs://nn:8020"), "hdfs://nn:8020");
        assert_eq!(fix_fs_name("nn:8020"), "hdfs://nn:8020");
    }
}

//! The copying commands: `-put`/`-copyFromLocal`, `-get`/`-copyToLocal`,
//! `-cp` and `-appendToFile`, after Hadoop's `CommandWithDestination`.
//!
//! The destination is resolved first. With several sources it must be an
//! existing directory; with one it must not be an existing file (unless
//! `-f`) and its parent must exist. Each source file is written to
//! `<target>._COPYING_` and renamed over the target once complete (`-d`
//! writes the target directly); directories are copied recursively.
//! Failures are printed per path and the others go on.

use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use hdfs_native::WriteOptions;

use super::args::{pop_option_with_argument, CommandFormat, UsageError};
use super::modify::{file_options, umask};
use super::paths::{self, ArgPath};
use super::shell::{not_found, path_error, ExpandError, FsId, Item, Shell};
use super::transfer::{self, io_reason, Failure, Input, Output};

mod append;
mod attributes;
mod node;

pub(crate) use append::{append_to_file, APPEND_DESCRIPTION, APPEND_USAGE};
use attributes::{preserve_attributes, Preserve};
use node::{local_meta, Meta, Node, Place};

pub(crate) const PUT_USAGE: &str =
    "[-f] [-p] [-l] [-d] [-t <thread count>] [-q <thread pool queue size>] <localsrc> ... <dst>";
pub(crate) const PUT_DESCRIPTION: &str = "\
Copy files from the local file system into fs. Copying fails if the file already
exists, unless the -f flag is given.
Flags:

-p                           Preserves timestamps, ownership and the mode.
-f                           Overwrites the destination if it already exists.
-t <thread count>            Number of threads to be used, default is 1.
-q <thread pool queue size>  Thread pool queue size to be used, default is
                             1024.
-l                           Allow DataNode to lazily persist the file to disk.
                             Forces replication factor of 1. This flag will
                             result in reduced durability. Use with care.
-d                           Skip creation of temporary file(<dst>._COPYING_).";
pub(crate) const COPY_FROM_LOCAL_DESCRIPTION: &str = "Identical to the -put command.";

pub(crate) const GET_USAGE: &str = "[-f] [-p] [-crc] [-ignoreCrc] [-t <thread count>] [-q <thread pool queue size>] <src> ... <localdst>";
pub(crate) const GET_DESCRIPTION: &str = "\
Copy files that match the file pattern <src> to the local name. <src> is kept.
When copying multiple files, the destination must be a directory.
Flags:

-p                           Preserves timestamps, ownership and the mode.
-f                           Overwrites the destination if it already exists.
-crc                         write CRC checksums for the files downloaded.
-ignoreCrc                   Skip CRC checks on the file(s) downloaded.
-t <thread count>            Number of threads to be used, default is 1.
-q <thread pool queue size>  Thread pool queue size to be used, default is
                             1024.";
pub(crate) const COPY_TO_LOCAL_DESCRIPTION: &str = "Identical to the -get command.";

pub(crate) const CP_USAGE: &str =
    "[-f] [-p | -p[topax]] [-d] [-t <thread count>] [-q <thread pool queue size>] <src> ... <dst>";
pub(crate) const CP_DESCRIPTION: &str = "\
Copy files that match the file pattern <src> to a destination. When copying
multiple files, the destination must be a directory.
Flags :

-p[topax]                    Preserve file attributes [topx] (timestamps,
                             ownership, permission, ACL, XAttr). If -p is
                             specified with no arg, then preserves timestamps,
                             ownership, permission. If -pa is specified, then
                             preserves permission also because ACL is a
                             super-set of permission. Determination of whether
                             raw namespace extended attributes are preserved is
                             independent of the -p flag.
-f                           Overwrite the destination if it already exists.
-d                           Skip creation of temporary file(<dst>._COPYING_).
-t <thread count>            Number of threads to be used, default is 1.
-q <thread pool queue size>  Thread pool queue size to be used, default is
                             1024.";

const PUT_FORMAT: CommandFormat = CommandFormat::new(1, usize::MAX, &["f", "p", "l", "d"]);
const GET_FORMAT: CommandFormat =
    CommandFormat::new(1, usize::MAX, &["crc", "ignoreCrc", "p", "f"]);
const CP_FORMAT: CommandFormat = CommandFormat::new(2, usize::MAX, &["f", "d"]);

/// The suffix of the file a copy is written to before it is renamed.
const COPYING_SUFFIX: &str = "._COPYING_";

/// How a copy command runs.
struct Copier {
    overwrite: bool,
    direct: bool,
    preserve: Preserve,
    /// For files created on the cluster.
    options: WriteOptions,
    /// The local umask, for files created locally.
    umask: u16,
}

/// [`find_remote_destination`], its message printed: `None` when there
/// is nothing to copy to.
///
/// # Errors
///
/// A [`UsageError`] from the destination argument.
async fn remote_destination(
    shell: &mut Shell,
    args: &mut Vec<String>,
) -> Result<Option<Node>, UsageError> {
    match find_remote_destination(shell, args).await {
        Ok(dst) => Ok(Some(dst)),
        Err(Ok(message)) => {
            shell.error(&message);
            Ok(None)
        }
        Err(Err(e)) => Err(e),
    }
}

/// Hadoop's `-t`/`-q` values: numbers, otherwise Java's parse error.
fn check_number_option(value: Option<String>) -> Result<(), UsageError> {
    match value {
        Some(v) if v.parse::<i32>().is_err() => {
            Err(UsageError::new(format!("For input string: \"{v}\"")))
        }
        _ => Ok(()),
    }
}

/// The cluster destination of `-put`, `-cp` and `-appendToFile` (Hadoop's
/// `getRemoteDestination`): the last argument, or `.` (the home directory)
/// when there is only one.
///
/// # Errors
///
/// `Err(Ok(message))` to print, `Err(Err(usage))` for a usage error.
async fn find_remote_destination(
    shell: &mut Shell,
    args: &mut Vec<String>,
) -> Result<Node, Result<String, UsageError>> {
    let arg = if args.len() < 2 {
        ".".to_owned()
    } else {
        args.pop().unwrap_or_default()
    };
    match shell.expand(&arg).await {
        Ok(mut found) if found.len() == 1 => Ok(Node::remote(found.remove(0))),
        Ok(_) => Err(Ok(path_error(&arg, "Too many matches"))),
        Err(ExpandError::NoMatch(_)) => match shell.lookup(&arg).await {
            Ok(item) => Ok(Node::remote(item)),
            Err(ExpandError::Usage(e)) => Err(Err(e)),
            Err(ExpandError::NoMatch(m) | ExpandError::Failed(m)) => Err(Ok(m)),
        },
        Err(ExpandError::Failed(m)) => Err(Ok(m)),
        Err(ExpandError::Usage(e)) => Err(Err(e)),
    }
}

/// Runs `-put` and `-copyFromLocal`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags, no arguments, bad `-t`/`-q` values
/// or bad file settings.
pub(crate) async fn put(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    check_number_option(pop_option_with_argument("-t", &mut args)?)?;
    check_number_option(pop_option_with_argument("-q", &mut args)?)?;
    let flags = PUT_FORMAT.parse(&mut args)?;
    let mut options = file_options(shell)?.overwrite(true);
    if flags.has("l") {
        options = options.replication(1);
    }
    let preserve = flags.has("p");
    let copier = Copier {
        overwrite: flags.has("f"),
        direct: flags.has("d"),
        preserve: Preserve {
            times: preserve,
            ownership: preserve,
            permission: preserve,
            acl: false,
        },
        options,
        umask: umask(shell)?,
    };
    let Some(dst) = remote_destination(shell, &mut args).await? else {
        return Ok(());
    };
    if args.len() == 1 && args.first().is_some_and(|a| a == "-") {
        // Standard input: no checks on the destination beyond the file's.
        let src = Node {
            display: "-".to_owned(),
            place: Place::Local(PathBuf::from("-")),
            meta: None,
        };
        let Some(target) = target_path(shell, &dst, &src, false).await else {
            return Ok(());
        };
        copy_stream(shell, &copier, Input::Stdin, None, &target).await;
        return Ok(());
    }
    let mut sources = Vec::new();
    for arg in &args {
        match Node::local(arg) {
            Ok(node) => sources.push(node),
            Err(message) => shell.error(&message),
        }
    }
    copy_all(shell, &copier, sources, dst).await;
    Ok(())
}

/// Runs `-get` and `-copyToLocal`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags, no arguments or bad `-t`/`-q`
/// values.
pub(crate) async fn get(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    check_number_option(pop_option_with_argument("-t", &mut args)?)?;
    check_number_option(pop_option_with_argument("-q", &mut args)?)?;
    let flags = GET_FORMAT.parse(&mut args)?;
    let preserve = flags.has("p");
    let copier = Copier {
        overwrite: flags.has("f"),
        direct: false,
        preserve: Preserve {
            times: preserve,
            ownership: preserve,
            permission: preserve,
            acl: false,
        },
        options: WriteOptions::default(),
        umask: umask(shell)?,
    };
    let dst_arg = if args.len() < 2 {
        ".".to_owned()
    } else {
        args.pop().unwrap_or_default()
    };
    let dst = match Node::local(&dst_arg) {
        Ok(dst) => dst,
        Err(message) => {
            shell.error(&message);
            return Ok(());
        }
    };
    let sources = shell.expand_all(&args).await?;
    copy_all(
        shell,
        &copier,
        sources.into_iter().map(Node::remote).collect(),
        dst,
    )
    .await;
    Ok(())
}

/// Runs `-cp`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags, fewer than two arguments, bad
/// `-t`/`-q` values or bad file settings.
pub(crate) async fn cp(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let mut preserve = Preserve::default();
    // Hadoop's popPreserveOption: the first -p... word before `--`.
    if let Some(pos) = args
        .iter()
        .take_while(|a| a.as_str() != "--")
        .position(|a| a.starts_with("-p"))
    {
        let word = args.remove(pos);
        let letters = word.get(2..).unwrap_or_default();
        if letters.is_empty() {
            preserve = Preserve {
                times: true,
                ownership: true,
                permission: true,
                acl: false,
            };
        }
        for c in letters.chars() {
            match c {
                't' => preserve.times = true,
                'o' => preserve.ownership = true,
                'p' => preserve.permission = true,
                'a' => preserve.acl = true,
                'x' => {
                    shell.error("preserving extended attributes (-px) is not supported");
                    return Ok(());
                }
                other => {
                    // Hadoop's FileAttribute.getAttribute fails outside the
                    // command's error handling.
                    say_err(&format!(
                        "-cp: Fatal internal error\njava.util.NoSuchElementException: No attribute for {other}"
                    ));
                    shell.set_exit_code(-1);
                    return Ok(());
                }
            }
        }
    }
    check_number_option(pop_option_with_argument("-t", &mut args)?)?;
    check_number_option(pop_option_with_argument("-q", &mut args)?)?;
    let flags = CP_FORMAT.parse(&mut args)?;
    let copier = Copier {
        overwrite: flags.has("f"),
        direct: flags.has("d"),
        preserve,
        options: file_options(shell)?.overwrite(true),
        umask: umask(shell)?,
    };
    let Some(dst) = remote_destination(shell, &mut args).await? else {
        return Ok(());
    };
    let sources = shell.expand_all(&args).await?;
    copy_all(
        shell,
        &copier,
        sources.into_iter().map(Node::remote).collect(),
        dst,
    )
    .await;
    Ok(())
}

fn say_err(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}

/// Hadoop's `CommandWithDestination.processArguments` and what follows.
async fn copy_all(shell: &mut Shell, copier: &Copier, sources: Vec<Node>, dst: Node) {
    if sources.len() > 1 {
        if !dst.exists() {
            shell.error(&not_found(&dst.display));
            return;
        }
        if !dst.is_dir() {
            shell.error(&path_error(&dst.display, "Is not a directory"));
            return;
        }
    } else if dst.exists() {
        if !dst.is_dir() && !copier.overwrite {
            shell.error(&path_error(&dst.display, "File exists"));
            return;
        }
    } else {
        match parent_exists(shell, &dst).await {
            Ok(true) => {}
            Ok(false) => {
                let message = format!("{}: `{}'", not_found(&dst.display), dst.qualified(shell));
                shell.error(&message);
                return;
            }
            Err(message) => {
                shell.error(&message);
                return;
            }
        }
    }
    for src in sources {
        if !src.exists() {
            shell.error(&not_found(&src.display));
            continue;
        }
        let Some(target) = target_path(shell, &dst, &src, false).await else {
            continue;
        };
        if src.is_dir() && src.same_fs(&dst) {
            let from = src.qualified(shell);
            let to = target.qualified(shell);
            if from == to {
                shell.error(&format!("`{}' to `{to}': are identical", src.display));
                continue;
            }
            let prefix = if from.ends_with('/') {
                from
            } else {
                format!("{from}/")
            };
            if to.starts_with(&prefix) {
                shell.error(&format!(
                    "`{}' to `{}': is a subdirectory of itself",
                    src.display, target.display
                ));
                continue;
            }
        }
        copy_path(shell, copier, src, target).await;
    }
}

/// Hadoop's `PathData.parentExists` for a destination.
async fn parent_exists(shell: &Shell, node: &Node) -> Result<bool, String> {
    let typed = ArgPath::parse(&node.display).path;
    match &node.place {
        Place::Local(p) => {
            let target = if paths::names_directory(&typed) {
                p.as_path()
            } else {
                p.parent().unwrap_or(Path::new("/"))
            };
            Ok(local_meta(target)?.is_some())
        }
        Place::Remote(fs, p) => {
            let target = if paths::names_directory(&typed) {
                p.as_str()
            } else {
                paths::parent(p).unwrap_or("/")
            };
            shell.exists(*fs, target, &node.display).await
        }
    }
}

/// Hadoop's `getTargetPath`: inside `dst` when it is a directory (or
/// always, below the top level), otherwise `dst` itself. Looked up; `None`
/// after printing a failed lookup.
async fn target_path(shell: &mut Shell, dst: &Node, src: &Node, nested: bool) -> Option<Node> {
    let typed = ArgPath::parse(&dst.display).path;
    if nested || dst.is_dir() || paths::names_directory(&typed) {
        let child = dst.child_unchecked(&src.name());
        return looked_up(shell, child).await;
    }
    Some(dst.clone())
}

/// `node` with its metadata; `None` after printing a failed lookup.
async fn looked_up(shell: &mut Shell, mut node: Node) -> Option<Node> {
    let meta = match &node.place {
        Place::Local(p) => local_meta(p),
        Place::Remote(fs, p) => match shell.stat(*fs, p).await {
            Ok(status) => Ok(status.map(|s| Meta {
                is_dir: s.isdir,
                len: s.length as u64,
                mtime: s.modification_time,
                atime: s.access_time,
                owner: s.owner,
                group: s.group,
                permission: u32::from(s.permission),
            })),
            Err(e) => Err(shell.describe(&e, &node.display, *fs)),
        },
    };
    match meta {
        Ok(meta) => {
            node.meta = meta;
            Some(node)
        }
        Err(message) => {
            shell.error(&message);
            None
        }
    }
}

/// Copies a file, or a directory tree, to `target`.
async fn copy_path(shell: &mut Shell, copier: &Copier, src: Node, target: Node) {
    // Depth first with an explicit stack: (source, target) pairs, and the
    // directories whose attributes are set once their contents are copied.
    enum Task {
        Copy(Node, Node),
        Finish(Node, Node),
    }
    let mut stack = vec![Task::Copy(src, target)];
    while let Some(task) = stack.pop() {
        match task {
            Task::Finish(src, target) => preserve_attributes(shell, copier, &src, &target).await,
            Task::Copy(src, target) if !src.is_dir() => {
                copy_file(shell, copier, &src, &target).await;
            }
            Task::Copy(src, target) => {
                if target.exists() {
                    if !target.is_dir() {
                        shell.error(&path_error(&target.display, "Is not a directory"));
                        continue;
                    }
                } else if let Err(message) = make_dir(shell, &target).await {
                    shell.error(&message);
                    continue;
                }
                let children = match list(shell, &src).await {
                    Ok(children) => children,
                    Err(message) => {
                        shell.error(&message);
                        continue;
                    }
                };
                let mut target = target;
                target.meta = target.meta.or(Some(Meta {
                    is_dir: true,
                    len: 0,
                    mtime: 0,
                    atime: 0,
                    owner: String::new(),
                    group: String::new(),
                    permission: 0,
                }));
                stack.push(Task::Finish(src, target.clone()));
                let mut pairs = Vec::new();
                for child in children {
                    if let Some(child_target) = target_path(shell, &target, &child, true).await {
                        pairs.push(Task::Copy(child, child_target));
                    }
                }
                stack.extend(pairs.into_iter().rev());
            }
        }
    }
}

/// The entries of directory `dir`, sorted by name.
async fn list(shell: &Shell, dir: &Node) -> Result<Vec<Node>, String> {
    match &dir.place {
        Place::Local(p) => {
            let mut names = Vec::new();
            let entries =
                std::fs::read_dir(p).map_err(|e| format!("{} ({})", p.display(), io_reason(&e)))?;
            for entry in entries {
                let entry = entry.map_err(|e| format!("{} ({})", p.display(), io_reason(&e)))?;
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
            names.sort();
            let mut nodes = Vec::new();
            for name in names {
                let mut node = dir.child_unchecked(&name);
                if let Place::Local(path) = &node.place {
                    node.meta = local_meta(path)?;
                }
                if node.exists() {
                    nodes.push(node);
                }
            }
            Ok(nodes)
        }
        Place::Remote(fs, p) => {
            let client = shell
                .client(*fs)
                .ok_or_else(|| "unknown file system".to_owned())?;
            let statuses = client
                .list_status(p, false)
                .await
                .map_err(|e| shell.describe(&e, &dir.display, *fs))?;
            Ok(statuses
                .into_iter()
                .map(|s| {
                    let name = paths::name(&s.path).to_owned();
                    Node::remote(Item {
                        display: paths::child_display(&dir.display, &name),
                        fs: *fs,
                        path: paths::join(p, &name),
                        status: Some(s),
                    })
                })
                .collect())
        }
    }
}

async fn make_dir(shell: &Shell, node: &Node) -> Result<(), String> {
    match &node.place {
        Place::Local(p) => {
            std::fs::create_dir_all(p).map_err(|e| format!("{} ({})", p.display(), io_reason(&e)))
        }
        Place::Remote(fs, p) => {
            let client = shell
                .client(*fs)
                .ok_or_else(|| "unknown file system".to_owned())?;
            let permission = 0o777 & !u32::from(umask_of(shell));
            client
                .mkdirs(p, permission, true)
                .await
                .map_err(|e| shell.describe(&e, &node.display, *fs))
        }
    }
}

fn umask_of(shell: &Shell) -> u16 {
    umask(shell).unwrap_or(0o022)
}

/// Hadoop's `copyFileToTarget`: opens the source and copies it.
async fn copy_file(shell: &mut Shell, copier: &Copier, src: &Node, target: &Node) {
    let len = src.meta.as_ref().map_or(0, |m| m.len);
    let input = match &src.place {
        Place::Local(p) => match std::fs::File::open(p) {
            Ok(file) => Input::Local(file),
            Err(e) => {
                shell.error(&format!("{} ({})", p.display(), io_reason(&e)));
                return;
            }
        },
        Place::Remote(fs, p) => match open_remote(shell, *fs, p, &src.display).await {
            Ok(input) => input,
            Err(message) => {
                shell.error(&message);
                return;
            }
        },
    };
    if copy_stream(shell, copier, input, Some(len), target).await {
        preserve_attributes(shell, copier, src, target).await;
    }
}

/// The whole of an HDFS file as a stream of packets.
pub(crate) async fn open_remote(
    shell: &Shell,
    fs: FsId,
    path: &str,
    display: &str,
) -> Result<Input, String> {
    let client = shell
        .client(fs)
        .ok_or_else(|| "unknown file system".to_owned())?;
    let reader = client
        .read(path)
        .await
        .map_err(|e| shell.describe(&e, display, fs))?;
    let len = reader.file_length();
    Ok(Input::Remote(Box::pin(reader.read_range_stream(0, len))))
}

/// Hadoop's `copyStreamToTarget`: refuses an existing target (unless `-f`
/// and it is a file), writes `<target>._COPYING_` (or the target with
/// `-d`) and renames it over the target. Returns whether it succeeded.
async fn copy_stream(
    shell: &mut Shell,
    copier: &Copier,
    mut input: Input,
    total: Option<u64>,
    target: &Node,
) -> bool {
    if target.exists() && (target.is_dir() || !copier.overwrite) {
        shell.error(&path_error(&target.display, "File exists"));
        return false;
    }
    let temp = if copier.direct {
        target.clone()
    } else {
        target.suffixed(COPYING_SUFFIX)
    };
    let mut output = match create(shell, copier, &temp).await {
        Ok(output) => output,
        Err(message) => {
            shell.error(&message);
            return false;
        }
    };
    let label = target.name();
    let mut result = transfer::copy(&mut input, &mut output, total, &label)
        .await
        .map(|_| ());
    if result.is_ok() {
        result = output.finish().await;
    }
    drop(output);
    if let Err(failure) = result {
        let message = match failure {
            Failure::Local(e) => io_reason(&e),
            Failure::Remote(e) => match &temp.place {
                Place::Remote(fs, _) => shell.describe(&e, &temp.display, *fs),
                Place::Local(_) => match &target.place {
                    Place::Remote(fs, _) => shell.describe(&e, &target.display, *fs),
                    Place::Local(_) => e.to_string(),
                },
            },
        };
        shell.error(&message);
        remove(shell, &temp).await;
        return false;
    }
    if copier.direct {
        return true;
    }
    if target.exists() && !remove(shell, target).await {
        shell.error(&format!("`{}': delete: Input/output error", target.display));
        return false;
    }
    let renamed = match (&temp.place, &target.place) {
        (Place::Local(from), Place::Local(to)) => {
            std::fs::rename(from, to).map_err(|e| format!("{} ({})", to.display(), io_reason(&e)))
        }
        (Place::Remote(fs, from), Place::Remote(_, to)) => match shell.client(*fs) {
            Some(client) => client
                .rename(from, to, false)
                .await
                .map_err(|e| shell.describe(&e, &temp.display, *fs)),
            None => Err("unknown file system".to_owned()),
        },
        _ => Err("cannot rename across file systems".to_owned()),
    };
    if let Err(message) = renamed {
        shell.error(&message);
        remove(shell, &temp).await;
        return false;
    }
    true
}

/// Creates (truncating) the file `node` for writing.
async fn create(shell: &Shell, copier: &Copier, node: &Node) -> Result<Output, String> {
    match &node.place {
        Place::Local(p) => std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o666 & !u32::from(copier.umask))
            .open(p)
            .map(Output::Local)
            .map_err(|e| format!("{} ({})", p.display(), io_reason(&e))),
        Place::Remote(fs, p) => {
            let client = shell
                .client(*fs)
                .ok_or_else(|| "unknown file system".to_owned())?;
            client
                .create(p, &copier.options)
                .await
                .map(|w| Output::Remote(Box::new(w)))
                .map_err(|e| shell.describe(&e, &node.display, *fs))
        }
    }
}

/// Deletes the file `node`, quietly; returns whether it is gone.
async fn remove(shell: &Shell, node: &Node) -> bool {
    match &node.place {
        Place::Local(p) => std::fs::remove_file(p).is_ok(),
        Place::Remote(fs, p) => match shell.client(*fs) {
            Some(client) => client.delete(p, false).await.unwrap_or(false),
            None => false,
        },
    }
}

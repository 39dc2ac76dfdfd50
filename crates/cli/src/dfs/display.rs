//! The commands that print file contents: `-cat`, `-head` and `-tail`.

use std::io::Write;
use std::time::Duration;

use super::args::{pop_option_with_argument, CommandFormat, UsageError};
use super::shell::{not_found, path_error, ExpandError, Item, Shell};
use super::transfer::{self, io_reason, Failure, Output};

pub(crate) const CAT_USAGE: &str = "[-ignoreCrc] <src> ...";
pub(crate) const CAT_DESCRIPTION: &str = "\
Fetch all files that match the file pattern <src> and display their content on
stdout.";

pub(crate) const HEAD_USAGE: &str = "<file>";
pub(crate) const HEAD_DESCRIPTION: &str = "Show the first 1KB of the file.";

pub(crate) const TAIL_USAGE: &str = "[-f] [-s <sleep interval>] <file>";
pub(crate) const TAIL_DESCRIPTION: &str = "\
Show the last 1KB of the file.

-f  Shows appended data as the file grows.
-s  With -f , defines the sleep interval between iterations in milliseconds.";

const CAT_FORMAT: CommandFormat = CommandFormat::new(1, usize::MAX, &["ignoreCrc"]);
const HEAD_FORMAT: CommandFormat = CommandFormat::new(1, 1, &[]);
const TAIL_FORMAT: CommandFormat = CommandFormat::new(1, 1, &["f"]);

/// How much `-head` and `-tail` show.
const KIB: u64 = 1024;

/// `-tail -f`'s pause between looks, in milliseconds.
const FOLLOW_DELAY_MS: u64 = 5000;

/// Runs `-cat`.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags or no path.
pub(crate) async fn cat(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    CAT_FORMAT.parse(&mut args)?;
    for item in shell.expand_all(&args).await? {
        if shell.existing_file(&item).is_none() {
            continue;
        }
        if !print_range(shell, &item, 0, None).await {
            return Ok(());
        }
    }
    Ok(())
}

/// Runs `-head`: the first kilobyte of one file.
///
/// # Errors
///
/// A [`UsageError`] unless given exactly one path.
pub(crate) async fn head(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    HEAD_FORMAT.parse(&mut args)?;
    let Some(item) = single(shell, &args).await? else {
        return Ok(());
    };
    print_range(shell, &item, 0, Some(KIB)).await;
    Ok(())
}

/// Runs `-tail`: the last kilobyte of one file, then (`-f`) what is
/// appended to it, every `-s` milliseconds, until interrupted.
///
/// # Errors
///
/// A [`UsageError`] for unknown flags, a bad `-s` or not exactly one path.
pub(crate) async fn tail(shell: &mut Shell, mut args: Vec<String>) -> Result<(), UsageError> {
    let sleep = pop_option_with_argument("-s", &mut args)?;
    let follow = TAIL_FORMAT.parse(&mut args)?.has("f");
    let delay = match sleep.filter(|s| !s.is_empty() && follow) {
        Some(text) => text
            .parse::<u64>()
            .map_err(|_| UsageError::new(format!("For input string: \"{text}\"")))?,
        None => FOLLOW_DELAY_MS,
    };
    let Some(item) = single(shell, &args).await? else {
        return Ok(());
    };
    let len = item.status.as_ref().map_or(0, |s| s.length as u64);
    let mut offset = len.saturating_sub(KIB);
    if !print_range(shell, &item, offset, None).await {
        return Ok(());
    }
    offset = len;
    if !follow {
        return Ok(());
    }
    loop {
        tokio::time::sleep(Duration::from_millis(delay)).await;
        let len = match shell.stat(item.fs, &item.path).await {
            Ok(Some(status)) => status.length as u64,
            Ok(None) => {
                shell.error(&not_found(&item.display));
                return Ok(());
            }
            Err(e) => {
                let message = shell.describe(&e, &item.display, item.fs);
                shell.error(&message);
                return Ok(());
            }
        };
        if len <= offset {
            offset = offset.min(len);
            continue;
        }
        if !print_range(shell, &item, offset, None).await {
            return Ok(());
        }
        offset = len;
    }
}

/// The one path `-head` and `-tail` take, as typed (no globbing), if it is
/// an existing file; otherwise prints why not.
async fn single(shell: &mut Shell, args: &[String]) -> Result<Option<Item>, UsageError> {
    let Some(arg) = args.first() else {
        return Ok(None);
    };
    let item = match shell.lookup(arg).await {
        Ok(item) => item,
        Err(ExpandError::Usage(e)) => return Err(e),
        Err(ExpandError::NoMatch(m) | ExpandError::Failed(m)) => {
            shell.error(&m);
            return Ok(None);
        }
    };
    match &item.status {
        None => {
            shell.error(&not_found(&item.display));
            Ok(None)
        }
        Some(s) if s.isdir => {
            shell.error(&path_error(&item.display, "Is a directory"));
            Ok(None)
        }
        Some(_) => Ok(Some(item)),
    }
}

/// Prints `item` on standard output from `offset`, at most `limit` bytes
/// (the rest of the file when `None`). Returns `false` when standard output
/// is closed, and the command should stop quietly.
async fn print_range(shell: &mut Shell, item: &Item, offset: u64, limit: Option<u64>) -> bool {
    let client = match shell.client(item.fs) {
        Some(client) => client,
        None => return true,
    };
    let reader = match client.read(&item.path).await {
        Ok(reader) => reader,
        Err(e) => {
            let message = shell.describe(&e, &item.display, item.fs);
            shell.error(&message);
            return true;
        }
    };
    let file_len = reader.file_length() as u64;
    let start = offset.min(file_len);
    let end = limit.map_or(file_len, |l| start.saturating_add(l).min(file_len));
    let (Ok(start), Ok(len)) = (usize::try_from(start), usize::try_from(end - start)) else {
        return true;
    };
    let mut input = transfer::Input::Remote(Box::pin(reader.read_range_stream(start, len)));
    let mut output = Output::Stdout;
    let result = transfer::copy(&mut input, &mut output, None, "").await;
    let result = match result {
        Ok(_) => output.finish().await,
        Err(e) => Err(e),
    };
    match result {
        Ok(()) => true,
        Err(Failure::Local(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => false,
        Err(Failure::Local(e)) => {
            shell.error(&io_reason(&e));
            false
        }
        Err(Failure::Remote(e)) => {
            let _ = std::io::stdout().lock().flush();
            let message = shell.describe(&e, &item.display, item.fs);
            shell.error(&message);
            true
        }
    }
}

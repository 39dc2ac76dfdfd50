//! Command-line parsing the way Hadoop's shell does it: the generic options
//! (`-D`, `-fs`, `-conf`) in front of the command, and each command's own
//! flags through a port of `CommandFormat`.
//!
//! `CommandFormat` rules kept on purpose: flags are whole words (`-rf` is an
//! illegal option, not `-r -f`), they are only recognised before the first
//! non-flag argument, `--` ends them, a lone `-` is an argument, and the
//! argument count is checked after the flags are removed.

use std::collections::BTreeSet;

/// A mistake in how a command was called. The shell prints
/// `-<cmd>: <message>` followed by the usage, and exits with 255 (Hadoop's
/// `IllegalArgumentException` path).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct UsageError(pub String);

impl UsageError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        UsageError(message.into())
    }
}

/// Hadoop's check of commands that take exactly one path (`-getfattr`,
/// `-setfattr`, `-getfacl`, `-setfacl`).
///
/// # Errors
///
/// A [`UsageError`] for none or more than one.
pub(crate) fn check_one_path(args: &[String]) -> Result<(), UsageError> {
    match args.len() {
        0 => Err(UsageError::new("<path> is missing")),
        1 => Ok(()),
        _ => Err(UsageError::new("Too many arguments")),
    }
}

/// The flags a command accepts and how many arguments must remain.
pub(crate) struct CommandFormat {
    min: usize,
    max: usize,
    flags: &'static [&'static str],
    /// Unknown `-x` words are left in place as arguments instead of being
    /// refused: `-chmod` needs this so that a mode such as `-w` gets through.
    ignore_unknown: bool,
}

/// The flags found by [`CommandFormat::parse`].
#[derive(Debug, Default)]
pub(crate) struct Flags(BTreeSet<&'static str>);

impl Flags {
    /// Whether `-name` was given.
    pub(crate) fn has(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// How many distinct flags were given.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// The flags given, in name order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.0.iter().copied()
    }
}

impl CommandFormat {
    /// Between `min` and `max` arguments after the flags, which are named
    /// without their dash.
    pub(crate) const fn new(min: usize, max: usize, flags: &'static [&'static str]) -> Self {
        CommandFormat {
            min,
            max,
            flags,
            ignore_unknown: false,
        }
    }

    /// As [`CommandFormat::new`], but unknown flags stay in the arguments.
    pub(crate) const fn ignoring_unknown(
        min: usize,
        max: usize,
        flags: &'static [&'static str],
    ) -> Self {
        CommandFormat {
            min,
            max,
            flags,
            ignore_unknown: true,
        }
    }

    /// Removes the leading flags from `args` and checks how many remain.
    ///
    /// # Errors
    ///
    /// A [`UsageError`] naming an unknown flag, or saying how many arguments
    /// were expected, in Hadoop's words.
    pub(crate) fn parse(&self, args: &mut Vec<String>) -> Result<Flags, UsageError> {
        let mut found = Flags::default();
        let mut pos = 0;
        while let Some(arg) = args.get(pos) {
            if arg == "--" {
                args.remove(pos);
                break;
            }
            let Some(name) = arg.strip_prefix('-').filter(|n| !n.is_empty()) else {
                break;
            };
            if let Some(flag) = self.flags.iter().find(|f| **f == name) {
                found.0.insert(flag);
                args.remove(pos);
            } else if self.ignore_unknown {
                pos += 1;
            } else {
                return Err(UsageError::new(format!("Illegal option {arg}")));
            }
        }
        if args.len() < self.min {
            return Err(UsageError::new(format!(
                "Not enough arguments: expected {} but got {}",
                self.min,
                args.len()
            )));
        }
        if args.len() > self.max {
            return Err(UsageError::new(format!(
                "Too many arguments: expected {} but got {}",
                self.max,
                args.len()
            )));
        }
        Ok(found)
    }
}

/// Hadoop's `StringUtils.popOptionWithArgument`: removes `name` and the
/// argument after it from `args` (looking only before `--`), returning the
/// argument.
///
/// # Errors
///
/// A [`UsageError`] if `name` is the last word.
pub(crate) fn pop_option_with_argument(
    name: &str,
    args: &mut Vec<String>,
) -> Result<Option<String>, UsageError> {
    let Some(pos) = args
        .iter()
        .take_while(|a| a.as_str() != "--")
        .position(|a| a == name)
    else {
        return Ok(None);
    };
    if pos + 1 >= args.len() {
        return Err(UsageError::new(format!(
            "option {name} requires 1 argument."
        )));
    }
    args.remove(pos);
    Ok(Some(args.remove(pos)))
}

/// Hadoop's generic options, given before the command.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct GenericOptions {
    /// `-D key=value` (also `-Dkey=value`), in order.
    pub defines: Vec<String>,
    /// `-fs URL`: the file system, as `fs.defaultFS`.
    pub fs: Option<String>,
    /// `-conf FILE`: more configuration files, in order.
    pub conf_files: Vec<String>,
}

/// Generic options that take a value we have no use for (MapReduce job
/// settings); accepted so that command lines written for `hadoop fs` work.
const IGNORED_WITH_VALUE: [&str; 5] = ["-jt", "-files", "-libjars", "-archives", "-tokenCacheFile"];

/// Splits the generic options off the front of `args`, leaving the command
/// and its arguments.
///
/// # Errors
///
/// A message if an option is missing its value.
pub(crate) fn parse_generic_options(args: &mut Vec<String>) -> Result<GenericOptions, String> {
    let mut options = GenericOptions::default();
    while let Some(first) = args.first() {
        let takes_value = matches!(first.as_str(), "-D" | "-fs" | "-conf")
            || IGNORED_WITH_VALUE.contains(&first.as_str());
        if takes_value {
            if args.len() < 2 {
                return Err(format!(
                    "missing argument for option: {}",
                    first.trim_start_matches('-')
                ));
            }
            let name = args.remove(0);
            let value = args.remove(0);
            match name.as_str() {
                "-D" => options.defines.push(value),
                "-fs" => options.fs = Some(value),
                "-conf" => options.conf_files.push(value),
                _ => {}
            }
        } else if let Some(define) = first.strip_prefix("-D").filter(|d| d.contains('=')) {
            options.defines.push(define.to_owned());
            args.remove(0);
        } else {
            break;
        }
    }
    Ok(options)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn flags_come_off_the_front() {
        let fmt = CommandFormat::new(1, usize::MAX, &["r", "R", "f", "skipTrash"]);
        let mut args = words("-r -f -skipTrash /a -f");
        let flags = fmt.parse(&mut args).expect("valid");
        assert!(flags.has("r") && flags.has("f") && flags.has("skipTrash"));
        assert!(!flags.has("R"));
        assert_eq!(args, ["/a", "-f"]);
    }

    #[test]
    fn combined_and_unknown_flags_are_illegal() {
        let fmt = CommandFormat::new(1, usize::MAX, &["r", "f"]);
        let err = fmt.parse(&mut words("-rf /x")).expect_err("illegal");
        assert_eq!(err.0, "Illegal option -rf");
    }

    #[test]
    fn argument_counts_are_checked() {
        let fmt = CommandFormat::new(1, 1, &["e"]);
        assert_eq!(
            fmt.parse(&mut words("-e")).expect_err("too few").0,
            "Not enough arguments: expected 1 but got 0"
        );
        assert_eq!(
            fmt.parse(&mut words("-e /a /b")).expect_err("too many").0,
            "Too many arguments: expected 1 but got 2"
        );
    }

    #[test]
    fn double_dash_and_lone_dash_end_the_flags() {
        let fmt = CommandFormat::new(0, usize::MAX, &["d"]);
        let mut args = words("-d -- -d");
        assert!(fmt.parse(&mut args).expect("valid").has("d"));
        assert_eq!(args, ["-d"]);
        let mut args = words("- -d");
        assert_eq!(fmt.parse(&mut args).expect("valid").len(), 0);
        assert_eq!(args, ["-", "-d"]);
    }

    #[test]
    fn unknown_flags_can_be_kept() {
        let fmt = CommandFormat::ignoring_unknown(2, usize::MAX, &["R"]);
        let mut args = words("-R -w /x");
        assert!(fmt.parse(&mut args).expect("valid").has("R"));
        assert_eq!(args, ["-w", "/x"]);
    }

    #[test]
    fn option_with_argument() {
        let mut args = words("-a -t 20240102:030405 /f");
        assert_eq!(
            pop_option_with_argument("-t", &mut args).expect("valid"),
            Some("20240102:030405".to_owned())
        );
        assert_eq!(args, ["-a", "/f"]);
        assert!(pop_option_with_argument("-t", &mut words("/f -t")).is_err());
        assert_eq!(
            pop_option_with_argument("-t", &mut words("-- -t x")),
            Ok(None)
        );
    }

    #[test]
    fn generic_options() {
        let mut args = words("-D a=1 -Db=2 -fs hdfs://h:1 -conf /c.xml -jt local -ls /");
        let opts = parse_generic_options(&mut args).expect("valid");
        assert_eq!(opts.defines, ["a=1", "b=2"]);
        assert_eq!(opts.fs.as_deref(), Some("hdfs://h:1"));
        assert_eq!(opts.conf_files, ["/c.xml"]);
        assert_eq!(args, ["-ls", "/"]);

        let mut args = words("-ls -D a=1");
        assert_eq!(
            parse_generic_options(&mut args).expect("valid"),
            GenericOptions::default()
        );
        assert_eq!(args.len(), 3);

        assert!(parse_generic_options(&mut words("-fs")).is_err());
    }
}

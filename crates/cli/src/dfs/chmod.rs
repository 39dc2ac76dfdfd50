//! `-chmod` modes, parsed and applied exactly as Hadoop's `ChmodParser`
//! (and its base `PermissionParser`) does, quirks included:
//!
//! * an octal mode is three digits with an optional leading `0`/`1` for the
//!   sticky bit, optionally after a `+`: `644`, `1777`, `+0755`;
//! * a symbolic mode is one or more `[ugoa]*[+-=]+[rwxXt]+` clauses separated
//!   by commas; a clause names no class means all of them;
//! * a later clause *replaces* what an earlier one set for the same class
//!   instead of composing with it (`u+x,u-w` only removes `w`);
//! * the sticky bit follows the clauses that include "others": `+t` and
//!   `o+t` set it, `o=rx` and `a=r` clear it, `u+t` does nothing;
//! * `X` adds execute only to directories and to files that already have an
//!   execute bit somewhere.

/// How one class of bits changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Add,
    Remove,
    Set,
}

/// The change for one class: the operation and the bits it names, with
/// `X` as bit 8.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Segment {
    op: Op,
    bits: u16,
}

/// Bit standing for `X` inside a [`Segment`].
const CAP_X: u16 = 8;

impl Segment {
    /// Leaves the class as it is.
    const UNCHANGED: Segment = Segment {
        op: Op::Add,
        bits: 0,
    };

    fn apply(self, existing: u16, exe_ok: bool) -> u16 {
        let cap_x = self.bits & CAP_X != 0;
        let mut bits = if cap_x {
            (self.bits & !CAP_X) | 1
        } else {
            self.bits
        };
        bits = match self.op {
            Op::Add => bits | existing,
            Op::Remove => !bits & existing,
            Op::Set => bits,
        };
        if cap_x && !exe_ok && bits & 1 != 0 && existing & 1 == 0 {
            bits &= !1;
        }
        bits
    }
}

/// A parsed `-chmod` mode, ready to apply to each path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ChmodMode {
    user: Segment,
    group: Segment,
    others: Segment,
    sticky: Segment,
}

impl ChmodMode {
    /// Parses `mode`; `None` if it is neither an octal nor a symbolic mode
    /// (Hadoop's "does not match the expected pattern").
    pub(crate) fn parse(mode: &str) -> Option<Self> {
        if let Some(first) = match_clause(mode, 0, Grammar::Chmod) {
            return parse_symbolic(mode, first, Grammar::Chmod);
        }
        parse_octal(mode, Grammar::Chmod)
    }

    /// The new permission for a path whose permission is `existing` (only
    /// the low 10 bits are looked at).
    pub(crate) fn apply(&self, existing: u16, is_dir: bool) -> u16 {
        let existing = existing & 0o1777;
        let exe_ok = is_dir || existing & 0o111 != 0;
        (self.sticky.apply(existing >> 9, false) & 1) << 9
            | (self.user.apply((existing >> 6) & 7, exe_ok) & 7) << 6
            | (self.group.apply((existing >> 3) & 7, exe_ok) & 7) << 3
            | (self.others.apply(existing & 7, exe_ok) & 7)
    }
}

/// `fs.permissions.umask-mode` as Hadoop's `UmaskParser` reads it: octal
/// (`022`, `0022`), or symbolic naming the bits to *keep*
/// (`u=rwx,g=rx,o=`). `None` if it is neither.
pub(crate) fn parse_umask(value: &str) -> Option<u16> {
    if let Some(first) = match_clause(value, 0, Grammar::Umask) {
        let allowed = parse_symbolic(value, first, Grammar::Umask)?.apply(0, false);
        return Some(!allowed & 0o777);
    }
    Some(parse_octal(value, Grammar::Umask)?.apply(0, false) & 0o777)
}

/// The two dialects of Hadoop's `PermissionParser`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Grammar {
    /// `ChmodParser`: `[rwxXt]+` and an optional sticky digit.
    Chmod,
    /// `UmaskParser`: `[rwx]*` and any number of leading zeros.
    Umask,
}

/// Java's `\s`.
fn is_java_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// One symbolic clause matched at a byte offset.
struct Clause<'a> {
    who: &'a str,
    ops: &'a str,
    perms: &'a str,
    separator: &'a str,
    end: usize,
}

/// Matches `\s*([ugoa]*)([+=-]+)([rwxXt]+)([,\s]*)\s*` starting exactly at
/// `start` (Java's `\G`). The character classes are disjoint, so a greedy
/// scan finds what the regex does.
fn match_clause(s: &str, start: usize, grammar: Grammar) -> Option<Clause<'_>> {
    let rest = s.get(start..)?;
    let take = |from: usize, pred: &dyn Fn(char) -> bool| -> usize {
        rest.get(from..)
            .and_then(|r| {
                r.char_indices()
                    .find(|(_, c)| !pred(*c))
                    .map(|(i, _)| from + i)
            })
            .unwrap_or(rest.len())
    };
    let who_start = take(0, &is_java_space);
    let ops_start = take(who_start, &|c| matches!(c, 'u' | 'g' | 'o' | 'a'));
    let perms_start = take(ops_start, &|c| matches!(c, '+' | '=' | '-'));
    let sep_start = take(perms_start, &|c| match grammar {
        Grammar::Chmod => matches!(c, 'r' | 'w' | 'x' | 'X' | 't'),
        Grammar::Umask => matches!(c, 'r' | 'w' | 'x'),
    });
    let end = take(sep_start, &|c| c == ',' || is_java_space(c));
    let no_perms = sep_start == perms_start && grammar == Grammar::Chmod;
    if perms_start == ops_start || no_perms {
        return None;
    }
    Some(Clause {
        who: rest.get(who_start..ops_start)?,
        ops: rest.get(ops_start..perms_start)?,
        perms: rest.get(perms_start..sep_start)?,
        separator: rest.get(sep_start..end)?,
        end: start + end,
    })
}

fn parse_symbolic(mode: &str, first: Clause<'_>, grammar: Grammar) -> Option<ChmodMode> {
    let mut parsed = ChmodMode {
        user: Segment::UNCHANGED,
        group: Segment::UNCHANGED,
        others: Segment::UNCHANGED,
        sticky: Segment::UNCHANGED,
    };
    let mut clause = first;
    loop {
        let op = match clause.ops.chars().last()? {
            '+' => Op::Add,
            '-' => Op::Remove,
            _ => Op::Set,
        };
        let (mut user, mut group, mut others) = (false, false, false);
        for c in clause.who.chars() {
            match c {
                'u' => user = true,
                'g' => group = true,
                'o' => others = true,
                _ => {}
            }
        }
        if !(user || group || others) {
            (user, group, others) = (true, true, true);
        }
        let mut bits = 0u16;
        let mut sticky = false;
        for c in clause.perms.chars() {
            match c {
                'r' => bits |= 4,
                'w' => bits |= 2,
                'x' => bits |= 1,
                'X' => bits |= CAP_X,
                _ => sticky = true,
            }
        }
        let segment = Segment { op, bits };
        if user {
            parsed.user = segment;
        }
        if group {
            parsed.group = segment;
        }
        if others {
            parsed.others = segment;
            parsed.sticky = Segment {
                op,
                bits: u16::from(sticky),
            };
        }
        if clause.end >= mode.len() {
            return Some(parsed);
        }
        // A further clause is only allowed after a comma.
        if !clause.separator.contains(',') {
            return None;
        }
        clause = match_clause(mode, clause.end, grammar)?;
    }
}

fn parse_octal(mode: &str, grammar: Grammar) -> Option<ChmodMode> {
    let trimmed = mode.trim_matches(is_java_space);
    let digits = trimmed.strip_prefix('+').unwrap_or(trimmed);
    let mut digits: Vec<u16> = digits
        .chars()
        .map(|c| c.to_digit(8).and_then(|d| u16::try_from(d).ok()))
        .collect::<Option<_>>()?;
    if grammar == Grammar::Umask {
        // `(0*)([0-7]{3})`: any run of leading zeros.
        while digits.len() > 3 && digits.first() == Some(&0) {
            digits.remove(0);
        }
    }
    let (sticky, rest) = match digits.as_slice() {
        [u, g, o] => (0, [*u, *g, *o]),
        [s @ (0 | 1), u, g, o] if grammar == Grammar::Chmod => (*s, [*u, *g, *o]),
        _ => return None,
    };
    let set = |bits| Segment { op: Op::Set, bits };
    Some(ChmodMode {
        user: set(rest[0]),
        group: set(rest[1]),
        others: set(rest[2]),
        sticky: set(sticky),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chmod(mode: &str, existing: u16, is_dir: bool) -> u16 {
        ChmodMode::parse(mode)
            .unwrap_or_else(|| panic!("{mode:?} should parse"))
            .apply(existing, is_dir)
    }

    #[test]
    fn octal_modes() {
        assert_eq!(chmod("640", 0o644, false), 0o640);
        assert_eq!(chmod("1777", 0o755, true), 0o1777);
        assert_eq!(chmod("0644", 0o1777, false), 0o644);
        assert_eq!(chmod("+0644", 0o600, false), 0o644);
        assert_eq!(chmod(" 750 ", 0o600, false), 0o750);
        assert_eq!(chmod("750", 0o10644, false), 0o750, "ACL bit dropped");
        for bad in [
            "01777", "11777", "2777", "64", "abc", "", "8", "+-644", "7777 7",
        ] {
            assert_eq!(ChmodMode::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn symbolic_modes_from_the_golden_transcript() {
        assert_eq!(chmod("g+w", 0o640, false), 0o660);
        assert_eq!(chmod("u-w,o+r", 0o660, false), 0o464);
        assert_eq!(chmod("a=r", 0o464, false), 0o444);
        assert_eq!(chmod("g+w", 0o750, true), 0o770);
    }

    #[test]
    fn later_clauses_replace_earlier_ones_for_a_class() {
        // Hadoop keeps only the last clause per class: u+x is forgotten.
        assert_eq!(chmod("u+x,u-w", 0o755, true), 0o555);
        assert_eq!(chmod("u+x,u-w", 0o644, false), 0o444);
        assert_eq!(chmod("u=rwx,,g=r", 0o755, false), 0o745);
        assert_eq!(chmod("u=rwx,", 0o644, false), 0o744);
        assert_eq!(chmod("ug+rw,o-rwx", 0o705, false), 0o760);
    }

    #[test]
    fn sticky_bit_follows_the_others_class() {
        assert_eq!(chmod("+t", 0o555, true), 0o1555);
        assert_eq!(chmod("o+t", 0o755, true), 0o1755);
        assert_eq!(chmod("o-t", 0o1777, true), 0o777);
        assert_eq!(chmod("u+t", 0o755, true), 0o755);
        assert_eq!(chmod("o=rx", 0o1555, true), 0o555);
        assert_eq!(chmod("a=r", 0o1777, true), 0o444);
        assert_eq!(chmod("o+rwx", 0o1700, true), 0o1707);
        assert_eq!(chmod("a+rwxt", 0, true), 0o1777);
    }

    #[test]
    fn capital_x_only_for_directories_and_executables() {
        assert_eq!(chmod("a+X", 0o644, false), 0o644);
        assert_eq!(chmod("a+X", 0o644, true), 0o755);
        assert_eq!(chmod("go+X", 0o744, false), 0o755);
        assert_eq!(chmod("a=X", 0o700, false), 0o111);
        assert_eq!(chmod("a=X", 0o600, false), 0);
        assert_eq!(chmod("a-X", 0o755, false), 0o644);
    }

    #[test]
    fn malformed_symbolic_modes() {
        for bad in [
            "u=rwx g=r",
            "u+",
            "+",
            "u",
            "x",
            "u+x;g+w",
            "u+z",
            "u+x,",
            "u+x,bad",
        ] {
            let parsed = ChmodMode::parse(bad);
            if bad == "u+x," {
                assert!(parsed.is_some(), "a trailing comma is accepted");
            } else {
                assert_eq!(parsed, None, "{bad:?}");
            }
        }
        // What Hadoop reads as "-w" when it is given as the mode.
        assert_eq!(chmod("-w", 0o755, true), 0o555);
        assert_eq!(chmod("  u+x  ", 0o644, false), 0o744);
        assert_eq!(chmod("u+-x", 0o755, false), 0o655, "the last operator wins");
    }

    #[test]
    fn umask_modes() {
        assert_eq!(parse_umask("022"), Some(0o022));
        assert_eq!(parse_umask("0022"), Some(0o022));
        assert_eq!(parse_umask("000077"), Some(0o077));
        assert_eq!(parse_umask(" 027 "), Some(0o027));
        // The symbolic pattern is tried first and matches the bare "+" (its
        // permissions may be empty), so Hadoop refuses "+027" as a umask.
        assert_eq!(parse_umask("+027"), None);
        assert_eq!(parse_umask("u=rwx,g=rx,o="), Some(0o027));
        assert_eq!(parse_umask("u=rwx,g=rwx,o=rwx"), Some(0));
        assert_eq!(parse_umask("a=rx"), Some(0o222));
        assert_eq!(parse_umask("1022"), None);
        assert_eq!(parse_umask("u=rwxt"), None);
        assert_eq!(parse_umask("nonsense"), None);
    }
}

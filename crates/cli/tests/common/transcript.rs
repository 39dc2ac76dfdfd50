//! Running `cairn` commands the way the Java kit runs Hadoop's tools, and
//! writing what they print as the kit's golden transcripts do (`$ LINE`,
//! stdout lines, stderr lines as `! ...`, `exit=N`), with the kit's
//! normalisation (the cluster's URL, `yyyy-MM-dd HH:mm` times, the
//! superuser's name standing alone).

/// One run of the `cairn` binary: stdout, stderr and exit code (255 as
/// Java's -1).
pub fn cairn(user: Option<&str>, args: &[&str]) -> (String, String, i32) {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.args(args)
        .env_remove("HADOOP_CONF_DIR")
        .env_remove("HADOOP_USER_NAME");
    if let Some(u) = user {
        cmd.env("HADOOP_USER_NAME", u);
    }
    let out = cmd.output().expect("run cairn");
    let code = match out.status.code() {
        Some(255) | None => -1,
        Some(c) => c,
    };
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        code,
    )
}

/// Splits a script line into its user (`@alice ...`) and its command.
pub fn user_and_command(line: &str) -> (Option<&str>, &str) {
    match line.strip_prefix('@') {
        Some(rest) => rest
            .split_once(' ')
            .map_or((None, rest), |(u, c)| (Some(u), c)),
        None => (None, line),
    }
}

/// A transcript being written.
pub struct Transcript {
    pub text: String,
    url: String,
    superuser: String,
}

impl Transcript {
    pub fn new(url: &str) -> Transcript {
        Transcript {
            text: String::new(),
            url: url.to_string(),
            superuser: super::current_user(),
        }
    }

    /// Adds one script line with what it printed and its exit code.
    pub fn push(&mut self, line: &str, out: &str, err: &str, code: i32) {
        let mut add = |l: &str| {
            let n = normalise(l, &self.url, &self.superuser);
            self.text.push_str(&n);
            self.text.push('\n');
        };
        add(&format!("$ {line}"));
        for l in out.lines() {
            add(l);
        }
        for l in err.lines().filter(|l| !l.is_empty()) {
            add(&format!("! {l}"));
        }
        self.text.push_str(&format!("exit={code}\n\n"));
    }
}

/// The kit's normalisation of one line.
pub fn normalise(line: &str, url: &str, superuser: &str) -> String {
    let line = line.replace(url, "hdfs://<nn>");
    let chars: Vec<char> = line.chars().collect();
    let shape: Vec<char> = "9999-99-99 99:99".chars().collect();
    let is_time = |i: usize| {
        i + shape.len() <= chars.len()
            && shape.iter().enumerate().all(|(k, p)| {
                let c = chars[i + k];
                if *p == '9' {
                    c.is_ascii_digit()
                } else {
                    c == *p
                }
            })
    };
    let mut timed = String::new();
    let mut i = 0;
    while i < chars.len() {
        if is_time(i) {
            timed.push_str("<time>");
            i += shape.len();
        } else {
            timed.push(chars[i]);
            i += 1;
        }
    }
    let before_ok =
        |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || "_.@$-".contains(c));
    let after_ok = |c: Option<char>| !c.is_some_and(|c| c.is_alphanumeric() || "_$-".contains(c));
    let mut out = String::new();
    let mut rest = timed.as_str();
    while let Some(at) = rest.find(superuser) {
        let (head, tail) = rest.split_at(at);
        let after = &tail[superuser.len()..];
        out.push_str(head);
        if before_ok(out.chars().next_back()) && after_ok(after.chars().next()) {
            out.push_str("<super>");
        } else {
            out.push_str(superuser);
        }
        rest = after;
    }
    out.push_str(rest);
    out.trim_end().to_string()
}

//! The state one shell command runs with, and the machinery every command
//! shares: finding the file system for a path, expanding arguments into
//! [`Item`]s (Hadoop's `PathData`), turning client errors into Hadoop's
//! messages, printing, counting failures, and walking directory trees.
//!
//! Errors are printed where they happen, as `<cmd>: <first line>`, and the
//! command goes on with its next path, as Hadoop's `Command` does; the exit
//! code is 1 if anything failed.

use std::cmp::Ordering;
use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::net::SocketAddr;

use cairn_common::config::{parse_hdfs_uri, ConfigError, Configuration, HostPort};
use cairn_common::keys;
use hdfs_native::client::{FileStatus, ListStatusIterator};
use hdfs_native::{Client, ClientBuilder, HdfsError};

use super::args::UsageError;
use super::paths::{self, ArgPath};

/// `fs.defaultFS` when nothing sets it: the local cluster `cairn namenode`
/// starts by default (Hadoop's own default, `file:///`, is no HDFS).
const DEFAULT_FS: &str = "hdfs://127.0.0.1:8020";

/// hdfs-native's retry settings for an unreachable NameNode, when the
/// configuration does not set them (see [`Shell::add_filesystem`]).
const CONNECT_RETRY_DEFAULTS: [(&str, &str); 2] = [
    ("dfs.client.failover.max.attempts", "10"),
    ("dfs.client.failover.sleep.max.millis", "1000"),
];

/// The prefix of home directories, as in Hadoop (`dfs.user.home.dir.prefix`).
const HOME_DIR_PREFIX_KEY: &str = "dfs.user.home.dir.prefix";
const HOME_DIR_PREFIX_DEFAULT: &str = "/user";

/// A file system a command touches: one NameNode, by the authority the user
/// wrote (`127.0.0.1:8020`).
struct Filesystem {
    /// As written in `fs.defaultFS` or the path, used in messages.
    authority: String,
    client: Client,
    /// The `host:port` of each NameNode of an HA nameservice (the
    /// authority is its name); empty for a single NameNode.
    nameservice: Vec<String>,
}

/// Which of a command's file systems a path is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FsId(usize);

/// A path argument or a directory entry (Hadoop's `PathData`).
#[derive(Clone, Debug)]
pub(crate) struct Item {
    /// How the path is shown: as typed while it does not exist, otherwise
    /// normalised (see [`super::paths`]).
    pub display: String,
    /// Which file system.
    pub fs: FsId,
    /// The absolute, normalised path on that file system.
    pub path: String,
    /// `None` if the path does not exist.
    pub status: Option<FileStatus>,
}

impl Item {
    /// Whether the path existed when it was looked up.
    pub(crate) fn exists(&self) -> bool {
        self.status.is_some()
    }

    /// Whether the path is an existing directory.
    pub(crate) fn is_dir(&self) -> bool {
        self.status.as_ref().is_some_and(|s| s.isdir)
    }

    /// The entry `status` of this directory, as listed.
    pub(crate) fn child(&self, status: FileStatus) -> Item {
        let name = paths::name(&status.path).to_owned();
        Item {
            display: paths::child_display(&self.display, &name),
            fs: self.fs,
            path: paths::join(&self.path, &name),
            status: Some(status),
        }
    }
}

/// `` `path': reason ``, the form of Hadoop's `PathIOException` messages.
pub(crate) fn path_error(display: &str, reason: &str) -> String {
    format!("`{display}': {reason}")
}

/// Hadoop's "No such file or directory" for a path.
pub(crate) fn not_found(display: &str) -> String {
    path_error(display, "No such file or directory")
}

/// What went wrong expanding an argument.
pub(crate) enum ExpandError {
    /// A glob matched nothing (the message to print); `-rm -f` stays quiet.
    NoMatch(String),
    /// Printed as a failure of this argument; the command goes on.
    Failed(String),
    /// The argument cannot be a path at all; the command stops.
    Usage(UsageError),
}

/// One command's run: its name for messages, its configuration and file
/// systems, and the failures so far.
pub(crate) struct Shell {
    name: &'static str,
    conf: Configuration,
    home: String,
    /// The authority of `fs.defaultFS`, or why it cannot be used.
    default_fs: Result<String, String>,
    filesystems: Vec<Filesystem>,
    /// Index of the default file system once built.
    default_index: Option<FsId>,
    errors: usize,
    exit_code: i32,
}

impl Shell {
    /// A shell for command `name` (without its dash) with `conf` complete
    /// (`-D`, `-fs` and `-conf` applied). Nothing connects yet.
    pub(crate) fn new(name: &'static str, conf: Configuration) -> Self {
        let default_fs = default_authority(&conf);
        // The user hdfs-native sends, found the same way, for the home
        // directory relative paths start from.
        let user = std::env::var("HADOOP_USER_NAME")
            .ok()
            .or_else(|| whoami::username().ok())
            .unwrap_or_else(|| "unknown".to_owned());
        let prefix = conf
            .get(HOME_DIR_PREFIX_KEY)
            .unwrap_or(HOME_DIR_PREFIX_DEFAULT)
            .trim_end_matches('/')
            .to_owned();
        Shell {
            name,
            home: format!("{prefix}/{user}"),
            conf,
            default_fs,
            filesystems: Vec::new(),
            default_index: None,
            errors: 0,
            exit_code: 0,
        }
    }

    /// The user's home directory (`dfs.user.home.dir.prefix`/user).
    pub(crate) fn home(&self) -> &str {
        &self.home
    }

    /// The configuration the command runs with.
    pub(crate) fn conf(&self) -> &Configuration {
        &self.conf
    }

    /// The process exit code so far: 1 after any failure, else what the
    /// command set (0 unless `-test` found its test false).
    pub(crate) fn exit_code(&self) -> i32 {
        if self.errors > 0 {
            1
        } else {
            self.exit_code
        }
    }

    /// Sets the exit code for a command that reports through it (`-test`).
    pub(crate) fn set_exit_code(&mut self, code: i32) {
        self.exit_code = code;
    }

    /// Prints one line on standard output.
    pub(crate) fn out(&self, line: &str) {
        // A closed pipe (`cairn dfs -ls / | head`) is not worth a panic.
        let _ = writeln!(std::io::stdout().lock(), "{line}");
    }

    /// Prints `<cmd>: <first line of message>` on standard error, without
    /// counting it as a failure.
    pub(crate) fn warn(&self, message: &str) {
        let first = message.lines().next().unwrap_or_default();
        let _ = writeln!(std::io::stderr().lock(), "{}: {first}", self.name);
    }

    /// Prints a failure as [`Shell::warn`] does and remembers it for the
    /// exit code.
    pub(crate) fn error(&mut self, message: &str) {
        self.warn(message);
        self.errors += 1;
    }

    /// The client of file system `fs`.
    pub(crate) fn client(&self, fs: FsId) -> Option<&Client> {
        self.filesystems.get(fs.0).map(|f| &f.client)
    }

    /// `hdfs://authority/path`, how Hadoop shows a qualified path.
    pub(crate) fn qualified(&self, fs: FsId, path: &str) -> String {
        let authority = self
            .filesystems
            .get(fs.0)
            .map_or("", |f| f.authority.as_str());
        format!("hdfs://{authority}{path}")
    }

    /// Hadoop's message for a failed call on the path shown as `display` on
    /// file system `fs`.
    pub(crate) fn describe(&self, error: &HdfsError, display: &str, fs: FsId) -> String {
        match error {
            HdfsError::FileNotFound(_) => not_found(display),
            HdfsError::AlreadyExists(_) => path_error(display, "File exists"),
            HdfsError::IsADirectoryError(_) => path_error(display, "Is a directory"),
            // The server's exception: Hadoop prints its message alone.
            HdfsError::RPCError(class, message) | HdfsError::FatalRPCError(class, message) => {
                if message.trim().is_empty() {
                    class.clone()
                } else {
                    message.clone()
                }
            }
            HdfsError::IOError(e) => {
                let authority = self
                    .filesystems
                    .get(fs.0)
                    .map_or("", |f| f.authority.as_str());
                format!("Call to {authority} failed: {e}")
            }
            other => other.to_string(),
        }
    }

    /// The file system a path argument names: its `hdfs://authority`, or
    /// `fs.defaultFS` when it has none.
    fn filesystem_for(&mut self, arg: &ArgPath) -> Result<FsId, String> {
        match (&arg.scheme, &arg.authority) {
            (Some(scheme), _) if !scheme.eq_ignore_ascii_case("hdfs") => {
                Err(format!("No FileSystem for scheme \"{scheme}\""))
            }
            (Some(_), Some(authority)) if !authority.is_empty() => {
                self.filesystem(authority.clone())
            }
            _ => {
                if let Some(fs) = self.default_index {
                    return Ok(fs);
                }
                let fs = self.filesystem(self.default_fs.clone()?)?;
                self.default_index = Some(fs);
                Ok(fs)
            }
        }
    }

    /// The file system at `authority`, building its client the first time.
    /// One authority is one file system, however the paths name it.
    fn filesystem(&mut self, authority: String) -> Result<FsId, String> {
        if let Some(i) = self
            .filesystems
            .iter()
            .position(|f| f.authority == authority)
        {
            return Ok(FsId(i));
        }
        // A nameservice (`hdfs://ns1`): hdfs-native fails over among its
        // NameNodes from the same configuration.
        let members = if authority.contains(':') {
            Vec::new()
        } else {
            self.conf
                .ha_namenodes(&authority)
                .map_err(|e| e.to_string())?
        };
        if !members.is_empty() {
            return self.add_nameservice(
                authority,
                members.iter().map(|m| m.rpc_address.to_string()).collect(),
            );
        }
        let address = parse_hdfs_uri(keys::FS_DEFAULT_FS, &authority).map_err(|e| match e {
            ConfigError::InvalidValue { reason, .. } => format!("hdfs://{authority}: {reason}"),
            other => other.to_string(),
        })?;
        self.add_filesystem(authority, &address)
    }

    /// Every key we have, so that a client sees `-D` overrides and `--conf`
    /// files the same way the shell does.
    fn client_config(&self) -> HashMap<String, String> {
        self.conf
            .iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect()
    }

    fn add_filesystem(&mut self, authority: String, address: &HostPort) -> Result<FsId, String> {
        let mut config = self.client_config();
        // hdfs-native retries an unreachable NameNode as an HA failover:
        // 15 attempts with back-off up to 15 s, three minutes in all. A shell
        // should give up about when Hadoop's does for a single NameNode (10
        // connection retries, 1 s apart), unless told otherwise.
        for (key, value) in CONNECT_RETRY_DEFAULTS {
            config
                .entry(key.to_owned())
                .or_insert_with(|| value.to_owned());
        }
        let client = ClientBuilder::new()
            .with_url(format!("hdfs://{address}"))
            .with_config(config)
            .build()
            .map_err(|e| format!("cannot use hdfs://{authority}: {e}"))?;
        self.filesystems.push(Filesystem {
            authority,
            client,
            nameservice: Vec::new(),
        });
        Ok(FsId(self.filesystems.len() - 1))
    }

    fn add_nameservice(&mut self, name: String, namenodes: Vec<String>) -> Result<FsId, String> {
        let client = ClientBuilder::new()
            .with_url(format!("hdfs://{name}"))
            .with_config(self.client_config())
            .build()
            .map_err(|e| format!("cannot use hdfs://{name}: {e}"))?;
        self.filesystems.push(Filesystem {
            authority: name,
            client,
            nameservice: namenodes,
        });
        Ok(FsId(self.filesystems.len() - 1))
    }

    /// The status of `path`, `None` if it does not exist.
    ///
    /// # Errors
    ///
    /// Any other failure of the call.
    pub(crate) async fn stat(&self, fs: FsId, path: &str) -> Result<Option<FileStatus>, HdfsError> {
        let client = self
            .client(fs)
            .ok_or_else(|| HdfsError::InternalError("unknown file system".to_owned()))?;
        match client.get_file_info(path).await {
            Ok(status) => Ok(Some(status)),
            Err(HdfsError::FileNotFound(_)) => Ok(None),
            // The NameNode's FileNotFoundException (an inode path whose id
            // names nothing): as Hadoop's PathData, the path does not exist.
            Err(HdfsError::RPCError(class, _)) if class == "java.io.FileNotFoundException" => {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Expands every argument (globs included), printing those that fail.
    ///
    /// # Errors
    ///
    /// A [`UsageError`] for an argument that cannot be a path (empty).
    pub(crate) async fn expand_all(&mut self, args: &[String]) -> Result<Vec<Item>, UsageError> {
        let mut items = Vec::new();
        for arg in args {
            match self.expand(arg).await {
                Ok(found) => items.extend(found),
                Err(ExpandError::NoMatch(message) | ExpandError::Failed(message)) => {
                    self.error(&message);
                }
                Err(ExpandError::Usage(e)) => return Err(e),
            }
        }
        Ok(items)
    }

    /// Expands one argument: a glob into the paths it matches (an error if
    /// none), any other path into one [`Item`], existing or not.
    ///
    /// # Errors
    ///
    /// [`ExpandError::NoMatch`] for a glob matching nothing,
    /// [`ExpandError::Failed`] with the message to print (no such file
    /// system, the server refused the lookup), or
    /// [`ExpandError::Usage`] for an empty argument.
    pub(crate) async fn expand(&mut self, arg: &str) -> Result<Vec<Item>, ExpandError> {
        if arg.is_empty() {
            return Err(ExpandError::Usage(UsageError::new(
                "Can not create a Path from an empty string",
            )));
        }
        let parsed = ArgPath::parse(arg);
        let fs = self.filesystem_for(&parsed).map_err(ExpandError::Failed)?;
        let path = paths::absolute(&self.home, &parsed.path);
        let client = self
            .client(fs)
            .ok_or_else(|| ExpandError::Failed("unknown file system".to_owned()))?;
        if paths::has_glob(&parsed.path) {
            let matches = client
                .glob_status(&path)
                .await
                .map_err(|e| ExpandError::Failed(self.describe(&e, arg, fs)))?;
            if matches.is_empty() {
                return Err(ExpandError::NoMatch(not_found(arg)));
            }
            return Ok(matches
                .into_iter()
                .map(|status| {
                    let path = paths::absolute("/", &status.path);
                    Item {
                        display: self.shown(&parsed, &path, status.isdir),
                        fs,
                        path,
                        status: Some(status),
                    }
                })
                .collect());
        }
        let status = self
            .stat(fs, &path)
            .await
            .map_err(|e| ExpandError::Failed(self.describe(&e, arg, fs)))?;
        let display = match &status {
            Some(s) => self.shown(&parsed, &path, s.isdir),
            None => arg.to_owned(),
        };
        Ok(vec![Item {
            display,
            fs,
            path,
            status,
        }])
    }

    /// The path `arg` names, looked up without glob expansion and shown as
    /// typed (Hadoop's `new PathData(arg, conf)`, as `-tail` and `-head`
    /// use it).
    ///
    /// # Errors
    ///
    /// As [`Shell::expand`], except that there is never a glob to match.
    pub(crate) async fn lookup(&mut self, arg: &str) -> Result<Item, ExpandError> {
        if arg.is_empty() {
            return Err(ExpandError::Usage(UsageError::new(
                "Can not create a Path from an empty string",
            )));
        }
        let parsed = ArgPath::parse(arg);
        let fs = self.filesystem_for(&parsed).map_err(ExpandError::Failed)?;
        let path = paths::absolute(&self.home, &parsed.path);
        let status = self
            .stat(fs, &path)
            .await
            .map_err(|e| ExpandError::Failed(self.describe(&e, arg, fs)))?;
        Ok(Item {
            display: arg.to_owned(),
            fs,
            path,
            status,
        })
    }

    /// The user the cluster is called as (`HADOOP_USER_NAME`, else the OS
    /// user), as hdfs-native finds it.
    pub(crate) fn user(&self) -> String {
        std::env::var("HADOOP_USER_NAME")
            .ok()
            .or_else(|| whoami::username().ok())
            .unwrap_or_else(|| "unknown".to_owned())
    }

    /// The `host:port` the file system `fs` was reached at.
    pub(crate) fn address(&self, fs: FsId) -> Option<String> {
        let authority = &self.filesystems.get(fs.0)?.authority;
        parse_hdfs_uri(keys::FS_DEFAULT_FS, authority)
            .ok()
            .map(|a| a.to_string())
    }

    /// The `host:port` of file system `fs` and the socket address it
    /// resolves to, for connections of our own.
    ///
    /// # Errors
    ///
    /// An unknown file system or an unresolvable host.
    pub(crate) async fn resolve(&self, fs: FsId) -> Result<(String, SocketAddr), String> {
        if let Some(f) = self
            .filesystems
            .get(fs.0)
            .filter(|f| !f.nameservice.is_empty())
        {
            return self.active_of(&f.authority, &f.nameservice).await;
        }
        let address = self
            .address(fs)
            .ok_or_else(|| "unknown file system".to_owned())?;
        let addr = tokio::net::lookup_host(&address)
            .await
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| format!("cannot resolve {address}"))?;
        Ok((address, addr))
    }

    /// The NameNode of nameservice `name` that says it is active
    /// (`getHAServiceState`), among `namenodes`.
    async fn active_of(
        &self,
        name: &str,
        namenodes: &[String],
    ) -> Result<(String, SocketAddr), String> {
        use cairn_proto::hadoop::common::HaServiceStateProto;
        use cairn_proto::hadoop::hdfs as pb;
        for address in namenodes {
            let Some(addr) = tokio::net::lookup_host(address.as_str())
                .await
                .ok()
                .and_then(|mut a| a.next())
            else {
                continue;
            };
            let Ok(client) = cairn_rpc::client::Client::connect(
                addr,
                &self.user(),
                cairn_proto::protocols::CLIENT_PROTOCOL,
            )
            .await
            else {
                continue;
            };
            let state: Result<pb::HaServiceStateResponseProto, _> = client
                .call("getHAServiceState", &pb::HaServiceStateRequestProto {})
                .await;
            if state.is_ok_and(|s| s.state == HaServiceStateProto::Active as i32) {
                return Ok((address.clone(), addr));
            }
        }
        Err(format!(
            "no active NameNode in nameservice {name} ({})",
            namenodes.join(", ")
        ))
    }

    /// The status of `item` if it is an existing file; otherwise reports
    /// Hadoop's error for it (no such file, or a directory) and gives
    /// `None`.
    pub(crate) fn existing_file<'a>(&mut self, item: &'a Item) -> Option<&'a FileStatus> {
        let Some(status) = &item.status else {
            self.error(&not_found(&item.display));
            return None;
        };
        if status.isdir {
            self.error(&path_error(&item.display, "Is a directory"));
            return None;
        }
        Some(status)
    }

    /// Makes one ClientProtocol call that hdfs-native has no method for,
    /// over a connection of our own, as [`Shell::user`].
    ///
    /// # Errors
    ///
    /// Hadoop's message: the server exception's own message, or the
    /// connection failure.
    pub(crate) async fn call<Req: prost::Message, Resp: prost::Message + Default>(
        &self,
        fs: FsId,
        method: &str,
        request: &Req,
    ) -> Result<Resp, String> {
        use cairn_rpc::client::{Client, ClientError};
        let (address, addr) = self.resolve(fs).await?;
        let failed = |e: &dyn std::fmt::Display| format!("Call to {address} failed: {e}");
        let client = Client::connect(addr, &self.user(), cairn_proto::protocols::CLIENT_PROTOCOL)
            .await
            .map_err(|e| failed(&e))?;
        client.call(method, request).await.map_err(|e| match e {
            ClientError::Remote { class, message } | ClientError::Fatal { class, message } => {
                if message.trim().is_empty() {
                    class
                } else {
                    message
                }
            }
            other => failed(&other),
        })
    }

    /// How an existing path given as `arg` is shown (Hadoop's glob
    /// rewriting; see [`super::paths`]).
    fn shown(&self, arg: &ArgPath, path: &str, is_dir: bool) -> String {
        if let Some(scheme) = &arg.scheme {
            let authority = arg.authority.as_deref().unwrap_or_default();
            format!("{scheme}://{authority}{path}")
        } else if arg.path.starts_with('/') {
            path.to_owned()
        } else {
            paths::relativize(&self.home, path, is_dir)
        }
    }

    /// Whether `path` exists.
    ///
    /// # Errors
    ///
    /// The message for a failed lookup other than "not found".
    pub(crate) async fn exists(&self, fs: FsId, path: &str, display: &str) -> Result<bool, String> {
        self.stat(fs, path)
            .await
            .map(|s| s.is_some())
            .map_err(|e| self.describe(&e, display, fs))
    }

    /// Hadoop's `PathData.parentExists`: for a path typed as a directory
    /// (`x/`, `x/.`) whether it exists itself, otherwise whether its parent
    /// does.
    ///
    /// # Errors
    ///
    /// The message for a failed lookup other than "not found".
    pub(crate) async fn parent_exists(&self, item: &Item) -> Result<bool, String> {
        let typed = ArgPath::parse(&item.display).path;
        let target = if paths::names_directory(&typed) {
            item.path.as_str()
        } else {
            paths::parent(&item.path).unwrap_or("/")
        };
        self.exists(item.fs, target, &item.display).await
    }

    /// Starts listing `dir`'s entries.
    pub(crate) fn list(&self, dir: &Item) -> Option<ListStatusIterator> {
        self.client(dir.fs)
            .map(|client| client.list_status_iter(&dir.path, false))
    }
}

/// The authority of `fs.defaultFS` (default [`DEFAULT_FS`]), or why it is
/// not an HDFS URI.
fn default_authority(conf: &Configuration) -> Result<String, String> {
    conf.get_hdfs_uri(keys::FS_DEFAULT_FS, DEFAULT_FS)
        .map_err(|e| e.to_string())?;
    let value = conf.get(keys::FS_DEFAULT_FS).unwrap_or(DEFAULT_FS);
    let parsed = ArgPath::parse(value);
    Ok(match parsed.authority {
        Some(a) if parsed.scheme.is_some() => a,
        // `host:port` without a scheme, as Hadoop's deprecated form.
        _ => value.trim().trim_end_matches('/').to_owned(),
    })
}

/// What [`Walk::next`] hands out.
pub(crate) enum Step {
    /// A batch of entries about to be handed out one by one (for `-ls`'s
    /// "Found N items" and column widths).
    Batch(Vec<Item>),
    /// The next entry.
    Entry(Item),
}

/// How a [`Walk`] sorts each directory's entries.
pub(crate) type SortBy = fn(&Item, &Item) -> Ordering;

struct Frame {
    dir: Item,
    entries: Option<ListStatusIterator>,
    pending: VecDeque<Item>,
}

/// A depth-first walk over directory listings that the caller steers:
/// after an entry, [`Walk::descend`] lists a directory before the rest of
/// the current batch, as Hadoop's recursive commands do. Listings are read
/// in batches through hdfs-native's paged iterator, so a huge directory is
/// never held whole unless the walk sorts.
pub(crate) struct Walk {
    frames: Vec<Frame>,
    batch_len: usize,
    sort_by: Option<SortBy>,
}

impl Walk {
    /// A walk handing out entries in batches of `batch_len` (at least 1),
    /// or whole directories (sorted by `sort_by`) when `batch_len` is
    /// `None`.
    pub(crate) fn new(batch_len: Option<usize>, sort_by: Option<SortBy>) -> Self {
        Walk {
            frames: Vec::new(),
            batch_len: batch_len.unwrap_or(usize::MAX).max(1),
            sort_by,
        }
    }

    /// Lists `dir` next, before whatever was pending.
    pub(crate) fn descend(&mut self, shell: &Shell, dir: &Item) {
        self.frames.push(Frame {
            dir: dir.clone(),
            entries: shell.list(dir),
            pending: VecDeque::new(),
        });
    }

    /// The next batch or entry; `None` when everything has been walked.
    /// A directory that cannot be listed is reported on `shell` and
    /// skipped, with the entries of its unfinished batch.
    pub(crate) async fn next(&mut self, shell: &mut Shell) -> Option<Step> {
        loop {
            let frame = self.frames.last_mut()?;
            if let Some(item) = frame.pending.pop_front() {
                return Some(Step::Entry(item));
            }
            let Some(entries) = frame.entries.take() else {
                self.frames.pop();
                continue;
            };
            let mut batch = Vec::new();
            let mut failed = None;
            let mut exhausted = false;
            while batch.len() < self.batch_len {
                match entries.next().await {
                    None => {
                        exhausted = true;
                        break;
                    }
                    Some(Ok(status)) => batch.push(frame.dir.child(status)),
                    Some(Err(e)) => {
                        failed = Some(shell.describe(&e, &frame.dir.display, frame.dir.fs));
                        exhausted = true;
                        break;
                    }
                }
            }
            if !exhausted {
                frame.entries = Some(entries);
            }
            if let Some(message) = failed {
                shell.error(&message);
                continue;
            }
            if batch.is_empty() {
                continue;
            }
            if let Some(sort_by) = self.sort_by {
                batch.sort_by(sort_by);
            }
            let items = batch.clone();
            frame.pending = batch.into();
            return Some(Step::Batch(items));
        }
    }
}

//! A disk in memory that can lose power. Every call that changes the disk
//! is recorded; [`SimDisk::crash`] builds the disk as a power cut after any
//! recorded call could leave it: what was synced survives, and each change
//! not yet synced independently survives or not (POSIX promises nothing
//! more), a write sector by sector. Only unsynced changes are dropped; the
//! order of what is kept is the order of the calls.
//!
//! Durability follows Linux: data, size and allocation of a file are
//! durable after `sync_data`/`sync_all` of that file; a name (create,
//! rename, unlink, mkdir) after `sync_dir` of its directory, and not by
//! syncing the file. A synced file whose name was lost is an orphan inode:
//! its data exists but no path reaches it.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use super::{Disk, DiskFile};

/// The unit in which an unsynced write reaches the disk or not: a disk
/// sector, the most a drive writes atomically (the page cache writes
/// back 4 KiB pages, so this is stricter).
pub const SECTOR_BYTES: u64 = 512;

/// What a power cut does to changes that were not synced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsynced {
    /// All of them are lost: only synced state remains.
    Lost,
    /// All of them reached the disk (what SIGKILL leaves).
    Kept,
    /// Each change, and each sector of a write, survives with even odds.
    Random,
}

/// A small seeded generator (splitmix64), so a failing crash point can be
/// replayed from its seed.
#[derive(Debug, Clone)]
pub struct SimRng(u64);

impl SimRng {
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    pub fn coin(&mut self) -> bool {
        self.next_u64() & 1 == 1
    }
}

type Ino = usize;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    File(Ino),
    Dir,
}

/// A whole disk: file contents by inode, and directory entries.
#[derive(Debug, Clone, Default)]
struct Image {
    files: Vec<Vec<u8>>,
    dirs: BTreeMap<PathBuf, BTreeMap<String, Node>>,
}

#[derive(Clone)]
enum Op {
    Write {
        ino: Ino,
        offset: u64,
        data: Vec<u8>,
    },
    SetLen {
        ino: Ino,
        len: u64,
    },
    Allocate {
        ino: Ino,
        end: u64,
    },
    SyncFile {
        ino: Ino,
    },
    Link {
        dir: PathBuf,
        name: String,
        node: Node,
    },
    Rename {
        dir: PathBuf,
        from: String,
        to_dir: PathBuf,
        to: String,
        ino: Ino,
    },
    Unlink {
        dir: PathBuf,
        name: String,
        ino: Ino,
    },
    SyncDir {
        dir: PathBuf,
    },
}

impl fmt::Debug for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Write { ino, offset, data } => {
                write!(f, "write ino {ino} [{offset}, +{})", data.len())
            }
            Op::SetLen { ino, len } => write!(f, "set_len ino {ino} to {len}"),
            Op::Allocate { ino, end } => write!(f, "allocate ino {ino} to {end}"),
            Op::SyncFile { ino } => write!(f, "sync ino {ino}"),
            Op::Link { dir, name, node } => write!(f, "link {}/{name} = {node:?}", dir.display()),
            Op::Rename {
                dir,
                from,
                to_dir,
                to,
                ino,
            } => write!(
                f,
                "rename {}/{from} -> {}/{to} (ino {ino})",
                dir.display(),
                to_dir.display()
            ),
            Op::Unlink { dir, name, ino } => {
                write!(f, "unlink {}/{name} (ino {ino})", dir.display())
            }
            Op::SyncDir { dir } => write!(f, "sync_dir {}", dir.display()),
        }
    }
}

impl Image {
    fn with_root() -> Self {
        let mut image = Self::default();
        image.dirs.insert(PathBuf::from("/"), BTreeMap::new());
        image
    }

    fn lookup(&self, path: &Path) -> Option<Node> {
        if self.dirs.contains_key(path) {
            return Some(Node::Dir);
        }
        let (dir, name) = split(path).ok()?;
        self.dirs.get(dir)?.get(name).copied()
    }

    fn resize(&mut self, ino: Ino, len: u64) {
        if let Some(f) = self.files.get_mut(ino) {
            f.resize(usize::try_from(len).unwrap_or(usize::MAX), 0);
        }
    }

    fn write(&mut self, ino: Ino, offset: u64, data: &[u8]) {
        let Some(f) = self.files.get_mut(ino) else {
            return;
        };
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        let end = start.saturating_add(data.len());
        if f.len() < end {
            f.resize(end, 0);
        }
        f[start..end].copy_from_slice(data);
    }

    fn apply(&mut self, op: &Op) {
        match op {
            Op::Write { ino, offset, data } => self.write(*ino, *offset, data),
            Op::SetLen { ino, len } => self.resize(*ino, *len),
            Op::Allocate { ino, end } => {
                if self
                    .files
                    .get(*ino)
                    .is_some_and(|f| (f.len() as u64) < *end)
                {
                    self.resize(*ino, *end);
                }
            }
            Op::SyncFile { .. } | Op::SyncDir { .. } => {}
            Op::Link { dir, name, node } => {
                self.dirs
                    .entry(dir.clone())
                    .or_default()
                    .insert(name.clone(), *node);
                if *node == Node::Dir {
                    self.dirs.entry(dir.join(name)).or_default();
                }
            }
            Op::Rename {
                dir,
                from,
                to_dir,
                to,
                ino,
            } => {
                let entries = self.dirs.entry(dir.clone()).or_default();
                if entries.get(from) == Some(&Node::File(*ino)) {
                    entries.remove(from);
                }
                self.dirs
                    .entry(to_dir.clone())
                    .or_default()
                    .insert(to.clone(), Node::File(*ino));
            }
            Op::Unlink { dir, name, ino } => {
                if let Some(entries) = self.dirs.get_mut(dir) {
                    if entries.get(name) == Some(&Node::File(*ino)) {
                        entries.remove(name);
                    }
                }
            }
        }
    }

    /// Drops directories whose own creation did not survive.
    fn prune(&mut self) {
        let linked: Vec<PathBuf> = self
            .dirs
            .keys()
            .filter(|d| {
                d.as_os_str() == "/"
                    || split(d).is_ok_and(|(parent, name)| {
                        self.dirs.get(parent).and_then(|e| e.get(name)) == Some(&Node::Dir)
                    })
            })
            .cloned()
            .collect();
        self.dirs.retain(|d, _| linked.contains(d));
    }
}

fn split(path: &Path) -> io::Result<(&Path, &str)> {
    let dir = path.parent().ok_or_else(|| io::Error::other("no parent"))?;
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| io::Error::other("no file name"))?;
    Ok((dir, name))
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: not found", path.display()),
    )
}

#[derive(Debug)]
struct State {
    /// How long a sync takes (lets a workload build large group commits).
    sync_delay: Duration,
    /// What the running process sees.
    live: Image,
    /// The disk when recording began: all of it durable.
    base: Image,
    ops: Vec<Op>,
}

impl State {
    fn record(&mut self, op: Op) {
        self.live.apply(&op);
        self.ops.push(op);
    }
}

/// The simulated disk; clones share it. Paths are absolute.
#[derive(Debug, Clone)]
pub struct SimDisk {
    state: Arc<Mutex<State>>,
}

impl Default for SimDisk {
    fn default() -> Self {
        Self::from_image(Image::with_root())
    }
}

impl SimDisk {
    /// An empty disk with only `/`.
    pub fn new() -> Self {
        Self::default()
    }

    fn from_image(image: Image) -> Self {
        Self {
            state: Arc::new(Mutex::new(State {
                sync_delay: Duration::ZERO,
                live: image.clone(),
                base: image,
                ops: Vec::new(),
            })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Makes everything so far durable and starts a new recording: crash
    /// points count from here.
    pub fn settle(&self) {
        let mut s = self.lock();
        s.base = s.live.clone();
        s.ops.clear();
    }

    /// Makes every file sync take `delay` (outside the disk's lock), as a
    /// real disk does, so writers queue up behind it.
    pub fn set_sync_delay(&self, delay: Duration) {
        self.lock().sync_delay = delay;
    }

    /// Calls recorded since the last [`SimDisk::settle`].
    pub fn op_count(&self) -> usize {
        self.lock().ops.len()
    }

    /// The recorded calls `from..to`, one a line (for failure reports).
    pub fn describe(&self, from: usize, to: usize) -> String {
        let s = self.lock();
        let to = to.min(s.ops.len());
        (from.min(to)..to)
            .map(|i| format!("  {i}: {:?}\n", s.ops[i]))
            .collect()
    }

    /// The disk after a power cut that came when the first `at` recorded
    /// calls had returned, with `unsynced` deciding the fate of what no
    /// later sync (before the cut) made durable. The result is a fresh
    /// disk whose recording starts empty.
    pub fn crash(&self, at: usize, unsynced: Unsynced, rng: &mut SimRng) -> SimDisk {
        let s = self.lock();
        let at = at.min(s.ops.len());
        let ops = &s.ops[..at];
        let forced = durable_ops(ops);
        let mut image = s.base.clone();
        for (op, forced) in ops.iter().zip(forced) {
            if forced || unsynced == Unsynced::Kept {
                image.apply(op);
                continue;
            }
            if unsynced == Unsynced::Lost {
                continue;
            }
            match op {
                Op::Write { ino, offset, data } => {
                    // Sector by sector, in any order.
                    let mut pos = 0usize;
                    while pos < data.len() {
                        let at_byte = offset + pos as u64;
                        let room = (SECTOR_BYTES - at_byte % SECTOR_BYTES) as usize;
                        let end = (pos + room).min(data.len());
                        if rng.coin() {
                            image.write(*ino, at_byte, &data[pos..end]);
                        }
                        pos = end;
                    }
                }
                _ => {
                    if rng.coin() {
                        image.apply(op);
                    }
                }
            }
        }
        image.prune();
        SimDisk::from_image(image)
    }

    /// The file at `path` as the running process sees it.
    pub fn contents(&self, path: &Path) -> Option<Vec<u8>> {
        let s = self.lock();
        match s.live.lookup(path)? {
            Node::File(ino) => s.live.files.get(ino).cloned(),
            Node::Dir => None,
        }
    }
}

/// Which of `ops` a later sync within `ops` made durable.
fn durable_ops(ops: &[Op]) -> Vec<bool> {
    let mut synced_files = HashSet::new();
    let mut synced_dirs: HashSet<&Path> = HashSet::new();
    let mut forced = vec![false; ops.len()];
    for (i, op) in ops.iter().enumerate().rev() {
        forced[i] = match op {
            Op::SyncFile { ino } => {
                synced_files.insert(*ino);
                true
            }
            Op::SyncDir { dir } => {
                synced_dirs.insert(dir);
                true
            }
            Op::Write { ino, .. } | Op::SetLen { ino, .. } | Op::Allocate { ino, .. } => {
                synced_files.contains(ino)
            }
            Op::Link { dir, .. } | Op::Unlink { dir, .. } => synced_dirs.contains(dir.as_path()),
            Op::Rename { dir, to_dir, .. } => {
                synced_dirs.contains(dir.as_path()) && synced_dirs.contains(to_dir.as_path())
            }
        };
    }
    forced
}

struct SimFile {
    disk: SimDisk,
    ino: Ino,
}

impl DiskFile for SimFile {
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.disk.lock().record(Op::Write {
            ino: self.ino,
            offset,
            data: buf.to_vec(),
        });
        Ok(())
    }

    fn allocate(&self, from: u64, len: u64) -> io::Result<()> {
        let end = from
            .checked_add(len)
            .ok_or_else(|| io::Error::other("allocation past the end of the address space"))?;
        self.disk.lock().record(Op::Allocate { ino: self.ino, end });
        Ok(())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.disk.lock().record(Op::SetLen { ino: self.ino, len });
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let delay = self.disk.lock().sync_delay;
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
        self.disk.lock().record(Op::SyncFile { ino: self.ino });
        Ok(())
    }

    fn sync_all(&self) -> io::Result<()> {
        self.sync_data()
    }
}

impl SimDisk {
    fn existing_file(&self, path: &Path) -> io::Result<Ino> {
        match self.lock().live.lookup(path) {
            Some(Node::File(ino)) => Ok(ino),
            Some(Node::Dir) => Err(io::Error::other(format!(
                "{} is a directory",
                path.display()
            ))),
            None => Err(not_found(path)),
        }
    }
}

impl Disk for SimDisk {
    fn create(&self, path: &Path) -> io::Result<Box<dyn DiskFile>> {
        let (dir, name) = split(path)?;
        let mut s = self.lock();
        if !s.live.dirs.contains_key(dir) {
            return Err(not_found(dir));
        }
        let ino = match s.live.lookup(path) {
            Some(Node::File(ino)) => {
                s.record(Op::SetLen { ino, len: 0 });
                ino
            }
            Some(Node::Dir) => {
                return Err(io::Error::other(format!(
                    "{} is a directory",
                    path.display()
                )))
            }
            None => {
                let ino = s.live.files.len();
                s.live.files.push(Vec::new());
                s.base.files.push(Vec::new());
                s.record(Op::Link {
                    dir: dir.to_path_buf(),
                    name: name.to_string(),
                    node: Node::File(ino),
                });
                ino
            }
        };
        drop(s);
        Ok(Box::new(SimFile {
            disk: self.clone(),
            ino,
        }))
    }

    fn open_write(&self, path: &Path) -> io::Result<Box<dyn DiskFile>> {
        let ino = self.existing_file(path)?;
        Ok(Box::new(SimFile {
            disk: self.clone(),
            ino,
        }))
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let ino = self.existing_file(path)?;
        Ok(self.lock().live.files.get(ino).cloned().unwrap_or_default())
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let ino = self.existing_file(from)?;
        let (dir, from_name) = split(from)?;
        let (to_dir, to_name) = split(to)?;
        let mut s = self.lock();
        if !s.live.dirs.contains_key(to_dir) {
            return Err(not_found(to_dir));
        }
        if s.live.lookup(to) == Some(Node::Dir) {
            return Err(io::Error::other(format!("{} is a directory", to.display())));
        }
        s.record(Op::Rename {
            dir: dir.to_path_buf(),
            from: from_name.to_string(),
            to_dir: to_dir.to_path_buf(),
            to: to_name.to_string(),
            ino,
        });
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let ino = self.existing_file(path)?;
        let (dir, name) = split(path)?;
        self.lock().record(Op::Unlink {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            ino,
        });
        Ok(())
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let mut s = self.lock();
        let mut at = PathBuf::from("/");
        for part in path.components().skip(1) {
            let name = part.as_os_str().to_string_lossy().into_owned();
            let next = at.join(&name);
            match s.live.lookup(&next) {
                Some(Node::Dir) => {}
                Some(Node::File(_)) => {
                    return Err(io::Error::other(format!("{} is a file", next.display())))
                }
                None => s.record(Op::Link {
                    dir: at.clone(),
                    name,
                    node: Node::Dir,
                }),
            }
            at = next;
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut s = self.lock();
        if !s.live.dirs.contains_key(dir) {
            return Err(not_found(dir));
        }
        s.record(Op::SyncDir {
            dir: dir.to_path_buf(),
        });
        Ok(())
    }

    fn list_dir(&self, dir: &Path) -> io::Result<Vec<String>> {
        let s = self.lock();
        let entries = s.live.dirs.get(dir).ok_or_else(|| not_found(dir))?;
        Ok(entries.keys().cloned().collect())
    }

    fn exists(&self, path: &Path) -> bool {
        self.lock().live.lookup(path).is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disk_with_dir() -> (SimDisk, PathBuf) {
        let disk = SimDisk::new();
        let dir = PathBuf::from("/meta");
        disk.create_dir_all(&dir).expect("mkdir");
        disk.sync_dir(Path::new("/")).expect("sync /");
        disk.settle();
        (disk, dir)
    }

    #[test]
    fn only_synced_changes_survive_when_unsynced_ones_are_lost() {
        let (disk, dir) = disk_with_dir();
        let a = dir.join("a");
        let f = disk.create(&a).expect("create");
        f.write_all_at(b"synced", 0).expect("write");
        f.sync_data().expect("sync");
        let mut rng = SimRng::new(1);
        // The name is not durable yet: the file is an orphan after a cut.
        let lost = disk.crash(disk.op_count(), Unsynced::Lost, &mut rng);
        assert!(!lost.exists(&a));
        disk.sync_dir(&dir).expect("sync dir");
        f.write_all_at(b"later", 6).expect("write");
        let cut = disk.crash(disk.op_count(), Unsynced::Lost, &mut rng);
        assert_eq!(cut.read(&a).expect("read"), b"synced");
        let kept = disk.crash(disk.op_count(), Unsynced::Kept, &mut rng);
        assert_eq!(kept.read(&a).expect("read"), b"syncedlater");
    }

    #[test]
    fn renames_and_unlinks_wait_for_their_directory() {
        let (disk, dir) = disk_with_dir();
        let (tmp, fin) = (dir.join("t"), dir.join("f"));
        let f = disk.create(&tmp).expect("create");
        f.write_all_at(b"x", 0).expect("write");
        f.sync_all().expect("sync");
        disk.sync_dir(&dir).expect("sync dir");
        disk.rename(&tmp, &fin).expect("rename");
        let mut rng = SimRng::new(2);
        let cut = disk.crash(disk.op_count(), Unsynced::Lost, &mut rng);
        assert!(cut.exists(&tmp) && !cut.exists(&fin));
        disk.sync_dir(&dir).expect("sync dir");
        disk.remove_file(&fin).expect("unlink");
        let cut = disk.crash(disk.op_count(), Unsynced::Lost, &mut rng);
        assert_eq!(cut.read(&fin).expect("read"), b"x");
        let kept = disk.crash(disk.op_count(), Unsynced::Kept, &mut rng);
        assert!(!kept.exists(&fin) && !kept.exists(&tmp));
    }

    #[test]
    fn random_cuts_tear_unsynced_writes_by_sector() {
        let (disk, dir) = disk_with_dir();
        let p = dir.join("p");
        let f = disk.create(&p).expect("create");
        disk.sync_dir(&dir).expect("sync dir");
        f.write_all_at(&vec![7u8; 3 * SECTOR_BYTES as usize], 0)
            .expect("write");
        let mut rng = SimRng::new(3);
        let mut shapes = HashSet::new();
        for _ in 0..64 {
            let cut = disk.crash(disk.op_count(), Unsynced::Random, &mut rng);
            let data = cut.read(&p).expect("read");
            let sectors: Vec<bool> = (0..3)
                .map(|i| data.get(i * SECTOR_BYTES as usize) == Some(&7))
                .collect();
            shapes.insert(sectors);
        }
        assert_eq!(shapes.len(), 8, "every subset of sectors: {shapes:?}");
    }
}

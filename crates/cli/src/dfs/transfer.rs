//! Moving file data: bounded chunks from a local file, standard input or an
//! HDFS file to a local file, standard output or an HDFS file, with a
//! progress bar on a terminal.
//!
//! Nothing here holds more than one chunk ([`CHUNK`]) of a file at a time:
//! HDFS files are read as hdfs-native's packet stream, local input in
//! chunks, and each chunk is written before the next is read.

use std::fs::File;
use std::io::{IsTerminal, Read, Write};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use futures::stream::BoxStream;
use futures::StreamExt;
use hdfs_native::file::FileWriter;
use hdfs_native::HdfsError;

/// How much local input is read at a time.
pub(crate) const CHUNK: usize = 4 << 20;

/// Transfers at least this large get a progress bar (on a terminal).
const PROGRESS_THRESHOLD: u64 = 8 << 20;

/// How often the progress bar is redrawn.
const REDRAW_EVERY: Duration = Duration::from_millis(200);

/// Where a failure happened: the local side or the cluster.
#[derive(Debug)]
pub(crate) enum Failure {
    Local(std::io::Error),
    Remote(HdfsError),
}

/// `reason` of an I/O error as Java prints it: without Rust's
/// `(os error N)` tail.
pub(crate) fn io_reason(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(i) => text.get(..i).unwrap_or(&text).to_owned(),
        None => text,
    }
}

/// Runs blocking local I/O without stalling the runtime's other tasks
/// (hdfs-native's pipeline tasks run beside the shell).
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// A source of bytes.
pub(crate) enum Input {
    Local(File),
    Stdin,
    Remote(BoxStream<'static, Result<Bytes, HdfsError>>),
}

impl Input {
    /// The next piece of data, `None` at the end.
    async fn next(&mut self) -> Result<Option<Bytes>, Failure> {
        match self {
            Input::Local(file) => blocking(|| fill(file)).map_err(Failure::Local),
            Input::Stdin => blocking(|| fill(&mut std::io::stdin().lock())).map_err(Failure::Local),
            Input::Remote(stream) => stream.next().await.transpose().map_err(Failure::Remote),
        }
    }
}

/// Reads up to [`CHUNK`] bytes, fewer only at the end of the input.
fn fill(reader: &mut dyn Read) -> std::io::Result<Option<Bytes>> {
    let mut buf = BytesMut::zeroed(CHUNK);
    let mut len = 0;
    while len < CHUNK {
        let Some(rest) = buf.get_mut(len..) else {
            break;
        };
        match reader.read(rest) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    if len == 0 {
        return Ok(None);
    }
    buf.truncate(len);
    Ok(Some(buf.freeze()))
}

/// A destination of bytes.
pub(crate) enum Output {
    Local(File),
    Remote(Box<FileWriter>),
    Stdout,
}

impl Output {
    async fn write(&mut self, data: Bytes) -> Result<(), Failure> {
        match self {
            Output::Local(file) => blocking(|| file.write_all(&data)).map_err(Failure::Local),
            Output::Remote(writer) => writer
                .write_bytes(data)
                .await
                .map(|_| ())
                .map_err(Failure::Remote),
            Output::Stdout => {
                blocking(|| std::io::stdout().lock().write_all(&data)).map_err(Failure::Local)
            }
        }
    }

    /// Flushes and closes: for an HDFS file, the last packets and the
    /// NameNode's `complete`.
    pub(crate) async fn finish(&mut self) -> Result<(), Failure> {
        match self {
            Output::Local(file) => blocking(|| file.flush()).map_err(Failure::Local),
            Output::Remote(writer) => writer.close().await.map_err(Failure::Remote),
            Output::Stdout => blocking(|| std::io::stdout().lock().flush()).map_err(Failure::Local),
        }
    }
}

/// Copies everything from `input` to `output` (without finishing it),
/// drawing a progress bar labelled `label` when `total` (or, unknown, the
/// amount copied) passes [`PROGRESS_THRESHOLD`] and standard error is a
/// terminal (never with an empty label). Returns the number of bytes copied.
///
/// # Errors
///
/// The first read or write failure.
pub(crate) async fn copy(
    input: &mut Input,
    output: &mut Output,
    total: Option<u64>,
    label: &str,
) -> Result<u64, Failure> {
    let mut progress = Progress::new(label, total);
    let result = async {
        while let Some(data) = input.next().await? {
            let len = data.len() as u64;
            output.write(data).await?;
            progress.add(len);
        }
        Ok(progress.done)
    }
    .await;
    progress.finish();
    result
}

/// A one-line progress bar on standard error: bytes done, rate and ETA.
struct Progress {
    label: String,
    total: Option<u64>,
    done: u64,
    start: Instant,
    last_draw: Option<Instant>,
    enabled: bool,
}

impl Progress {
    fn new(label: &str, total: Option<u64>) -> Self {
        Progress {
            label: label.to_owned(),
            total,
            done: 0,
            start: Instant::now(),
            last_draw: None,
            enabled: !label.is_empty()
                && std::io::stderr().is_terminal()
                && total.is_none_or(|t| t >= PROGRESS_THRESHOLD),
        }
    }

    fn add(&mut self, n: u64) {
        self.done += n;
        if !self.enabled || (self.total.is_none() && self.done < PROGRESS_THRESHOLD) {
            return;
        }
        if self.last_draw.is_some_and(|t| t.elapsed() < REDRAW_EVERY) {
            return;
        }
        self.last_draw = Some(Instant::now());
        let line = render(&self.label, self.done, self.total, self.start.elapsed());
        let _ = write!(std::io::stderr().lock(), "\r\x1b[K{line}");
    }

    fn finish(&mut self) {
        if self.last_draw.is_some() {
            let _ = write!(std::io::stderr().lock(), "\r\x1b[K");
        }
    }
}

/// `label  12.0 MiB / 40.0 MiB  30%  85.3 MB/s  ETA 0:01`.
fn render(label: &str, done: u64, total: Option<u64>, elapsed: Duration) -> String {
    let secs = elapsed.as_secs_f64().max(0.001);
    let rate = done as f64 / secs;
    let mib = |b: u64| b as f64 / f64::from(1 << 20);
    match total {
        Some(total) if total > 0 => {
            let percent = done.saturating_mul(100) / total;
            let eta = if rate > 0.0 {
                (total.saturating_sub(done) as f64 / rate) as u64
            } else {
                0
            };
            format!(
                "{label}  {:.1} MiB / {:.1} MiB  {percent}%  {:.1} MB/s  ETA {}:{:02}",
                mib(done),
                mib(total),
                rate / 1e6,
                eta / 60,
                eta % 60
            )
        }
        _ => format!("{label}  {:.1} MiB  {:.1} MB/s", mib(done), rate / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines() {
        assert_eq!(
            render("f", 10 << 20, Some(40 << 20), Duration::from_secs(1)),
            "f  10.0 MiB / 40.0 MiB  25%  10.5 MB/s  ETA 0:03"
        );
        assert_eq!(
            render("-", 20 << 20, None, Duration::from_secs(2)),
            "-  20.0 MiB  10.5 MB/s"
        );
    }

    #[test]
    fn os_error_tails_are_dropped() {
        let e = std::io::Error::from_raw_os_error(2);
        assert_eq!(io_reason(&e), "No such file or directory");
    }

    #[test]
    fn fill_reads_whole_chunks() {
        let data = vec![7u8; CHUNK + 5];
        let mut reader = &data[..];
        assert_eq!(
            fill(&mut reader).expect("read").map(|b| b.len()),
            Some(CHUNK)
        );
        assert_eq!(fill(&mut reader).expect("read").map(|b| b.len()), Some(5));
        assert!(fill(&mut reader).expect("read").is_none());
    }
}

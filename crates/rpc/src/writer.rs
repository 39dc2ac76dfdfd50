//! A connection's responses: a writer task fed by the calls through a
//! bounded channel, writing the responses that are ready in one `write`;
//! and an [`Outbox`] through which a thread finishing calls outside the
//! runtime (`inflight::finish_woken_calls_here`) writes their responses
//! straight to the socket, without waking the writer task, whenever the
//! task is not writing and the socket takes them whole.
//!
//! Frames never interleave: whoever writes holds the outbox (the writer
//! task by its `writing` mark, a direct writer by its lock), and what a
//! direct write leaves over, or brings while the task writes, waits in
//! `pending` for the task, in order.

use std::cell::RefCell;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncWriteExt, BufWriter};
use tokio::net::tcp::OwnedWriteHalf;
use tokio::sync::{mpsc, Notify};

use crate::metrics::RpcMetrics;

/// A response to be written directly, with a sender that keeps the writer
/// task from ending (and shutting the socket) before it is.
type Direct = (Arc<Outbox>, mpsc::Sender<Bytes>, Bytes);

thread_local! {
    /// Responses sent by calls finished inside `collect_direct_responses`.
    static DIRECT: RefCell<Option<Vec<Direct>>> = const { RefCell::new(None) };
}

/// What one connection's writers share.
pub(crate) struct Outbox {
    state: Mutex<OutboxState>,
    /// A second handle on the connection's socket (non-blocking, as the
    /// runtime's), or `None` where it could not be made: direct writes off.
    socket: Option<std::net::TcpStream>,
    /// Wakes the writer task for what waits in `pending`.
    kick: Notify,
    metrics: Arc<RpcMetrics>,
}

#[derive(Default)]
struct OutboxState {
    /// Bytes for the writer task to write next, in order: first what a
    /// direct write left of a frame, then whole frames.
    pending: Vec<Bytes>,
    /// The writer task is writing: direct writers leave their frames here.
    writing: bool,
    /// The socket failed: nothing more is written.
    broken: bool,
}

impl Outbox {
    pub(crate) fn new(socket: Option<std::net::TcpStream>, metrics: Arc<RpcMetrics>) -> Self {
        Self {
            state: Mutex::default(),
            socket,
            kick: Notify::new(),
            metrics,
        }
    }

    fn lock(&self) -> MutexGuard<'_, OutboxState> {
        // A panic stops the process (servers run with exit-on-panic).
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Writes `frames` now if the writer task is idle and the socket takes
    /// them; what it does not take is left to the task.
    fn write_now(&self, frames: Vec<Bytes>) {
        let Some(socket) = &self.socket else {
            return;
        };
        let mut st = self.lock();
        if st.broken {
            return;
        }
        if st.writing || !st.pending.is_empty() {
            st.pending.extend(frames);
            drop(st);
            self.kick.notify_one();
            return;
        }
        let all = concat(frames);
        let mut written = 0;
        while written < all.len() {
            match (&*socket).write(&all[written..]) {
                Ok(0) => {
                    st.broken = true;
                    break;
                }
                Ok(n) => written += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    st.broken = true;
                    break;
                }
            }
        }
        self.metrics
            .sent_bytes
            .fetch_add(written as u64, Ordering::Relaxed);
        if written < all.len() && !st.broken {
            st.pending.push(all.slice(written..));
            drop(st);
            self.kick.notify_one();
        }
    }

    /// Marks the task as writing and takes what waits for it.
    fn claim(&self) -> Vec<Bytes> {
        let mut st = self.lock();
        st.writing = true;
        std::mem::take(&mut st.pending)
    }

    /// What waits now, or `None` (the task is then no longer writing).
    fn more_or_release(&self) -> Option<Vec<Bytes>> {
        let mut st = self.lock();
        if st.pending.is_empty() {
            st.writing = false;
            None
        } else {
            Some(std::mem::take(&mut st.pending))
        }
    }

    fn broke(&self) {
        self.lock().broken = true;
    }
}

fn concat(mut frames: Vec<Bytes>) -> Bytes {
    if frames.len() == 1 {
        return frames.pop().unwrap_or_default();
    }
    let mut all = BytesMut::with_capacity(frames.iter().map(Bytes::len).sum());
    for f in &frames {
        all.extend_from_slice(f);
    }
    all.freeze()
}

/// Hands `frame` to this thread's direct writes when `f` of
/// [`collect_direct_responses`] is running here; otherwise gives it back
/// for the writer task.
pub(crate) fn respond_here(
    outbox: &Arc<Outbox>,
    tx: &mpsc::Sender<Bytes>,
    frame: Bytes,
) -> Option<Bytes> {
    if outbox.socket.is_none() {
        return Some(frame);
    }
    let mut frame = Some(frame);
    DIRECT.with(|d| {
        if let Some(list) = d.borrow_mut().as_mut() {
            if let Some(frame) = frame.take() {
                list.push((outbox.clone(), tx.clone(), frame));
            }
        }
    });
    frame
}

/// Runs `f`; the responses its calls send are then written from this
/// thread, those of one connection together.
pub(crate) fn collect_direct_responses(f: impl FnOnce()) {
    let outer = DIRECT.with(|d| d.borrow_mut().replace(Vec::new()));
    f();
    let mut sent = DIRECT
        .with(|d| std::mem::replace(&mut *d.borrow_mut(), outer))
        .unwrap_or_default();
    // Grouped by connection, each group in the order its calls finished.
    sent.sort_by_key(|(outbox, _, _)| Arc::as_ptr(outbox) as usize);
    let mut sent = sent.into_iter().peekable();
    while let Some((outbox, tx, frame)) = sent.next() {
        let mut frames = vec![frame];
        let mut senders = vec![tx];
        while let Some((_, tx, frame)) = sent.next_if(|(o, _, _)| Arc::ptr_eq(o, &outbox)) {
            frames.push(frame);
            senders.push(tx);
        }
        outbox.write_now(frames);
        drop(senders);
    }
}

/// Writes the responses sent on `rx`, and what direct writes left to it,
/// until every sender is gone; then shuts the socket's write side.
pub(crate) async fn write_loop(
    wr: OwnedWriteHalf,
    mut rx: mpsc::Receiver<Bytes>,
    outbox: Arc<Outbox>,
) {
    let mut wr = BufWriter::with_capacity(64 * 1024, wr);
    let sent = |f: &Bytes| {
        outbox
            .metrics
            .sent_bytes
            .fetch_add(f.len() as u64, Ordering::Relaxed)
    };
    loop {
        let first = tokio::select! {
            biased;
            frame = rx.recv() => match frame {
                Some(frame) => Some(frame),
                None => break,
            },
            () = outbox.kick.notified() => None,
        };
        // What a direct write left of a frame goes first.
        let mut batch = outbox.claim();
        batch.extend(first);
        loop {
            for frame in &batch {
                sent(frame);
                if wr.write_all(frame).await.is_err() {
                    outbox.broke();
                    return;
                }
            }
            // Batch responses that are already waiting; flush when none are.
            while let Ok(frame) = rx.try_recv() {
                sent(&frame);
                if wr.write_all(&frame).await.is_err() {
                    outbox.broke();
                    return;
                }
            }
            if wr.flush().await.is_err() {
                outbox.broke();
                return;
            }
            match outbox.more_or_release() {
                Some(more) => batch = more,
                None => break,
            }
        }
    }
    // Every sender is gone, those of direct writers too: what they left is
    // all there is.
    for frame in outbox.claim() {
        sent(&frame);
        if wr.write_all(&frame).await.is_err() {
            return;
        }
    }
    let _ = wr.shutdown().await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;
    use tokio::io::AsyncReadExt;
    use tokio::net::{TcpListener, TcpStream};

    /// A frame of `len` bytes, all `tag`.
    fn frame(tag: u8, len: usize) -> Bytes {
        Bytes::from(vec![tag; len])
    }

    /// A direct write the socket takes only in part leaves the rest to the
    /// writer task; a later direct write, even with room in the socket by
    /// then, and a frame queued for the task, go after it: every frame
    /// arrives whole.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn direct_and_queued_responses_never_interleave() {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let client = tokio::spawn(TcpStream::connect(addr));
        let (server, _) = listener.accept().await.expect("accept");
        let mut client = client.await.expect("join").expect("connect");
        let direct = server
            .as_fd()
            .try_clone_to_owned()
            .ok()
            .map(std::net::TcpStream::from);
        let outbox = Arc::new(Outbox::new(direct, Arc::default()));
        let (_rd, wr) = server.into_split();
        let (tx, rx) = mpsc::channel::<Bytes>(8);

        // Larger than the socket's buffers: only part of it is written.
        let big = 16 * 1024 * 1024;
        let mut got = vec![0u8; 64 * 1024];
        let o = outbox.clone();
        let t = tx.clone();
        let first = std::thread::spawn(move || {
            collect_direct_responses(|| {
                assert!(respond_here(&o, &t, frame(2, big)).is_none());
            })
        });
        first.join().expect("first direct write");
        assert!(!outbox.lock().pending.is_empty(), "the socket took it all");
        // Room in the socket again, the rest not written yet.
        client.read_exact(&mut got).await.expect("read");
        let o = outbox.clone();
        let t = tx.clone();
        std::thread::spawn(move || {
            collect_direct_responses(|| {
                assert!(respond_here(&o, &t, frame(3, 200)).is_none());
            })
        })
        .join()
        .expect("second direct write");
        // Outside `collect_direct_responses` the frame comes back.
        let queued = respond_here(&outbox, &tx, frame(9, 300)).expect("given back");
        tx.send(queued).await.expect("queued");
        drop(tx);
        let writer = tokio::spawn(write_loop(wr, rx, outbox.clone()));
        client.read_to_end(&mut got).await.expect("read");
        writer.await.expect("writer");
        // Runs of one tag: the frames as they arrived.
        let mut runs: Vec<(u8, usize)> = Vec::new();
        for b in got {
            match runs.last_mut() {
                Some((tag, n)) if *tag == b => *n += 1,
                _ => runs.push((b, 1)),
            }
        }
        assert_eq!(runs, vec![(2, big), (3, 200), (9, 300)]);
    }
}

//! Time a call spent waiting for its server's locks, HDFS's
//! `RpcLockWaitTime`: a server notes each contended wait with
//! [`note_lock_wait`] on the thread that waited, and the IPC server adds up
//! what was noted while each call's future was being polled ([`Metered`]),
//! whichever thread polled it (a kept call may finish on another).

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::sync::{LockResult, Mutex, MutexGuard, TryLockError, TryLockResult};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use cairn_common::metrics::GaugeGuard;

thread_local! {
    /// Nanoseconds waited for locks by the call being polled on this thread.
    static WAITED_NS: Cell<u64> = const { Cell::new(0) };
}

/// Notes that the call running on this thread waited `waited` for a lock.
/// Outside a call (background work) it is dropped at the next call's poll.
pub fn note_lock_wait(waited: Duration) {
    let ns = u64::try_from(waited.as_nanos()).unwrap_or(u64::MAX);
    WAITED_NS.with(|w| w.set(w.get().saturating_add(ns)));
}

/// The guard a `try_*` call got, or else the one `take` waits for, with
/// the wait noted for the running call (the uncontended case reads no
/// clock), counted meanwhile in `waiting` if given (HDFS's lock queue
/// length).
pub fn timed<G>(
    tried: TryLockResult<G>,
    waiting: Option<&AtomicU64>,
    take: impl FnOnce() -> LockResult<G>,
) -> LockResult<G> {
    match tried {
        Ok(g) => Ok(g),
        Err(TryLockError::Poisoned(p)) => Err(p),
        Err(TryLockError::WouldBlock) => {
            let began = Instant::now();
            let queued = waiting.map(GaugeGuard::new);
            let g = take();
            drop(queued);
            note_lock_wait(began.elapsed());
            g
        }
    }
}

/// `lock.lock()`, its wait (if the lock was held) noted for the running call.
pub fn lock_timed<T>(lock: &Mutex<T>) -> LockResult<MutexGuard<'_, T>> {
    timed(lock.try_lock(), None, || lock.lock())
}

/// A call's future, with the lock waits noted while it was polled.
pub(crate) struct Metered<F> {
    inner: F,
    waited_ns: u64,
}

impl<F> Metered<F> {
    pub(crate) fn new(inner: F) -> Self {
        Metered {
            inner,
            waited_ns: 0,
        }
    }
}

impl<F: Future + Unpin> Future for Metered<F> {
    type Output = (F::Output, Duration);

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // A call polled inside another's poll (the sync thread finishing
        // calls) keeps the outer call's figure aside and gives it back.
        let outer = WAITED_NS.with(|w| w.replace(0));
        let polled = Pin::new(&mut self.inner).poll(cx);
        let mine = WAITED_NS.with(|w| w.replace(outer));
        self.waited_ns = self.waited_ns.saturating_add(mine);
        let waited = Duration::from_nanos(self.waited_ns);
        polled.map(|out| (out, waited))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::RwLock;

    #[tokio::test]
    async fn waits_noted_inside_a_call_are_its_own() {
        note_lock_wait(Duration::from_millis(7)); // background work's, not the call's
        let call = Box::pin(async {
            note_lock_wait(Duration::from_micros(300));
            tokio::task::yield_now().await;
            note_lock_wait(Duration::from_micros(200));
            42
        });
        let (out, waited) = Metered::new(call).await;
        assert_eq!(out, 42);
        assert_eq!(waited, Duration::from_micros(500));
    }

    #[test]
    fn only_a_contended_lock_is_timed() {
        let lock = RwLock::new(1u32);
        let (free, waited) = futures::executor::block_on(Metered::new(Box::pin(async {
            *timed(lock.try_read(), None, || lock.read()).expect("lock")
        })));
        assert_eq!((free, waited), (1, Duration::ZERO));
        // The writer waits if it reaches its lock before this reader lets
        // go 20 ms after it starts; a scheduler may delay it past that, so
        // the scene is played until a wait happened (in practice at once).
        let contended = |lock: &RwLock<u32>| {
            let reader = lock.read().expect("lock");
            let (tx, rx) = std::sync::mpsc::channel();
            std::thread::scope(|s| {
                let writer = s.spawn(move || {
                    let call = Box::pin(async {
                        tx.send(()).expect("send");
                        let mut g = timed(lock.try_write(), None, || lock.write()).expect("lock");
                        *g += 1;
                    });
                    futures::executor::block_on(Metered::new(call)).1
                });
                rx.recv().expect("recv");
                std::thread::sleep(Duration::from_millis(20));
                drop(reader);
                writer.join().expect("join")
            })
        };
        let waits: Vec<Duration> = (0..5).map(|_| contended(&lock)).collect();
        assert!(waits.iter().any(|w| *w > Duration::ZERO), "{waits:?}");
        assert_eq!(*lock.read().expect("lock"), 6);
    }
}

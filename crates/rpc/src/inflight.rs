//! The calls of one connection that had to wait (a mutation waiting for its
//! fdatasync, a call waiting for room in the response queue), driven by the
//! connection's own task instead of a task each.
//!
//! A spawned task per waiting call cost two thread hand-offs per call: the
//! spawn woke an idle worker thread (a futex and a context switch, often
//! only for it to find nothing to steal), and the edit log's sync thread
//! woke every waiting call's task separately when their group commit became
//! durable. In a [`CallSet`] the calls wake only the connection's task (a
//! group commit wakes it once however many of its calls it completes), and
//! that task polls just the calls that were woken. The trade-off: the part
//! of a call after its wait (encoding the response, forgetting deleted
//! blocks) runs on the connection's task, so one connection's calls finish
//! one after the other; calls of different connections still run in
//! parallel.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use futures::stream::{FuturesUnordered, StreamExt};

type Call = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// One connection's waiting calls. Shared between the reader (which adds
/// calls) and the driver polled beside it, both on the connection's task,
/// so the lock is never contended and never held across an await.
#[derive(Clone, Default)]
pub(crate) struct CallSet {
    calls: Arc<Mutex<FuturesUnordered<Call>>>,
}

impl CallSet {
    /// Polls `call` once on the caller's task and keeps it here if it has
    /// to wait. Most reads finish in that first poll, so they cost no
    /// allocation beyond the call's own box.
    pub(crate) async fn run(&self, call: impl Future<Output = ()> + Send + 'static) {
        let mut call: Call = Box::pin(call);
        std::future::poll_fn(move |cx| {
            if call.as_mut().poll(cx).is_pending() {
                // Kept calls are polled with the set's own wakers from now
                // on (a pushed call is polled again by the set's next poll,
                // which is right below), so no wake-up is lost.
                let mut calls = self.lock();
                calls.push(std::mem::replace(&mut call, Box::pin(async {})));
                let _ = drive(&mut calls, cx);
            }
            Poll::Ready(())
        })
        .await
    }

    /// Polls the calls that were woken; never finishes. Meant to be raced
    /// (`select!`) against the connection's reader.
    pub(crate) async fn drive_forever(&self) {
        std::future::poll_fn(|cx| {
            let _ = drive(&mut self.lock(), cx);
            Poll::<()>::Pending
        })
        .await
    }

    /// Finishes once every kept call has finished.
    pub(crate) async fn drain(&self) {
        std::future::poll_fn(|cx| drive(&mut self.lock(), cx)).await
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, FuturesUnordered<Call>> {
        // A panic stops the process (servers run with exit-on-panic), so a
        // poisoned set is never seen in practice; its calls are still valid.
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Polls the woken calls until none is ready; `Ready` when none is left.
fn drive(calls: &mut FuturesUnordered<Call>, cx: &mut Context<'_>) -> Poll<()> {
    loop {
        match calls.poll_next_unpin(cx) {
            Poll::Ready(Some(())) => {}
            Poll::Ready(None) => return Poll::Ready(()),
            Poll::Pending => return Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;
    use tokio::sync::oneshot;

    /// A call that waits is finished by the driver once it is woken, and one
    /// that does not wait finishes inside `run`: no wake-up is lost between
    /// the first poll and the set taking over.
    #[tokio::test]
    async fn kept_calls_finish_when_woken() {
        let set = CallSet::default();
        let done = Arc::new(AtomicUsize::new(0));
        let d = done.clone();
        set.run(async move {
            d.fetch_add(1, Ordering::SeqCst);
        })
        .await;
        assert_eq!(done.load(Ordering::SeqCst), 1, "a ready call runs at once");

        let (tx, rx) = oneshot::channel::<()>();
        let d = done.clone();
        set.run(async move {
            let _ = rx.await;
            d.fetch_add(1, Ordering::SeqCst);
        })
        .await;
        assert_eq!(done.load(Ordering::SeqCst), 1, "a waiting call is kept");
        // Woken from another thread, as the edit log's sync thread does.
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            let _ = tx.send(());
        });
        let finished = tokio::time::timeout(Duration::from_secs(10), async {
            tokio::select! {
                () = set.drive_forever() => unreachable!("the driver never ends"),
                () = async {
                    while done.load(Ordering::SeqCst) < 2 {
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                } => {}
            }
        })
        .await;
        assert!(finished.is_ok(), "the kept call was never finished");
    }

    /// `drain` waits for every kept call, and only for those.
    #[tokio::test]
    async fn drain_waits_for_kept_calls() {
        let set = CallSet::default();
        let done = Arc::new(AtomicUsize::new(0));
        for i in 0..3u64 {
            let d = done.clone();
            set.run(async move {
                tokio::time::sleep(Duration::from_millis(20 * (i + 1))).await;
                d.fetch_add(1, Ordering::SeqCst);
            })
            .await;
        }
        assert_eq!(done.load(Ordering::SeqCst), 0);
        tokio::time::timeout(Duration::from_secs(10), set.drain())
            .await
            .expect("drain finished");
        assert_eq!(done.load(Ordering::SeqCst), 3);
        // An empty set drains at once.
        tokio::time::timeout(Duration::from_secs(1), set.drain())
            .await
            .expect("empty drain finished");
    }
}

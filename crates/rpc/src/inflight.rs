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

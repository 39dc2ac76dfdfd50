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
//! that task polls just the calls that were woken.
//!
//! A thread that makes calls ready in bulk can also finish them itself:
//! inside [`finish_woken_calls_here`] a kept call that is woken is not
//! handed to its connection's task but polled right there once the wake-ups
//! are done, and the responses it sends are written to their sockets from
//! that thread (see `writer`). The edit log's sync thread does this after
//! each group commit, as HDFS's `FSEditLogAsync` answers the calls it
//! synced: a mutation then costs the runtime's workers no second wake-up.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};
use std::task::{Context, Poll, Wake, Waker};

use futures::task::AtomicWaker;

type Call = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

thread_local! {
    /// Calls woken inside `finish_woken_calls_here` on this thread.
    static WOKEN_HERE: RefCell<Option<Vec<Arc<KeptCall>>>> = const { RefCell::new(None) };
    /// Whether this thread is finishing calls for `finish_woken_calls_here`.
    static FINISHING_HERE: Cell<bool> = const { Cell::new(false) };
    /// Set by [`may_finish_anywhere`] while a kept call is polled: what the
    /// call now waits for may be finished by the thread that wakes it.
    static MAY_FINISH_ANYWHERE: Cell<bool> = const { Cell::new(false) };
}

/// One connection's waiting calls. Shared between the reader (which adds
/// calls), the driver polled beside it on the connection's task, and any
/// thread finishing calls with [`finish_woken_calls_here`].
#[derive(Clone, Default)]
pub(crate) struct CallSet {
    shared: Arc<SetShared>,
}

#[derive(Default)]
struct SetShared {
    /// Kept calls woken since the driver last ran.
    ready: Mutex<Vec<Arc<KeptCall>>>,
    /// Kept calls not finished yet.
    live: AtomicUsize,
    /// The connection's task, polling `drive_forever` or `drain`.
    driver: AtomicWaker,
}

/// A call kept in a set: its own waker, so that a wake-up says which call.
struct KeptCall {
    call: Mutex<Option<Call>>,
    /// In a ready list already (its wake-ups since then are one).
    queued: AtomicBool,
    /// Its last poll stopped in [`may_finish_anywhere`].
    anywhere: AtomicBool,
    /// Weak: a call waiting on something holds itself (through its waker)
    /// and would otherwise hold its set too once the connection is gone.
    set: Weak<SetShared>,
}

impl CallSet {
    /// Polls `call` once on the caller's task and keeps it here if it has
    /// to wait. Most reads finish in that first poll, so they cost no
    /// allocation beyond the call's own box.
    pub(crate) async fn run(&self, call: impl Future<Output = ()> + Send + 'static) {
        let mut call: Call = Box::pin(call);
        let first = std::future::poll_fn(|cx| {
            let outer = MAY_FINISH_ANYWHERE.with(|m| m.replace(false));
            let polled = call.as_mut().poll(cx);
            MAY_FINISH_ANYWHERE.with(|m| m.set(outer));
            Poll::Ready(polled)
        })
        .await;
        if first.is_ready() {
            return;
        }
        self.shared.live.fetch_add(1, Ordering::AcqRel);
        let kept = Arc::new(KeptCall {
            call: Mutex::new(Some(call)),
            queued: AtomicBool::new(false),
            anywhere: AtomicBool::new(false),
            set: Arc::downgrade(&self.shared),
        });
        // Polled again at once with its own waker, so that what it waits
        // for wakes it rather than the connection's task.
        kept.poll_once();
    }

    /// Polls the calls that were woken; never finishes. Meant to be raced
    /// (`select!`) against the connection's reader.
    pub(crate) async fn drive_forever(&self) {
        std::future::poll_fn(|cx| {
            self.shared.driver.register(cx.waker());
            self.shared.poll_ready();
            Poll::<()>::Pending
        })
        .await
    }

    /// Finishes once every kept call has finished.
    pub(crate) async fn drain(&self) {
        std::future::poll_fn(|cx| {
            self.shared.driver.register(cx.waker());
            self.shared.poll_ready();
            if self.shared.live.load(Ordering::Acquire) == 0 {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await
    }
}

impl SetShared {
    fn poll_ready(&self) {
        loop {
            let ready = std::mem::take(&mut *lock(&self.ready));
            if ready.is_empty() {
                return;
            }
            for call in ready {
                call.poll_once();
            }
        }
    }
}

impl KeptCall {
    /// Polls the call (unless finished); a wake-up during the poll queues
    /// it again.
    fn poll_once(self: &Arc<Self>) {
        self.queued.store(false, Ordering::Release);
        let slot = lock(&self.call);
        self.poll_locked(slot);
    }

    /// `poll_once` for `finish_woken_calls_here`, unless a poll on the
    /// connection's task since the wake-up left the call waiting elsewhere
    /// than in `may_finish_anywhere`: it is then queued for that task.
    fn poll_here(self: &Arc<Self>) {
        self.queued.store(false, Ordering::Release);
        let slot = lock(&self.call);
        if slot.is_some() && !self.anywhere.load(Ordering::Acquire) {
            drop(slot);
            // Outside the wake phase: to the connection's task.
            self.wake_by_ref();
            return;
        }
        self.poll_locked(slot);
    }

    fn poll_locked(self: &Arc<Self>, mut slot: MutexGuard<'_, Option<Call>>) {
        let Some(call) = slot.as_mut() else {
            return;
        };
        let waker = Waker::from(self.clone());
        let outer = MAY_FINISH_ANYWHERE.with(|m| m.replace(false));
        let polled = call.as_mut().poll(&mut Context::from_waker(&waker));
        let anywhere = MAY_FINISH_ANYWHERE.with(|m| m.replace(outer));
        self.anywhere.store(anywhere, Ordering::Release);
        if polled.is_ready() {
            *slot = None;
            drop(slot);
            if let Some(set) = self.set.upgrade() {
                if set.live.fetch_sub(1, Ordering::AcqRel) == 1 {
                    // The last one: a `drain` may be waiting for it.
                    set.driver.wake();
                }
            }
        }
    }
}

impl Wake for KeptCall {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let anywhere = self.anywhere.load(Ordering::Acquire);
        let here = WOKEN_HERE.with(|w| match w.borrow_mut().as_mut() {
            Some(list) if anywhere => {
                list.push(self.clone());
                true
            }
            _ => false,
        });
        if here {
            return;
        }
        match self.set.upgrade() {
            Some(set) => {
                lock(&set.ready).push(self.clone());
                set.driver.wake();
            }
            // Its connection's task is gone (the runtime shut down): nothing
            // will poll it, so drop it, and what it holds, now (unless it is
            // being polled: that poll's owner has it).
            None => {
                let call = self.call.try_lock().ok().and_then(|mut c| c.take());
                drop(call);
            }
        }
    }
}

/// Runs `wake` (something that wakes waiting calls, such as publishing
/// that a group commit is durable), then finishes on this thread the kept
/// calls it woke, and writes the responses they send from this thread.
/// Meant for a thread outside the runtime that has nothing better to do
/// meanwhile; a call with heavy work left moves itself back to its
/// connection's task with [`off_this_thread`]. Where the thread needs the
/// runtime (timers, spawns), the caller enters it first.
pub fn finish_woken_calls_here<R>(wake: impl FnOnce() -> R) -> R {
    let outer = WOKEN_HERE.with(|w| w.borrow_mut().replace(Vec::new()));
    let result = wake();
    let woken = WOKEN_HERE.with(|w| std::mem::replace(&mut *w.borrow_mut(), outer));
    let woken = woken.unwrap_or_default();
    if woken.is_empty() {
        return result;
    }
    let was = FINISHING_HERE.with(|f| f.replace(true));
    crate::writer::collect_direct_responses(|| {
        for call in &woken {
            call.poll_here();
        }
    });
    FINISHING_HERE.with(|f| f.set(was));
    result
}

/// Awaits `wait`, letting the thread that ends the wait finish the call
/// (inside [`finish_woken_calls_here`]): for a wait whose call has only
/// light work left after it, and none that takes a lock the waking
/// thread's owner may hold while it waits for that thread.
pub async fn may_finish_anywhere<T>(wait: impl Future<Output = T>) -> T {
    let mut wait = std::pin::pin!(wait);
    std::future::poll_fn(|cx| {
        let polled = wait.as_mut().poll(cx);
        if polled.is_pending() {
            MAY_FINISH_ANYWHERE.with(|m| m.set(true));
        }
        polled
    })
    .await
}

/// Whether this thread is finishing calls for [`finish_woken_calls_here`]
/// (for checks that a lock is not taken there).
pub fn finishing_calls_here() -> bool {
    FINISHING_HERE.with(Cell::get)
}

/// Moves the call that awaits this back to its connection's task when it
/// is being finished by [`finish_woken_calls_here`] (for work that must
/// not hold up that thread, such as forgetting a large delete's blocks);
/// elsewhere it is ready at once.
pub async fn off_this_thread() {
    let mut moved = false;
    std::future::poll_fn(|cx| {
        if moved || !finishing_calls_here() {
            return Poll::Ready(());
        }
        moved = true;
        // Outside the wake phase, so this queues it for its connection.
        cx.waker().wake_by_ref();
        Poll::Pending
    })
    .await
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic stops the process (servers run with exit-on-panic), so a
    // poisoned lock is never seen in practice; what it guards stays valid.
    m.lock().unwrap_or_else(PoisonError::into_inner)
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

    /// Inside `finish_woken_calls_here`, a call waiting in
    /// `may_finish_anywhere` is finished by the waking thread before it
    /// returns; one that did not say so is left to the connection's task;
    /// and `off_this_thread` hands a call back to that task.
    #[tokio::test]
    async fn the_waking_thread_finishes_only_the_calls_that_allow_it() {
        let set = CallSet::default();
        let finished_on = Arc::new(Mutex::new(Vec::new()));
        let mut senders = Vec::new();
        for (name, anywhere, hop) in [
            ("light", true, false),
            ("plain", false, false),
            ("heavy", true, true),
        ] {
            let (tx, rx) = oneshot::channel::<()>();
            senders.push(tx);
            let on = finished_on.clone();
            set.run(async move {
                if anywhere {
                    let _ = may_finish_anywhere(rx).await;
                } else {
                    let _ = rx.await;
                }
                if hop {
                    off_this_thread().await;
                }
                let here = finishing_calls_here();
                lock(&on).push((name, std::thread::current().id(), here));
            })
            .await;
        }
        let waker_thread = std::thread::spawn(move || {
            finish_woken_calls_here(|| {
                for tx in senders {
                    let _ = tx.send(());
                }
            });
            std::thread::current().id()
        })
        .join()
        .expect("waking thread");
        {
            let on = lock(&finished_on);
            assert_eq!(
                on.len(),
                1,
                "only the light call was finished by the waker: {on:?}"
            );
            assert_eq!(on[0], ("light", waker_thread, true));
        }
        tokio::time::timeout(Duration::from_secs(10), set.drain())
            .await
            .expect("the others finished on the connection's task");
        let on = lock(&finished_on);
        assert_eq!(on.len(), 3);
        for (name, thread, here) in &on[1..] {
            assert!(["plain", "heavy"].contains(name));
            assert_ne!(
                *thread, waker_thread,
                "{name} finished on the waking thread"
            );
            assert!(!here);
        }
    }
}

//! The per-replica mutation lock: whoever changes a replica's files or its
//! map entry (create and stale-replica replacement, append, pipeline
//! recovery, finalize, close recovery, invalidate, quarantine, block
//! recovery) holds it from the first check to the last change, so no other
//! change sees the replica half done.
//!
//! The locks are a fixed array of shards, a replica's shard chosen by a
//! hash of its key (as garage's block manager shards its `mutation_lock`):
//! an operation waits only for operations on the same replica or on one
//! that falls in the same shard.
//!
//! Lock order: a shard, then the replica map's `Mutex`, then an
//! [`super::RbwShared`]'s writer slot. Nobody takes a shard while holding
//! the map or a slot, and nobody holds two shards at once.
//!
//! A shard is a flag under a `Mutex` with a `Condvar` rather than a plain
//! `Mutex<()>` so that a waiter can give up: the finalize of a writer that
//! a takeover has revoked must stop waiting for the shard the takeover
//! holds while it waits for that very writer to end.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

use crate::ids::ReplicaKey;

/// Number of shards: enough that unrelated replicas rarely share one.
pub(super) const REPLICA_LOCK_SHARDS: usize = 256;

#[derive(Debug, Default)]
struct Shard {
    held: Mutex<bool>,
    released: Condvar,
}

impl Shard {
    fn state(&self) -> MutexGuard<'_, bool> {
        self.held.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The sharded mutation locks of every replica.
#[derive(Debug)]
pub(super) struct ReplicaLocks {
    shards: Box<[Shard]>,
}

/// Proof that the mutation lock of a replica is held; released on drop.
#[derive(Debug)]
#[must_use = "the lock is released when the guard is dropped"]
pub(super) struct ReplicaGuard<'a> {
    shard: &'a Shard,
}

impl Drop for ReplicaGuard<'_> {
    fn drop(&mut self) {
        *self.shard.state() = false;
        self.shard.released.notify_all();
    }
}

impl Default for ReplicaLocks {
    fn default() -> Self {
        ReplicaLocks {
            shards: (0..REPLICA_LOCK_SHARDS).map(|_| Shard::default()).collect(),
        }
    }
}

impl ReplicaLocks {
    fn shard(&self, key: &ReplicaKey) -> &Shard {
        let mut h = DefaultHasher::new();
        key.hash(&mut h);
        // The remainder is below the shard count, so it fits a usize.
        let i = usize::try_from(h.finish() % REPLICA_LOCK_SHARDS as u64).unwrap_or(0);
        &self.shards[i]
    }

    /// Waits for and takes the lock of `key`.
    pub(super) fn lock(&self, key: &ReplicaKey) -> ReplicaGuard<'_> {
        let shard = self.shard(key);
        let mut held = shard.state();
        while *held {
            held = shard
                .released
                .wait(held)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *held = true;
        ReplicaGuard { shard }
    }

    /// Takes the lock of `key`, or returns `None` as soon as `give_up`
    /// says so: it is asked before each wait and whenever [`Self::wake`]
    /// is called for the shard.
    pub(super) fn lock_unless(
        &self,
        key: &ReplicaKey,
        give_up: impl Fn() -> bool,
    ) -> Option<ReplicaGuard<'_>> {
        let shard = self.shard(key);
        let mut held = shard.state();
        loop {
            if give_up() {
                return None;
            }
            if !*held {
                *held = true;
                return Some(ReplicaGuard { shard });
            }
            held = shard
                .released
                .wait(held)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Makes the waiters for `key`'s shard ask their `give_up` again.
    pub(super) fn wake(&self, key: &ReplicaKey) {
        let shard = self.shard(key);
        let _held = shard.state();
        shard.released.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;
    use crate::ids::{BlockId, BlockPoolId};

    fn key(id: u64) -> ReplicaKey {
        ReplicaKey {
            pool: BlockPoolId::new("BP-locks").expect("pool"),
            block: BlockId(id),
        }
    }

    /// Two keys that fall in different shards.
    fn keys_in_different_shards(locks: &ReplicaLocks) -> (ReplicaKey, ReplicaKey) {
        let a = key(1);
        let b = (2..)
            .map(key)
            .find(|k| !std::ptr::eq(locks.shard(k), locks.shard(&a)))
            .expect("another shard");
        (a, b)
    }

    #[test]
    fn another_shard_does_not_wait() {
        let locks = ReplicaLocks::default();
        let (a, b) = keys_in_different_shards(&locks);
        let _ga = locks.lock(&a);
        assert!(locks.lock_unless(&b, || false).is_some());
    }

    #[test]
    fn a_waiter_gives_up_when_woken_and_told_to() {
        let locks = Arc::new(ReplicaLocks::default());
        let k = key(7);
        let guard = locks.lock(&k);
        let stop = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (locks, k, stop) = (locks.clone(), k.clone(), stop.clone());
            std::thread::spawn(move || {
                locks
                    .lock_unless(&k, || stop.load(Ordering::Acquire))
                    .is_some()
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        stop.store(true, Ordering::Release);
        locks.wake(&k);
        assert!(!waiter.join().expect("waiter"), "the waiter gave up");
        drop(guard);
        // Released: the next one gets it at once.
        assert!(locks.lock_unless(&k, || false).is_some());
    }

    #[test]
    fn the_lock_excludes_and_hands_over() {
        let locks = Arc::new(ReplicaLocks::default());
        let k = key(9);
        let guard = locks.lock(&k);
        let got = Arc::new(AtomicBool::new(false));
        let waiter = {
            let (locks, k, got) = (locks.clone(), k.clone(), got.clone());
            std::thread::spawn(move || {
                let _g = locks.lock(&k);
                got.store(true, Ordering::Release);
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        assert!(!got.load(Ordering::Acquire), "held elsewhere");
        drop(guard);
        waiter.join().expect("waiter");
        assert!(got.load(Ordering::Acquire));
    }
}

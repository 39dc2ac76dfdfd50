//! Points where a test can stop a storage operation half way, to run
//! another one against the state it leaves (compiled into tests only).

use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;

/// One pause: the paused thread says it arrived, then waits to go on.
#[derive(Debug)]
struct Pause {
    arrived: Sender<()>,
    resume: Receiver<()>,
}

/// The pauses armed by a test.
#[derive(Debug, Default)]
pub(super) struct TestHooks {
    finalize_renamed: Mutex<Option<Pause>>,
}

/// The test's end of a pause.
#[derive(Debug)]
pub(super) struct PauseHandle {
    /// Receives once the operation reached the pause.
    pub arrived: Receiver<()>,
    /// Send (or drop) to let it go on.
    pub resume: Sender<()>,
}

impl TestHooks {
    /// Stops the next finalize after its files moved into `finalized/` and
    /// before the map says so.
    pub(super) fn pause_finalize_after_rename(&self) -> PauseHandle {
        let (arrived_tx, arrived) = channel();
        let (resume, resume_rx) = channel();
        *self
            .finalize_renamed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Pause {
            arrived: arrived_tx,
            resume: resume_rx,
        });
        PauseHandle { arrived, resume }
    }

    pub(super) fn finalize_renamed(&self) {
        let pause = self
            .finalize_renamed
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(p) = pause {
            let _ = p.arrived.send(());
            let _ = p.resume.recv();
        }
    }
}

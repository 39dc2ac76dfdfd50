//! Replays every committed fuzzing input (`fuzz/corpus/<target>/*`, the
//! minimised corpus that cargo-fuzz grew, crashers included) through the
//! same entry points the fuzz targets call, on stable Rust: no input may
//! panic, and each must finish well within a time bound.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Per input; generous for a debug build on a loaded CI machine.
const PER_INPUT: Duration = Duration::from_secs(10);
/// For the whole corpus.
const TOTAL: Duration = Duration::from_secs(240);

fn corpus_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

fn inputs(target: &str) -> Vec<PathBuf> {
    let dir = corpus_root().join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

#[test]
fn every_target_has_a_corpus() {
    for (name, _) in cairn_fuzzing::TARGETS {
        assert!(!inputs(name).is_empty(), "fuzz/corpus/{name} is empty");
    }
}

#[test]
fn corpus_replays_without_panic_or_hang() {
    let start = Instant::now();
    let mut count = 0usize;
    for (name, f) in cairn_fuzzing::TARGETS {
        for path in inputs(name) {
            let data = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            // Each input on a thread of its own, so a hang fails the test
            // with the input's name instead of stalling it.
            let (tx, rx) = mpsc::channel();
            let f = *f;
            let handle = std::thread::spawn(move || {
                f(&data);
                let _ = tx.send(());
            });
            match rx.recv_timeout(PER_INPUT) {
                Ok(()) => {}
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("{name}: {} took longer than {PER_INPUT:?}", path.display())
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => {}
            }
            if handle.join().is_err() {
                panic!("{name}: {} panicked", path.display());
            }
            count += 1;
        }
    }
    let took = start.elapsed();
    assert!(
        took < TOTAL,
        "replaying {count} inputs took {took:?} (limit {TOTAL:?})"
    );
    eprintln!("replayed {count} corpus inputs in {took:?}");
}

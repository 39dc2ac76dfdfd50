//! Fails when the memory per file of a 100,000-file namespace grows more
//! than 20% over a committed baseline. Memory is counted by this test
//! binary's global allocator (`stats_alloc`: live heap bytes, as the
//! program asks for them, without malloc's headers and rounding): unlike RSS it does not depend on malloc's arenas, page
//! sizes or what ran before in the process, so the figure is the same on
//! every run and build machine. The counter sees every thread's
//! allocations, so both cases are measured in one test, one after the
//! other, before either is checked: a failure's report (the harness
//! formats it on another thread) cannot land inside the other's count.

mod memory;

use std::alloc::System;

use stats_alloc::{Region, StatsAlloc, INSTRUMENTED_SYSTEM};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// Live heap bytes per file (or block) that `build` leaves (what it returns kept
/// alive while counting).
fn bytes_per_file<T>(files: u64, build: impl FnOnce() -> T) -> f64 {
    let region = Region::new(GLOBAL);
    let kept = build();
    let change = region.change();
    drop(kept);
    (change.bytes_allocated as f64 - change.bytes_deallocated as f64) / files as f64
}

fn check(case: &str, measured: f64, baseline: f64) {
    println!("{case}: {measured:.1} live heap bytes each (baseline {baseline})");
    assert!(
        measured <= baseline * 1.2,
        "{case}: {measured:.1} bytes each is more than 20% over the baseline of \
         {baseline}; if the growth is intended, measure again and update the baseline"
    );
}

/// Live heap bytes per file of 100 directories of 1,000 empty files
/// (`memory::flat(100, 1_000)`), measured with this test at the commit
/// that set it (`cargo test -p cairn-namenode --test memory_baseline --
/// --nocapture`, debug build; the figure is the same on every run). It
/// counts the capacity of the inode slab (131,072 slots for 100,101
/// inodes here), not only the slots in use as RSS does. Lowered from
/// 140.6 when ids found their slots through a paged index instead of a
/// hash table (`id_index.rs`), then from 138.1 when the inode went from 96
/// to 88 bytes (owner and group one interned pair, times in 6 bytes each),
/// then from 127.7 when it went to 80 (owner, group, permission,
/// replication and block size one interned set), then from 117.2 when a
/// directory's children took 4 bytes each instead of 8 (`children.rs`),
/// then from 113.1 when the inode stopped keeping its own id (72 bytes:
/// the table's index gives ids back), then from 102.6 when a file's
/// blocks and a directory's children took one word of the inode each
/// instead of two (64 bytes: `thin_slice.rs`).
const EMPTY_FILES_BASELINE: f64 = 92.1;

/// Live heap bytes per block of a block map of 100,000 blocks with three
/// reported replicas each (`memory::block_map(100_000)`), measured the
/// same way. A file of one block costs both figures. Lowered from 289.8 by
/// the compact block table (branch `mem2`: block slab, inline replicas of
/// 4-byte indexes, per-node slot vectors), then to 200.5 with the
/// safe-mode length and the pipeline in side tables (branch `mem5`), then
/// to 127.2 with replicas sharing their block's stamp and length
/// (`Replicas` in `blocks/table.rs`: 80-byte states), then to 124.7 with
/// the paged id index, then to 67.5 with replicas placed in 4 bytes
/// (node and storage number), sharing the block's own stamp, and each
/// node's blocks in a roaring bitmap (48-byte states); like the inode
/// figure it counts the slab's capacity (131,072 slots of 48 bytes for
/// 100,000 blocks).
const BLOCK_MAP_BASELINE: f64 = 67.5;

#[test]
fn empty_files_and_the_block_map_stay_within_20_percent_of_their_baselines() {
    let per_file = bytes_per_file(100_000, || memory::flat(100, 1_000));
    let per_block = bytes_per_file(100_000, || memory::block_map(100_000));
    check("100k empty files", per_file, EMPTY_FILES_BASELINE);
    check(
        "100k blocks of 3 replicas (block map)",
        per_block,
        BLOCK_MAP_BASELINE,
    );
}

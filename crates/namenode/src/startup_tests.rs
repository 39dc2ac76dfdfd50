//! What a NameNode rebuilds from its namespace when it starts, in one pass
//! over the files: every block in the block map, the complete ones counted
//! for start-up safe mode, and each writer's lease on its open files.

use std::sync::Arc;

use crate::journal::MemoryEditLog;
use crate::namespace::permission::Caller;
use crate::namespace::{BlockRecord, Limits, Namespace};

#[test]
fn a_start_knows_every_block_counts_the_complete_ones_and_gives_writers_their_leases() {
    let mut ns = Namespace::new("hdfs", "supergroup", 5, Limits::default());
    let su = Caller::superuser("hdfs");
    let yes = |_: &BlockRecord| true;
    // Files with `blocks` blocks each, closed or left open by `writer`.
    let mut write = |path: &str, writer: &str, blocks: usize, close: bool| {
        let (st, _, _) = ns
            .create(&su, path, 0o644, writer, "m", false, true, 3, 1024, 1)
            .expect("create");
        let mut prev = None;
        for _ in 0..blocks {
            let (a, _) = ns
                .add_block(path, st.id.0, writer, prev, &yes)
                .expect("block");
            prev = Some(BlockRecord {
                num_bytes: 1024,
                ..a.block
            });
        }
        if close {
            let (done, _) = ns
                .complete(path, 0, writer, prev, 2, &yes)
                .expect("complete");
            assert!(done);
        }
    };
    write("/closed/a", "c0", 2, true);
    write("/closed/b", "c0", 1, true);
    write("/closed/empty", "c0", 0, true);
    // Open: every block but the last is complete.
    write("/open/two", "c1", 2, false);
    write("/open/none", "c1", 0, false);
    write("/open/one", "c2", 1, false);
    let conf = cairn_common::config::Configuration::new();
    let config = crate::config::NameNodeConfig::from_conf(&conf).expect("defaults");
    let state = crate::new_state(
        config,
        crate::new_version_info(),
        ns,
        Arc::new(MemoryEditLog::default()),
    );

    let bm = state.blocks.lock().expect("blocks");
    assert_eq!(bm.block_count(), 6, "every block, open files' too");
    // 2 + 1 closed, and the first of /open/two.
    assert_eq!(
        bm.safe_tally(),
        Some((4, 0)),
        "complete blocks, none safe yet"
    );
    drop(bm);
    let leases = state.leases.lock().expect("leases");
    assert_eq!(leases.holder_count(), 2, "c1 and c2; c0 closed everything");
    assert_eq!(leases.file_count(), 3);
    assert!(leases.last_renewed("c1").is_some() && leases.last_renewed("c0").is_none());
}

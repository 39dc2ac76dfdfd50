//! A three-member Raft group in one process, for the tests of this crate.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_common::disk::RealDisk;
use cairn_namenode::journal::raft::member::{MemberSpec, MemberTiming, RaftMember};
use cairn_namenode::journal::raft::snapshot::{self, SnapshotSettings};
use cairn_namenode::journal::raft::state_machine::ImageOwner;
use cairn_namenode::namespace::{Limits, Namespace};
use tokio::net::TcpListener;

fn owner() -> ImageOwner {
    ImageOwner {
        superuser: "hdfs".into(),
        supergroup: "supergroup".into(),
        limits: Limits::default(),
    }
}

pub fn spec_with(id: u64, root: &std::path::Path, snapshots: SnapshotSettings) -> MemberSpec {
    MemberSpec {
        id,
        disk: Arc::new(RealDisk),
        dir: root.join(format!("nn{id}")),
        owner: owner(),
        timing: MemberTiming::default(),
        hook: Default::default(),
        base: snapshot::empty_base(&owner()),
        snapshots,
    }
}

pub async fn start_with(
    id: u64,
    root: &std::path::Path,
    listener: TcpListener,
    snapshots: SnapshotSettings,
) -> RaftMember {
    let ns = Namespace::new("hdfs", "supergroup", 1, Limits::default());
    RaftMember::start(spec_with(id, root, snapshots), listener, ns, 0)
        .await
        .expect("start member")
}

/// Three members on fresh listeners, the group formed; with their Raft
/// addresses.
pub async fn group(
    root: &std::path::Path,
    snapshots: SnapshotSettings,
) -> (BTreeMap<u64, RaftMember>, BTreeMap<u64, String>) {
    let mut listeners = BTreeMap::new();
    let mut addrs = BTreeMap::new();
    for id in 1..=3u64 {
        let l = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        addrs.insert(id, l.local_addr().expect("addr").to_string());
        listeners.insert(id, l);
    }
    let mut members = BTreeMap::new();
    for (id, l) in listeners {
        members.insert(id, start_with(id, root, l, snapshots).await);
    }
    members[&1].initialize(&addrs).await.expect("initialize");
    (members, addrs)
}

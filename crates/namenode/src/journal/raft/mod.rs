//! The edit log replicated by Raft (issue 15, RFC 0001 step 1): the
//! NameNodes of a nameservice form one openraft group whose log carries
//! batches of our edit records. The leader applies a mutation to its
//! namespace, hands the edits to [`edit_log::RaftEditLog`] (an
//! [`EditLog`](super::EditLog) like the file journal), which proposes
//! everything pending as ONE Raft entry (group commit); a handler's
//! `wait_durable` resolves once a majority has that entry on disk.
//! Followers apply committed entries to their own namespace
//! ([`state_machine::NamespaceStateMachine`]).
//!
//! Each member keeps its Raft log in [`log_store::RaftLogStore`] (the
//! journal's disciplines: CRC32C records, preallocation, one write and one
//! fdatasync per flush, torn tail cut at start) and talks to the others
//! over a small framed TCP protocol ([`network`]). [`member::RaftMember`]
//! puts one member together.

// openraft's storage traits return its `StorageError` by value; helpers
// returning it follow suit.
#![allow(clippy::result_large_err)]

pub mod edit_log;
mod flusher;
pub mod log_store;
pub mod member;
pub mod membership;
pub mod network;
pub mod recovery;
pub mod snapshot;
pub mod state_machine;
#[cfg(test)]
mod tests;
pub mod transfer;

use std::io::Cursor;

use serde::{Deserialize, Serialize};

/// Raft node ids: one per NameNode of the nameservice.
pub type NodeId = u64;

/// What one Raft entry carries: records of today's journal codec
/// (`[len][crc32c][txid][EditProto]` each, consecutive txids), so a
/// follower checks each edit's checksum again before applying it.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EditBatch {
    /// base64 in the members' JSON messages (serde would spell each byte
    /// as a number).
    #[serde(with = "records_base64")]
    pub records: Vec<u8>,
}

mod records_base64 {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        STANDARD
            .decode(text.as_bytes())
            .map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Debug for EditBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EditBatch({} bytes)", self.records.len())
    }
}

impl std::fmt::Display for EditBatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "EditBatch({} bytes)", self.records.len())
    }
}

openraft::declare_raft_types!(
    /// The Raft types of the NameNode group.
    pub TypeConfig:
        D = EditBatch,
        R = (),
        NodeId = NodeId,
        Node = openraft::BasicNode,
        SnapshotData = Cursor<Vec<u8>>,
);

/// Shorthands for openraft's generic types over [`TypeConfig`].
pub type Entry = openraft::Entry<TypeConfig>;
pub type LogId = openraft::LogId<NodeId>;
pub type Vote = openraft::Vote<NodeId>;
pub type StorageError = openraft::StorageError<NodeId>;
pub type Raft = openraft::Raft<TypeConfig>;

//! The state id of Hadoop's `AlignmentContext`: a server that keeps one
//! (the NameNode: its last written transaction id) puts it in every
//! response header (`RpcResponseHeaderProto.stateId`, field 9), success or
//! error, so that clients reading from observers can ask them to catch up
//! to what they have already seen (the request header's `stateId`, field 8,
//! reaches handlers as [`crate::CallContext::state_id`]).

use std::fmt;
use std::sync::Arc;

use cairn_proto::hadoop::common::RpcResponseHeaderProto;

/// Reads the server's current state id when a response is sent.
#[derive(Clone)]
pub struct StateIdSource(Arc<dyn Fn() -> i64 + Send + Sync>);

impl StateIdSource {
    pub fn new(f: impl Fn() -> i64 + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// The state id now.
    pub fn get(&self) -> i64 {
        (self.0)()
    }
}

impl fmt::Debug for StateIdSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StateIdSource")
    }
}

/// Stamps `header` with the state id, when the server keeps one. Read
/// after the call has run, so a mutation's answer carries its own txid.
pub fn stamp(source: Option<&StateIdSource>, header: &mut RpcResponseHeaderProto) {
    if let Some(s) = source {
        header.state_id = Some(s.get());
    }
}

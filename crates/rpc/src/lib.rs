//! Hadoop IPC ("hrpc", version 9) as real HDFS clients speak it.
//!
//! The server side ([`server`]) accepts the connection preamble, the SIMPLE
//! authentication path (including the SASL exchange Java clients perform
//! when their user holds tokens), the connection context that names the
//! caller, and then any number of calls in flight on one connection, each
//! answered as soon as its handler finishes. Protocol implementations plug
//! in through the [`Protocol`] trait and report failures as Java exception
//! class names ([`CallError`]), which is how Java clients rebuild the
//! original exception type.
//!
//! [`client`] is the small client a Cairn server needs to call another
//! (DataNode to NameNode); users talk to Cairn with stock Hadoop clients.

pub mod client;
pub mod error;
pub mod frame;
mod headers;
mod inflight;
pub mod lock_wait;
pub mod metrics;
pub mod proxy_check;
pub mod server;
pub mod state_id;
mod writer;

pub use error::CallError;
pub use frame::MethodName;
pub use inflight::{
    finish_woken_calls_here, finishing_calls_here, may_finish_anywhere, off_this_thread,
};
pub use metrics::RpcMetrics;
pub use proxy_check::ProxyCheck;
pub use server::{CallContext, Protocol, ServerConfig};
pub use state_id::StateIdSource;

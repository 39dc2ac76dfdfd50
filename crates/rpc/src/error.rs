//! Errors of one call, as they travel to the client: a Java exception class
//! name and a message, which the Java client turns back into that exception.

use cairn_proto::exceptions;

/// Why one call failed. The connection stays open (status ERROR).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The protocol has no such method (`RpcNoSuchMethodException`).
    #[error("unknown method {0}")]
    NoSuchMethod(String),
    /// The request message could not be decoded.
    #[error("undecodable request: {0}")]
    BadRequest(String),
    /// The handler failed; `class` is the Java exception class the client
    /// should see, `message` its message.
    #[error("{class}: {message}")]
    Remote { class: String, message: String },
}

impl CallError {
    /// An application error with the given Java exception class.
    pub fn remote(class: &str, message: impl Into<String>) -> Self {
        CallError::Remote {
            class: class.to_string(),
            message: message.into(),
        }
    }

    /// Shorthand for a plain `java.io.IOException`.
    pub fn io(message: impl Into<String>) -> Self {
        Self::remote(exceptions::IO, message)
    }
}

impl From<prost::DecodeError> for CallError {
    fn from(e: prost::DecodeError) -> Self {
        CallError::BadRequest(e.to_string())
    }
}

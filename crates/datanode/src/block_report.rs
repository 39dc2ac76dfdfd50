//! Block report encodings: the codec lives in `cairn_proto::block_report`,
//! shared with the NameNode's decoder; re-exported here for the DataNode's
//! callers.

pub use cairn_proto::block_report::{
    encode_buffers, encode_legacy, storage_report, BUFFER_CHUNK_BYTES,
    CAPABILITY_BLOCK_REPORT_BUFFERS,
};

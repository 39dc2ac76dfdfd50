//! Responses and acks of the write pipeline (PROTOCOL.md §3.4, §3.6, §3.9):
//! the connect-ack, the per-packet `PipelineAckProto` with one status per
//! node from this one to the end of the pipeline, and error responses.

use cairn_proto::hadoop::hdfs::{
    BlockOpResponseProto, ChecksumProto, PipelineAckProto, ReadOpChecksumInfoProto, Status,
};

use crate::checksum::DataChecksum;

/// A `BlockOpResponseProto` as Hadoop sends it for a connect-ack:
/// `firstBadLink` always present (empty when fine).
pub fn connect_ack(status: Status, first_bad_link: &str) -> BlockOpResponseProto {
    BlockOpResponseProto {
        status: status as i32,
        first_bad_link: Some(first_bad_link.to_string()),
        ..Default::default()
    }
}

/// SUCCESS for a read (READ_BLOCK, COPY_BLOCK): the checksum the packets
/// carry and the offset of the first chunk sent.
pub fn read_ok(checksum: DataChecksum, chunk_offset: u64) -> BlockOpResponseProto {
    BlockOpResponseProto {
        status: Status::Success as i32,
        read_op_checksum_info: Some(ReadOpChecksumInfoProto {
            checksum: ChecksumProto {
                r#type: checksum.kind.to_proto() as i32,
                bytes_per_checksum: checksum.bytes_per_checksum,
            },
            chunk_offset,
        }),
        ..Default::default()
    }
}

/// An error response to any op: status plus message.
pub fn error_response(status: Status, message: impl Into<String>) -> BlockOpResponseProto {
    BlockOpResponseProto {
        status: status as i32,
        message: Some(message.into()),
        ..Default::default()
    }
}

/// The ack for packet `seqno`: `reply = [own] ++ downstream.reply` and the
/// `flag` list likewise (Java reads the status from `flag` when present, so
/// both are sent, of equal length). `downstream_failed` blames the next
/// node (`[own, ERROR]`), as Hadoop does when the downstream ack cannot be
/// read. `downstream_nanos` is the time spent waiting for the downstream ack
/// (0 on the last node).
pub fn pipeline_ack(
    seqno: i64,
    own: Status,
    downstream: Option<&PipelineAckProto>,
    downstream_failed: bool,
    downstream_nanos: u64,
) -> PipelineAckProto {
    let mut reply = vec![own as i32];
    let mut flag = vec![own as u32];
    if downstream_failed {
        reply.push(Status::Error as i32);
        flag.push(Status::Error as u32);
    } else if let Some(ds) = downstream {
        reply.extend_from_slice(&ds.reply);
        if ds.flag.len() == ds.reply.len() {
            flag.extend_from_slice(&ds.flag);
        } else {
            // A downstream node that sends no flags: derive them (status in
            // bits 0-3, no ECN, no slow-node hint).
            flag.extend(
                ds.reply
                    .iter()
                    .map(|r| u32::try_from(*r).unwrap_or(1) & 0xF),
            );
        }
    }
    PipelineAckProto {
        seqno,
        reply,
        downstream_ack_time_nanos: Some(downstream_nanos),
        flag,
    }
}

/// The first non-SUCCESS status of an ack, if any (reading `flag` first,
/// as Java does).
pub fn first_error(ack: &PipelineAckProto) -> Option<Status> {
    let statuses: Vec<i32> = if ack.flag.is_empty() {
        ack.reply.clone()
    } else {
        ack.flag
            .iter()
            .map(|f| i32::try_from(f & 0xF).unwrap_or(1))
            .collect()
    };
    statuses
        .into_iter()
        .map(|s| Status::try_from(s).unwrap_or(Status::Error))
        .find(|s| *s != Status::Success)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::packet::delimited;

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).expect("hex"))
            .collect()
    }

    #[test]
    fn acks_match_the_captures() {
        // Connect-ack: `04 08 00 12 00`.
        assert_eq!(
            delimited(&connect_ack(Status::Success, "")).to_vec(),
            hex("04 08 00 12 00")
        );
        // Last node of a pipeline, seqno 0 (java-fsshell.txt #6).
        let last = pipeline_ack(0, Status::Success, None, false, 0);
        assert_eq!(
            delimited(&last).to_vec(),
            hex("09 08 00 10 00 18 00 22 01 00")
        );
        // First node with its downstream's ack and a measured wait (#5).
        let first = pipeline_ack(0, Status::Success, Some(&last), false, 4_708_717);
        assert_eq!(
            delimited(&first).to_vec(),
            hex("0f 08 00 10 00 10 00 18 ed b2 9f 02 22 02 00 00")
        );
        // Heartbeat ack (seqno -1) from PROTOCOL.md §3.6.
        let hb = pipeline_ack(-1, Status::Success, None, false, 0);
        assert_eq!(
            delimited(&hb).to_vec(),
            hex("09 08 01 10 00 18 00 22 01 00")
        );
        // Three nodes OK, seqno 5.
        let ds = PipelineAckProto {
            seqno: 5,
            reply: vec![0, 0],
            downstream_ack_time_nanos: Some(0),
            flag: vec![0, 0],
        };
        assert_eq!(
            delimited(&pipeline_ack(5, Status::Success, Some(&ds), false, 0)).to_vec(),
            hex("0F 08 0A 10 00 10 00 10 00 18 00 22 03 00 00 00")
        );
    }

    #[test]
    fn errors_are_placed_per_node() {
        let failed = pipeline_ack(3, Status::Success, None, true, 0);
        assert_eq!(failed.reply, vec![0, 1]);
        assert_eq!(failed.flag, vec![0, 1]);
        assert_eq!(first_error(&failed), Some(Status::Error));
        let own = pipeline_ack(3, Status::ErrorChecksum, None, false, 0);
        assert_eq!(first_error(&own), Some(Status::ErrorChecksum));
        let ds = PipelineAckProto {
            seqno: 3,
            reply: vec![2],
            downstream_ack_time_nanos: None,
            flag: vec![],
        };
        let relayed = pipeline_ack(3, Status::Success, Some(&ds), false, 9);
        assert_eq!(relayed.reply, vec![0, 2]);
        assert_eq!(relayed.flag, vec![0, 2]);
        assert_eq!(
            first_error(&pipeline_ack(1, Status::Success, None, false, 0)),
            None
        );
    }
}

//! Decodes bytes captured between real Hadoop 3.4.1 daemons and real clients
//! (FsShell, hdfs-native 0.14.7, Java DataNodes). The vectors were cut out of
//! `shared/hdfs-wire/captures/*.pcap` (each comment names the transcript,
//! connection, direction and stream offset) and are copied here so the
//! tests never read `../shared` at run time.
//!
//! Java and Hadoop encode fields in field-number order, and so does prost
//! with our `.proto` files, so re-encoding a decoded message must give the
//! captured bytes back exactly: that checks field numbers, wire types,
//! packed-ness and that every required/explicit field survives.

use bytes::{Buf, Bytes};
use cairn_proto::hadoop::common::{
    HaServiceStateProto, RequestHeaderProto, RpcKindProto, RpcRequestHeaderProto,
    RpcResponseHeaderProto, TokenProto,
};
use cairn_proto::hadoop::hdfs::*;
use cairn_proto::protocols;
use prost::Message;

// ---------------------------------------------------------------- vectors

/// java-fsshell.txt #4 c2s off=102: call 0 ClientProtocol.getFileInfo
const FSSHELL_GET_FILE_INFO_CALL: &str = "00 00 00 78 21 08 02 10 00 18 00 22 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 28 00 3a \
    05 0a 03 43 4c 49 3f 0a 0b 67 65 74 46 69 6c 65 49 6e 66 6f 12 2e 6f 72 67 2e 61 70 61 63 68 65 \
    2e 68 61 64 6f 6f 70 2e 68 64 66 73 2e 70 72 6f 74 6f 63 6f 6c 2e 43 6c 69 65 6e 74 50 72 6f 74 \
    6f 63 6f 6c 18 01 15 0a 13 2f 63 61 70 2f 6a 61 76 61 2f 66 32 30 30 6b 2e 62 69 6e";

/// java-fsshell.txt #4 c2s off=474: call 3 ClientProtocol.create
const FSSHELL_CREATE_CALL: &str = "00 00 00 b9 21 08 02 10 00 18 06 22 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 28 00 3a \
    05 0a 03 43 4c 49 3a 0a 06 63 72 65 61 74 65 12 2e 6f 72 67 2e 61 70 61 63 68 65 2e 68 61 64 6f \
    6f 70 2e 68 64 66 73 2e 70 72 6f 74 6f 63 6f 6c 2e 43 6c 69 65 6e 74 50 72 6f 74 6f 63 6f 6c 18 \
    01 5b 0a 1d 2f 63 61 70 2f 6a 61 76 61 2f 66 32 30 30 6b 2e 62 69 6e 2e 5f 43 4f 50 59 49 4e 47 \
    5f 12 03 08 a4 03 1a 23 44 46 53 43 6c 69 65 6e 74 5f 4e 4f 4e 4d 41 50 52 45 44 55 43 45 5f 31 \
    30 30 34 34 37 38 34 38 32 5f 31 20 03 28 01 30 02 38 80 80 80 40 40 02 4a 03 08 b6 03";

/// java-fsshell.txt #4 s2c off=32: reply 1 getFileInfo SUCCESS
const FSSHELL_GET_FILE_INFO_DIR_REPLY: &str = "00 00 00 54 1a 08 01 10 00 18 09 3a 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 40 00 38 \
    0a 36 08 01 12 00 18 00 22 03 08 ed 03 2a 04 72 6f 6f 74 32 0a 73 75 70 65 72 67 72 6f 75 70 38 \
    99 dc da e4 9f 34 40 00 50 00 58 00 68 83 80 01 70 00 80 01 00 90 01 00";

/// java-fsshell.txt #4 s2c off=152: reply 3 create SUCCESS
const FSSHELL_CREATE_REPLY: &str = "00 00 00 5c 1a 08 03 10 00 18 09 3a 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 40 00 40 \
    0a 3e 08 02 12 00 18 00 22 03 08 a4 03 2a 04 72 6f 6f 74 32 0a 73 75 70 65 72 67 72 6f 75 70 38 \
    b1 ea da e4 9f 34 40 b1 ea da e4 9f 34 50 02 58 80 80 80 40 68 84 80 01 70 00 80 01 00 90 01 00";

/// java-fsshell.txt #4 s2c off=248: reply 4 addBlock SUCCESS
const FSSHELL_ADD_BLOCK_REPLY: &str = "00 00 01 f8 1a 08 04 10 00 18 09 3a 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 40 00 db \
    03 0a d8 03 0a 32 0a 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d 31 32 37 2e 30 2e 30 2e 31 2d \
    31 37 39 35 32 33 39 30 37 37 37 33 30 10 81 80 80 80 04 18 e9 07 20 00 10 00 1a 9b 01 0a 4a 0a \
    09 31 32 37 2e 30 2e 30 2e 31 12 09 31 32 37 2e 30 2e 30 2e 31 1a 24 32 63 63 38 33 31 36 36 2d \
    33 63 64 66 2d 34 39 38 63 2d 39 38 33 35 2d 31 31 31 33 66 37 32 35 31 39 36 31 20 b7 a5 02 28 \
    af d6 02 30 af c6 02 38 00 10 80 c0 ce e3 df 0f 18 80 80 03 20 80 c0 ae 9c f2 04 28 80 80 03 30 \
    a4 ea da e4 9f 34 38 00 42 0d 2f 64 65 66 61 75 6c 74 2d 72 61 63 6b 48 80 c0 c8 b2 66 50 00 58 \
    00 60 00 68 d2 fa b0 02 78 98 de d9 e4 9f 34 80 01 c6 ee af 02 88 01 00 1a 9b 01 0a 4a 0a 09 31 \
    32 37 2e 30 2e 30 2e 31 12 09 31 32 37 2e 30 2e 30 2e 31 1a 24 64 30 64 38 38 66 30 63 2d 65 64 \
    61 62 2d 34 34 36 35 2d 62 32 32 34 2d 66 61 36 34 61 36 31 30 39 34 37 30 20 e5 bb 02 28 e7 df \
    02 30 af bc 02 38 00 10 80 c0 ce e3 df 0f 18 80 80 03 20 80 c0 ae 9c f2 04 28 80 80 03 30 a5 ea \
    da e4 9f 34 38 00 42 0d 2f 64 65 66 61 75 6c 74 2d 72 61 63 6b 48 80 c0 c8 b2 66 50 00 58 00 60 \
    00 68 d3 fa b0 02 78 96 de d9 e4 9f 34 80 01 c4 ee af 02 88 01 00 20 00 2a 08 0a 00 12 00 1a 00 \
    22 00 32 02 00 00 38 01 38 01 42 27 44 53 2d 30 31 64 62 31 62 34 33 2d 38 31 34 35 2d 34 65 36 \
    39 2d 61 38 35 65 2d 37 35 62 35 61 61 39 35 38 38 31 61 42 27 44 53 2d 33 39 31 61 30 31 65 37 \
    2d 61 63 32 30 2d 34 65 38 34 2d 61 66 63 64 2d 35 38 37 35 31 35 35 32 38 34 30 34";

/// java-fsshell.txt #4 s2c off=756: reply 5 getServerDefaults SUCCESS
const FSSHELL_SERVER_DEFAULTS_REPLY: &str = "00 00 00 3b 1a 08 05 10 00 18 09 3a 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 40 00 1f \
    0a 1d 08 80 80 80 40 10 80 04 18 80 80 04 20 02 28 80 20 30 00 38 00 40 02 4a 00 50 07 58 00";

/// java-fsshell.txt #3 s2c off=88: reply 1 getListing SUCCESS
const FSSHELL_GET_LISTING_REPLY: &str = "00 00 00 5c 1a 08 01 10 00 18 09 3a 10 bf c6 dc c7 0d 84 4d 50 a3 e0 a2 84 c4 96 e8 30 40 00 40 \
    0a 3e 0a 3a 08 01 12 04 6a 61 76 61 18 00 22 03 08 ed 03 2a 04 72 6f 6f 74 32 0a 73 75 70 65 72 \
    67 72 6f 75 70 38 99 dc da e4 9f 34 40 00 50 00 58 00 68 83 80 01 70 00 80 01 00 90 01 00 10 00";

/// java-fsshell.txt #5 c2s off=0: WRITE_BLOCK blk_1073741825_1001 numBytes=134217728 clientName="DFSClient_NONMAPR
const FSSHELL_WRITE_BLOCK: &str = "00 1c 50 f9 02 0a 68 0a 41 0a 35 0a 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d 31 32 37 2e 30 \
    2e 30 2e 31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 10 81 80 80 80 04 18 e9 07 20 80 80 80 40 \
    12 08 0a 00 12 00 1a 00 22 00 12 23 44 46 53 43 6c 69 65 6e 74 5f 4e 4f 4e 4d 41 50 52 45 44 55 \
    43 45 5f 31 30 30 34 34 37 38 34 38 32 5f 31 12 9b 01 0a 4a 0a 09 31 32 37 2e 30 2e 30 2e 31 12 \
    09 31 32 37 2e 30 2e 30 2e 31 1a 24 64 30 64 38 38 66 30 63 2d 65 64 61 62 2d 34 34 36 35 2d 62 \
    32 32 34 2d 66 61 36 34 61 36 31 30 39 34 37 30 20 e5 bb 02 28 e7 df 02 30 af bc 02 38 00 10 80 \
    c0 ce e3 df 0f 18 80 80 03 20 80 c0 ae 9c f2 04 28 80 80 03 30 a5 ea da e4 9f 34 38 00 42 0d 2f \
    64 65 66 61 75 6c 74 2d 72 61 63 6b 48 80 c0 c8 b2 66 50 00 58 00 60 00 68 d3 fa b0 02 78 96 de \
    d9 e4 9f 34 80 01 c4 ee af 02 88 01 00 20 06 28 02 30 00 38 00 40 00 4a 05 08 02 10 80 04 52 00 \
    58 01 60 01 68 00 70 00 78 00 82 01 27 44 53 2d 30 31 64 62 31 62 34 33 2d 38 31 34 35 2d 34 65 \
    36 39 2d 61 38 35 65 2d 37 35 62 35 61 61 39 35 38 38 31 61 8a 01 27 44 53 2d 33 39 31 61 30 31 \
    65 37 2d 61 63 32 30 2d 34 65 38 34 2d 61 66 63 64 2d 35 38 37 35 31 35 35 32 38 34 30 34";

/// java-fsshell.txt #5 c2s off=382: packet seqno=0 offsetInBlock=0 dataLen=64512 lastPacketInBlock=false; crc 126/12
const FSSHELL_FIRST_PACKET_HEAD: &str =
    "00 00 fd fc 00 19 09 00 00 00 00 00 00 00 00 11 00 00 00 00 00 00 00 00 18 00 25 00 fc 00 00";

/// java-fsshell.txt #5 c2s off=202070: packet seqno=4 offsetInBlock=200000 dataLen=0 lastPacketInBlock=true
const FSSHELL_LAST_PACKET: &str =
    "00 00 00 04 00 19 09 40 0d 03 00 00 00 00 00 11 04 00 00 00 00 00 00 00 18 01 25 00 00 00 00";

/// java-fsshell.txt #5 s2c off=0: connect-ack SUCCESS firstBadLink=""
const FSSHELL_CONNECT_ACK: &str = "04 08 00 12 00";

/// java-fsshell.txt #5 s2c off=5: ack seqno=0 reply=[SUCCESS, SUCCESS] flag=[0, 0] downstreamAckTimeNanos=4708717
const FSSHELL_ACK_TWO_NODES: &str = "0f 08 00 10 00 10 00 18 ed b2 9f 02 22 02 00 00";

/// java-fsshell.txt #6 s2c off=5: ack seqno=0 reply=[SUCCESS] flag=[0] downstreamAckTimeNanos=0
const FSSHELL_ACK_LAST_NODE: &str = "09 08 00 10 00 18 00 22 01 00";

/// java-fsshell.txt #8 c2s off=0: READ_BLOCK blk_1073741825_1001 numBytes=200000 clientName="DFSClient_NONMAPREDUC
const FSSHELL_READ_BLOCK: &str = "00 1c 51 72 0a 66 0a 40 0a 34 0a 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d 31 32 37 2e 30 2e \
    30 2e 31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 10 81 80 80 80 04 18 e9 07 20 c0 9a 0c 12 08 \
    0a 00 12 00 1a 00 22 00 12 22 44 46 53 43 6c 69 65 6e 74 5f 4e 4f 4e 4d 41 50 52 45 44 55 43 45 \
    5f 2d 39 35 36 38 30 30 33 36 5f 31 10 00 18 c0 9a 0c 20 01 2a 00";

/// java-fsshell.txt #8 s2c off=0: READ_BLOCK response SUCCESS checksum=CHECKSUM_CRC32C/512 chunkOffset=0
const FSSHELL_READ_RESPONSE: &str = "0d 08 00 22 09 0a 05 08 02 10 80 04 10 00";

/// java-fsshell.txt #8 c2s off=118: client read status CHECKSUM_OK
const FSSHELL_READ_STATUS: &str = "02 08 06";

/// java-fsshell.txt #1 s2c off=316: reply 26 sendHeartbeat SUCCESS
const FSSHELL_INVALIDATE_HEARTBEAT_REPLY: &str = "00 00 00 6a 1a 08 1a 10 00 18 09 3a 10 c9 c5 99 41 4e 4b 47 74 81 66 9e b3 41 13 66 8f 40 00 4e \
    0a 42 08 01 1a 3e 08 02 12 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d 31 32 37 2e 30 2e 30 2e \
    31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 1a 13 08 81 80 80 80 04 10 e9 07 18 ff ff ff ff ff \
    ff ff ff 7f 12 04 08 00 10 0a 28 00 30 00";

/// java-fsshell.txt #1 c2s off=1976: call 23 DatanodeProtocol.blockReceivedAndDeleted
const FSSHELL_BLOCK_RECEIVED_CALL: &str = "00 00 01 90 1a 08 02 10 00 18 2e 22 10 c9 c5 99 41 4e 4b 47 74 81 66 9e b3 41 13 66 8f 28 00 54 \
    0a 17 62 6c 6f 63 6b 52 65 63 65 69 76 65 64 41 6e 64 44 65 6c 65 74 65 64 12 37 6f 72 67 2e 61 \
    70 61 63 68 65 2e 68 61 64 6f 6f 70 2e 68 64 66 73 2e 73 65 72 76 65 72 2e 70 72 6f 74 6f 63 6f \
    6c 2e 44 61 74 61 6e 6f 64 65 50 72 6f 74 6f 63 6f 6c 18 01 9e 02 0a 87 01 0a 4a 0a 09 31 32 37 \
    2e 30 2e 30 2e 31 12 09 31 32 37 2e 30 2e 30 2e 31 1a 24 64 30 64 38 38 66 30 63 2d 65 64 61 62 \
    2d 34 34 36 35 2d 62 32 32 34 2d 66 61 36 34 61 36 31 30 39 34 37 30 20 e5 bb 02 28 e7 df 02 30 \
    af bc 02 38 00 12 22 08 c7 ff ff ff 0f 10 c5 e5 c8 f0 03 1a 0d 74 65 73 74 43 6c 75 73 74 65 72 \
    49 44 20 e3 ce d9 e4 9f 34 1a 0e 08 00 10 00 18 00 22 06 08 00 10 00 1a 00 22 05 33 2e 34 2e 31 \
    12 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d 31 32 37 2e 30 2e 30 2e 31 2d 31 37 39 35 32 33 \
    39 30 37 37 37 33 30 1a 6b 0a 27 44 53 2d 35 66 66 61 31 39 38 35 2d 63 35 30 34 2d 34 31 39 66 \
    2d 62 36 64 34 2d 66 66 65 30 62 61 39 32 66 30 32 62 12 11 0a 0d 08 81 80 80 80 04 10 e9 07 18 \
    c0 9a 0c 18 02 1a 2d 0a 27 44 53 2d 35 66 66 61 31 39 38 35 2d 63 35 30 34 2d 34 31 39 66 2d 62 \
    36 64 34 2d 66 66 65 30 62 61 39 32 66 30 32 62 10 00 18 01";

/// hdfs-native.txt #1 c2s off=413: call 3 ClientProtocol.create
const NATIVE_CREATE_CALL: &str = "00 00 00 b8 1a 08 02 10 00 18 06 22 10 c5 07 45 c2 f1 be 5d 4a 9b 12 5a 97 62 b9 94 f8 28 00 3a \
    0a 06 63 72 65 61 74 65 12 2e 6f 72 67 2e 61 70 61 63 68 65 2e 68 61 64 6f 6f 70 2e 68 64 66 73 \
    2e 70 72 6f 74 6f 63 6f 6c 2e 43 6c 69 65 6e 74 50 72 6f 74 6f 63 6f 6c 18 01 61 0a 15 2f 63 61 \
    70 2f 6e 61 74 69 76 65 2f 66 32 30 30 6b 2e 62 69 6e 12 03 08 a4 03 1a 37 68 64 66 73 5f 6e 61 \
    74 69 76 65 5f 63 6c 69 65 6e 74 2d 36 34 31 39 64 61 61 30 2d 31 64 33 64 2d 34 31 32 64 2d 61 \
    31 37 38 2d 66 66 33 31 64 66 38 32 31 34 30 31 20 01 28 01 30 02 38 80 80 40 40 02";

/// hdfs-native.txt #2 c2s off=202061: packet seqno=4 offsetInBlock=200000 dataLen=0 lastPacketInBlock=true syncBlock=t
const NATIVE_LAST_PACKET: &str = "00 00 00 04 00 1b 09 40 0d 03 00 00 00 00 00 11 04 00 00 00 00 00 00 00 18 01 25 00 00 00 00 28 \
    01";

/// hdfs-native.txt #5 c2s off=121: READ_BLOCK blk_1073741826_1002 numBytes=200000 clientName="d7ee063f-736d-4fb8-9f
const NATIVE_READ_RANGE: &str = "00 1c 51 73 0a 68 0a 40 0a 34 0a 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d 31 32 37 2e 30 2e \
    30 2e 31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 10 82 80 80 80 04 18 ea 07 20 c0 9a 0c 12 08 \
    0a 00 12 00 1a 00 22 00 12 24 64 37 65 65 30 36 33 66 2d 37 33 36 64 2d 34 66 62 38 2d 39 66 39 \
    33 2d 36 39 39 62 61 31 64 62 37 65 34 32 10 f0 a2 04 18 e8 07 20 01";

/// hdfs-native.txt #5 s2c off=201733: READ_BLOCK response SUCCESS checksum=CHECKSUM_CRC32C/512 chunkOffset=69632
const NATIVE_READ_RANGE_RESPONSE: &str = "0f 08 00 22 0b 0a 05 08 02 10 80 04 10 80 a0 04";

/// dn-startup.txt #1 c2s off=818: call 5 DatanodeProtocol.sendHeartbeat
const DN_HEARTBEAT_CALL: &str = "00 00 01 ea 1a 08 02 10 00 18 0a 22 10 c9 c5 99 41 4e 4b 47 74 81 66 9e b3 41 13 66 8f 28 00 4a \
    0a 0d 73 65 6e 64 48 65 61 72 74 62 65 61 74 12 37 6f 72 67 2e 61 70 61 63 68 65 2e 68 61 64 6f \
    6f 70 2e 68 64 66 73 2e 73 65 72 76 65 72 2e 70 72 6f 74 6f 63 6f 6c 2e 44 61 74 61 6e 6f 64 65 \
    50 72 6f 74 6f 63 6f 6c 18 01 82 03 0a 87 01 0a 4a 0a 09 31 32 37 2e 30 2e 30 2e 31 12 09 31 32 \
    37 2e 30 2e 30 2e 31 1a 24 32 63 63 38 33 31 36 36 2d 33 63 64 66 2d 34 39 38 63 2d 39 38 33 35 \
    2d 31 31 31 33 66 37 32 35 31 39 36 31 20 b7 a5 02 28 af d6 02 30 af c6 02 38 00 12 22 08 c7 ff \
    ff ff 0f 10 c5 e5 c8 f0 03 1a 0d 74 65 73 74 43 6c 75 73 74 65 72 49 44 20 e3 ce d9 e4 9f 34 1a \
    0e 08 00 10 00 18 00 22 06 08 00 10 00 1a 00 22 05 33 2e 34 2e 31 12 76 0a 27 44 53 2d 30 31 64 \
    62 31 62 34 33 2d 38 31 34 35 2d 34 65 36 39 2d 61 38 35 65 2d 37 35 62 35 61 61 39 35 38 38 31 \
    61 18 80 a0 e7 f1 ef 07 20 80 c0 01 28 80 a0 9b 8e b9 02 30 80 c0 01 3a 2d 0a 27 44 53 2d 30 31 \
    64 62 31 62 34 33 2d 38 31 34 35 2d 34 65 36 39 2d 61 38 35 65 2d 37 35 62 35 61 61 39 35 38 38 \
    31 61 10 00 18 01 40 80 a0 a0 99 33 4a 00 12 76 0a 27 44 53 2d 65 30 36 37 31 34 38 37 2d 64 32 \
    61 36 2d 34 32 31 63 2d 38 33 32 61 2d 33 34 61 32 30 66 34 65 38 30 66 30 18 80 a0 e7 f1 ef 07 \
    20 80 c0 01 28 80 a0 9b 8e b9 02 30 80 c0 01 3a 2d 0a 27 44 53 2d 65 30 36 37 31 34 38 37 2d 64 \
    32 61 36 2d 34 32 31 63 2d 38 33 32 61 2d 33 34 61 32 30 66 34 65 38 30 66 30 10 00 18 01 40 80 \
    a0 a0 99 33 4a 00 18 00 20 00 28 00 48 01";

/// dn-startup.txt #1 s2c off=724: reply 5 sendHeartbeat SUCCESS
const DN_HEARTBEAT_REPLY: &str = "00 00 00 2e 1a 08 05 10 00 18 09 3a 10 c9 c5 99 41 4e 4b 47 74 81 66 9e b3 41 13 66 8f 40 00 12 \
    12 04 08 00 10 01 28 d0 e5 94 ba aa da ea c1 14 30 00";

/// dn-startup.txt #1 s2c off=166: reply 0 versionRequest SUCCESS
const DN_VERSION_REPLY: &str = "00 00 00 a2 1a 08 00 10 00 18 09 3a 10 c9 c5 99 41 4e 4b 47 74 81 66 9e b3 41 13 66 8f 40 00 85 \
    01 0a 82 01 0a 28 34 64 37 38 32 35 33 30 39 33 34 38 39 35 36 33 33 36 62 38 66 30 36 61 30 38 \
    33 32 32 62 37 38 34 32 32 38 34 39 62 31 10 00 1a 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d \
    31 32 37 2e 30 2e 30 2e 31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 22 22 08 bd ff ff ff 0f 10 \
    c5 e5 c8 f0 03 1a 0d 74 65 73 74 43 6c 75 73 74 65 72 49 44 20 e3 ce d9 e4 9f 34 2a 05 33 2e 34 \
    2e 31 30 01 38 00";

/// dn-restart.txt #1 c2s off=1806: call 6 DatanodeProtocol.blockReport
const DN_BLOCK_REPORT_CALL: &str = "00 00 01 a6 1a 08 02 10 00 18 0c 22 10 65 3d 91 c1 af 31 47 ed 9a 11 0f 32 83 9b 83 6e 28 00 48 \
    0a 0b 62 6c 6f 63 6b 52 65 70 6f 72 74 12 37 6f 72 67 2e 61 70 61 63 68 65 2e 68 61 64 6f 6f 70 \
    2e 68 64 66 73 2e 73 65 72 76 65 72 2e 70 72 6f 74 6f 63 6f 6c 2e 44 61 74 61 6e 6f 64 65 50 72 \
    6f 74 6f 63 6f 6c 18 01 c0 02 0a 87 01 0a 4a 0a 09 31 32 37 2e 30 2e 30 2e 31 12 09 31 32 37 2e \
    30 2e 30 2e 31 1a 24 32 63 63 38 33 31 36 36 2d 33 63 64 66 2d 34 39 38 63 2d 39 38 33 35 2d 31 \
    31 31 33 66 37 32 35 31 39 36 31 20 87 d5 02 28 9f 80 02 30 ff bb 02 38 00 12 22 08 c7 ff ff ff \
    0f 10 c5 e5 c8 f0 03 1a 0d 74 65 73 74 43 6c 75 73 74 65 72 49 44 20 e3 ce d9 e4 9f 34 1a 0e 08 \
    00 10 00 18 00 22 06 08 00 10 00 1a 00 22 05 33 2e 34 2e 31 12 25 42 50 2d 31 32 34 38 31 38 30 \
    33 33 31 2d 31 32 37 2e 30 2e 30 2e 31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 1a 33 0a 2d 0a \
    27 44 53 2d 30 31 64 62 31 62 34 33 2d 38 31 34 35 2d 34 65 36 39 2d 61 38 35 65 2d 37 35 62 35 \
    61 61 39 35 38 38 31 61 10 00 18 01 18 00 22 00 1a 3e 0a 2d 0a 27 44 53 2d 65 30 36 37 31 34 38 \
    37 2d 64 32 61 36 2d 34 32 31 63 2d 38 33 32 61 2d 33 34 61 32 30 66 34 65 38 30 66 30 10 00 18 \
    01 18 01 22 0b 88 80 80 80 08 c0 9a 0c ec 07 00 22 18 08 01 10 00 18 b3 ca bd ad cb 85 c8 92 14 \
    20 df fb cf 9a b0 df bb eb 64";

/// java-read-open-file.txt #2 c2s off=519: call 3 ClientProtocol.fsync
const OPEN_FSYNC_CALL: &str = "00 00 00 95 1a 08 02 10 00 18 06 22 10 da 16 ca 40 2f ae 4c d3 be e4 2b d0 3f 7e e7 6b 28 00 39 \
    0a 05 66 73 79 6e 63 12 2e 6f 72 67 2e 61 70 61 63 68 65 2e 68 61 64 6f 6f 70 2e 68 64 66 73 2e \
    70 72 6f 74 6f 63 6f 6c 2e 43 6c 69 65 6e 74 50 72 6f 74 6f 63 6f 6c 18 01 3f 0a 12 2f 63 61 70 \
    2f 6a 61 76 61 2f 6f 70 65 6e 2e 74 78 74 12 22 44 46 53 43 6c 69 65 6e 74 5f 4e 4f 4e 4d 41 50 \
    52 45 44 55 43 45 5f 38 31 34 39 33 32 38 34 36 5f 31 18 d0 0f 20 87 80 01";

/// java-read-open-file.txt #5 c2s off=166: call 5 ClientDatanodeProtocol.getReplicaVisibleLength
const OPEN_VISIBLE_LENGTH_CALL: &str = "00 00 00 a5 1a 08 02 10 00 18 0a 22 10 da 16 ca 40 2f ae 4c d3 be e4 2b d0 3f 7e e7 6b 28 00 53 \
    0a 17 67 65 74 52 65 70 6c 69 63 61 56 69 73 69 62 6c 65 4c 65 6e 67 74 68 12 36 6f 72 67 2e 61 \
    70 61 63 68 65 2e 68 61 64 6f 6f 70 2e 68 64 66 73 2e 70 72 6f 74 6f 63 6f 6c 2e 43 6c 69 65 6e \
    74 44 61 74 61 6e 6f 64 65 50 72 6f 74 6f 63 6f 6c 18 01 35 0a 33 0a 25 42 50 2d 31 32 34 38 31 \
    38 30 33 33 31 2d 31 32 37 2e 30 2e 30 2e 31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 10 83 80 \
    80 80 04 18 eb 07 20 e8 07";

/// java-read-open-file.txt #5 s2c off=178: reply 5 getReplicaVisibleLength SUCCESS
const OPEN_VISIBLE_LENGTH_REPLY: &str = "00 00 00 1f 1a 08 05 10 00 18 09 3a 10 da 16 ca 40 2f ae 4c d3 be e4 2b d0 3f 7e e7 6b 40 00 03 \
    08 e8 07";

// ---------------------------------------------------------------- helpers

fn hex(s: &str) -> Bytes {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).expect("bad hex in test vector"))
        .collect::<Vec<u8>>()
        .into()
}

/// Splits one length-delimited message off the front of `buf`.
fn delimited(buf: &mut Bytes) -> Bytes {
    let len = prost::decode_length_delimiter(&mut *buf).expect("length delimiter");
    assert!(
        len <= buf.len(),
        "delimited length {len} > {} left",
        buf.len()
    );
    buf.split_to(len)
}

/// Decodes `bytes` as `M`, re-encodes it and checks the bytes are identical.
fn roundtrip<M: Message + Default>(bytes: &Bytes) -> M {
    let msg = M::decode(bytes.clone()).expect("decode");
    assert_eq!(
        msg.encode_to_vec(),
        bytes.to_vec(),
        "re-encoding {} changed the bytes",
        std::any::type_name::<M>()
    );
    msg
}

/// One IPC request frame: 4-byte BE length, delimited RpcRequestHeaderProto,
/// delimited RequestHeaderProto, delimited request.
fn call_frame(frame: &str) -> (RpcRequestHeaderProto, RequestHeaderProto, Bytes) {
    let mut buf = hex(frame);
    let len = buf.get_u32() as usize;
    assert_eq!(len, buf.len(), "frame length");
    let rpc: RpcRequestHeaderProto = roundtrip(&delimited(&mut buf));
    let req: RequestHeaderProto = roundtrip(&delimited(&mut buf));
    let payload = delimited(&mut buf);
    assert!(buf.is_empty(), "bytes left after the request");
    assert_eq!(rpc.rpc_kind(), RpcKindProto::RpcProtocolBuffer);
    assert_eq!(req.client_protocol_version, protocols::PROTOCOL_VERSION);
    (rpc, req, payload)
}

/// One IPC response frame: 4-byte BE length, delimited RpcResponseHeaderProto,
/// delimited response.
fn reply_frame(frame: &str) -> (RpcResponseHeaderProto, Bytes) {
    let mut buf = hex(frame);
    let len = buf.get_u32() as usize;
    assert_eq!(len, buf.len(), "frame length");
    let rpc: RpcResponseHeaderProto = roundtrip(&delimited(&mut buf));
    let payload = delimited(&mut buf);
    assert!(buf.is_empty(), "bytes left after the response");
    assert_eq!(rpc.server_ipc_version_num, Some(9));
    (rpc, payload)
}

/// A DataTransfer op request: 2-byte BE version, op byte, delimited message.
fn op_request(bytes: &str, op: u8) -> Bytes {
    let mut buf = hex(bytes);
    assert_eq!(buf.get_u16(), protocols::DATA_TRANSFER_VERSION);
    assert_eq!(buf.get_u8(), op);
    let msg = delimited(&mut buf);
    assert!(buf.is_empty());
    msg
}

/// A packet's PLEN, HLEN and header (checksums/data not included).
fn packet_header(bytes: &str) -> (u32, PacketHeaderProto) {
    let mut buf = hex(bytes);
    let plen = buf.get_u32();
    let hlen = buf.get_u16() as usize;
    assert!(hlen <= protocols::PACKET_HEADER_MAX_LEN);
    let header = roundtrip(&buf.split_to(hlen));
    (plen, header)
}

/// The empty block token Hadoop sends when block tokens are off.
fn assert_empty_token(t: &TokenProto) {
    assert!(t.identifier.is_empty() && t.password.is_empty());
    assert!(t.kind.is_empty() && t.service.is_empty());
}

fn read_varint(buf: &mut Bytes) -> u64 {
    prost::encoding::decode_varint(buf).expect("varint")
}

// ---------------------------------------------------------------- ClientProtocol

#[test]
fn fsshell_get_file_info_call() {
    let (rpc, req, payload) = call_frame(FSSHELL_GET_FILE_INFO_CALL);
    assert_eq!(rpc.call_id, 0);
    assert_eq!(rpc.retry_count, Some(0));
    assert_eq!(rpc.client_id.len(), 16);
    // ToolRunner tools put callerContext "CLI" in every header.
    assert_eq!(
        rpc.caller_context.as_ref().map(|c| c.context.as_str()),
        Some("CLI")
    );
    assert_eq!(req.method_name, "getFileInfo");
    assert_eq!(
        req.declaring_class_protocol_name,
        protocols::CLIENT_PROTOCOL
    );
    let msg: GetFileInfoRequestProto = roundtrip(&payload);
    assert_eq!(msg.src, "/cap/java/f200k.bin");
}

#[test]
fn fsshell_create_call() {
    let (rpc, req, payload) = call_frame(FSSHELL_CREATE_CALL);
    assert_eq!(rpc.call_id, 3);
    assert_eq!(req.method_name, "create");
    let msg: CreateRequestProto = roundtrip(&payload);
    assert_eq!(msg.src, "/cap/java/f200k.bin._COPYING_");
    assert_eq!(msg.masked.perm, 0o644);
    assert_eq!(msg.client_name, "DFSClient_NONMAPREDUCE_1004478482_1");
    assert_eq!(
        msg.create_flag,
        CreateFlagProto::Create as u32 | CreateFlagProto::Overwrite as u32
    );
    assert!(msg.create_parent);
    assert_eq!(msg.replication, 2);
    assert_eq!(msg.block_size, 134_217_728);
    assert_eq!(
        msg.crypto_protocol_version().collect::<Vec<_>>(),
        vec![CryptoProtocolVersionProto::EncryptionZones]
    );
    assert_eq!(msg.unmasked.map(|p| p.perm), Some(0o666));
    assert_eq!(msg.ec_policy_name, None);
}

#[test]
fn hdfs_native_create_call() {
    let (rpc, req, payload) = call_frame(NATIVE_CREATE_CALL);
    // hdfs-native sends no callerContext.
    assert_eq!(rpc.caller_context, None);
    assert_eq!(req.method_name, "create");
    let msg: CreateRequestProto = roundtrip(&payload);
    assert_eq!(msg.src, "/cap/native/f200k.bin");
    assert_eq!(msg.masked.perm, 0o644);
    assert!(msg.client_name.starts_with("hdfs_native_client-"));
    // CREATE only, no OVERWRITE.
    assert_eq!(msg.create_flag, CreateFlagProto::Create as u32);
    assert_eq!(msg.replication, 2);
    assert_eq!(msg.block_size, 1_048_576);
    assert_eq!(msg.unmasked, None);
}

#[test]
fn get_file_info_reply_directory() {
    let (rpc, payload) = reply_frame(FSSHELL_GET_FILE_INFO_DIR_REPLY);
    assert_eq!(rpc.call_id, 1);
    assert_eq!(
        rpc.status(),
        cairn_proto::hadoop::common::rpc_response_header_proto::RpcStatusProto::Success
    );
    let msg: GetFileInfoResponseProto = roundtrip(&payload);
    let fs = msg.fs.expect("fs present");
    assert_eq!(fs.file_type(), hdfs_file_status_proto::FileType::IsDir);
    assert!(fs.path.is_empty());
    assert_eq!(fs.length, 0);
    assert_eq!(fs.permission.perm, 0o755);
    assert_eq!(fs.owner, "root");
    assert_eq!(fs.group, "supergroup");
    assert_eq!(fs.modification_time, 1_795_239_095_833);
    assert_eq!(fs.access_time, 0);
    assert_eq!(fs.block_replication, Some(0));
    assert_eq!(fs.blocksize, Some(0));
    assert_eq!(fs.file_id, Some(16387));
    assert_eq!(fs.children_num, Some(0));
    assert_eq!(fs.storage_policy, Some(0));
    assert_eq!(fs.flags, Some(0));
    assert_eq!(fs.ec_policy, None);
}

#[test]
fn get_file_info_absent_children_num_defaults_to_minus_one() {
    let fs = HdfsFileStatusProto::default();
    assert_eq!(fs.children_num(), -1);
    assert_eq!(fs.file_id(), 0);
}

#[test]
fn create_reply_file_status() {
    let (rpc, payload) = reply_frame(FSSHELL_CREATE_REPLY);
    assert_eq!(rpc.call_id, 3);
    let msg: CreateResponseProto = roundtrip(&payload);
    let fs = msg.fs.expect("create must return fs");
    assert_eq!(fs.file_type(), hdfs_file_status_proto::FileType::IsFile);
    assert!(fs.path.is_empty());
    assert_eq!(fs.permission.perm, 0o644);
    assert_eq!(fs.modification_time, fs.access_time);
    assert_eq!(fs.block_replication, Some(2));
    assert_eq!(fs.blocksize, Some(134_217_728));
    assert_eq!(fs.file_id, Some(16388));
    assert_eq!(fs.children_num, Some(0));
}

#[test]
fn get_listing_reply() {
    let (_, payload) = reply_frame(FSSHELL_GET_LISTING_REPLY);
    let msg: GetListingResponseProto = roundtrip(&payload);
    let list = msg.dir_list.expect("dir_list");
    assert_eq!(list.remaining_entries, 0);
    assert_eq!(list.partial_listing.len(), 1);
    // Listing entries carry the child's local name only.
    assert_eq!(&list.partial_listing[0].path[..], b"java");
}

#[test]
fn add_block_reply_located_block() {
    let (rpc, payload) = reply_frame(FSSHELL_ADD_BLOCK_REPLY);
    assert_eq!(rpc.call_id, 4);
    let msg: AddBlockResponseProto = roundtrip(&payload);
    let lb = msg.block;
    assert_eq!(lb.b.pool_id, "BP-1248180331-127.0.0.1-1795239077730");
    assert_eq!(lb.b.block_id, 1_073_741_825);
    assert_eq!(lb.b.generation_stamp, 1001);
    assert_eq!(lb.b.num_bytes, Some(0));
    assert_eq!(lb.offset, 0);
    assert!(!lb.corrupt);
    assert_empty_token(&lb.block_token);
    assert_eq!(lb.is_cached, vec![false, false]);
    assert_eq!(
        lb.storage_types().collect::<Vec<_>>(),
        vec![StorageTypeProto::Disk, StorageTypeProto::Disk]
    );
    assert_eq!(
        lb.storage_ids,
        vec![
            "DS-01db1b43-8145-4e69-a85e-75b5aa95881a",
            "DS-391a01e7-ac20-4e84-afcd-587515528404"
        ]
    );
    assert_eq!(lb.locs.len(), 2);
    let first = &lb.locs[0];
    assert_eq!(first.id.ip_addr, "127.0.0.1");
    assert_eq!(
        first.id.datanode_uuid,
        "2cc83166-3cdf-498c-9835-1113f7251961"
    );
    assert_eq!(first.id.xfer_port, 37559);
    assert_eq!(first.id.info_port, 43823);
    assert_eq!(first.id.ipc_port, 41775);
    assert_eq!(first.id.info_secure_port, Some(0));
    assert_eq!(first.capacity, Some(541_106_348_032));
    assert_eq!(first.location.as_deref(), Some("/default-rack"));
    assert_eq!(first.admin_state(), datanode_info_proto::AdminState::Normal);
    assert_eq!(first.upgrade_domain, None);
    assert_eq!(first.num_blocks, Some(0));
    assert_eq!(lb.locs[1].id.xfer_port, 40421);
    assert!(lb.block_indices.is_none() && lb.block_tokens.is_empty());
}

#[test]
fn server_defaults_reply_reencodes_exactly() {
    let (rpc, payload) = reply_frame(FSSHELL_SERVER_DEFAULTS_REPLY);
    assert_eq!(rpc.call_id, 5);
    // The bytes quoted in PROTOCOL.md §2.1.
    let quoted = hex(
        "0A 1D 08 80 80 80 40 10 80 04 18 80 80 04 20 02 28 80 20 30 00 38 00 40 02 4A 00 50 07 58 00",
    );
    assert_eq!(payload, quoted);
    let msg: GetServerDefaultsResponseProto = roundtrip(&payload);
    let d = &msg.server_defaults;
    assert_eq!(d.block_size, 134_217_728);
    assert_eq!(d.bytes_per_checksum, 512);
    assert_eq!(d.write_packet_size, 65536);
    assert_eq!(d.replication, 2);
    assert_eq!(d.file_buffer_size, 4096);
    assert_eq!(d.encrypt_data_transfer, Some(false));
    assert_eq!(d.trash_interval, Some(0));
    assert_eq!(d.checksum_type(), ChecksumTypeProto::ChecksumCrc32c);
    assert_eq!(d.key_provider_uri.as_deref(), Some(""));
    assert_eq!(d.policy_id, Some(7));
    assert_eq!(d.snapshot_trash_root_enabled, Some(false));

    // Built from scratch, the way a NameNode would, it gives the same bytes.
    let built = GetServerDefaultsResponseProto {
        server_defaults: FsServerDefaultsProto {
            block_size: 128 << 20,
            bytes_per_checksum: 512,
            write_packet_size: 64 << 10,
            replication: 2,
            file_buffer_size: 4096,
            encrypt_data_transfer: Some(false),
            trash_interval: Some(0),
            checksum_type: Some(ChecksumTypeProto::ChecksumCrc32c as i32),
            key_provider_uri: Some(String::new()),
            policy_id: Some(7),
            snapshot_trash_root_enabled: Some(false),
        },
    };
    assert_eq!(built.encode_to_vec(), quoted.to_vec());
    // An absent checksum type means CRC32 (the proto default), hence "send it".
    assert_eq!(
        FsServerDefaultsProto::default().checksum_type(),
        ChecksumTypeProto::ChecksumCrc32
    );
}

#[test]
fn fsync_call_zigzag_length() {
    let (_, req, payload) = call_frame(OPEN_FSYNC_CALL);
    assert_eq!(req.method_name, "fsync");
    let msg: FsyncRequestProto = roundtrip(&payload);
    assert_eq!(msg.src, "/cap/java/open.txt");
    assert_eq!(msg.last_block_length, Some(1000));
    assert_eq!(msg.file_id, Some(16391));
    assert_eq!(FsyncRequestProto::default().last_block_length(), -1);
}

#[test]
fn required_fields_are_always_encoded() {
    // proto2 `required` zero values must still be on the wire.
    assert_eq!(
        CompleteResponseProto { result: false }.encode_to_vec(),
        [0x08, 0x00]
    );
    assert_eq!(
        TokenProto::default().encode_to_vec(),
        hex("0A 00 12 00 1A 00 22 00").to_vec()
    );
    let listing = DirectoryListingProto::default();
    assert_eq!(listing.encode_to_vec(), [0x10, 0x00]);
    // A missing getFileInfo target is the empty message.
    assert!(GetFileInfoResponseProto::default()
        .encode_to_vec()
        .is_empty());
    let ha = HaServiceStateResponseProto {
        state: HaServiceStateProto::Active as i32,
    };
    assert_eq!(ha.encode_to_vec(), [0x08, 0x01]);
}

// ---------------------------------------------------------------- DataTransferProtocol

#[test]
fn fsshell_write_block_request() {
    let msg: OpWriteBlockProto =
        roundtrip(&op_request(FSSHELL_WRITE_BLOCK, protocols::op::WRITE_BLOCK));
    let base = msg.header.base_header.clone();
    assert_eq!(base.block.block_id, 1_073_741_825);
    assert_eq!(base.block.generation_stamp, 1001);
    // Java's header block carries the preferred block size, not the length.
    assert_eq!(base.block.num_bytes, Some(134_217_728));
    assert_empty_token(base.token.as_ref().expect("token"));
    assert_eq!(
        msg.header.client_name,
        "DFSClient_NONMAPREDUCE_1004478482_1"
    );
    assert_eq!(msg.targets.len(), 1);
    assert_eq!(msg.targets[0].id.xfer_port, 40421);
    assert_eq!(msg.source, None);
    assert_eq!(
        msg.stage(),
        op_write_block_proto::BlockConstructionStage::PipelineSetupCreate
    );
    assert_eq!(msg.pipeline_size, 2);
    assert_eq!((msg.min_bytes_rcvd, msg.max_bytes_rcvd), (0, 0));
    assert_eq!(msg.latest_generation_stamp, 0);
    assert_eq!(
        msg.requested_checksum.r#type(),
        ChecksumTypeProto::ChecksumCrc32c
    );
    assert_eq!(msg.requested_checksum.bytes_per_checksum, 512);
    assert_eq!(msg.caching_strategy, Some(CachingStrategyProto::default()));
    assert_eq!(msg.storage_type(), StorageTypeProto::Disk);
    assert_eq!(
        msg.target_storage_types().collect::<Vec<_>>(),
        vec![StorageTypeProto::Disk]
    );
    assert_eq!(msg.allow_lazy_persist, Some(false));
    assert_eq!(msg.pinning, Some(false));
    // Unpacked repeated bool on the wire (`78 00`).
    assert_eq!(msg.target_pinnings, vec![false]);
    assert_eq!(
        msg.storage_id.as_deref(),
        Some("DS-01db1b43-8145-4e69-a85e-75b5aa95881a")
    );
    assert_eq!(
        msg.target_storage_ids,
        vec!["DS-391a01e7-ac20-4e84-afcd-587515528404"]
    );
}

#[test]
fn packet_headers() {
    let (plen, h) = packet_header(FSSHELL_FIRST_PACKET_HEAD);
    assert_eq!(plen, 4 + 126 * 4 + 64512);
    assert_eq!(h.offset_in_block, 0);
    assert_eq!(h.seqno, 0);
    assert!(!h.last_packet_in_block);
    assert_eq!(h.data_len, 64512);
    assert_eq!(h.sync_block, None);
    assert_eq!(h.encoded_len(), 25);

    let (plen, h) = packet_header(FSSHELL_LAST_PACKET);
    assert_eq!(plen, 4);
    assert_eq!((h.offset_in_block, h.seqno, h.data_len), (200_000, 4, 0));
    assert!(h.last_packet_in_block);
    assert_eq!(h.sync_block, None);

    // hdfs-native sets syncBlock on its last packet: 27-byte header.
    let (plen, h) = packet_header(NATIVE_LAST_PACKET);
    assert_eq!(plen, 4);
    assert!(h.last_packet_in_block);
    assert_eq!(h.sync_block, Some(true));
    assert_eq!(h.encoded_len(), protocols::PACKET_HEADER_MAX_LEN);
}

#[test]
fn connect_ack_and_pipeline_acks() {
    let mut buf = hex(FSSHELL_CONNECT_ACK);
    let ack: BlockOpResponseProto = roundtrip(&delimited(&mut buf));
    assert_eq!(ack.status(), Status::Success);
    assert_eq!(ack.first_bad_link.as_deref(), Some(""));

    // First node of a 2-node pipeline: [own, downstream], flags packed.
    let mut buf = hex(FSSHELL_ACK_TWO_NODES);
    let ack: PipelineAckProto = roundtrip(&delimited(&mut buf));
    assert_eq!(ack.seqno, 0);
    assert_eq!(
        ack.reply().collect::<Vec<_>>(),
        vec![Status::Success, Status::Success]
    );
    assert_eq!(ack.downstream_ack_time_nanos, Some(4_708_717));
    assert_eq!(ack.flag, vec![0, 0]);

    // Last node: the exact bytes a DataNode of ours must produce.
    let built = PipelineAckProto {
        seqno: 0,
        reply: vec![Status::Success as i32],
        downstream_ack_time_nanos: Some(0),
        flag: vec![0],
    };
    assert_eq!(
        built.encode_length_delimited_to_vec(),
        hex(FSSHELL_ACK_LAST_NODE).to_vec()
    );
    let built = BlockOpResponseProto {
        status: Status::Success as i32,
        first_bad_link: Some(String::new()),
        ..Default::default()
    };
    assert_eq!(
        built.encode_length_delimited_to_vec(),
        hex(FSSHELL_CONNECT_ACK).to_vec()
    );
}

#[test]
fn read_block_request_response_status() {
    let msg: OpReadBlockProto =
        roundtrip(&op_request(FSSHELL_READ_BLOCK, protocols::op::READ_BLOCK));
    assert_eq!(msg.header.base_header.block.num_bytes, Some(200_000));
    assert_eq!((msg.offset, msg.len), (0, 200_000));
    assert_eq!(msg.send_checksums, Some(true));
    assert_eq!(msg.caching_strategy, Some(CachingStrategyProto::default()));

    let mut buf = hex(FSSHELL_READ_RESPONSE);
    let resp: BlockOpResponseProto = roundtrip(&delimited(&mut buf));
    assert_eq!(resp.status(), Status::Success);
    let info = resp.read_op_checksum_info.expect("readOpChecksumInfo");
    assert_eq!(info.checksum.r#type(), ChecksumTypeProto::ChecksumCrc32c);
    assert_eq!(info.checksum.bytes_per_checksum, 512);
    assert_eq!(info.chunk_offset, 0);

    let mut buf = hex(FSSHELL_READ_STATUS);
    let st: ClientReadStatusProto = roundtrip(&delimited(&mut buf));
    assert_eq!(st.status(), Status::ChecksumOk);
}

#[test]
fn hdfs_native_range_read() {
    let msg: OpReadBlockProto =
        roundtrip(&op_request(NATIVE_READ_RANGE, protocols::op::READ_BLOCK));
    assert_eq!((msg.offset, msg.len), (70_000, 1000));
    assert_eq!(msg.caching_strategy, None);
    assert!(!msg.header.client_name.is_empty());
    let mut buf = hex(NATIVE_READ_RANGE_RESPONSE);
    let resp: BlockOpResponseProto = roundtrip(&delimited(&mut buf));
    let info = resp.read_op_checksum_info.expect("readOpChecksumInfo");
    // Chunk-aligned start below the requested offset.
    assert_eq!(info.chunk_offset, 69_632);
}

// ---------------------------------------------------------------- DatanodeProtocol

#[test]
fn datanode_heartbeat_call() {
    let (rpc, req, payload) = call_frame(DN_HEARTBEAT_CALL);
    assert_eq!(rpc.call_id, 5);
    assert_eq!(req.method_name, "sendHeartbeat");
    assert_eq!(
        req.declaring_class_protocol_name,
        protocols::DATANODE_PROTOCOL
    );
    let msg: HeartbeatRequestProto = roundtrip(&payload);
    let reg = &msg.registration;
    assert_eq!(
        reg.datanode_id.datanode_uuid,
        "2cc83166-3cdf-498c-9835-1113f7251961"
    );
    // Layout versions are negative, carried as uint32.
    assert_eq!(reg.storage_info.layout_version as i32, -57);
    assert_eq!(reg.storage_info.namespace_id, 1_041_380_037);
    assert_eq!(reg.storage_info.cluster_id, "testClusterID");
    assert!(!reg.keys.is_block_token_enabled);
    assert_eq!(reg.keys.current_key.key_bytes.as_deref(), Some(&b""[..]));
    assert_eq!(reg.software_version, "3.4.1");
    assert_eq!(msg.reports.len(), 2);
    let r = &msg.reports[0];
    assert_eq!(r.storage_uuid, "DS-01db1b43-8145-4e69-a85e-75b5aa95881a");
    assert_eq!(r.failed, None);
    assert_eq!(r.capacity, Some(270_553_174_016));
    let storage = r.storage.as_ref().expect("storage");
    assert_eq!(storage.storage_type(), StorageTypeProto::Disk);
    assert_eq!(r.mount.as_deref(), Some(""));
    assert_eq!(
        (msg.xmits_in_progress, msg.xceiver_count, msg.failed_volumes),
        (Some(0), Some(0), Some(0))
    );
    assert_eq!(msg.request_full_block_report_lease, Some(true));
}

#[test]
fn datanode_heartbeat_replies() {
    let (_, payload) = reply_frame(DN_HEARTBEAT_REPLY);
    let msg: HeartbeatResponseProto = roundtrip(&payload);
    assert!(msg.cmds.is_empty());
    assert_eq!(
        msg.ha_status.state(),
        nnha_status_heartbeat_proto::State::Active
    );
    assert_eq!(msg.ha_status.txid, 1);
    assert_eq!(
        msg.full_block_report_lease_id,
        Some(1_478_212_924_433_838_800)
    );
    assert_eq!(msg.is_slownode, Some(false));

    let (_, payload) = reply_frame(FSSHELL_INVALIDATE_HEARTBEAT_REPLY);
    let msg: HeartbeatResponseProto = roundtrip(&payload);
    assert_eq!(msg.cmds.len(), 1);
    let cmd = &msg.cmds[0];
    assert_eq!(cmd.cmd_type(), datanode_command_proto::Type::BlockCommand);
    let blk = cmd.blk_cmd.as_ref().expect("blkCmd");
    assert_eq!(blk.action(), block_command_proto::Action::Invalidate);
    assert_eq!(blk.blocks.len(), 1);
    assert_eq!(blk.blocks[0].block_id, 1_073_741_825);
    assert_eq!(blk.blocks[0].gen_stamp, 1001);
    // Long.MAX_VALUE in numBytes of blocks to delete.
    assert_eq!(blk.blocks[0].num_bytes, Some(i64::MAX as u64));
}

#[test]
fn namenode_version_reply() {
    let (_, payload) = reply_frame(DN_VERSION_REPLY);
    let msg: VersionResponseProto = roundtrip(&payload);
    let info = &msg.info;
    assert_eq!(
        info.build_version,
        "4d7825309348956336b8f06a08322b78422849b1"
    );
    assert_eq!(info.unused, 0);
    assert_eq!(info.block_pool_id, "BP-1248180331-127.0.0.1-1795239077730");
    assert_eq!(info.storage_info.layout_version as i32, -67);
    assert_eq!(info.software_version, "3.4.1");
    assert_eq!(info.capabilities, Some(1));
    assert_eq!(info.state(), nnha_status_heartbeat_proto::State::Active);
}

#[test]
fn datanode_block_report_buffers() {
    let (_, req, payload) = call_frame(DN_BLOCK_REPORT_CALL);
    assert_eq!(req.method_name, "blockReport");
    let msg: BlockReportRequestProto = roundtrip(&payload);
    assert_eq!(msg.block_pool_id, "BP-1248180331-127.0.0.1-1795239077730");
    assert_eq!(msg.reports.len(), 2);
    // An empty storage: count 0 and one empty buffer.
    assert_eq!(msg.reports[0].number_of_blocks, Some(0));
    assert_eq!(msg.reports[0].blocks_buffers, vec![Bytes::new()]);
    assert!(msg.reports[0].blocks.is_empty());
    // One finalized replica blk_1073741828_1004 of 200000 bytes.
    let r = &msg.reports[1];
    assert_eq!(r.number_of_blocks, Some(1));
    let mut b = r.blocks_buffers[0].clone();
    let id = read_varint(&mut b);
    let id = ((id >> 1) as i64) ^ -((id & 1) as i64); // zigzag
    assert_eq!(id, 1_073_741_828);
    assert_eq!(read_varint(&mut b), 200_000);
    assert_eq!(read_varint(&mut b), 1004);
    assert_eq!(read_varint(&mut b), ReplicaStateProto::Finalized as u64);
    assert!(b.is_empty());
    let ctx = msg.context.expect("context");
    assert_eq!((ctx.total_rpcs, ctx.cur_rpc), (1, 0));
    assert_eq!(ctx.lease_id, Some(7_266_257_810_668_912_095));
}

#[test]
fn datanode_block_received() {
    let (_, req, payload) = call_frame(FSSHELL_BLOCK_RECEIVED_CALL);
    assert_eq!(req.method_name, "blockReceivedAndDeleted");
    let msg: BlockReceivedAndDeletedRequestProto = roundtrip(&payload);
    assert_eq!(msg.blocks.len(), 1);
    let s = &msg.blocks[0];
    assert_eq!(s.blocks.len(), 1);
    let b = &s.blocks[0];
    assert_eq!(
        b.status(),
        received_deleted_block_info_proto::BlockStatus::Received
    );
    assert_eq!(b.delete_hint, None);
    assert_eq!((b.block.block_id, b.block.gen_stamp), (1_073_741_825, 1001));
    assert_eq!(b.block.num_bytes, Some(200_000));
    assert_eq!(
        s.storage.as_ref().map(|st| st.storage_uuid.as_str()),
        Some(s.storage_uuid.as_str())
    );
}

// ---------------------------------------------------------------- ClientDatanodeProtocol

#[test]
fn replica_visible_length() {
    let (_, req, payload) = call_frame(OPEN_VISIBLE_LENGTH_CALL);
    assert_eq!(req.method_name, "getReplicaVisibleLength");
    assert_eq!(
        req.declaring_class_protocol_name,
        protocols::CLIENT_DATANODE_PROTOCOL
    );
    let msg: GetReplicaVisibleLengthRequestProto = roundtrip(&payload);
    assert_eq!(msg.block.block_id, 1_073_741_827);
    assert_eq!(msg.block.generation_stamp, 1003);
    assert_eq!(msg.block.num_bytes, Some(1000));

    let (_, payload) = reply_frame(OPEN_VISIBLE_LENGTH_REPLY);
    assert_eq!(payload, hex("08 E8 07"));
    let msg: GetReplicaVisibleLengthResponseProto = roundtrip(&payload);
    assert_eq!(msg.length, 1000);
}

//! The captured byte vectors of `captures.rs`, as hex: each comment names
//! the transcript in `shared/hdfs-wire/captures/`, the connection, the
//! direction and the stream offset it was cut from.

/// java-fsshell.txt #4 c2s off=102: call 0 ClientProtocol.getFileInfo
pub const FSSHELL_GET_FILE_INFO_CALL: &str = "00 00 00 78 21 08 02 10 00 18 00 22 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 28 00 3a \
    05 0a 03 43 4c 49 3f 0a 0b 67 65 74 46 69 6c 65 49 6e 66 6f 12 2e 6f 72 67 2e 61 70 61 63 68 65 \
    2e 68 61 64 6f 6f 70 2e 68 64 66 73 2e 70 72 6f 74 6f 63 6f 6c 2e 43 6c 69 65 6e 74 50 72 6f 74 \
    6f 63 6f 6c 18 01 15 0a 13 2f 63 61 70 2f 6a 61 76 61 2f 66 32 30 30 6b 2e 62 69 6e";

/// java-fsshell.txt #4 c2s off=474: call 3 ClientProtocol.create
pub const FSSHELL_CREATE_CALL: &str = "00 00 00 b9 21 08 02 10 00 18 06 22 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 28 00 3a \
    05 0a 03 43 4c 49 3a 0a 06 63 72 65 61 74 65 12 2e 6f 72 67 2e 61 70 61 63 68 65 2e 68 61 64 6f \
    6f 70 2e 68 64 66 73 2e 70 72 6f 74 6f 63 6f 6c 2e 43 6c 69 65 6e 74 50 72 6f 74 6f 63 6f 6c 18 \
    01 5b 0a 1d 2f 63 61 70 2f 6a 61 76 61 2f 66 32 30 30 6b 2e 62 69 6e 2e 5f 43 4f 50 59 49 4e 47 \
    5f 12 03 08 a4 03 1a 23 44 46 53 43 6c 69 65 6e 74 5f 4e 4f 4e 4d 41 50 52 45 44 55 43 45 5f 31 \
    30 30 34 34 37 38 34 38 32 5f 31 20 03 28 01 30 02 38 80 80 80 40 40 02 4a 03 08 b6 03";

/// java-fsshell.txt #4 s2c off=32: reply 1 getFileInfo SUCCESS
pub const FSSHELL_GET_FILE_INFO_DIR_REPLY: &str = "00 00 00 54 1a 08 01 10 00 18 09 3a 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 40 00 38 \
    0a 36 08 01 12 00 18 00 22 03 08 ed 03 2a 04 72 6f 6f 74 32 0a 73 75 70 65 72 67 72 6f 75 70 38 \
    99 dc da e4 9f 34 40 00 50 00 58 00 68 83 80 01 70 00 80 01 00 90 01 00";

/// java-fsshell.txt #4 s2c off=152: reply 3 create SUCCESS
pub const FSSHELL_CREATE_REPLY: &str = "00 00 00 5c 1a 08 03 10 00 18 09 3a 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 40 00 40 \
    0a 3e 08 02 12 00 18 00 22 03 08 a4 03 2a 04 72 6f 6f 74 32 0a 73 75 70 65 72 67 72 6f 75 70 38 \
    b1 ea da e4 9f 34 40 b1 ea da e4 9f 34 50 02 58 80 80 80 40 68 84 80 01 70 00 80 01 00 90 01 00";

/// java-fsshell.txt #4 s2c off=248: reply 4 addBlock SUCCESS
pub const FSSHELL_ADD_BLOCK_REPLY: &str = "00 00 01 f8 1a 08 04 10 00 18 09 3a 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 40 00 db \
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
pub const FSSHELL_SERVER_DEFAULTS_REPLY: &str = "00 00 00 3b 1a 08 05 10 00 18 09 3a 10 e8 25 c0 0f e2 c6 42 87 9f d0 63 44 13 65 6d a3 40 00 1f \
    0a 1d 08 80 80 80 40 10 80 04 18 80 80 04 20 02 28 80 20 30 00 38 00 40 02 4a 00 50 07 58 00";

/// java-fsshell.txt #3 s2c off=88: reply 1 getListing SUCCESS
pub const FSSHELL_GET_LISTING_REPLY: &str = "00 00 00 5c 1a 08 01 10 00 18 09 3a 10 bf c6 dc c7 0d 84 4d 50 a3 e0 a2 84 c4 96 e8 30 40 00 40 \
    0a 3e 0a 3a 08 01 12 04 6a 61 76 61 18 00 22 03 08 ed 03 2a 04 72 6f 6f 74 32 0a 73 75 70 65 72 \
    67 72 6f 75 70 38 99 dc da e4 9f 34 40 00 50 00 58 00 68 83 80 01 70 00 80 01 00 90 01 00 10 00";

/// java-fsshell.txt #5 c2s off=0: WRITE_BLOCK blk_1073741825_1001 numBytes=134217728 clientName="DFSClient_NONMAPR
pub const FSSHELL_WRITE_BLOCK: &str = "00 1c 50 f9 02 0a 68 0a 41 0a 35 0a 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d 31 32 37 2e 30 \
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
pub const FSSHELL_FIRST_PACKET_HEAD: &str =
    "00 00 fd fc 00 19 09 00 00 00 00 00 00 00 00 11 00 00 00 00 00 00 00 00 18 00 25 00 fc 00 00";

/// java-fsshell.txt #5 c2s off=202070: packet seqno=4 offsetInBlock=200000 dataLen=0 lastPacketInBlock=true
pub const FSSHELL_LAST_PACKET: &str =
    "00 00 00 04 00 19 09 40 0d 03 00 00 00 00 00 11 04 00 00 00 00 00 00 00 18 01 25 00 00 00 00";

/// java-fsshell.txt #5 s2c off=0: connect-ack SUCCESS firstBadLink=""
pub const FSSHELL_CONNECT_ACK: &str = "04 08 00 12 00";

/// java-fsshell.txt #5 s2c off=5: ack seqno=0 reply=[SUCCESS, SUCCESS] flag=[0, 0] downstreamAckTimeNanos=4708717
pub const FSSHELL_ACK_TWO_NODES: &str = "0f 08 00 10 00 10 00 18 ed b2 9f 02 22 02 00 00";

/// java-fsshell.txt #6 s2c off=5: ack seqno=0 reply=[SUCCESS] flag=[0] downstreamAckTimeNanos=0
pub const FSSHELL_ACK_LAST_NODE: &str = "09 08 00 10 00 18 00 22 01 00";

/// java-fsshell.txt #8 c2s off=0: READ_BLOCK blk_1073741825_1001 numBytes=200000 clientName="DFSClient_NONMAPREDUC
pub const FSSHELL_READ_BLOCK: &str = "00 1c 51 72 0a 66 0a 40 0a 34 0a 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d 31 32 37 2e 30 2e \
    30 2e 31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 10 81 80 80 80 04 18 e9 07 20 c0 9a 0c 12 08 \
    0a 00 12 00 1a 00 22 00 12 22 44 46 53 43 6c 69 65 6e 74 5f 4e 4f 4e 4d 41 50 52 45 44 55 43 45 \
    5f 2d 39 35 36 38 30 30 33 36 5f 31 10 00 18 c0 9a 0c 20 01 2a 00";

/// java-fsshell.txt #8 s2c off=0: READ_BLOCK response SUCCESS checksum=CHECKSUM_CRC32C/512 chunkOffset=0
pub const FSSHELL_READ_RESPONSE: &str = "0d 08 00 22 09 0a 05 08 02 10 80 04 10 00";

/// java-fsshell.txt #8 c2s off=118: client read status CHECKSUM_OK
pub const FSSHELL_READ_STATUS: &str = "02 08 06";

/// java-fsshell.txt #1 s2c off=316: reply 26 sendHeartbeat SUCCESS
pub const FSSHELL_INVALIDATE_HEARTBEAT_REPLY: &str = "00 00 00 6a 1a 08 1a 10 00 18 09 3a 10 c9 c5 99 41 4e 4b 47 74 81 66 9e b3 41 13 66 8f 40 00 4e \
    0a 42 08 01 1a 3e 08 02 12 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d 31 32 37 2e 30 2e 30 2e \
    31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 1a 13 08 81 80 80 80 04 10 e9 07 18 ff ff ff ff ff \
    ff ff ff 7f 12 04 08 00 10 0a 28 00 30 00";

/// java-fsshell.txt #1 c2s off=1976: call 23 DatanodeProtocol.blockReceivedAndDeleted
pub const FSSHELL_BLOCK_RECEIVED_CALL: &str = "00 00 01 90 1a 08 02 10 00 18 2e 22 10 c9 c5 99 41 4e 4b 47 74 81 66 9e b3 41 13 66 8f 28 00 54 \
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
pub const NATIVE_CREATE_CALL: &str = "00 00 00 b8 1a 08 02 10 00 18 06 22 10 c5 07 45 c2 f1 be 5d 4a 9b 12 5a 97 62 b9 94 f8 28 00 3a \
    0a 06 63 72 65 61 74 65 12 2e 6f 72 67 2e 61 70 61 63 68 65 2e 68 61 64 6f 6f 70 2e 68 64 66 73 \
    2e 70 72 6f 74 6f 63 6f 6c 2e 43 6c 69 65 6e 74 50 72 6f 74 6f 63 6f 6c 18 01 61 0a 15 2f 63 61 \
    70 2f 6e 61 74 69 76 65 2f 66 32 30 30 6b 2e 62 69 6e 12 03 08 a4 03 1a 37 68 64 66 73 5f 6e 61 \
    74 69 76 65 5f 63 6c 69 65 6e 74 2d 36 34 31 39 64 61 61 30 2d 31 64 33 64 2d 34 31 32 64 2d 61 \
    31 37 38 2d 66 66 33 31 64 66 38 32 31 34 30 31 20 01 28 01 30 02 38 80 80 40 40 02";

/// hdfs-native.txt #2 c2s off=202061: packet seqno=4 offsetInBlock=200000 dataLen=0 lastPacketInBlock=true syncBlock=t
pub const NATIVE_LAST_PACKET: &str = "00 00 00 04 00 1b 09 40 0d 03 00 00 00 00 00 11 04 00 00 00 00 00 00 00 18 01 25 00 00 00 00 28 \
    01";

/// hdfs-native.txt #5 c2s off=121: READ_BLOCK blk_1073741826_1002 numBytes=200000 clientName="d7ee063f-736d-4fb8-9f
pub const NATIVE_READ_RANGE: &str = "00 1c 51 73 0a 68 0a 40 0a 34 0a 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d 31 32 37 2e 30 2e \
    30 2e 31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 10 82 80 80 80 04 18 ea 07 20 c0 9a 0c 12 08 \
    0a 00 12 00 1a 00 22 00 12 24 64 37 65 65 30 36 33 66 2d 37 33 36 64 2d 34 66 62 38 2d 39 66 39 \
    33 2d 36 39 39 62 61 31 64 62 37 65 34 32 10 f0 a2 04 18 e8 07 20 01";

/// hdfs-native.txt #5 s2c off=201733: READ_BLOCK response SUCCESS checksum=CHECKSUM_CRC32C/512 chunkOffset=69632
pub const NATIVE_READ_RANGE_RESPONSE: &str = "0f 08 00 22 0b 0a 05 08 02 10 80 04 10 80 a0 04";

/// dn-startup.txt #1 c2s off=818: call 5 DatanodeProtocol.sendHeartbeat
pub const DN_HEARTBEAT_CALL: &str = "00 00 01 ea 1a 08 02 10 00 18 0a 22 10 c9 c5 99 41 4e 4b 47 74 81 66 9e b3 41 13 66 8f 28 00 4a \
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
pub const DN_HEARTBEAT_REPLY: &str = "00 00 00 2e 1a 08 05 10 00 18 09 3a 10 c9 c5 99 41 4e 4b 47 74 81 66 9e b3 41 13 66 8f 40 00 12 \
    12 04 08 00 10 01 28 d0 e5 94 ba aa da ea c1 14 30 00";

/// dn-startup.txt #1 s2c off=166: reply 0 versionRequest SUCCESS
pub const DN_VERSION_REPLY: &str = "00 00 00 a2 1a 08 00 10 00 18 09 3a 10 c9 c5 99 41 4e 4b 47 74 81 66 9e b3 41 13 66 8f 40 00 85 \
    01 0a 82 01 0a 28 34 64 37 38 32 35 33 30 39 33 34 38 39 35 36 33 33 36 62 38 66 30 36 61 30 38 \
    33 32 32 62 37 38 34 32 32 38 34 39 62 31 10 00 1a 25 42 50 2d 31 32 34 38 31 38 30 33 33 31 2d \
    31 32 37 2e 30 2e 30 2e 31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 22 22 08 bd ff ff ff 0f 10 \
    c5 e5 c8 f0 03 1a 0d 74 65 73 74 43 6c 75 73 74 65 72 49 44 20 e3 ce d9 e4 9f 34 2a 05 33 2e 34 \
    2e 31 30 01 38 00";

/// dn-restart.txt #1 c2s off=1806: call 6 DatanodeProtocol.blockReport
pub const DN_BLOCK_REPORT_CALL: &str = "00 00 01 a6 1a 08 02 10 00 18 0c 22 10 65 3d 91 c1 af 31 47 ed 9a 11 0f 32 83 9b 83 6e 28 00 48 \
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
pub const OPEN_FSYNC_CALL: &str = "00 00 00 95 1a 08 02 10 00 18 06 22 10 da 16 ca 40 2f ae 4c d3 be e4 2b d0 3f 7e e7 6b 28 00 39 \
    0a 05 66 73 79 6e 63 12 2e 6f 72 67 2e 61 70 61 63 68 65 2e 68 61 64 6f 6f 70 2e 68 64 66 73 2e \
    70 72 6f 74 6f 63 6f 6c 2e 43 6c 69 65 6e 74 50 72 6f 74 6f 63 6f 6c 18 01 3f 0a 12 2f 63 61 70 \
    2f 6a 61 76 61 2f 6f 70 65 6e 2e 74 78 74 12 22 44 46 53 43 6c 69 65 6e 74 5f 4e 4f 4e 4d 41 50 \
    52 45 44 55 43 45 5f 38 31 34 39 33 32 38 34 36 5f 31 18 d0 0f 20 87 80 01";

/// java-read-open-file.txt #5 c2s off=166: call 5 ClientDatanodeProtocol.getReplicaVisibleLength
pub const OPEN_VISIBLE_LENGTH_CALL: &str = "00 00 00 a5 1a 08 02 10 00 18 0a 22 10 da 16 ca 40 2f ae 4c d3 be e4 2b d0 3f 7e e7 6b 28 00 53 \
    0a 17 67 65 74 52 65 70 6c 69 63 61 56 69 73 69 62 6c 65 4c 65 6e 67 74 68 12 36 6f 72 67 2e 61 \
    70 61 63 68 65 2e 68 61 64 6f 6f 70 2e 68 64 66 73 2e 70 72 6f 74 6f 63 6f 6c 2e 43 6c 69 65 6e \
    74 44 61 74 61 6e 6f 64 65 50 72 6f 74 6f 63 6f 6c 18 01 35 0a 33 0a 25 42 50 2d 31 32 34 38 31 \
    38 30 33 33 31 2d 31 32 37 2e 30 2e 30 2e 31 2d 31 37 39 35 32 33 39 30 37 37 37 33 30 10 83 80 \
    80 80 04 18 eb 07 20 e8 07";

/// java-read-open-file.txt #5 s2c off=178: reply 5 getReplicaVisibleLength SUCCESS
pub const OPEN_VISIBLE_LENGTH_REPLY: &str = "00 00 00 1f 1a 08 05 10 00 18 09 3a 10 da 16 ca 40 2f ae 4c d3 be e4 2b d0 3f 7e e7 6b 40 00 03 \
    08 e8 07";

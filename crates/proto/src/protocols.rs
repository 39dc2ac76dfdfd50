//! Protocol names and wire constants (PROTOCOL.md §1.2, §1.4, §1.7, §3.2).

// ---- protocol names (RequestHeaderProto.declaring_class_protocol_name) ----

/// NameNode client calls (ClientNamenodeProtocol messages).
pub const CLIENT_PROTOCOL: &str = "org.apache.hadoop.hdfs.protocol.ClientProtocol";
/// DataNode -> NameNode calls.
pub const DATANODE_PROTOCOL: &str = "org.apache.hadoop.hdfs.server.protocol.DatanodeProtocol";
/// NameNode-to-NameNode / tools; NNThroughputBenchmark calls `versionRequest`.
pub const NAMENODE_PROTOCOL: &str = "org.apache.hadoop.hdfs.server.protocol.NamenodeProtocol";
/// `refreshUserToGroupsMappings` / `refreshSuperUserGroupsConfiguration`.
pub const REFRESH_USER_MAPPINGS_PROTOCOL: &str =
    "org.apache.hadoop.security.RefreshUserMappingsProtocol";
/// `hdfs groups`: the groups the NameNode sees for a user.
pub const GET_USER_MAPPINGS_PROTOCOL: &str = "org.apache.hadoop.tools.GetUserMappingsProtocol";
/// `hdfs dfsadmin -refreshCallQueue`.
pub const REFRESH_CALL_QUEUE_PROTOCOL: &str = "org.apache.hadoop.ipc.RefreshCallQueueProtocol";
/// `hdfs dfsadmin -refreshServiceAcl`.
pub const REFRESH_AUTHORIZATION_POLICY_PROTOCOL: &str =
    "org.apache.hadoop.security.authorize.RefreshAuthorizationPolicyProtocol";
/// `hdfs dfsadmin -reconfig namenode` (the NameNode's RPC port).
pub const RECONFIGURATION_PROTOCOL: &str =
    "org.apache.hadoop.hdfs.protocol.ReconfigurationProtocol";
/// Served on the DataNode IPC port (`getReplicaVisibleLength`).
pub const CLIENT_DATANODE_PROTOCOL: &str = "org.apache.hadoop.hdfs.protocol.ClientDatanodeProtocol";
/// DataNode -> DataNode calls on the IPC port (block recovery:
/// `initReplicaRecovery`, `updateReplicaUnderRecovery`).
pub const INTER_DATANODE_PROTOCOL: &str =
    "org.apache.hadoop.hdfs.server.protocol.InterDatanodeProtocol";
/// HA tooling.
pub const HA_SERVICE_PROTOCOL: &str = "org.apache.hadoop.ha.HAServiceProtocol";

/// `client_protocol_version` of every HDFS protocol.
pub const PROTOCOL_VERSION: u64 = 1;

// ---- Hadoop IPC ----

/// First four bytes of every IPC connection.
pub const IPC_MAGIC: &[u8; 4] = b"hrpc";
/// The only IPC version current clients speak.
pub const IPC_VERSION: u8 = 9;
/// Preamble auth byte: no SASL (SIMPLE).
pub const AUTH_PROTOCOL_NONE: u8 = 0x00;
/// Preamble auth byte: SASL (-33 as a signed byte).
pub const AUTH_PROTOCOL_SASL: u8 = 0xDF;

/// Call id of server FATAL replies about the connection itself.
pub const CALL_ID_AUTHORIZATION_FAILED: i32 = -1;
/// Never sent.
pub const CALL_ID_INVALID: i32 = -2;
/// Connection context frame (never answered).
pub const CALL_ID_CONNECTION_CONTEXT: i32 = -3;
/// Ping (never answered).
pub const CALL_ID_PING: i32 = -4;
/// SASL exchange (answers use it too).
pub const CALL_ID_SASL: i32 = -33;

// ---- DataTransferProtocol ----

/// 2-byte BE version that starts every DataTransfer request.
pub const DATA_TRANSFER_VERSION: u16 = 28;

/// DataTransfer op codes (the byte after the version).
pub mod op {
    /// OpWriteBlockProto.
    pub const WRITE_BLOCK: u8 = 80;
    /// OpReadBlockProto.
    pub const READ_BLOCK: u8 = 81;
    /// Obsolete.
    pub const READ_METADATA: u8 = 82;
    /// OpReplaceBlockProto (balancer/mover).
    pub const REPLACE_BLOCK: u8 = 83;
    /// OpCopyBlockProto (balancer/mover).
    pub const COPY_BLOCK: u8 = 84;
    /// OpBlockChecksumProto.
    pub const BLOCK_CHECKSUM: u8 = 85;
    /// OpTransferBlockProto.
    pub const TRANSFER_BLOCK: u8 = 86;
    /// Short-circuit reads (Unix socket only).
    pub const REQUEST_SHORT_CIRCUIT_FDS: u8 = 87;
    /// Short-circuit reads (Unix socket only).
    pub const RELEASE_SHORT_CIRCUIT_FDS: u8 = 88;
    /// Short-circuit reads (Unix socket only).
    pub const REQUEST_SHORT_CIRCUIT_SHM: u8 = 89;
    /// OpBlockGroupChecksumProto (erasure coding).
    pub const BLOCK_GROUP_CHECKSUM: u8 = 90;
    /// Custom op.
    pub const CUSTOM: u8 = 127;
}

/// Largest encoded PacketHeaderProto (25 bytes + 2 for `sync_block`).
pub const PACKET_HEADER_MAX_LEN: usize = 27;
/// Bytes before the packet header: 4-byte PLEN + 2-byte HLEN.
pub const PACKET_LENGTHS_LEN: usize = 6;

/// The methods of `ClientNamenodeProtocol.proto`'s service, as HDFS 3.4.1's
/// NameNode lists them (at zero until called) in its detailed RPC metrics.
pub const CLIENT_PROTOCOL_METHODS: &[&str] = &[
    "abandonBlock",
    "addBlock",
    "addCacheDirective",
    "addCachePool",
    "addErasureCodingPolicies",
    "allowSnapshot",
    "append",
    "cancelDelegationToken",
    "checkAccess",
    "complete",
    "concat",
    "create",
    "createEncryptionZone",
    "createSnapshot",
    "createSymlink",
    "delete",
    "deleteSnapshot",
    "disableErasureCodingPolicy",
    "disallowSnapshot",
    "enableErasureCodingPolicy",
    "finalizeUpgrade",
    "fsync",
    "getAclStatus",
    "getAdditionalDatanode",
    "getBatchedListing",
    "getBlockLocations",
    "getContentSummary",
    "getCurrentEditLogTxid",
    "getDataEncryptionKey",
    "getDatanodeReport",
    "getDatanodeStorageReport",
    "getDelegationToken",
    "getECTopologyResultForPolicies",
    "getEZForPath",
    "getEditsFromTxid",
    "getEnclosingRoot",
    "getErasureCodingCodecs",
    "getErasureCodingPolicies",
    "getErasureCodingPolicy",
    "getFileInfo",
    "getFileLinkInfo",
    "getFsECBlockGroupStats",
    "getFsReplicatedBlockStats",
    "getFsStats",
    "getHAServiceState",
    "getLinkTarget",
    "getListing",
    "getLocatedFileInfo",
    "getPreferredBlockSize",
    "getQuotaUsage",
    "getServerDefaults",
    "getSlowDatanodeReport",
    "getSnapshotDiffReport",
    "getSnapshotDiffReportListing",
    "getSnapshotListing",
    "getSnapshottableDirListing",
    "getStoragePolicies",
    "getStoragePolicy",
    "getXAttrs",
    "isFileClosed",
    "listCacheDirectives",
    "listCachePools",
    "listCorruptFileBlocks",
    "listEncryptionZones",
    "listOpenFiles",
    "listReencryptionStatus",
    "listXAttrs",
    "metaSave",
    "mkdirs",
    "modifyAclEntries",
    "modifyCacheDirective",
    "modifyCachePool",
    "msync",
    "recoverLease",
    "reencryptEncryptionZone",
    "refreshNodes",
    "removeAcl",
    "removeAclEntries",
    "removeCacheDirective",
    "removeCachePool",
    "removeDefaultAcl",
    "removeErasureCodingPolicy",
    "removeXAttr",
    "rename",
    "rename2",
    "renameSnapshot",
    "renewDelegationToken",
    "renewLease",
    "reportBadBlocks",
    "restoreFailedStorage",
    "rollEdits",
    "rollingUpgrade",
    "satisfyStoragePolicy",
    "saveNamespace",
    "setAcl",
    "setBalancerBandwidth",
    "setErasureCodingPolicy",
    "setOwner",
    "setPermission",
    "setQuota",
    "setReplication",
    "setSafeMode",
    "setStoragePolicy",
    "setTimes",
    "setXAttr",
    "truncate",
    "unsetErasureCodingPolicy",
    "unsetStoragePolicy",
    "updateBlockForPipeline",
    "updatePipeline",
    "upgradeStatus",
];

/// The methods of `DatanodeProtocol.proto`'s service, listed the same way.
pub const DATANODE_PROTOCOL_METHODS: &[&str] = &[
    "blockReceivedAndDeleted",
    "blockReport",
    "cacheReport",
    "commitBlockSynchronization",
    "errorReport",
    "registerDatanode",
    "reportBadBlocks",
    "sendHeartbeat",
    "versionRequest",
];

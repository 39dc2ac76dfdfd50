//! Java exception class names for RPC error replies (PROTOCOL.md §1.7, §1.9).
//!
//! The client's RPC layer rebuilds the exception from
//! `RpcResponseHeaderProto.exception_class_name`; DFSClient re-throws it as
//! the real Java type only when the name matches exactly, so these strings
//! must be byte-for-byte right.

// ---- namespace ----

/// Missing path (open, setPermission, getContentSummary, ...), "Path is not a
/// file", fileId mismatch.
pub const FILE_NOT_FOUND: &str = "java.io.FileNotFoundException";
/// create without OVERWRITE on an existing file, mkdirs on a file, rename2
/// onto an existing destination.
pub const FILE_ALREADY_EXISTS: &str = "org.apache.hadoop.fs.FileAlreadyExistsException";
/// An ancestor of the path is a file.
pub const PARENT_NOT_DIRECTORY: &str = "org.apache.hadoop.fs.ParentNotDirectoryException";
/// delete(recursive = false) on a non-empty directory.
pub const PATH_IS_NOT_EMPTY_DIRECTORY: &str =
    "org.apache.hadoop.fs.PathIsNotEmptyDirectoryException";
/// Malformed path.
pub const INVALID_PATH: &str = "org.apache.hadoop.fs.InvalidPathException";
/// Permission denied.
pub const ACCESS_CONTROL: &str = "org.apache.hadoop.security.AccessControlException";
/// Service-level authorization refusals (`refreshServiceAcl` while it is off).
pub const AUTHORIZATION: &str = "org.apache.hadoop.security.authorize.AuthorizationException";
/// Mutation while in safe mode.
pub const SAFE_MODE: &str = "org.apache.hadoop.hdfs.server.namenode.SafeModeException";
/// An invalid ACL, or ACLs turned off.
pub const ACL: &str = "org.apache.hadoop.hdfs.protocol.AclException";
/// Symlinks (not supported).
pub const UNRESOLVED_PATH: &str = "org.apache.hadoop.hdfs.protocol.UnresolvedPathException";
/// Symlinks (not supported).
pub const UNRESOLVED_LINK: &str = "org.apache.hadoop.fs.UnresolvedLinkException";

// ---- leases and blocks ----

/// create/append on a file leased by another client.
pub const ALREADY_BEING_CREATED: &str =
    "org.apache.hadoop.hdfs.protocol.AlreadyBeingCreatedException";
/// addBlock/complete/fsync/abandonBlock without holding the lease.
pub const LEASE_EXPIRED: &str = "org.apache.hadoop.hdfs.server.namenode.LeaseExpiredException";
/// addBlock before the previous block is replicated; Java retries.
pub const NOT_REPLICATED_YET: &str =
    "org.apache.hadoop.hdfs.server.namenode.NotReplicatedYetException";
/// append/create while lease recovery runs.
pub const RECOVERY_IN_PROGRESS: &str =
    "org.apache.hadoop.hdfs.protocol.RecoveryInProgressException";

// ---- quotas ----

/// Namespace (file count) quota exceeded.
pub const NS_QUOTA_EXCEEDED: &str = "org.apache.hadoop.hdfs.protocol.NSQuotaExceededException";
/// Disk space quota exceeded.
pub const DS_QUOTA_EXCEEDED: &str = "org.apache.hadoop.hdfs.protocol.DSQuotaExceededException";
/// Per-storage-type quota exceeded.
pub const QUOTA_BY_STORAGE_TYPE_EXCEEDED: &str =
    "org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException";
/// setQuota on a file.
pub const PATH_IS_NOT_DIRECTORY: &str = "org.apache.hadoop.fs.PathIsNotDirectoryException";
/// setQuota by storage type when that is off, or with a name quota;
/// satisfyStoragePolicy with the satisfier off.
pub const UNSUPPORTED_ACTION: &str =
    "org.apache.hadoop.hdfs.server.namenode.UnsupportedActionException";
/// A cache pool or directive request that cannot be met.
pub const INVALID_REQUEST: &str = "org.apache.hadoop.fs.InvalidRequestException";
/// unsetErasureCodingPolicy where none is set.
pub const NO_EC_POLICY_SET: &str = "org.apache.hadoop.hdfs.protocol.NoECPolicySetException";
/// A delegation token the NameNode does not know.
pub const INVALID_TOKEN: &str = "org.apache.hadoop.security.token.SecretManager$InvalidToken";

// ---- HA and retries ----

/// This NameNode is standby; hdfs-native fails over on it.
pub const STANDBY: &str = "org.apache.hadoop.ipc.StandbyException";
/// Ask the client to retry later.
pub const RETRIABLE: &str = "org.apache.hadoop.ipc.RetriableException";
/// A write sent to an observer: a StandbyException telling observer-read
/// clients to send it to the active.
pub const OBSERVER_RETRY_ON_ACTIVE: &str = "org.apache.hadoop.ipc.ObserverRetryOnActiveException";
/// An HA state transition (or HA itself) is refused (`haadmin` prints it).
pub const SERVICE_FAILED: &str = "org.apache.hadoop.ha.ServiceFailedException";
/// `monitorHealth`: the service is not healthy.
pub const HEALTH_CHECK_FAILED: &str = "org.apache.hadoop.ha.HealthCheckFailedException";

// ---- generic ----

/// Bad arguments (Hadoop's own variant).
pub const HADOOP_ILLEGAL_ARGUMENT: &str = "org.apache.hadoop.HadoopIllegalArgumentException";
/// Bad arguments.
pub const ILLEGAL_ARGUMENT: &str = "java.lang.IllegalArgumentException";
/// Unsupported feature. hdfs-native retries append with NEW_BLOCK only on
/// this class with a message containing "NEW_BLOCK".
pub const UNSUPPORTED_OPERATION: &str = "java.lang.UnsupportedOperationException";
/// Everything else.
pub const IO: &str = "java.io.IOException";

// ---- RPC layer ----

/// Unknown method of a known protocol (with ERROR_NO_SUCH_METHOD).
pub const RPC_NO_SUCH_METHOD: &str = "org.apache.hadoop.ipc.RpcNoSuchMethodException";
/// Unknown protocol (with ERROR_NO_SUCH_PROTOCOL).
pub const RPC_NO_SUCH_PROTOCOL: &str = "org.apache.hadoop.ipc.RpcNoSuchProtocolException";
/// Protocol or IPC version mismatch.
pub const RPC_VERSION_MISMATCH: &str = "org.apache.hadoop.ipc.RPC$VersionMismatch";
/// Connection-level errors, e.g. a call before the connection context.
pub const RPC_SERVER_EXCEPTION: &str = "org.apache.hadoop.ipc.RpcServerException";
/// A request payload that does not decode (ERROR_APPLICATION, connection
/// kept open).
pub const INVALID_PROTOCOL_BUFFER: &str =
    "org.apache.hadoop.thirdparty.protobuf.InvalidProtocolBufferException";

// ---- DataNode side ----

/// getReplicaVisibleLength for an unknown replica.
pub const REPLICA_NOT_FOUND: &str =
    "org.apache.hadoop.hdfs.server.datanode.ReplicaNotFoundException";
/// DatanodeProtocol: a DataNode the NameNode refuses.
pub const DISALLOWED_DATANODE: &str =
    "org.apache.hadoop.hdfs.server.protocol.DisallowedDatanodeException";
/// DatanodeProtocol: heartbeat/report from a DataNode that is not registered.
/// (Package per PROTOCOL.md; marked unverified there.)
pub const UNREGISTERED_NODE: &str = "org.apache.hadoop.hdfs.protocol.UnregisteredNodeException";

/// HDFS's snapshot failures (`SnapshotException`).
pub const SNAPSHOT: &str = "org.apache.hadoop.hdfs.protocol.SnapshotException";

/// A write below `.snapshot` (`SnapshotAccessControlException`).
pub const SNAPSHOT_ACCESS_CONTROL: &str =
    "org.apache.hadoop.hdfs.protocol.SnapshotAccessControlException";

/// getXAttrs of a name the inode does not have (`XAttrNotFoundException`,
/// HDFS 3.4's FSDirXAttrOp).
pub const XATTR_NOT_FOUND: &str = "org.apache.hadoop.hdfs.protocol.XAttrNotFoundException";

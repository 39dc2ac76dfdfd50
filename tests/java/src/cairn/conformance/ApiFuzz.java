package cairn.conformance;

import java.io.IOException;
import java.io.InputStream;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.zip.CRC32;

import org.apache.hadoop.fs.ContentSummary;
import org.apache.hadoop.fs.CreateFlag;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.QuotaUsage;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.fs.XAttrSetFlag;
import org.apache.hadoop.fs.permission.AclEntry;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * Random FileSystem API calls for tests/differential (Apache HDFS beside
 * Cairn, by hand): the same seed gives the same calls on both, and each
 * call's outcome is printed (its result, or its exception's class and first
 * line), with client names and ports masked. Nothing is asserted: compare
 * two runs' output with diff.
 *
 * <pre>
 * run.sh --main ApiFuzz --fs hdfs://host:port --seed S [--calls N]   (FUZZ_KEEP=1: keep the tree)
 * </pre>
 *
 * Works under /af, removed at the start and at the end. Calls run as the
 * current user (the NameNode's superuser) or as alice or bob.
 */
public final class ApiFuzz {
  private static final String ROOT = "/af";
  private static final String[] NAMES = {"a", "b", "x y", "d.txt"};
  private static final String[] USERS = {null, null, null, "alice", "bob"};
  private static final short[] MODES = {0755, 0700, 0644, 01777, 0, 0777, 0711};

  private final Random r;
  private final Map<String, DistributedFileSystem> fss = new HashMap<>();
  private final Map<String, FSDataOutputStream> open = new HashMap<>();

  private ApiFuzz(long seed) {
    r = new Random(seed);
  }

  /** One call: what it does, given the file system of the chosen user. */
  interface Call {
    Object run(DistributedFileSystem fs) throws Exception;
  }

  public static void main(String[] args) throws Exception {
    KitArgs a = new KitArgs(args, "--seed", "--calls");
    ApiFuzz f = new ApiFuzz(a.getLong("--seed", 1));
    long calls = a.getLong("--calls", 60);
    DistributedFileSystem su = f.fsOf(null, a);
    clear(su);
    su.mkdirs(new Path(ROOT + "/a/b"));
    su.setPermission(new Path(ROOT), new FsPermission((short) 0777));
    for (String u : new String[] {"alice", "bob"}) {
      f.fsOf(u, a);
    }
    for (long i = 0; i < calls; i++) {
      String user = USERS[f.r.nextInt(USERS.length)];
      StringBuilder what = new StringBuilder();
      Call c = f.pick(what);
      Object out;
      try {
        DistributedFileSystem fs = f.fss.get(String.valueOf(user));
        out = user == null ? c.run(fs)
            : UserGroupInformation.createRemoteUser(user)
                .doAs((PrivilegedExceptionAction<Object>) () -> c.run(fs));
      } catch (Exception e) {
        out = describe(e);
      }
      System.out.println((user == null ? "" : "@" + user + " ") + what + " -> " + mask(String.valueOf(out)));
    }
    for (FSDataOutputStream s : f.open.values()) {
      try {
        s.close();
      } catch (IOException e) {
        System.out.println("close at end -> " + mask(describe(e)));
      }
    }
    System.out.println("tree:");
    f.tree(su, new Path(ROOT), "");
    // FUZZ_KEEP=1 leaves the tree for a look at the state a call saw.
    if (!"1".equals(System.getenv("FUZZ_KEEP"))) {
      clear(su);
    }
    for (DistributedFileSystem fs : f.fss.values()) {
      fs.close();
    }
  }

  /** Removes ROOT, its snapshots first (a run stopped half-way leaves some). */
  private static void clear(DistributedFileSystem su) throws IOException {
    var dirs = su.getSnapshottableDirListing();
    for (var d : dirs == null ? new org.apache.hadoop.hdfs.protocol.SnapshottableDirectoryStatus[0] : dirs) {
      Path p = d.getFullPath();
      if (!p.toUri().getPath().startsWith(ROOT + "/")) {
        continue;
      }
      for (FileStatus s : su.listStatus(new Path(p, ".snapshot"))) {
        su.deleteSnapshot(p, s.getPath().getName());
      }
      su.disallowSnapshot(p);
    }
    su.delete(new Path(ROOT), true);
  }

  private DistributedFileSystem fsOf(String user, KitArgs a) throws Exception {
    PrivilegedExceptionAction<FileSystem> make = () -> FileSystem.newInstance(a.conf);
    FileSystem fs = user == null ? make.run()
        : UserGroupInformation.createRemoteUser(user).doAs(make);
    fss.put(String.valueOf(user), (DistributedFileSystem) fs);
    return (DistributedFileSystem) fs;
  }

  private static String describe(Throwable e) {
    Throwable t = e;
    while (t instanceof java.lang.reflect.UndeclaredThrowableException && t.getCause() != null) {
      t = t.getCause();
    }
    // HDFS sends the server's stack trace with some exceptions: its frames
    // and causes are left out, the message around them kept.
    StringBuilder kept = new StringBuilder();
    for (String line : String.valueOf(t.getMessage()).split("\n", -1)) {
      if (line.startsWith("\tat ") && line.contains(")")) {
        kept.append(line.substring(line.indexOf(')') + 1));
      } else if (line.startsWith("\t... ") && line.contains(" more")) {
        kept.append(line.substring(line.indexOf(" more") + 5));
      } else if (!line.startsWith("Caused by: ")) {
        kept.append(line);
      }
    }
    return t.getClass().getName() + ": " + kept;
  }

  private static String mask(String s) {
    return s.replaceAll("DFSClient_[A-Za-z0-9_-]+", "DFSClient_*")
        .replaceAll("127\\.0\\.0\\.1:[0-9]+", "127.0.0.1:*")
        .replaceAll("localhost:[0-9]+", "localhost:*")
        // Inode ids: each cluster has its own history of runs.
        .replaceAll("inode [0-9]+", "inode *");
  }

  private String path() {
    int depth = new int[] {1, 1, 1, 2, 2, 3}[r.nextInt(6)];
    StringBuilder p = new StringBuilder(ROOT);
    for (int i = 0; i < depth; i++) {
      p.append('/').append(NAMES[r.nextInt(NAMES.length)]);
    }
    return p.toString();
  }

  private <T> T one(T[] xs) {
    return xs[r.nextInt(xs.length)];
  }

  private byte[] data() {
    int n = new int[] {0, 1, 100, 513, 70000}[r.nextInt(5)];
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (i * 31 + n);
    }
    return b;
  }

  private static String status(FileStatus s) {
    return (s.isDirectory() ? "d" : s.isFile() ? "f" : "l") + " " + s.getPath().toUri().getPath()
        + " " + s.getPermission() + " " + s.getOwner() + ":" + s.getGroup() + " len=" + s.getLen()
        + " r=" + s.getReplication() + " bs=" + s.getBlockSize() + " acl=" + s.hasAcl()
        + " snap=" + s.isSnapshotEnabled();
  }

  /** One random call: its description goes into {@code w}. */
  private Call pick(StringBuilder w) {
    String p = path();
    String q = path();
    int k = r.nextInt(50);
    if (k < 12) {
      return writes(k, p, q, w);
    }
    if (k < 22) {
      return setters(k, p, q, w);
    }
    if (k < 32) {
      return features(k, p, q, w);
    }
    if (k < 40) {
      return others(k, p, q, w);
    }
    return listings(k, p, q, w);
  }

  /** create, append, mkdirs, renames, delete. */
  private Call writes(int k, String p, String q, StringBuilder w) {
    switch (k) {
      case 0: case 1: {
        boolean over = r.nextBoolean();
        short rep = (short) (1 + r.nextInt(3));
        byte[] d = data();
        w.append("create ").append(p).append(" overwrite=").append(over).append(" r=").append(rep)
            .append(" n=").append(d.length);
        return fs -> {
          try (FSDataOutputStream o = fs.create(new Path(p), over, 4096, rep, 1 << 20)) {
            o.write(d);
          }
          return "ok";
        };
      }
      case 2: {
        EnumSet<CreateFlag> flags = one(new EnumSet[] {EnumSet.of(CreateFlag.CREATE),
            EnumSet.of(CreateFlag.CREATE, CreateFlag.OVERWRITE), EnumSet.of(CreateFlag.OVERWRITE),
            EnumSet.of(CreateFlag.APPEND), EnumSet.of(CreateFlag.CREATE, CreateFlag.APPEND)});
        short mode = MODES[r.nextInt(MODES.length)];
        w.append("createFlags ").append(p).append(" ").append(flags).append(" mode=")
            .append(Integer.toOctalString(mode));
        return fs -> {
          try (FSDataOutputStream o = fs.create(new Path(p), new FsPermission(mode), flags, 4096,
              (short) 1, 1 << 20, null)) {
            o.write(7);
          }
          return status(fs.getFileStatus(new Path(p)));
        };
      }
      case 3: {
        boolean over = r.nextBoolean();
        w.append("createNonRecursive ").append(p).append(" overwrite=").append(over);
        return fs -> {
          fs.createNonRecursive(new Path(p), over, 4096, (short) 1, 1 << 20, null).close();
          return "ok";
        };
      }
      case 4: {
        byte[] d = data();
        boolean newBlock = r.nextInt(3) == 0;
        w.append("append ").append(p).append(" n=").append(d.length).append(" newBlock=").append(newBlock);
        return fs -> {
          EnumSet<CreateFlag> f = newBlock ? EnumSet.of(CreateFlag.APPEND, CreateFlag.NEW_BLOCK)
              : EnumSet.of(CreateFlag.APPEND);
          try (FSDataOutputStream o = fs.append(new Path(p), f, 4096, null)) {
            o.write(d);
          }
          return fs.getFileStatus(new Path(p)).getLen();
        };
      }
      case 5: case 6: {
        short mode = MODES[r.nextInt(MODES.length)];
        w.append("mkdirs ").append(p).append(" mode=").append(Integer.toOctalString(mode));
        return fs -> fs.mkdirs(new Path(p), new FsPermission(mode)) + " " + status(fs.getFileStatus(new Path(p)));
      }
      case 7: case 8:
        w.append("rename ").append(p).append(" ").append(q);
        return fs -> fs.rename(new Path(p), new Path(q));
      case 9: {
        Options.Rename o = r.nextBoolean() ? Options.Rename.OVERWRITE : Options.Rename.NONE;
        w.append("rename2 ").append(p).append(" ").append(q).append(" ").append(o);
        return fs -> {
          fs.rename(new Path(p), new Path(q), o);
          return "ok";
        };
      }
      case 10: case 11: {
        boolean rec = r.nextBoolean();
        w.append("delete ").append(p).append(" recursive=").append(rec);
        return fs -> fs.delete(new Path(p), rec);
      }
      default:
        throw new AssertionError(k);
    }
  }

  /** status, listings, summaries and the attribute setters. */
  private Call setters(int k, String p, String q, StringBuilder w) {
    switch (k) {
      case 12:
        w.append("getFileStatus ").append(p);
        return fs -> status(fs.getFileStatus(new Path(p)));
      case 13:
        w.append("listStatus ").append(p);
        return fs -> {
          List<String> out = new ArrayList<>();
          for (FileStatus s : fs.listStatus(new Path(p))) {
            out.add(status(s));
          }
          return out;
        };
      case 14:
        w.append("getContentSummary ").append(p);
        return fs -> {
          ContentSummary c = fs.getContentSummary(new Path(p));
          return c.getLength() + " files=" + c.getFileCount() + " dirs=" + c.getDirectoryCount()
              + " q=" + c.getQuota() + " used=" + c.getSpaceConsumed() + " sq=" + c.getSpaceQuota();
        };
      case 15: {
        short mode = MODES[r.nextInt(MODES.length)];
        w.append("setPermission ").append(p).append(" ").append(Integer.toOctalString(mode));
        return fs -> {
          fs.setPermission(new Path(p), new FsPermission(mode));
          return status(fs.getFileStatus(new Path(p)));
        };
      }
      case 16: {
        String u = one(new String[] {"alice", null, "bob", ""});
        String g = one(new String[] {"staff", null, "supergroup", ""});
        w.append("setOwner ").append(p).append(" ").append(u).append(" ").append(g);
        return fs -> {
          fs.setOwner(new Path(p), u, g);
          return status(fs.getFileStatus(new Path(p)));
        };
      }
      case 17: {
        long mt = one(new Long[] {-1L, 0L, 1000000L});
        long at = one(new Long[] {-1L, 0L, 2000000L});
        w.append("setTimes ").append(p).append(" ").append(mt).append(" ").append(at);
        return fs -> {
          fs.setTimes(new Path(p), mt, at);
          FileStatus s = fs.getFileStatus(new Path(p));
          return (mt >= 0 ? "m=" + s.getModificationTime() : "") + (at >= 0 ? " a=" + s.getAccessTime() : "");
        };
      }
      case 18: {
        short rep = (short) r.nextInt(4);
        w.append("setReplication ").append(p).append(" ").append(rep);
        return fs -> fs.setReplication(new Path(p), rep);
      }
      case 19: {
        long len = one(new Long[] {0L, 1L, 100L, 512L, 600L, 99999L, -1L});
        w.append("truncate ").append(p).append(" ").append(len);
        return fs -> fs.truncate(new Path(p), len);
      }
      case 20: {
        String s2 = path();
        w.append("concat ").append(p).append(" ").append(q).append(",").append(s2);
        return fs -> {
          fs.concat(new Path(p), new Path[] {new Path(q), new Path(s2)});
          return fs.getFileStatus(new Path(p)).getLen();
        };
      }
      case 21:
        w.append("read ").append(p);
        return fs -> {
          CRC32 crc = new CRC32();
          long n = 0;
          byte[] buf = new byte[8192];
          try (InputStream in = fs.open(new Path(p))) {
            for (int got; (got = in.read(buf)) > 0; n += got) {
              crc.update(buf, 0, got);
            }
          }
          return n + " crc=" + Long.toHexString(crc.getValue());
        };
      default:
        throw new AssertionError(k);
    }
  }

  /** xattrs, ACLs, snapshots, storage policies, quotas, leases, located listings. */
  private Call features(int k, String p, String q, StringBuilder w) {
    switch (k) {
      case 22: {
        String name = one(new String[] {"user.a", "user.b", "trusted.t", "bad.x", "USER.c", "user."});
        EnumSet<XAttrSetFlag> f = one(new EnumSet[] {EnumSet.of(XAttrSetFlag.CREATE),
            EnumSet.of(XAttrSetFlag.REPLACE), EnumSet.of(XAttrSetFlag.CREATE, XAttrSetFlag.REPLACE)});
        w.append("setXAttr ").append(p).append(" ").append(name).append(" ").append(f);
        return fs -> {
          fs.setXAttr(new Path(p), name, new byte[] {1, 2}, f);
          return fs.listXAttrs(new Path(p));
        };
      }
      case 23: {
        String name = one(new String[] {"user.a", "user.b", "user.zz"});
        int v = r.nextInt(3);
        w.append(new String[] {"getXAttrs ", "removeXAttr ", "getXAttr "}[v]).append(p).append(" ").append(name);
        return fs -> {
          if (v == 0) {
            Map<String, byte[]> m = fs.getXAttrs(new Path(p));
            return new java.util.TreeMap<>(m).keySet();
          }
          if (v == 1) {
            fs.removeXAttr(new Path(p), name);
            return "ok";
          }
          return java.util.Arrays.toString(fs.getXAttr(new Path(p), name));
        };
      }
      case 24: case 25: {
        String spec = one(new String[] {"user:alice:rwx", "group:staff:r-x", "default:user:bob:r--",
            "user::rwx,group::r-x,other::---", "mask::r--", "user:bob:rw-,default:other::r--"});
        int v = r.nextInt(5);
        w.append(new String[] {"modifyAclEntries ", "removeAclEntries ", "setAcl ", "removeAcl ",
            "removeDefaultAcl "}[v]).append(p).append(" ").append(spec);
        return fs -> {
          List<AclEntry> es = AclEntry.parseAclSpec(spec, v != 1);
          Path pp = new Path(p);
          switch (v) {
            case 0: fs.modifyAclEntries(pp, es); break;
            case 1: fs.removeAclEntries(pp, AclEntry.parseAclSpec(spec.replaceAll(":[rwx-]{3}", ""), false)); break;
            case 2: fs.setAcl(pp, es); break;
            case 3: fs.removeAcl(pp); break;
            default: fs.removeDefaultAcl(pp); break;
          }
          return fs.getAclStatus(pp).toString();
        };
      }
      case 26: {
        int v = r.nextInt(3);
        String parent = r.nextBoolean() ? ROOT + "/a" : p;
        w.append(new String[] {"allowSnapshot ", "disallowSnapshot ", "getSnapshottableDirListing "}[v]).append(parent);
        return fs -> {
          if (v == 0) {
            fs.allowSnapshot(new Path(parent));
          } else if (v == 1) {
            fs.disallowSnapshot(new Path(parent));
          } else {
            List<String> out = new ArrayList<>();
            var l = fs.getSnapshottableDirListing();
            if (l != null) {
              for (var s : l) {
                out.add(s.getFullPath().toString() + " n=" + s.getSnapshotNumber());
              }
            }
            return out;
          }
          return "ok";
        };
      }
      case 27: {
        String dir = r.nextBoolean() ? ROOT + "/a" : p;
        String n1 = one(new String[] {"s1", "s2", "nope", ".x"});
        String n2 = one(new String[] {"s1", "s2", ""});
        int v = r.nextInt(4);
        w.append(new String[] {"createSnapshot ", "deleteSnapshot ", "renameSnapshot ", "snapshotDiff "}[v])
            .append(dir).append(" ").append(n1).append(" ").append(n2);
        return fs -> {
          Path d = new Path(dir);
          switch (v) {
            case 0: return fs.createSnapshot(d, n1).toUri().getPath();
            case 1: fs.deleteSnapshot(d, n1); return "ok";
            case 2: fs.renameSnapshot(d, n1, n2); return "ok";
            default: return fs.getSnapshotDiffReport(d, n1, n2).toString().replace('\n', '|');
          }
        };
      }
      case 28: {
        String pol = one(new String[] {"COLD", "HOT", "WARM", "ALL_SSD", "NOPE"});
        int v = r.nextInt(3);
        w.append(new String[] {"setStoragePolicy ", "getStoragePolicy ", "unsetStoragePolicy "}[v])
            .append(p).append(v == 0 ? " " + pol : "");
        return fs -> {
          if (v == 0) {
            fs.setStoragePolicy(new Path(p), pol);
          } else if (v == 2) {
            fs.unsetStoragePolicy(new Path(p));
          }
          return fs.getStoragePolicy(new Path(p)).getName();
        };
      }
      case 29: {
        long ns = one(new Long[] {-1L, 3L, 100L, Long.MAX_VALUE, 0L});
        long ds = one(new Long[] {-1L, 1000L, 1L << 30, Long.MAX_VALUE});
        boolean set = r.nextBoolean();
        w.append(set ? "setQuota " : "getQuotaUsage ").append(p).append(set ? " " + ns + " " + ds : "");
        return fs -> {
          if (set) {
            fs.setQuota(new Path(p), ns, ds);
          }
          QuotaUsage u = fs.getQuotaUsage(new Path(p));
          return "q=" + u.getQuota() + " n=" + u.getFileAndDirectoryCount() + " sq=" + u.getSpaceQuota()
              + " used=" + u.getSpaceConsumed();
        };
      }
      case 30: {
        int v = r.nextInt(3);
        w.append(new String[] {"isFileClosed ", "recoverLease ", "getFileChecksum "}[v]).append(p);
        return fs -> {
          if (v == 0) {
            return fs.isFileClosed(new Path(p));
          }
          if (v == 1) {
            return fs.recoverLease(new Path(p));
          }
          return String.valueOf(fs.getFileChecksum(new Path(p)));
        };
      }
      case 31:
        w.append("listLocatedStatus ").append(p);
        return fs -> {
          List<String> out = new ArrayList<>();
          RemoteIterator<LocatedFileStatus> it = fs.listLocatedStatus(new Path(p));
          while (it.hasNext()) {
            LocatedFileStatus s = it.next();
            out.add(s.getPath().getName() + " blocks=" + s.getBlockLocations().length);
          }
          return out;
        };
      default:
        throw new AssertionError(k);
    }
  }

  /** open streams, block locations, and the calls added later. */
  private Call others(int k, String p, String q, StringBuilder w) {
    switch (k) {
      case 32: {
        byte[] d = data();
        int v = open.isEmpty() ? 0 : r.nextInt(4);
        w.append(new String[] {"openForWrite ", "hflush ", "closeOpen ", "hsync(UPDATE_LENGTH) "}[v])
            .append(v == 0 ? p : "");
        return fs -> {
          if (v == 0) {
            if (!open.isEmpty()) {
              return "skipped";
            }
            FSDataOutputStream o = fs.create(new Path(p), true, 4096, (short) 1, 1 << 20);
            open.put(p, o);
            o.write(d);
            return "ok";
          }
          Map.Entry<String, FSDataOutputStream> e = open.entrySet().iterator().next();
          if (v == 1) {
            e.getValue().write(d);
            e.getValue().hflush();
            return e.getKey() + " " + fs.getFileStatus(new Path(e.getKey())).getLen();
          }
          if (v == 3) {
            e.getValue().write(d);
            ((org.apache.hadoop.hdfs.client.HdfsDataOutputStream) e.getValue()).hsync(
                EnumSet.of(org.apache.hadoop.hdfs.client.HdfsDataOutputStream.SyncFlag.UPDATE_LENGTH));
            return e.getKey() + " " + fs.getFileStatus(new Path(e.getKey())).getLen();
          }
          open.remove(e.getKey());
          e.getValue().close();
          return e.getKey();
        };
      }
      case 33:
        w.append("getFileBlockLocations ").append(p);
        return fs -> {
          var locs = fs.getFileBlockLocations(new Path(p), 0, 1L << 40);
          StringBuilder b = new StringBuilder();
          for (var l : locs) {
            b.append(l.getOffset()).append('+').append(l.getLength()).append(' ');
          }
          return b.toString().trim();
        };
      case 34: {
        long off = one(new Long[] {0L, 1L, 100L, 1L << 20});
        long len = one(new Long[] {0L, 1L, 600L, 1L << 40});
        w.append("getBlockLocations ").append(p).append(" ").append(off).append(" ").append(len);
        return fs -> located(fs.getClient().getNamenode().getBlockLocations(p, off, len));
      }
      case 35: {
        String sp = ROOT + "/a/.snapshot/" + one(new String[] {"s1", "s2"})
            + one(new String[] {"", "/b", "/d.txt", "/x y/a"});
        int v = r.nextInt(5);
        w.append(new String[] {"getFileStatus ", "listStatus ", "read ", "delete ", "getContentSummary "}[v])
            .append(sp);
        return fs -> {
          Path pp = new Path(sp);
          switch (v) {
            case 0: return status(fs.getFileStatus(pp));
            case 1: return fs.listStatus(pp).length;
            case 2: try (InputStream in = fs.open(pp)) {
                return in.readAllBytes().length;
              }
            case 3: return fs.delete(pp, true);
            default: return fs.getContentSummary(pp).getFileCount();
          }
        };
      }
      case 36: {
        org.apache.hadoop.fs.StorageType t = one(new org.apache.hadoop.fs.StorageType[] {
            org.apache.hadoop.fs.StorageType.SSD, org.apache.hadoop.fs.StorageType.DISK,
            org.apache.hadoop.fs.StorageType.ARCHIVE});
        long quota = one(new Long[] {-1L, 1000L, 1L << 30});
        w.append("setQuotaByStorageType ").append(p).append(" ").append(t).append(" ").append(quota);
        return fs -> {
          fs.setQuotaByStorageType(new Path(p), t, quota);
          QuotaUsage u = fs.getQuotaUsage(new Path(p));
          return "typeQuota=" + u.getTypeQuota(t) + " typeUsed=" + u.getTypeConsumed(t);
        };
      }
      case 37:
        w.append("getTrashRoot ").append(p);
        return fs -> fs.getTrashRoot(new Path(p)).toUri().getPath();
      case 38:
        w.append("createSnapshot(default name) ").append(p);
        return fs -> fs.createSnapshot(new Path(p)).toUri().getPath()
            .replaceAll("s[0-9]{8}-[0-9]{6}\\.[0-9]{3}", "s<time>");
      case 39:
        w.append("listCorruptFileBlocks ").append(p);
        return fs -> {
          List<String> out = new ArrayList<>();
          RemoteIterator<Path> it = fs.listCorruptFileBlocks(new Path(p));
          while (it.hasNext()) {
            out.add(it.next().toUri().getPath());
          }
          return out;
        };
      default:
        throw new AssertionError(k);
    }
  }

  /** Listings and lookups that applications (Hive, DistCp, Spark) call beyond the basics. */
  private Call listings(int k, String p, String q, StringBuilder w) {
    switch (k) {
      case 40:
        w.append("getEnclosingRoot ").append(p);
        return fs -> fs.getEnclosingRoot(new Path(p)).toUri().getPath();
      case 41: {
        boolean located = r.nextBoolean();
        w.append(located ? "batchedListLocatedStatus " : "batchedListStatus ").append(p).append(" ").append(q);
        return fs -> {
          List<Path> ps = List.of(new Path(p), new Path(q));
          List<String> out = new ArrayList<>();
          var it = located ? fs.batchedListLocatedStatusIterator(ps) : fs.batchedListStatusIterator(ps);
          while (it.hasNext()) {
            var part = it.next();
            StringBuilder b = new StringBuilder(part.getListedPath().toUri().getPath()).append(":");
            try {
              for (FileStatus s : part.get()) {
                b.append(' ').append(s.getPath().getName());
              }
            } catch (IOException e) {
              b.append(' ').append(describe(e));
            }
            out.add(b.toString());
          }
          return out;
        };
      }
      case 42: {
        String after = one(new String[] {"", "a", "b", "d.txt", "zz"});
        boolean loc = r.nextBoolean();
        w.append("listPaths ").append(p).append(" after='").append(after).append("' loc=").append(loc);
        return fs -> {
          var l = fs.getClient().listPaths(p, after.getBytes(java.nio.charset.StandardCharsets.UTF_8), loc);
          if (l == null) {
            return "null";
          }
          StringBuilder b = new StringBuilder("remaining=" + l.getRemainingEntries());
          for (var s : l.getPartialListing()) {
            b.append(' ').append(s.getLocalName()).append(s.isDirectory() ? "/" : "");
          }
          return b.toString();
        };
      }
      case 43:
        w.append("getSnapshotListing ").append(p);
        return fs -> {
          List<String> out = new ArrayList<>();
          for (var s : fs.getSnapshotListing(new Path(p))) {
            out.add(s.getFullPath().toUri().getPath() + (s.isDeleted() ? " deleted" : ""));
          }
          return out;
        };
      case 44: {
        String a = one(new String[] {"s1", "s2", ""});
        String b = one(new String[] {"s1", "s2", ""});
        w.append("getSnapshotDiffReportListing ").append(p).append(" '").append(a).append("' '").append(b).append("'");
        return fs -> {
          var l = fs.getSnapshotDiffReportListing(new Path(p), a, b, "", -1);
          return "modified=" + l.getModifyList().size() + " created=" + l.getCreateList().size()
              + " deleted=" + l.getDeleteList().size() + " last=" + l.getLastIndex()
              + " start=" + new String(l.getLastPath(), java.nio.charset.StandardCharsets.UTF_8)
              + " fromEarlier=" + l.getIsFromEarlier();
        };
      }
      case 45:
        w.append("getLocatedFileInfo ").append(p);
        return fs -> {
          var s = fs.getClient().getLocatedFileInfo(p, false);
          if (s == null) {
            return "null";
          }
          var bl = s.getLocatedBlocks();
          return s.getLocalName() + " len=" + s.getLen() + " dir=" + s.isDirectory()
              + " blocks=" + (bl == null ? "none" : String.valueOf(bl.locatedBlockCount()));
        };
      case 46: {
        org.apache.hadoop.fs.permission.FsAction a = one(org.apache.hadoop.fs.permission.FsAction.values());
        w.append("access ").append(p).append(" ").append(a);
        return fs -> {
          fs.access(new Path(p), a);
          return "ok";
        };
      }
      case 47:
        w.append("listOpenFiles ").append(p);
        return fs -> {
          List<String> out = new ArrayList<>();
          var it = fs.listOpenFiles(EnumSet.of(
              org.apache.hadoop.hdfs.protocol.OpenFilesIterator.OpenFilesType.ALL_OPEN_FILES), p);
          while (it.hasNext()) {
            out.add(it.next().getFilePath());
          }
          return out;
        };
      case 48:
        w.append("satisfyStoragePolicy ").append(p);
        return fs -> {
          fs.satisfyStoragePolicy(new Path(p));
          return "ok";
        };
      case 49:
        w.append("provisionSnapshotTrash ").append(p);
        return fs -> fs.provisionSnapshotTrash(new Path(p), new FsPermission((short) 01777))
            .toUri().getPath();
      default:
        throw new AssertionError(k);
    }
  }

  /** The NameNode's own answer to getBlockLocations, field by field. */
  private static String located(org.apache.hadoop.hdfs.protocol.LocatedBlocks l) {
    if (l == null) {
      return "null";
    }
    StringBuilder b = new StringBuilder("len=" + l.getFileLength() + " uc=" + l.isUnderConstruction()
        + " lastComplete=" + l.isLastBlockComplete() + " blocks=[");
    for (var lb : l.getLocatedBlocks()) {
      b.append(lb.getStartOffset()).append('+').append(lb.getBlockSize()).append(' ');
    }
    var last = l.getLastLocatedBlock();
    return b.toString().trim() + "] last="
        + (last == null ? "none" : last.getStartOffset() + "+" + last.getBlockSize());
  }


  private void tree(DistributedFileSystem fs, Path p, String indent) throws IOException {
    for (FileStatus s : fs.listStatus(p)) {
      System.out.println(indent + status(s));
      if (s.isDirectory()) {
        tree(fs, s.getPath(), indent + "  ");
      }
    }
  }
}

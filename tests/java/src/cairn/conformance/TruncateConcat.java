package cairn.conformance;

import java.io.IOException;
import java.net.URI;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.ipc.RemoteException;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * truncate and concat through the Java client (FileSystem API and the
 * shell's -truncate -w / -concat): every precondition HDFS checks, with the
 * exception class and message it answers, then the data paths: a cut at a
 * block boundary (done at once), a cut inside a block (block recovery on the
 * DataNodes; the program waits until the file is closed), an append after
 * it, and a concat of several files. Files are read back and compared byte
 * for byte. Prints a normalised transcript (no host names, ports, client
 * names or times) so a run against Cairn can be compared with the one from
 * Apache HDFS (expected/truncate-concat.txt).
 *
 * <pre>
 * run.sh --main TruncateConcat --fs hdfs://host:port [--dir /tc]
 * </pre>
 *
 * Expects three DataNodes (the files have replication 3).
 */
public final class TruncateConcat {
  private TruncateConcat() {}

  private static final long BLOCK = 1 << 20;
  private static final short REPL = 3;
  /** How long to wait for a block recovery before giving up. */
  private static final long RECOVERY_WAIT_MS = 120_000;

  private static FileSystem fs;
  private static Configuration conf;
  private static Path base;
  private static ShellScript.Normaliser norm;

  static void section(String name) {
    System.out.println("== " + name);
  }

  static void say(String s) {
    System.out.println(norm.line(s.replaceAll("DFSClient_[A-Za-z0-9_-]+", "DFSClient_<id>")
        .replace(base.toUri().getPath(), "<dir>")));
  }

  /** The class HDFS answered with (the remote one for RemoteException) and the message's first line. */
  static String describe(Throwable e) {
    String cls = e instanceof RemoteException
        ? "RemoteException(" + ((RemoteException) e).getClassName() + ")"
        : e.getClass().getName();
    String msg = String.valueOf(e.getMessage());
    int nl = msg.indexOf('\n');
    return cls + ": " + (nl >= 0 ? msg.substring(0, nl) : msg);
  }

  interface Call {
    Object run() throws Exception;
  }

  /** Runs one call and prints what it returned or threw. */
  static void attempt(String what, Call c) {
    try {
      Object r = c.run();
      say(what + " -> " + (r == null ? "ok" : r));
    } catch (Exception e) {
      say(what + " -> " + describe(e));
    }
  }

  static void write(FileSystem f, Path p, long size, long seed, long blockSize) throws IOException {
    try (FSDataOutputStream out = f.create(p, true, 65536, REPL, blockSize)) {
      writeBytes(out, size, seed, 0);
    }
  }

  static void writeBytes(FSDataOutputStream out, long size, long seed, long from) throws IOException {
    byte[] buf = new byte[64 * 1024];
    long done = 0;
    while (done < size) {
      int k = (int) Math.min(buf.length, size - done);
      DataCheck.fill(buf, k, seed, from + done);
      out.write(buf, 0, k);
      done += k;
    }
  }

  /** Whether `p` holds exactly the given pieces (seed, offset in that seed's stream, length). */
  static String check(Path p, long[][] pieces) throws IOException {
    long want = 0;
    for (long[] piece : pieces) {
      want += piece[2];
    }
    long len = fs.getFileStatus(p).getLen();
    if (len != want) {
      return "length " + len + ", want " + want;
    }
    byte[] buf = new byte[64 * 1024];
    long pos = 0;
    try (FSDataInputStream in = fs.open(p)) {
      for (long[] piece : pieces) {
        long done = 0;
        while (done < piece[2]) {
          int k = (int) Math.min(buf.length, piece[2] - done);
          in.readFully(buf, 0, k);
          for (int i = 0; i < k; i++) {
            if (buf[i] != DataCheck.at(piece[0], piece[1] + done + i)) {
              return "byte " + (pos + done + i) + " differs";
            }
          }
          done += k;
        }
        pos += piece[2];
      }
      if (in.read() != -1) {
        return "data past the end";
      }
    }
    return "content ok";
  }

  static String blocks(Path p) throws IOException {
    FileStatus st = fs.getFileStatus(p);
    List<String> out = new ArrayList<>();
    for (BlockLocation l : fs.getFileBlockLocations(st, 0, st.getLen())) {
      out.add(l.getOffset() + "+" + l.getLength() + "@" + l.getHosts().length);
    }
    return "len=" + st.getLen() + " blocks=" + out;
  }

  /** Polls isFileClosed as a client waiting for a truncate does. */
  static String waitClosed(Path p) throws Exception {
    DistributedFileSystem dfs = (DistributedFileSystem) fs;
    long deadline = System.currentTimeMillis() + RECOVERY_WAIT_MS;
    while (!dfs.isFileClosed(p)) {
      if (System.currentTimeMillis() > deadline) {
        return "still open after " + RECOVERY_WAIT_MS + " ms";
      }
      Thread.sleep(100);
    }
    return "closed";
  }

  /** Waits until every block of `p` has REPL locations. */
  static String waitReplicated(Path p) throws Exception {
    long deadline = System.currentTimeMillis() + RECOVERY_WAIT_MS;
    while (true) {
      FileStatus st = fs.getFileStatus(p);
      boolean all = true;
      for (BlockLocation l : fs.getFileBlockLocations(st, 0, st.getLen())) {
        all &= l.getHosts().length == REPL;
      }
      if (all) {
        return "every block has " + REPL + " replicas";
      }
      if (System.currentTimeMillis() > deadline) {
        return "not every block has " + REPL + " replicas after " + RECOVERY_WAIT_MS + " ms";
      }
      Thread.sleep(200);
    }
  }

  static FileSystem as(String user) throws Exception {
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(user);
    return ugi.doAs((PrivilegedExceptionAction<FileSystem>) () -> FileSystem.newInstance(URI.create(conf.get("fs.defaultFS")), conf));
  }

  static void shell(String... args) {
    ShellScript.Captured c = ShellScript.runOne(conf, null, args);
    say("$ hadoop fs " + String.join(" ", args));
    for (String l : norm.block(c.out)) {
      say(l);
    }
    for (String l : norm.block(c.err)) {
      say("! " + l);
    }
    say("exit=" + c.exit);
  }

  public static void main(String[] args) throws Exception {
    KitArgs a = new KitArgs(args, "--dir");
    conf = a.conf;
    ShellScript.configureLogging();
    fs = FileSystem.get(URI.create(a.fs), conf);
    base = new Path(a.get("--dir", "/tc"));
    Set<String> supers = new LinkedHashSet<>();
    supers.add(System.getProperty("user.name"));
    supers.add(UserGroupInformation.getCurrentUser().getShortUserName());
    norm = new ShellScript.Normaliser(a.fs, supers);
    fs.delete(base, true);
    fs.mkdirs(base);
    fs.setPermission(base, new FsPermission((short) 0777));
    truncateErrors();
    truncateData();
    concatErrors();
    concatData();
    fs.delete(base, true);
    FileSystem.closeAll();
  }

  static void truncateErrors() throws Exception {
    section("truncate: preconditions");
    Path f = new Path(base, "t0");
    write(fs, f, 3000, 1, BLOCK);
    Path dir = new Path(base, "tdir");
    fs.mkdirs(dir);
    attempt("negative length", () -> fs.truncate(f, -1));
    attempt("longer than the file", () -> fs.truncate(f, 3001));
    attempt("a directory", () -> fs.truncate(dir, 0));
    attempt("missing file", () -> fs.truncate(new Path(base, "missing"), 0));
    attempt("below a file", () -> fs.truncate(new Path(f, "x"), 0));
    attempt("below a file (the NameNode's answer)", () -> ((DistributedFileSystem) fs).getClient()
        .getNamenode().truncate(new Path(f, "x").toUri().getPath(), 0, "raw-client"));
    attempt("same length", () -> fs.truncate(f, 3000));
    attempt("same length: closed", () -> ((DistributedFileSystem) fs).isFileClosed(f));
    fs.setPermission(f, new FsPermission((short) 0644));
    FileSystem alice = as("alice");
    attempt("without write permission", () -> alice.truncate(f, 10));
    fs.setPermission(f, new FsPermission((short) 0666));
    attempt("with write permission", () -> alice.truncate(f, 2048));
    say("  wait: " + waitClosed(f));
    say("  " + check(f, new long[][] {{1, 0, 2048}}));
    fs.setPermission(dir, new FsPermission((short) 0700));
    attempt("no search permission on the parent", () -> alice.truncate(new Path(dir, "x"), 0));
    alice.close();

    Path open = new Path(base, "open");
    FSDataOutputStream out = fs.create(open, true, 65536, REPL, BLOCK);
    writeBytes(out, 5000, 2, 0);
    out.hflush();
    attempt("open by this client", () -> fs.truncate(open, 10));
    FileSystem other = FileSystem.newInstance(fs.getUri(), conf);
    attempt("open by another client", () -> other.truncate(open, 10));
    out.close();
    attempt("after close", () -> other.truncate(open, 4096));
    say("  wait: " + waitClosed(open));
    say("  " + check(open, new long[][] {{2, 0, 4096}}));
    other.close();
  }

  /**
   * A call made while a block recovery runs, which HDFS starts on a
   * DataNode's next heartbeat: when the file is closed right after the call,
   * the recovery may have finished first and the answer is not printed.
   */
  static void whileRecovering(String what, Path p, Call c) throws Exception {
    String got;
    try {
      Object r = c.run();
      got = r == null ? "ok" : String.valueOf(r);
    } catch (Exception e) {
      got = describe(e);
    }
    if (((DistributedFileSystem) fs).isFileClosed(p)) {
      got = RECOVERED_FIRST;
    }
    say("~ " + what + " -> " + got);
  }

  /** What {@link #whileRecovering} prints when the recovery won the race. */
  static final String RECOVERED_FIRST = "(the recovery finished first)";

  static void truncateData() throws Exception {
    section("truncate at a block boundary");
    Path p = new Path(base, "boundary");
    long size = 2 * BLOCK + BLOCK / 2;
    write(fs, p, size, 3, BLOCK);
    attempt("truncate to 2 MiB", () -> fs.truncate(p, 2 * BLOCK));
    attempt("closed", () -> ((DistributedFileSystem) fs).isFileClosed(p));
    say("  " + blocks(p));
    say("  " + check(p, new long[][] {{3, 0, 2 * BLOCK}}));
    attempt("truncate to 0", () -> fs.truncate(p, 0));
    say("  " + blocks(p));

    section("truncate inside a block");
    Path q = new Path(base, "inside");
    write(fs, q, size, 4, BLOCK);
    long cut = BLOCK + BLOCK / 2 + 100;
    FileSystem other = FileSystem.newInstance(fs.getUri(), conf);
    attempt("truncate to 1.5 MiB + 100", () -> fs.truncate(q, cut));
    whileRecovering("length", q, () -> fs.getFileStatus(q).getLen());
    whileRecovering("closed", q, () -> ((DistributedFileSystem) fs).isFileClosed(q));
    whileRecovering("the same truncate again", q, () -> fs.truncate(q, cut));
    whileRecovering("the same truncate by another client", q, () -> other.truncate(q, cut));
    whileRecovering("truncate to another length", q, () -> fs.truncate(q, cut - 1));
    whileRecovering("append by another client", q, () -> { other.append(q).close(); return null; });
    whileRecovering("append by the truncating client", q, () -> { fs.append(q).close(); return null; });
    say("  wait: " + waitClosed(q));
    say("  " + blocks(q));
    say("  " + check(q, new long[][] {{4, 0, cut}}));
    try (FSDataOutputStream out = fs.append(q)) {
      writeBytes(out, 70_000, 5, 0);
    }
    say("  appended 70000 bytes: " + blocks(q));
    say("  " + check(q, new long[][] {{4, 0, cut}, {5, 0, 70_000}}));
    attempt("truncate inside the first block", () -> other.truncate(q, 777));
    say("  wait: " + waitClosed(q));
    say("  " + blocks(q));
    say("  " + check(q, new long[][] {{4, 0, 777}}));
    other.close();

    section("shell -truncate");
    Path s = new Path(base, "shell");
    write(fs, s, size, 6, BLOCK);
    String sp = s.toUri().getPath();
    shell("-truncate", "-w", "1000000", sp);
    say("  " + blocks(s));
    say("  " + check(s, new long[][] {{6, 0, 1_000_000}}));
    shell("-truncate", "524288", sp);
    say("  wait: " + waitClosed(s));
    say("  " + blocks(s));
    say("  " + check(s, new long[][] {{6, 0, 524_288}}));
    shell("-truncate", "0", sp);
    say("  " + blocks(s));
    shell("-truncate", "-w", "100", base.toUri().getPath());
    shell("-truncate", "-w", "100", new Path(base, "nothing").toUri().getPath());
  }

  static void concatErrors() throws Exception {
    section("concat: preconditions");
    DistributedFileSystem dfs = (DistributedFileSystem) fs;
    Path trg = new Path(base, "ctrg");
    Path s1 = new Path(base, "cs1");
    Path s2 = new Path(base, "cs2");
    write(fs, trg, 1000, 10, BLOCK);
    write(fs, s1, 1000, 11, BLOCK);
    write(fs, s2, 1000, 12, BLOCK);
    Path empty = new Path(base, "cempty");
    fs.create(empty).close();
    Path dir = new Path(base, "cdir");
    fs.mkdirs(dir);
    Path elsewhere = new Path(dir, "cs3");
    write(fs, elsewhere, 1000, 13, BLOCK);
    Path big = new Path(base, "cbig");
    write(fs, big, 1000, 14, 2 * BLOCK);
    Path missing = new Path(base, "cmissing");
    attempt("no sources", () -> { dfs.concat(trg, new Path[0]); return null; });
    attempt("missing target", () -> { dfs.concat(missing, new Path[] {s1}); return null; });
    attempt("target is a directory", () -> { dfs.concat(dir, new Path[] {s1}); return null; });
    attempt("target below a file", () -> { dfs.concat(new Path(s2, "x"), new Path[] {s1}); return null; });
    attempt("source below a file", () -> { dfs.concat(trg, new Path[] {new Path(s2, "x")}); return null; });
    attempt("missing source", () -> { dfs.concat(trg, new Path[] {s1, missing}); return null; });
    attempt("source is a directory", () -> { dfs.concat(trg, new Path[] {dir}); return null; });
    attempt("source in another directory", () -> { dfs.concat(trg, new Path[] {elsewhere}); return null; });
    attempt("source is the target", () -> { dfs.concat(trg, new Path[] {s1, trg}); return null; });
    attempt("empty source", () -> { dfs.concat(trg, new Path[] {empty}); return null; });
    attempt("larger source block size", () -> { dfs.concat(trg, new Path[] {big}); return null; });
    attempt("duplicate sources", () -> { dfs.concat(trg, new Path[] {s1, s2, s1}); return null; });
    FSDataOutputStream out = fs.create(new Path(base, "copen"), true, 65536, REPL, BLOCK);
    writeBytes(out, 100, 15, 0);
    out.hflush();
    attempt("source being written", () -> { dfs.concat(trg, new Path[] {new Path(base, "copen")}); return null; });
    attempt("target being written", () -> { dfs.concat(new Path(base, "copen"), new Path[] {s1}); return null; });
    out.close();

    fs.setPermission(trg, new FsPermission((short) 0644));
    FileSystem alice = as("alice");
    attempt("no write permission on the target", () -> { ((DistributedFileSystem) alice).concat(trg, new Path[] {s1}); return null; });
    fs.setPermission(trg, new FsPermission((short) 0666));
    fs.setPermission(s1, new FsPermission((short) 0600));
    attempt("no read permission on a source", () -> { ((DistributedFileSystem) alice).concat(trg, new Path[] {s1}); return null; });
    fs.setPermission(s1, new FsPermission((short) 0644));
    fs.setPermission(base, new FsPermission((short) 0755));
    attempt("no write permission on the sources' directory", () -> { ((DistributedFileSystem) alice).concat(trg, new Path[] {s1}); return null; });
    fs.setPermission(base, new FsPermission((short) 0777));
    alice.close();
    say("  sources still there: " + fs.exists(s1) + " " + fs.exists(s2) + "; target " + blocks(trg));
  }

  static void concatData() throws Exception {
    section("concat");
    DistributedFileSystem dfs = (DistributedFileSystem) fs;
    Path trg = new Path(base, "whole");
    long[] sizes = {BLOCK + BLOCK / 2, BLOCK + 7, 100, 2 * BLOCK};
    write(fs, trg, sizes[0], 20, BLOCK);
    Path[] srcs = new Path[sizes.length - 1];
    for (int i = 1; i < sizes.length; i++) {
      srcs[i - 1] = new Path(base, "part" + i);
      write(fs, srcs[i - 1], sizes[i], 20 + i, BLOCK);
    }
    // One source with replication 1: its block takes the target's replication.
    fs.setReplication(srcs[1], (short) 1);
    long mtimeBefore = fs.getFileStatus(trg).getModificationTime();
    Thread.sleep(5);
    attempt("concat three files", () -> { dfs.concat(trg, srcs); return null; });
    for (Path s : srcs) {
      say("  " + s.getName() + " exists: " + fs.exists(s));
    }
    say("  replication: " + waitReplicated(trg));
    say("  " + blocks(trg));
    say("  mtime advanced: " + (fs.getFileStatus(trg).getModificationTime() > mtimeBefore));
    long[][] pieces = new long[sizes.length][];
    for (int i = 0; i < sizes.length; i++) {
      pieces[i] = new long[] {20 + i, 0, sizes[i]};
    }
    say("  " + check(trg, pieces));
    try (FSDataOutputStream out = fs.append(trg)) {
      writeBytes(out, 1000, 30, 0);
    }
    long[][] more = Arrays.copyOf(pieces, pieces.length + 1);
    more[pieces.length] = new long[] {30, 0, 1000};
    say("  appended 1000 bytes: " + blocks(trg));
    say("  " + check(trg, more));

    Path e = new Path(base, "emptytarget");
    fs.create(e).close();
    Path one = new Path(base, "one");
    write(fs, one, 5000, 31, BLOCK);
    attempt("concat into an empty target", () -> { dfs.concat(e, new Path[] {one}); return null; });
    say("  " + blocks(e));
    say("  " + check(e, new long[][] {{31, 0, 5000}}));

    section("shell -concat");
    Path st = new Path(base, "shtrg");
    Path sa = new Path(base, "sha");
    Path sb = new Path(base, "shb");
    write(fs, st, 10, 40, BLOCK);
    write(fs, sa, 20, 41, BLOCK);
    write(fs, sb, 30, 42, BLOCK);
    shell("-concat", st.toUri().getPath(), sa.toUri().getPath(), sb.toUri().getPath());
    say("  " + check(st, new long[][] {{40, 0, 10}, {41, 0, 20}, {42, 0, 30}}));
    shell("-concat", st.toUri().getPath(), sa.toUri().getPath());
  }
}

package cairn.conformance;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.BlockLocation;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.PartialListing;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.protocol.HdfsLocatedFileStatus;
import org.apache.hadoop.hdfs.protocol.HdfsFileStatus;

/**
 * The FileSystem calls applications make beyond plain reads and writes
 * (Spark, MapReduce's FileInputFormat, Hive split planning, DistCp): located
 * listings (listFiles, listLocatedStatus, getFileBlockLocations), the
 * NameNode's located file info and batched listings. Prints a normalised
 * transcript (no host names, ports, times or ids) so a run against Cairn can
 * be compared with one against Apache HDFS (expected/appcalls.txt).
 *
 * <pre>
 * run.sh --main AppCalls --fs hdfs://host:port [--dir /appcalls]
 * </pre>
 *
 * Expects one DataNode (files are written with replication 1).
 */
public final class AppCalls {
  private AppCalls() {}

  private static final long BLOCK = 1 << 20;

  static void write(FileSystem fs, Path p, long size) throws IOException {
    byte[] buf = new byte[64 * 1024];
    try (FSDataOutputStream out = fs.create(p, true, 65536, (short) 1, BLOCK)) {
      long done = 0;
      while (done < size) {
        int k = (int) Math.min(buf.length, size - done);
        DataCheck.fill(buf, k, size, done);
        out.write(buf, 0, k);
        done += k;
      }
    }
  }

  static String rel(Path base, Path p) {
    String b = base.toUri().getPath();
    String s = p.toUri().getPath();
    return s.startsWith(b) ? "." + s.substring(b.length()) : s;
  }

  static String blocks(BlockLocation[] locs) throws IOException {
    if (locs == null) {
      return "null";
    }
    List<String> out = new ArrayList<>();
    for (BlockLocation l : locs) {
      out.add(l.getOffset() + "+" + l.getLength() + "@" + l.getHosts().length
          + (l.isCorrupt() ? "!" : ""));
    }
    return out.toString();
  }

  static String describe(Path base, FileStatus st) throws IOException {
    StringBuilder sb = new StringBuilder();
    sb.append(rel(base, st.getPath()))
        .append(st.isDirectory() ? " dir" : " file")
        .append(" len=").append(st.getLen())
        .append(" repl=").append(st.getReplication())
        .append(" bs=").append(st.getBlockSize())
        .append(" perm=").append(st.getPermission());
    if (st instanceof LocatedFileStatus) {
      sb.append(" blocks=").append(blocks(((LocatedFileStatus) st).getBlockLocations()));
    }
    return sb.toString();
  }

  static void section(String name) {
    System.out.println("== " + name);
  }

  public static void main(String[] args) throws Exception {
    String fsUrl = null;
    String dir = "/appcalls";
    Configuration conf = new Configuration();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--fs": fsUrl = args[++i]; break;
        case "--dir": dir = args[++i]; break;
        case "-D": {
          String[] kv = args[++i].split("=", 2);
          conf.set(kv[0], kv[1]);
          break;
        }
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (fsUrl == null) {
      throw new IllegalArgumentException("--fs is required");
    }
    conf.set("fs.defaultFS", fsUrl);
    FileSystem fs = FileSystem.get(URI.create(fsUrl), conf);
    DistributedFileSystem dfs = (DistributedFileSystem) fs;
    Path base = new Path(dir);
    fs.delete(base, true);
    fs.mkdirs(new Path(base, "a"));
    fs.mkdirs(new Path(base, "b/c"));
    long[] sizes = {0, 1000, BLOCK, BLOCK + 1, 2 * BLOCK + 7};
    for (long s : sizes) {
      write(fs, new Path(base, "a/f" + s), s);
    }
    write(fs, new Path(base, "b/c/deep"), 5000);
    write(fs, new Path(base, "top"), 42);

    section("listLocatedStatus " + rel(base, new Path(base, "a")));
    RemoteIterator<LocatedFileStatus> it = fs.listLocatedStatus(new Path(base, "a"));
    while (it.hasNext()) {
      System.out.println(describe(base, it.next()));
    }

    section("listLocatedStatus of the base (files and directories)");
    it = fs.listLocatedStatus(base);
    while (it.hasNext()) {
      System.out.println(describe(base, it.next()));
    }

    section("listFiles recursive");
    List<String> lines = new ArrayList<>();
    it = fs.listFiles(base, true);
    while (it.hasNext()) {
      lines.add(describe(base, it.next()));
    }
    // listFiles walks directories in listing order; sort for a stable view.
    lines.sort(null);
    lines.forEach(System.out::println);

    section("listFiles of a file");
    it = fs.listFiles(new Path(base, "top"), false);
    while (it.hasNext()) {
      System.out.println(describe(base, it.next()));
    }

    section("getFileBlockLocations ranges");
    FileStatus big = fs.getFileStatus(new Path(base, "a/f" + (2 * BLOCK + 7)));
    long[][] ranges = {{0, 1}, {BLOCK - 1, 2}, {BLOCK, BLOCK}, {2 * BLOCK, 100}, {0, 3 * BLOCK}, {5 * BLOCK, 1}};
    for (long[] r : ranges) {
      System.out.println(r[0] + "," + r[1] + " -> "
          + blocks(fs.getFileBlockLocations(big, r[0], r[1])));
    }
    System.out.println("by path -> " + blocks(fs.getFileBlockLocations(big.getPath(), 0, big.getLen())));

    section("getLocatedFileInfo");
    for (String name : new String[] {"a/f" + (BLOCK + 1), "a/f0", "a", "missing"}) {
      HdfsFileStatus st = dfs.getClient().getLocatedFileInfo(new Path(base, name).toUri().getPath(), false);
      if (st == null) {
        System.out.println(name + " -> null");
      } else if (st instanceof HdfsLocatedFileStatus) {
        HdfsLocatedFileStatus l = (HdfsLocatedFileStatus) st;
        System.out.println(name + " -> located len=" + st.getLen() + " dir=" + st.isDirectory()
            + " blocks=" + (l.getLocatedBlocks() == null ? "null"
                : l.getLocatedBlocks().locatedBlockCount() + " complete=" + l.getLocatedBlocks().isLastBlockComplete()));
      } else {
        System.out.println(name + " -> " + st.getClass().getSimpleName() + " len=" + st.getLen());
      }
    }

    section("batchedListStatusIterator");
    List<Path> paths = Arrays.asList(new Path(base, "a"), new Path(base, "missing"),
        new Path(base, "b"), new Path(base, "top"));
    RemoteIterator<PartialListing<FileStatus>> batches = dfs.batchedListStatusIterator(paths);
    while (batches.hasNext()) {
      PartialListing<FileStatus> pl = batches.next();
      try {
        List<FileStatus> got = pl.get();
        System.out.println("listing of " + rel(base, pl.getListedPath()) + ": " + got.size() + " entries");
        for (FileStatus st : got) {
          System.out.println("  " + describe(base, st));
        }
      } catch (FileNotFoundException e) {
        System.out.println("listing of " + rel(base, pl.getListedPath()) + ": FileNotFoundException");
      } catch (IOException e) {
        System.out.println("listing of " + rel(base, pl.getListedPath()) + ": " + e.getClass().getSimpleName());
      }
    }

    section("batchedListLocatedStatusIterator");
    RemoteIterator<PartialListing<LocatedFileStatus>> lbatches =
        dfs.batchedListLocatedStatusIterator(Arrays.asList(new Path(base, "a"), new Path(base, "b/c")));
    while (lbatches.hasNext()) {
      PartialListing<LocatedFileStatus> pl = lbatches.next();
      for (LocatedFileStatus st : pl.get()) {
        System.out.println(describe(base, st));
      }
    }

    fs.delete(base, true);
    fs.close();
  }
}

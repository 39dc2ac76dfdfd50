package cairn.conformance;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.DFSTestUtil;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.hdfs.protocol.ExtendedBlock;

/**
 * Records the fsck golden transcripts (expected/fsck-*.txt) from a real
 * Apache HDFS 3.4.1 MiniDFSCluster run in this JVM: two DataNodes,
 * dfs.replication=2, heartbeats every second and a short recheck interval
 * (a stopped DataNode is declared dead in about 11 s). It runs the four
 * scripts of scripts/admin/fsck through the kit's DfsAdmin program and, in
 * between, does what the Cairn test does to its own cluster:
 * <ol>
 * <li>healthy.txt;</li>
 * <li>flips a byte of the block file of /fsck/one (replication 1) and reads
 * the file, so the reader reports the replica; corrupt.txt;</li>
 * <li>stops one DataNode and waits until it is dead; dead.txt;</li>
 * <li>stops the other one too; nodatanodes.txt.</li>
 * </ol>
 * Compiled and run by regenerate-golden.sh (on the anchor harness's
 * classpath, which has MiniDFSCluster, plus the kit's classes).
 *
 * <pre>FsckGolden --scripts DIR --out DIR --dir DATA_DIR</pre>
 */
public final class FsckGolden {
  private FsckGolden() {}

  static final String[] PHASES = {"healthy", "corrupt", "dead", "nodatanodes"};

  public static void main(String[] argv) throws Exception {
    String scripts = null;
    String out = null;
    String dir = null;
    for (int i = 0; i + 1 < argv.length; i += 2) {
      switch (argv[i]) {
        case "--scripts": scripts = argv[i + 1]; break;
        case "--out": out = argv[i + 1]; break;
        case "--dir": dir = argv[i + 1]; break;
        default: throw new IllegalArgumentException("unknown option " + argv[i]);
      }
    }
    if (scripts == null || out == null || dir == null) {
      throw new IllegalArgumentException("usage: FsckGolden --scripts DIR --out DIR --dir DATA_DIR");
    }
    Configuration conf = new HdfsConfiguration();
    conf.setInt("dfs.replication", 2);
    conf.setLong("dfs.heartbeat.interval", 1);
    conf.setInt("dfs.namenode.heartbeat.recheck-interval", 500);
    conf.set("hadoop.tmp.dir", new File(dir, "tmp").getPath());
    MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf, new File(dir))
        .numDataNodes(2).checkExitOnShutdown(false).build();
    int rc = 0;
    try {
      cluster.waitActive();
      String url = "hdfs://127.0.0.1:" + cluster.getNameNodePort();
      String http = "127.0.0.1:" + cluster.getNameNode().getHttpAddress().getPort();
      // Not the cached instance: DfsAdmin's own (with its configuration) must be.
      FileSystem fs = FileSystem.newInstance(java.net.URI.create(url), new Configuration(conf));
      for (String phase : PHASES) {
        switch (phase) {
          case "corrupt": corrupt(cluster, fs, new Path("/fsck/one")); break;
          case "dead":
          case "nodatanodes": stopOne(cluster); break;
          default: break;
        }
        rc |= record(url, http, new File(scripts, phase + ".txt"), new File(out, "fsck-" + phase + ".txt"));
      }
    } finally {
      cluster.shutdownDataNodes();
      cluster.shutdownNameNodes();
    }
    System.out.flush();
    Runtime.getRuntime().halt(rc);
  }

  /** Runs one script through DfsAdmin with its stdout going to `to`. */
  static int record(String url, String http, File script, File to) throws Exception {
    PrintStream saved = System.out;
    try (PrintStream ps = new PrintStream(new FileOutputStream(to), true, StandardCharsets.UTF_8)) {
      System.setOut(ps);
      return DfsAdmin.run(new String[] {
          "--fs", url, "--script", script.getPath(), "-D", "dfs.namenode.http-address=" + http,
          "-D", "dfs.replication=2"});
    } finally {
      System.setOut(saved);
    }
  }

  /** Flips a byte in the block file of `p`'s first block, then reads `p`. */
  static void corrupt(MiniDFSCluster cluster, FileSystem fs, Path p) throws Exception {
    ExtendedBlock b = DFSTestUtil.getFirstBlock(fs, p);
    boolean flipped = false;
    for (int i = 0; i < cluster.getDataNodes().size(); i++) {
      File f = cluster.getBlockFile(i, b);
      if (f != null && f.exists()) {
        try (RandomAccessFile raf = new RandomAccessFile(f, "rw")) {
          int c = raf.read();
          raf.seek(0);
          raf.write(c ^ 0xff);
        }
        flipped = true;
      }
    }
    if (!flipped) {
      throw new IllegalStateException("no block file for " + b);
    }
    try (InputStream in = fs.open(p)) {
      byte[] buf = new byte[4096];
      while (in.read(buf) >= 0) {
        // the checksum error is what we want
      }
    } catch (IOException expected) {
      // reported to the NameNode by the client
    }
    long deadline = System.currentTimeMillis() + 60_000;
    while (cluster.getNamesystem().getCorruptReplicaBlocks() < 1) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("the corrupt replica was not reported");
      }
      Thread.sleep(100);
    }
  }

  /** Stops the first running DataNode and waits until it is dead. */
  static void stopOne(MiniDFSCluster cluster) throws Exception {
    int live = cluster.getNamesystem().getNumLiveDataNodes();
    cluster.stopDataNode(0);
    long deadline = System.currentTimeMillis() + 120_000;
    while (cluster.getNamesystem().getNumLiveDataNodes() >= live) {
      if (System.currentTimeMillis() > deadline) {
        throw new IllegalStateException("the stopped DataNode was not declared dead");
      }
      Thread.sleep(200);
    }
    // Let the NameNode's redundancy monitor queue the blocks it left.
    Thread.sleep(4_000);
  }
}

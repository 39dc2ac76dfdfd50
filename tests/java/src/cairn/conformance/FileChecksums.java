package cairn.conformance;

import java.io.IOException;
import java.net.URI;
import java.util.List;
import java.util.TreeSet;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileChecksum;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Writes deterministic files of edge sizes through the Hadoop Java client
 * and prints what {@code FileSystem.getFileChecksum} gives for each, in both
 * {@code dfs.checksum.combine.mode} modes (MD5MD5CRC and COMPOSITE_CRC),
 * for the whole file and for prefixes {@code getFileChecksum(path, length)}
 * ending at chunk and block edges and inside chunks and blocks. The output
 * depends only on the bytes, the block size and the chunk size, so a run
 * against Cairn is compared byte for byte with one recorded from Apache
 * HDFS 3.4.1 (expected/checksums.txt, written by regenerate-golden.sh).
 *
 * <pre>
 * run.sh --main FileChecksums --fs hdfs://host:port [--dir /checksums]
 *        [--replications 1,3] [--blocksize 1048576] [--bpc 512] [-D key=value]
 * </pre>
 *
 * {@code -D dfs.checksum.type=CRC32} writes the files with zlib's CRC32
 * instead of CRC32C (a Cairn DataNode stores what its own
 * {@code dfs.checksum.type} says, so its cluster needs the same setting).
 *
 * One line per checksum: {@code r<replication> size=<bytes> <mode> <range>
 * <algorithm> <hex of getBytes()>}, where range is {@code all} or
 * {@code len=<bytes>}; a failed call prints {@code ERROR <exception class>}
 * instead of the algorithm and bytes. Exits 0 when every file was written,
 * whatever the checksums were.
 */
public final class FileChecksums {
  private FileChecksums() {}

  private static final String[] MODES = {"MD5MD5CRC", "COMPOSITE_CRC"};

  public static void main(String[] args) throws Exception {
    KitArgs a = new KitArgs(args, "--dir", "--replications", "--blocksize", "--bpc");
    String fsUrl = a.fs;
    Configuration conf = a.conf;
    String dir = a.get("--dir", "/checksums");
    List<Long> replications = a.getLongs("--replications", "1");
    long blockSize = a.getLong("--blocksize", 1 << 20);
    int bpc = (int) a.getLong("--bpc", 512);
    ShellScript.configureLogging();
    conf.setInt("dfs.bytes-per-checksum", bpc);
    URI uri = URI.create(fsUrl);
    FileSystem writer = FileSystem.newInstance(uri, conf);
    FileSystem[] readers = new FileSystem[MODES.length];
    for (int m = 0; m < MODES.length; m++) {
      Configuration c = new Configuration(conf);
      c.set("dfs.checksum.combine.mode", MODES[m]);
      readers[m] = FileSystem.newInstance(uri, c);
    }

    long chunk = bpc;
    long[] sizes = {
      0, 1, chunk - 1, chunk, chunk + 1,
      blockSize - 1, blockSize, blockSize + 1,
      3 * blockSize + 5 * chunk + 300,
    };
    System.out.printf("# blocksize=%d bytes-per-checksum=%d checksum-type=%s%n",
        blockSize, bpc, conf.get("dfs.checksum.type", "CRC32C"));
    Path root = new Path(dir);
    writer.delete(root, true);
    for (long repl : replications) {
      short r = (short) repl;
      for (long size : sizes) {
        Path p = new Path(dir + "/r" + r + "/f" + size);
        write(writer, p, size, r, blockSize);
        for (int m = 0; m < MODES.length; m++) {
          print(readers[m], p, r, size, MODES[m], -1);
          for (long len : prefixes(size, blockSize, chunk)) {
            print(readers[m], p, r, size, MODES[m], len);
          }
        }
      }
    }
    writer.delete(root, true);
    for (FileSystem fs : readers) {
      fs.close();
    }
    writer.close();
  }

  /** Prefix lengths to ask for: 0, edges and insides of chunks and blocks, past the end. */
  static TreeSet<Long> prefixes(long size, long blockSize, long chunk) {
    long lastBlockStart = size == 0 ? 0 : (size - 1) / blockSize * blockSize;
    long[] candidates = {
      0, 1, chunk, chunk + 300, blockSize - 1, blockSize, blockSize + 1000,
      lastBlockStart + 700, size - chunk - 1, size - 1, size + 1,
    };
    TreeSet<Long> out = new TreeSet<>();
    for (long c : candidates) {
      if (c >= 0 && (c < size || c == size + 1)) {
        out.add(c);
      }
    }
    return out;
  }

  static void write(FileSystem fs, Path p, long size, short replication, long blockSize)
      throws IOException {
    byte[] buf = new byte[1 << 16];
    try (FSDataOutputStream out = fs.create(p, true, 65536, replication, blockSize)) {
      long done = 0;
      while (done < size) {
        // An odd write size, so writes do not line up with chunks.
        int k = (int) Math.min(buf.length - 13, size - done);
        DataCheck.fill(buf, k, size, done);
        out.write(buf, 0, k);
        done += k;
      }
    }
  }

  static void print(FileSystem fs, Path p, short r, long size, String mode, long len) {
    String range = len < 0 ? "all" : "len=" + len;
    String result;
    try {
      FileChecksum sum = len < 0 ? fs.getFileChecksum(p) : fs.getFileChecksum(p, len);
      result = sum == null ? "null" : sum.getAlgorithmName() + " " + hex(sum.getBytes());
    } catch (IOException e) {
      result = "ERROR " + e.getClass().getName();
    }
    System.out.printf("r%d size=%d %s %s %s%n", r, size, mode, range, result);
  }

  static String hex(byte[] b) {
    StringBuilder sb = new StringBuilder(b.length * 2);
    for (byte x : b) {
      sb.append(String.format("%02x", x & 0xff));
    }
    return sb.toString();
  }
}

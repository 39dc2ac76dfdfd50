package cairn.conformance;

import java.io.IOException;
import java.net.URI;
import java.security.MessageDigest;
import java.util.List;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Writes files of the given sizes through the Hadoop Java client
 * (FileSystem API: create, write, close), reads each back whole (stream
 * read) and by ranges (positional read and seek+read), and compares every
 * byte with what was written. Prints one line per file and exits 1 if any
 * file differs.
 *
 * <pre>
 * run.sh --main DataCheck --fs hdfs://host:port --dir /java --replication 3
 *        --blocksize 1048576 --sizes 0,1,511,512,513,1048575,1048576,1048577
 * </pre>
 */
public final class DataCheck {
  private DataCheck() {}

  /** Deterministic content: byte i of file `seed`. */
  static byte at(long seed, long i) {
    long x = (i / 8 + 1) * 0x9E3779B97F4A7C15L ^ (seed * 0xBF58476D1CE4E5B9L);
    x ^= x >>> 31;
    x *= 0x94D049BB133111EBL;
    x ^= x >>> 29;
    return (byte) (x >>> ((i % 8) * 8));
  }

  static void fill(byte[] buf, int n, long seed, long offset) {
    for (int k = 0; k < n; k++) {
      buf[k] = at(seed, offset + k);
    }
  }

  public static void main(String[] args) throws Exception {
    KitArgs a = new KitArgs(args, "--dir", "--replication", "--blocksize", "--sizes");
    String fsUrl = a.fs;
    Configuration conf = a.conf;
    String dir = a.get("--dir", "/datacheck");
    short replication = (short) a.getLong("--replication", 3);
    long blockSize = a.getLong("--blocksize", 1 << 20);
    List<Long> sizes = a.getLongs("--sizes", "");
    FileSystem fs = FileSystem.get(URI.create(fsUrl), conf);
    int failures = 0;
    byte[] buf = new byte[1 << 20];
    byte[] want = new byte[1 << 20];
    for (int n = 0; n < sizes.size(); n++) {
      long size = sizes.get(n);
      long seed = 1000L * replication + n;
      Path p = new Path(dir + "/r" + replication + "/f" + size);
      long t0 = System.nanoTime();
      try (FSDataOutputStream out = fs.create(p, true, 65536, replication, blockSize)) {
        long done = 0;
        while (done < size) {
          int k = (int) Math.min(buf.length - 13, size - done);
          fill(buf, k, seed, done);
          out.write(buf, 0, k);
          done += k;
        }
      }
      long t1 = System.nanoTime();
      String problem = null;
      FileStatus st = fs.getFileStatus(p);
      if (st.getLen() != size) {
        problem = "length " + st.getLen();
      } else if (st.getReplication() != replication) {
        problem = "replication " + st.getReplication();
      }
      if (problem == null) {
        try (FSDataInputStream in = fs.open(p)) {
          long done = 0;
          while (done < size && problem == null) {
            int k = in.read(buf, 0, (int) Math.min(buf.length, size - done));
            if (k < 0) {
              problem = "EOF at " + done;
              break;
            }
            fill(want, k, seed, done);
            for (int j = 0; j < k; j++) {
              if (buf[j] != want[j]) {
                problem = "byte " + (done + j) + " differs";
                break;
              }
            }
            done += k;
          }
          if (problem == null && in.read() != -1) {
            problem = "data beyond the length";
          }
          // Positional and seek+read ranges across chunk and block edges.
          long[] offsets = {0, 511, size / 2, Math.max(0, size - 1), Math.max(0, blockSize - 3)};
          for (long off : offsets) {
            if (problem != null || off >= size) {
              continue;
            }
            int len = (int) Math.min(1000, size - off);
            byte[] got = new byte[len];
            in.readFully(off, got);
            fill(want, len, seed, off);
            for (int j = 0; j < len; j++) {
              if (got[j] != want[j]) {
                problem = "pread at " + off + " differs";
                break;
              }
            }
            in.seek(off);
            in.readFully(got);
            for (int j = 0; j < len && problem == null; j++) {
              if (got[j] != want[j]) {
                problem = "seek+read at " + off + " differs";
              }
            }
          }
        } catch (IOException e) {
          problem = e.toString();
        }
      }
      long t2 = System.nanoTime();
      if (problem == null) {
        System.out.printf("OK %s size=%d write_ms=%d read_ms=%d%n", p, size, (t1 - t0) / 1000000, (t2 - t1) / 1000000);
      } else {
        failures++;
        System.out.printf("FAIL %s size=%d: %s%n", p, size, problem);
      }
    }
    fs.close();
    System.exit(failures == 0 ? 0 : 1);
  }
}

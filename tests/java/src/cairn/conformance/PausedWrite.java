package cairn.conformance;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

/**
 * Writes a file in two halves through the Java client, pausing in between
 * (after an hflush) until a line arrives on stdin, so a test can break the
 * pipeline mid-write; then finishes, closes, reads the file back and
 * compares every byte. Prints "PAUSED" at the pause and "OK"/"FAIL ..."
 * at the end; exits 1 on failure.
 *
 * <pre>run.sh --main PausedWrite --fs hdfs://H:P --path /f --size 6291456 --replication 3</pre>
 */
public final class PausedWrite {
  private PausedWrite() {}

  public static void main(String[] args) throws Exception {
    String fsUrl = null;
    String path = "/paused";
    long size = 6L << 20;
    short replication = 3;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--fs": fsUrl = args[++i]; break;
        case "--path": path = args[++i]; break;
        case "--size": size = Long.parseLong(args[++i]); break;
        case "--replication": replication = Short.parseShort(args[++i]); break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    Configuration conf = new Configuration();
    conf.set("fs.defaultFS", fsUrl);
    // Recover onto the remaining nodes when no replacement is available.
    conf.set("dfs.client.block.write.replace-datanode-on-failure.best-effort", "true");
    FileSystem fs = FileSystem.get(URI.create(fsUrl), conf);
    Path p = new Path(path);
    byte[] buf = new byte[64 * 1024];
    long half = size / 2;
    try (FSDataOutputStream out = fs.create(p, true, 65536, replication, 128L << 20)) {
      long done = 0;
      while (done < size) {
        int k = (int) Math.min(buf.length, size - done);
        DataCheck.fill(buf, k, 77, done);
        out.write(buf, 0, k);
        done += k;
        if (done == half) {
          out.hflush();
          System.out.println("PAUSED");
          System.out.flush();
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
        }
      }
    }
    byte[] want = new byte[buf.length];
    try (FSDataInputStream in = fs.open(p)) {
      long done = 0;
      while (done < size) {
        int k = in.read(buf, 0, (int) Math.min(buf.length, size - done));
        if (k < 0) {
          System.out.println("FAIL short file: " + done);
          System.exit(1);
        }
        DataCheck.fill(want, k, 77, done);
        for (int j = 0; j < k; j++) {
          if (buf[j] != want[j]) {
            System.out.println("FAIL byte " + (done + j));
            System.exit(1);
          }
        }
        done += k;
      }
    }
    System.out.println("OK " + fs.getFileStatus(p).getLen());
    fs.close();
  }
}

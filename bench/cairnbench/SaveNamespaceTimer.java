import java.net.URI;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.DFSClient;
import org.apache.hadoop.hdfs.DistributedFileSystem;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;

/**
 * Times saveNamespace from inside one JVM, so that the JVM's start-up (seconds,
 * and noisy on a loaded machine) is not in the figure: the bench's scale
 * measurement runs it with Java's single-file source launcher on the shared
 * harness's classpath (`java -cp CP SaveNamespaceTimer.java URL COUNT`).
 *
 * Enters safe mode (saveNamespace needs it), then COUNT times: one getFileInfo
 * of "/" (a no-op call: the round trip of an RPC) and one saveNamespace(0, 0)
 * (always writes an image), each timed with System.nanoTime(). Prints one
 * `RESULT save noop_s= save_s= saved=` line per pair.
 */
public class SaveNamespaceTimer {
  public static void main(String[] args) throws Exception {
    URI uri = URI.create(args[0]);
    int count = Integer.parseInt(args[1]);
    Configuration conf = new Configuration();
    try (FileSystem fs = FileSystem.get(uri, conf)) {
      DistributedFileSystem dfs = (DistributedFileSystem) fs;
      DFSClient client = dfs.getClient();
      // Warm the connection and the client's code paths before timing.
      for (int i = 0; i < 20; i++) {
        client.getFileInfo("/");
      }
      client.setSafeMode(HdfsConstants.SafeModeAction.SAFEMODE_ENTER, false);
      for (int i = 0; i < count; i++) {
        long t0 = System.nanoTime();
        client.getFileInfo("/");
        long t1 = System.nanoTime();
        boolean saved = dfs.saveNamespace(0, 0);
        long t2 = System.nanoTime();
        System.out.printf("RESULT save noop_s=%.6f save_s=%.6f saved=%s%n",
            (t1 - t0) / 1e9, (t2 - t1) / 1e9, saved);
      }
    }
  }
}

package cairn.conformance;

import java.io.IOException;
import java.net.URI;
import java.util.concurrent.TimeUnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.hdfs.DFSInotifyEventInputStream;
import org.apache.hadoop.hdfs.client.HdfsAdmin;
import org.apache.hadoop.hdfs.inotify.Event;
import org.apache.hadoop.hdfs.inotify.EventBatch;

/**
 * HDFS inotify as applications use it: HdfsAdmin.getInotifyEventStream(),
 * then a scripted sequence of namespace changes (mkdir, create + close,
 * append + close, setReplication, setPermission, setTimes, rename, delete,
 * truncate at a block boundary, concat),
 * each followed by polling the stream until its events arrive. Prints the
 * events normalised (paths relative to the base, no times, txids or ids) so
 * a run against Cairn can be compared with one against Apache HDFS
 * (expected/inotify.txt).
 *
 * <pre>
 * run.sh --main Inotify --fs hdfs://host:port [--dir /inotify]
 * </pre>
 */
public final class Inotify {
  private Inotify() {}

  private static String base;

  static String rel(String p) {
    return p.startsWith(base) ? "." + p.substring(base.length()) : p;
  }

  static String describe(Event e) {
    switch (e.getEventType()) {
      case CREATE: {
        Event.CreateEvent c = (Event.CreateEvent) e;
        return "CREATE " + c.getiNodeType() + " " + rel(c.getPath()) + " perms=" + c.getPerms()
            + (c.getiNodeType() == Event.CreateEvent.INodeType.FILE
                ? " replication=" + c.getReplication() + " overwrite=" + c.getOverwrite()
                    + " blockSize=" + c.getDefaultBlockSize()
                : "");
      }
      case CLOSE: {
        Event.CloseEvent c = (Event.CloseEvent) e;
        return "CLOSE " + rel(c.getPath()) + " size=" + c.getFileSize();
      }
      case APPEND: {
        Event.AppendEvent a = (Event.AppendEvent) e;
        return "APPEND " + rel(a.getPath()) + " newBlock=" + a.toNewBlock();
      }
      case RENAME: {
        Event.RenameEvent r = (Event.RenameEvent) e;
        return "RENAME " + rel(r.getSrcPath()) + " -> " + rel(r.getDstPath());
      }
      case METADATA: {
        Event.MetadataUpdateEvent m = (Event.MetadataUpdateEvent) e;
        String what;
        switch (m.getMetadataType()) {
          case REPLICATION: what = "replication=" + m.getReplication(); break;
          case PERMS: what = "perms=" + m.getPerms(); break;
          case OWNER: what = "owner=" + m.getOwnerName() + ":" + m.getGroupName(); break;
          case TIMES: what = "mtime=" + m.getMtime() + " atime=" + m.getAtime(); break;
          default: what = m.getMetadataType().toString();
        }
        return "METADATA " + m.getMetadataType() + " " + rel(m.getPath()) + " " + what;
      }
      case UNLINK: {
        Event.UnlinkEvent u = (Event.UnlinkEvent) e;
        return "UNLINK " + rel(u.getPath());
      }
      case TRUNCATE: {
        Event.TruncateEvent t = (Event.TruncateEvent) e;
        return "TRUNCATE " + rel(t.getPath()) + " size=" + t.getFileSize();
      }
      default:
        return e.getEventType().toString();
    }
  }

  static String mainPath(Event e) {
    switch (e.getEventType()) {
      case CREATE: return ((Event.CreateEvent) e).getPath();
      case CLOSE: return ((Event.CloseEvent) e).getPath();
      case APPEND: return ((Event.AppendEvent) e).getPath();
      case RENAME: return ((Event.RenameEvent) e).getSrcPath();
      case METADATA: return ((Event.MetadataUpdateEvent) e).getPath();
      case UNLINK: return ((Event.UnlinkEvent) e).getPath();
      case TRUNCATE: return ((Event.TruncateEvent) e).getPath();
      default: return null;
    }
  }

  /** Polls until an event whose description starts with `until` was seen. */
  static void drain(DFSInotifyEventInputStream in, String step, String until) throws Exception {
    System.out.println("== " + step);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      EventBatch b = in.poll(1, TimeUnit.SECONDS);
      if (b == null) {
        continue;
      }
      boolean done = false;
      for (Event e : b.getEvents()) {
        // Only what happens under the base (others may share the cluster).
        String p = mainPath(e);
        if (p != null && (p.equals(base) || p.startsWith(base + "/"))) {
          String d = describe(e);
          System.out.println(d);
          done |= d.startsWith(until);
        }
      }
      if (done) {
        return;
      }
    }
    System.out.println("TIMEOUT waiting for " + until);
  }

  static void write(FileSystem fs, Path p, int len, boolean append) throws IOException {
    byte[] buf = new byte[len];
    DataCheck.fill(buf, len, len, 0);
    try (FSDataOutputStream out = append ? fs.append(p) : fs.create(p, true, 4096, (short) 1, 1 << 20)) {
      out.write(buf);
    }
  }

  public static void main(String[] args) throws Exception {
    String fsUrl = null;
    String dir = "/inotify";
    Configuration conf = new Configuration();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--fs": fsUrl = args[++i]; break;
        case "--dir": dir = args[++i]; break;
        default: throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    if (fsUrl == null) {
      throw new IllegalArgumentException("--fs is required");
    }
    conf.set("fs.defaultFS", fsUrl);
    FileSystem fs = FileSystem.get(URI.create(fsUrl), conf);
    base = dir;
    fs.delete(new Path(dir), true);
    DFSInotifyEventInputStream in = new HdfsAdmin(URI.create(fsUrl), conf).getInotifyEventStream();
    Path d = new Path(dir);
    Path f = new Path(dir, "f");
    Path g = new Path(dir, "g");
    fs.mkdirs(d, new FsPermission((short) 0755));
    drain(in, "mkdirs", "CREATE DIRECTORY .");
    write(fs, f, 1000, false);
    drain(in, "create, write 1000 bytes, close", "CLOSE ./f");
    write(fs, f, 500, true);
    drain(in, "append 500 bytes, close", "CLOSE ./f");
    fs.setReplication(f, (short) 2);
    drain(in, "setReplication 2", "METADATA REPLICATION");
    fs.setPermission(f, new FsPermission((short) 0600));
    drain(in, "setPermission 600", "METADATA PERMS");
    fs.setTimes(f, 1234567890000L, -1);
    drain(in, "setTimes mtime only", "METADATA TIMES");
    fs.rename(f, g);
    drain(in, "rename f g", "RENAME");
    fs.delete(g, false);
    drain(in, "delete g", "UNLINK ./g");
    Path t = new Path(dir, "t");
    write(fs, t, 3000, false);
    drain(in, "create t", "CLOSE ./t");
    System.out.println("truncate returned " + fs.truncate(t, 0));
    drain(in, "truncate t to 0 (a block boundary)", "TRUNCATE ./t");
    Path a = new Path(dir, "a");
    Path b = new Path(dir, "b");
    write(fs, a, 100, false);
    drain(in, "create a", "CLOSE ./a");
    write(fs, b, 200, false);
    drain(in, "create b", "CLOSE ./b");
    fs.concat(a, new Path[] {b});
    drain(in, "concat a b", "CLOSE ./a");
    fs.delete(d, true);
    drain(in, "delete the base", "UNLINK .");
    fs.close();
  }
}

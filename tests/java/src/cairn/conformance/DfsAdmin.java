package cairn.conformance;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataOutputStream;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.Tool;

/**
 * Runs a script of {@code hdfs dfsadmin} commands in one JVM through Hadoop's
 * own {@code org.apache.hadoop.hdfs.tools.DFSAdmin} (what {@code hdfs dfsadmin}
 * runs, through {@code ToolRunner}) and prints a normalised transcript in the
 * format of {@link ShellScript}, so that a run against Cairn can be compared
 * with one against Apache HDFS 3.4.1 ({@code expected/dfsadmin.txt}).
 *
 * <pre>
 * run.sh --main DfsAdmin --fs hdfs://HOST:PORT --script FILE [--raw] [--tool storagepolicies]
 *     [-D key=value]...
 * </pre>
 *
 * {@code --tool storagepolicies} runs {@code hdfs storagepolicies} instead
 * ({@code org.apache.hadoop.hdfs.tools.StoragePolicyAdmin}), with the same
 * script format, directives and normalisation.
 *
 * DFSAdmin is in hadoop-hdfs, not in the shaded client jars, so run.sh runs
 * this program on the classpath of {@code hdfs-tools/pom.xml}; it is loaded
 * by name, and this class compiles against the client jars like the others.
 *
 * Script lines are the arguments of {@code hdfs dfsadmin} ({@code -report},
 * {@code -safemode enter}, ...), parsed as {@link ShellScript} parses its
 * scripts; a line starting {@code fs}, {@code lsSnapshottableDir},
 * {@code snapshotDiff}, {@code fsck}, {@code haadmin}, {@code ec}, {@code cacheadmin},
 * {@code crypto}, {@code debug}, {@code storagepolicies}, {@code groups},
 * {@code diskbalancer}, {@code balancer} or {@code mover} runs
 * that tool instead (FsShell, and hadoop-hdfs's
 * {@code tools.snapshot.LsSnapshottableDir} and {@code SnapshotDiff}, as
 * {@code hdfs dfs}, {@code hdfs lsSnapshottableDir} and {@code hdfs
 * snapshotDiff} do). {@code %write PATH TEXT} and {@code %append PATH TEXT}
 * write a line of text to a file. And three directives that need a writer
 * in the same JVM:
 * {@code %open PATH} creates PATH (overwriting) and hflushes it with no data,
 * keeping it open (so the NameNode has it under construction, with a lease
 * held by this JVM's DFSClient); {@code %close PATH} closes it;
 * {@code %rm PATH} deletes PATH recursively; {@code %mkdir PATH} makes PATH
 * and its parents; {@code %fs ARGS...} runs
 * {@code hadoop fs ARGS...} (FsShell), where {@code @LOCAL@} names a local
 * directory of files that {@code %local NAME BYTES} writes (BYTES bytes,
 * 'a' to 'z' repeated). {@code @user} runs a line as
 * that (simple-auth, remote) user, as in ShellScript. The files stay empty, so no block
 * is ever written or deleted and block counts stay the same across runs.
 *
 * On top of ShellScript's normalisation (cluster URL, user, dates of -ls), the
 * parts of DFSAdmin's output that depend on the machine rather than on the
 * NameNode's behaviour are masked: byte amounts with their human form
 * ({@code 123 (1.2 GB)} becomes {@code <bytes>}), percentages ({@code <pct>}),
 * {@code Date.toString()} times ({@code <date>}), DataNode transfer addresses
 * ({@code <dn>}) and host names in the report, DFSClient names
 * ({@code <client>}) and the txid of {@code -rollEdits} ({@code <txid>}: HDFS
 * spends transactions on segment markers that Cairn does not write). Blank
 * lines on stderr are dropped: HDFS ends an exception's stack trace with
 * one, and the trace itself is dropped by the normaliser. {@code --raw}
 * leaves the output as DFSAdmin printed it (but for stack frames).
 */
public final class DfsAdmin {
  private DfsAdmin() {}

  private static final String DFSADMIN = "org.apache.hadoop.hdfs.tools.DFSAdmin";
  private static final String STORAGE_POLICY_ADMIN =
      "org.apache.hadoop.hdfs.tools.StoragePolicyAdmin";

  /** Script lines naming another `hdfs` subcommand: its tool class. */
  private static final Map<String, String> OTHER_TOOLS = Map.ofEntries(
      Map.entry("fs", "org.apache.hadoop.fs.FsShell"),
      Map.entry("lsSnapshottableDir", "org.apache.hadoop.hdfs.tools.snapshot.LsSnapshottableDir"),
      Map.entry("snapshotDiff", "org.apache.hadoop.hdfs.tools.snapshot.SnapshotDiff"),
      Map.entry("fsck", "org.apache.hadoop.hdfs.tools.DFSck"),
      Map.entry("haadmin", "org.apache.hadoop.hdfs.tools.DFSHAAdmin"),
      Map.entry("ec", "org.apache.hadoop.hdfs.tools.ECAdmin"),
      Map.entry("cacheadmin", "org.apache.hadoop.hdfs.tools.CacheAdmin"),
      Map.entry("crypto", "org.apache.hadoop.hdfs.tools.CryptoAdmin"),
      Map.entry("debug", "org.apache.hadoop.hdfs.tools.DebugAdmin"),
      Map.entry("storagepolicies", "org.apache.hadoop.hdfs.tools.StoragePolicyAdmin"),
      Map.entry("groups", "org.apache.hadoop.hdfs.tools.GetGroups"),
      Map.entry("diskbalancer", "org.apache.hadoop.hdfs.tools.DiskBalancerCLI"),
      Map.entry("balancer", "org.apache.hadoop.hdfs.server.balancer.Balancer$Cli"),
      Map.entry("mover", "org.apache.hadoop.hdfs.server.mover.Mover$Cli"));

  public static void main(String[] argv) {
    int rc;
    try {
      rc = run(argv);
    } catch (ShellScript.ScriptError e) {
      System.err.println("DfsAdmin: " + e.getMessage());
      rc = 2;
    } catch (Exception e) {
      System.err.println("DfsAdmin: " + e);
      rc = 1;
    }
    System.out.flush();
    System.err.flush();
    Runtime.getRuntime().halt(rc);
  }

  static int run(String[] argv) throws Exception {
    String fsUrl = null;
    String script = null;
    boolean raw = false;
    String tool = DFSADMIN;
    Configuration conf = new Configuration();
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if ((a.equals("--fs") || a.equals("--script") || a.equals("-D") || a.equals("--tool"))
          && i + 1 >= argv.length) {
        throw new ShellScript.ScriptError(a + " needs a value");
      }
      if (a.equals("--fs")) {
        fsUrl = argv[++i];
      } else if (a.equals("--script")) {
        script = argv[++i];
      } else if (a.equals("--raw")) {
        raw = true;
      } else if (a.equals("--tool")) {
        String name = argv[++i];
        if (!name.equals("storagepolicies")) {
          throw new ShellScript.ScriptError("unknown --tool " + name);
        }
        tool = STORAGE_POLICY_ADMIN;
      } else if (a.equals("-D")) {
        String kv = argv[++i];
        int eq = kv.indexOf('=');
        if (eq <= 0) {
          throw new ShellScript.ScriptError("-D needs key=value, got '" + kv + "'");
        }
        conf.set(kv.substring(0, eq), kv.substring(eq + 1));
      } else {
        throw new ShellScript.ScriptError(
            "usage: DfsAdmin --fs URL --script FILE [--raw] [--tool storagepolicies] [-D k=v]...");
      }
    }
    if (fsUrl == null || script == null) {
      throw new ShellScript.ScriptError("--fs and --script are required");
    }
    List<ShellScript.Step> steps = ShellScript.parseScript(script);
    ShellScript.configureLogging();
    conf.set("fs.defaultFS", fsUrl);
    final boolean masked = !raw;
    ShellScript.Normaliser norm = new ShellScript.Normaliser(fsUrl, ShellScript.superUserNames());
    if (raw) {
      norm = new ShellScript.Normaliser(fsUrl, java.util.Set.of());
    }
    Class<?> adminClass = Class.forName(tool);
    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    Map<String, FSDataOutputStream> open = new LinkedHashMap<>();
    Map<String, UserGroupInformation> ugis = new HashMap<>();
    try {
      for (ShellScript.Step s : steps) {
        ShellScript.Captured c;
        UserGroupInformation ugi = s.user == null ? null
            : ugis.computeIfAbsent(s.user, UserGroupInformation::createRemoteUser);
        if (s.args[0].equals("%fs")) {
          c = ShellScript.runTool(conf, ugi, FsShell::new, fsArgs(s.args));
        } else if (s.args[0].startsWith("%")) {
          c = directive(conf, open, s.args);
        } else {
          String[] args = datanodeArgs(conf, s.args);
          Class<?> toolClass = adminClass;
          String other = OTHER_TOOLS.get(args[0]);
          if (other != null) {
            // `fs ...`, `lsSnapshottableDir`, `snapshotDiff ...`: the tool
            // `hdfs` (or `hadoop`) runs for that subcommand.
            toolClass = Class.forName(other);
            args = java.util.Arrays.copyOfRange(args, 1, args.length);
          }
          final Class<?> tc = toolClass;
          c = ShellScript.runTool(conf, ugi, () -> newAdmin(tc, conf), args);
        }
        out.println(norm.line("$ " + s.text));
        for (String l : norm.block(c.out)) {
          out.println(masked ? mask(l) : l);
        }
        List<String> errs = new java.util.ArrayList<>();
        for (String l : norm.block(c.err)) {
          // DFSAdmin prints some server exceptions whole: Hadoop's message
          // with its stack trace, dropped by the normaliser but for the
          // blank line that ended it, and for what DFSAdmin printed after
          // the exception (`-reconfig`'s "."), which joins the message's
          // line again. Cairn sends no trace.
          if (l.equals(".") && !errs.isEmpty()) {
            errs.set(errs.size() - 1, errs.get(errs.size() - 1) + l);
          } else if (!l.isEmpty()) {
            errs.add(l);
          }
        }
        for (String l : errs) {
          out.println(("! " + (masked ? mask(l) : l)).stripTrailing());
        }
        out.println("exit=" + c.exit);
        out.println();
        out.flush();
      }
    } finally {
      for (FSDataOutputStream o : open.values()) {
        o.close();
      }
      out.flush();
    }
    return 0;
  }

  private static Tool newAdmin(Class<?> toolClass, Configuration conf) {
    try {
      try {
        return (Tool) toolClass.getConstructor(Configuration.class).newInstance(conf);
      } catch (NoSuchMethodException e) {
        // LsSnapshottableDir, SnapshotDiff, the Balancer's and the Mover's
        // Cli (the Balancer's is package-private): ToolRunner sets the conf.
        java.lang.reflect.Constructor<?> c = toolClass.getDeclaredConstructor();
        c.setAccessible(true);
        return (Tool) c.newInstance();
      }
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException("cannot create " + toolClass.getName(), e);
    }
  }

  /**
   * The arguments of a line with @DN@ replaced by the IPC address
   * (ip:port) of the cluster's first DataNode, for the commands that talk
   * to a DataNode (-getDatanodeInfo, -triggerBlockReport, ...), and @NN@ by
   * the NameNode's RPC address (-reconfig namenode).
   */
  private static String[] datanodeArgs(Configuration conf, String[] args) throws IOException {
    String[] out = args.clone();
    for (int i = 0; i < out.length; i++) {
      if (out[i].contains("@NN@")) {
        java.net.URI fs = FileSystem.getDefaultUri(conf);
        out[i] = out[i].replace("@NN@", fs.getHost() + ":" + fs.getPort());
      }
      if (out[i].contains("@DN@")) {
        org.apache.hadoop.hdfs.DistributedFileSystem dfs =
            (org.apache.hadoop.hdfs.DistributedFileSystem) FileSystem.get(conf);
        org.apache.hadoop.hdfs.protocol.DatanodeInfo[] dns = dfs.getDataNodeStats();
        if (dns.length == 0) {
          throw new IOException("@DN@: the cluster has no live DataNode");
        }
        out[i] = out[i].replace("@DN@", dns[0].getIpAddr() + ":" + dns[0].getIpcPort());
      }
    }
    return out;
  }

  /** Local files of %local lines, named by @LOCAL@ in %fs lines. */
  private static final java.nio.file.Path LOCAL = java.nio.file.Paths.get(
      System.getProperty("java.io.tmpdir"), "cairn-kit-" + System.getProperty("user.name"));

  /** The FsShell arguments of a %fs line, @LOCAL@ replaced. */
  private static String[] fsArgs(String[] args) {
    String[] out = new String[args.length - 1];
    for (int i = 1; i < args.length; i++) {
      out[i - 1] = args[i].replace("@LOCAL@", LOCAL.toString());
    }
    return out;
  }

  /** %local NAME BYTES: a local file of BYTES bytes ('a' to 'z' over and over). */
  private static ShellScript.Captured local(String[] args) {
    try {
      int n = Integer.parseInt(args[2]);
      byte[] data = new byte[n];
      for (int i = 0; i < n; i++) {
        data[i] = (byte) ('a' + i % 26);
      }
      java.nio.file.Files.createDirectories(LOCAL);
      java.nio.file.Files.write(LOCAL.resolve(args[1]), data);
      return new ShellScript.Captured(0, "", "");
    } catch (IOException | NumberFormatException e) {
      return new ShellScript.Captured(1, "", e.toString() + "\n");
    }
  }

  /** Runs a %directive: a writer's action in this JVM. */
  private static ShellScript.Captured directive(Configuration conf,
      Map<String, FSDataOutputStream> open, String[] args) {
    if (args.length == 3 && args[0].equals("%local")) {
      return local(args);
    }
    boolean writes = args[0].equals("%write") || args[0].equals("%append");
    if (args.length != (writes ? 3 : 2)) {
      return new ShellScript.Captured(1, "",
          "usage: %open|%close|%rm|%mkdir PATH, %write|%append PATH TEXT, %local NAME BYTES\n");
    }
    Path p = new Path(args[1]);
    try {
      FileSystem fs = FileSystem.get(conf);
      switch (args[0]) {
        case "%write":
        case "%append": {
          // A line of text, as a writer would leave it; replication 1, so
          // that an append on a one-DataNode cluster needs no replacement.
          try (FSDataOutputStream o = args[0].equals("%write")
              ? fs.create(p, true, 4096, (short) 1, fs.getDefaultBlockSize(p))
              : fs.append(p)) {
            o.write((args[2] + "\n").getBytes(StandardCharsets.UTF_8));
          }
          break;
        }
        case "%open": {
          FSDataOutputStream o = fs.create(p, true);
          o.hflush();
          open.put(args[1], o);
          break;
        }
        case "%close": {
          FSDataOutputStream o = open.remove(args[1]);
          if (o == null) {
            return new ShellScript.Captured(1, "", args[1] + " is not open\n");
          }
          o.close();
          break;
        }
        case "%rm":
          fs.delete(p, true);
          break;
        case "%mkdir":
          fs.mkdirs(p);
          break;
        default:
          return new ShellScript.Captured(1, "", "unknown directive " + args[0] + "\n");
      }
      return new ShellScript.Captured(0, "", "");
    } catch (IOException e) {
      return new ShellScript.Captured(1, "", e.toString() + "\n");
    }
  }

  private static final Pattern[] MASKS = {
    // fsck: the NameNode's web address, block pool, block and storage ids,
    // and how long the walk took.
    Pattern.compile("\\bhttp://\\d{1,3}(?:\\.\\d{1,3}){3}:\\d+"),
    Pattern.compile("\\bBP-\\d+-\\d{1,3}(?:\\.\\d{1,3}){3}-\\d+"),
    Pattern.compile("\\bblk_\\d+_\\d+"),
    Pattern.compile("\\bblk_\\d+"),
    Pattern.compile("\\bDS-[0-9a-f-]+"),
    Pattern.compile("(?<= in )\\d+(?= milliseconds$)"),
    Pattern.compile("\\b\\d+ \\(\\d+(?:\\.\\d+)? [KMGTPE]?B\\)"),
    Pattern.compile("\\b\\d+\\.\\d+%"),
    Pattern.compile("\\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
        + " [ \\d]\\d \\d{2}:\\d{2}:\\d{2} \\S+ \\d{4}\\b"),
    Pattern.compile("\\b\\d{1,3}(?:\\.\\d{1,3}){3}:\\d+\\b"),
    Pattern.compile("\\bDFSClient_\\S+"),
    Pattern.compile("(?<=^New segment starts at txid )\\d+$"),
    Pattern.compile("(?<=^Hostname: ).+$"),
    Pattern.compile("(?<=^Name: <dn> \\().+(?=\\)$)"),
    // -getDatanodeInfo's uptime in seconds.
    Pattern.compile("(?<=^Uptime: )\\d+(?=,)"),
  };
  private static final String[] MASKED = {
    "http://<nn-http>", "<bpid>", "blk_<id>_<gs>", "blk_<id>", "<storage>", "<ms>",
    "<bytes>", "<pct>", "<date>", "<dn>", "<client>", "<txid>", "<host>", "<host>", "<s>",
  };

  static String mask(String line) {
    String s = line;
    for (int i = 0; i < MASKS.length; i++) {
      s = MASKS[i].matcher(s).replaceAll(MASKED[i]);
    }
    return s;
  }
}

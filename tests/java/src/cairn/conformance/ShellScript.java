package cairn.conformance;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FsShell;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.util.Tool;
import org.apache.hadoop.util.ToolRunner;
import org.apache.log4j.ConsoleAppender;
import org.apache.log4j.Level;
import org.apache.log4j.LogManager;
import org.apache.log4j.Logger;
import org.apache.log4j.PatternLayout;

/**
 * Runs a script of {@code hadoop fs} commands in one JVM through
 * {@link FsShell} (what {@code hadoop fs} runs) and prints a normalised
 * transcript, so that the same script run against two clusters (real Apache
 * HDFS and Cairn) can be compared byte for byte.
 *
 * <pre>
 * ShellScript --fs hdfs://HOST:PORT --script FILE [-D key=value]...
 * </pre>
 *
 * Script: one command per line, the arguments of {@code hadoop fs} (for
 * example {@code -ls -R /x}); {@code #} starts a comment line; blank lines are
 * ignored. Arguments are split on whitespace; single or double quotes group an
 * argument containing spaces (no escapes inside). A line starting with
 * {@code @user } runs as that user (a remote user of simple authentication,
 * through {@code UserGroupInformation.doAs}); other lines run as the current
 * user, normally the OS user who also started the NameNode (the superuser).
 *
 * Transcript, per command: {@code $ <line as written>}, its standard output
 * lines, its standard error lines prefixed {@code "! "}, {@code exit=<code>},
 * and an empty line. Normalised: dates and times to {@code <time>},
 * {@code hdfs://host:port} of the cluster to {@code hdfs://<nn>}, the current
 * user name (a whole word) to {@code <super>}, trailing white space removed,
 * Java stack frames dropped (the exception's first line is kept).
 *
 * Exit status: 0 when every command was run (whatever their own exit codes),
 * 2 on a usage or script error.
 */
public final class ShellScript {
  private ShellScript() {}

  /** One script line. */
  static final class Step {
    final int lineNo;
    final String text;    // the line as written (trimmed), echoed after "$ "
    final String user;    // null: the current user
    final String[] args;

    Step(int lineNo, String text, String user, String[] args) {
      this.lineNo = lineNo;
      this.text = text;
      this.user = user;
      this.args = args;
    }
  }

  static final class ScriptError extends Exception {
    ScriptError(String msg) {
      super(msg);
    }
  }

  public static void main(String[] argv) {
    int rc;
    try {
      rc = run(argv);
    } catch (ScriptError e) {
      System.err.println("ShellScript: " + e.getMessage());
      rc = 2;
    } catch (Exception e) {
      System.err.println("ShellScript: " + e);
      rc = 1;
    }
    System.out.flush();
    System.err.flush();
    // Hadoop leaves non-daemon threads behind in some versions; do not wait for them.
    Runtime.getRuntime().halt(rc);
  }

  private static void usage() {
    System.err.println("usage: ShellScript --fs hdfs://HOST:PORT --script FILE [-D key=value]...");
  }

  static int run(String[] argv) throws Exception {
    String fsUrl = null;
    String script = null;
    List<String[]> props = new ArrayList<>();
    for (int i = 0; i < argv.length; i++) {
      String a = argv[i];
      if (a.equals("--fs") || a.equals("--script")) {
        if (i + 1 >= argv.length) {
          throw new ScriptError(a + " needs a value");
        }
        if (a.equals("--fs")) {
          fsUrl = argv[++i];
        } else {
          script = argv[++i];
        }
      } else if (a.equals("-D") || (a.startsWith("-D") && a.length() > 2)) {
        String kv = a.length() > 2 ? a.substring(2) : (i + 1 < argv.length ? argv[++i] : "");
        int eq = kv.indexOf('=');
        if (eq <= 0) {
          throw new ScriptError("-D needs key=value, got '" + kv + "'");
        }
        props.add(new String[] {kv.substring(0, eq), kv.substring(eq + 1)});
      } else if (a.equals("-h") || a.equals("--help")) {
        usage();
        return 0;
      } else {
        usage();
        throw new ScriptError("unknown argument '" + a + "'");
      }
    }
    if (fsUrl == null || script == null) {
      usage();
      throw new ScriptError("--fs and --script are required");
    }
    List<Step> steps = parseScript(script);

    configureLogging();
    Configuration conf = new HdfsConfiguration();
    conf.set("fs.defaultFS", fsUrl);
    for (String[] kv : props) {
      conf.set(kv[0], kv[1]);
    }
    Normaliser norm = new Normaliser(fsUrl, superUserNames());

    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    Map<String, UserGroupInformation> ugis = new HashMap<>();
    try {
      for (Step s : steps) {
        UserGroupInformation ugi = null;
        if (s.user != null) {
          // One UGI per name: the FileSystem cache is keyed by UGI (Subject identity),
          // so each user gets its own DFSClient, reused across that user's commands.
          ugi = ugis.computeIfAbsent(s.user, UserGroupInformation::createRemoteUser);
        }
        Captured c = runOne(conf, ugi, s.args);
        out.println(norm.line("$ " + s.text));
        for (String l : norm.block(c.out)) {
          out.println(l);
        }
        for (String l : norm.block(c.err)) {
          out.println(("! " + l).stripTrailing());
        }
        out.println("exit=" + c.exit);
        out.println();
        out.flush();
      }
    } finally {
      out.flush();
      closeQuietly(ugis);
    }
    return 0;
  }

  /** The names the NameNode's starting user may appear under in output. */
  static Set<String> superUserNames() throws IOException {
    Set<String> names = new LinkedHashSet<>();
    String os = System.getProperty("user.name");
    if (os != null && !os.isEmpty()) {
      names.add(os);
    }
    String cur = UserGroupInformation.getCurrentUser().getShortUserName();
    if (cur != null && !cur.isEmpty()) {
      names.add(cur);
    }
    return names;
  }

  private static void closeQuietly(Map<String, UserGroupInformation> ugis) {
    PrintStream err = System.err;
    try {
      for (UserGroupInformation u : ugis.values()) {
        FileSystem.closeAllForUGI(u);
      }
      FileSystem.closeAll();
    } catch (Exception e) {
      err.println("ShellScript: closing file systems: " + e);
    }
  }

  /** Hadoop's log records (slf4j -> reload4j) go to the real stderr, ERROR and up by default. */
  static void configureLogging() {
    String lvl = System.getProperty("cairn.log.level", System.getenv("CAIRN_LOG_LEVEL"));
    Level level = Level.toLevel(lvl == null || lvl.isEmpty() ? "ERROR" : lvl, Level.ERROR);
    LogManager.resetConfiguration();
    Logger root = Logger.getRootLogger();
    // ConsoleAppender (follow=false) binds to the System.err of now: the per-command
    // stream swapping below never captures log records into the transcript.
    ConsoleAppender app = new ConsoleAppender(
        new PatternLayout("%d{HH:mm:ss,SSS} %p %c{1}: %m%n"), ConsoleAppender.SYSTEM_ERR);
    app.setName("stderr");
    root.addAppender(app);
    root.setLevel(level);
    if (level.isGreaterOrEqual(Level.WARN)) {
      Logger.getLogger("org.apache.hadoop.util.NativeCodeLoader").setLevel(Level.ERROR);
    }
  }

  static final class Captured {
    final int exit;
    final String out;
    final String err;

    Captured(int exit, String out, String err) {
      this.exit = exit;
      this.out = out;
      this.err = err;
    }
  }

  /** Runs one FsShell command with System.out/System.err captured. */
  static Captured runOne(Configuration base, UserGroupInformation ugi, String[] args) {
    return runTool(base, ugi, FsShell::new, args);
  }

  /**
   * Runs one command of a Hadoop {@link Tool} (a fresh one from {@code tool})
   * through {@link ToolRunner}, with System.out/System.err captured.
   */
  static Captured runTool(Configuration base, UserGroupInformation ugi,
      Supplier<Tool> tool, String[] args) {
    ByteArrayOutputStream ob = new ByteArrayOutputStream();
    ByteArrayOutputStream eb = new ByteArrayOutputStream();
    PrintStream po = new PrintStream(ob, true, StandardCharsets.UTF_8);
    PrintStream pe = new PrintStream(eb, true, StandardCharsets.UTF_8);
    PrintStream savedOut = System.out;
    PrintStream savedErr = System.err;
    int exit;
    System.setOut(po);
    System.setErr(pe);
    try {
      // As `hadoop fs` does (FsShell.main): ToolRunner, so generic options such as
      // `-D key=value` work on a script line. A fresh FsShell (and a copy of the
      // configuration) per command; FsShell creates its command objects per run, and
      // they take System.out/System.err when created. The shell is not closed: that
      // would close the cached FileSystem shared by the following commands.
      PrivilegedExceptionAction<Integer> act =
          () -> ToolRunner.run(new Configuration(base), tool.get(), args);
      exit = ugi == null ? act.run() : ugi.doAs(act);
    } catch (Throwable t) {
      Throwable c = t;
      while (c.getCause() != null && c.getCause() != c
          && (c instanceof java.lang.reflect.UndeclaredThrowableException
              || c instanceof java.security.PrivilegedActionException)) {
        c = c.getCause();
      }
      pe.println("ShellScript: command threw " + c);
      exit = -1;
    } finally {
      po.flush();
      pe.flush();
      System.setOut(savedOut);
      System.setErr(savedErr);
    }
    return new Captured(exit, ob.toString(StandardCharsets.UTF_8),
        eb.toString(StandardCharsets.UTF_8));
  }

  // ---------------------------------------------------------------- script

  static List<Step> parseScript(String file) throws IOException, ScriptError {
    List<String> lines = Files.readAllLines(Paths.get(file), StandardCharsets.UTF_8);
    List<Step> steps = new ArrayList<>();
    for (int i = 0; i < lines.size(); i++) {
      String text = lines.get(i).strip();
      if (text.isEmpty() || text.startsWith("#")) {
        continue;
      }
      List<String> toks;
      try {
        toks = tokenize(text);
      } catch (ScriptError e) {
        throw new ScriptError(file + ":" + (i + 1) + ": " + e.getMessage());
      }
      String user = null;
      if (!toks.isEmpty() && toks.get(0).startsWith("@")) {
        user = toks.remove(0).substring(1);
        if (user.isEmpty()) {
          throw new ScriptError(file + ":" + (i + 1) + ": '@' without a user name");
        }
      }
      if (toks.isEmpty()) {
        throw new ScriptError(file + ":" + (i + 1) + ": no command");
      }
      steps.add(new Step(i + 1, text, user, toks.toArray(new String[0])));
    }
    return steps;
  }

  /** Whitespace-separated words; '...' and "..." group (no escapes), as in sh. */
  static List<String> tokenize(String line) throws ScriptError {
    List<String> toks = new ArrayList<>();
    StringBuilder cur = new StringBuilder();
    boolean inWord = false;
    char quote = 0;
    for (int i = 0; i < line.length(); i++) {
      char ch = line.charAt(i);
      if (quote != 0) {
        if (ch == quote) {
          quote = 0;
        } else {
          cur.append(ch);
        }
      } else if (ch == '\'' || ch == '"') {
        quote = ch;
        inWord = true;
      } else if (Character.isWhitespace(ch)) {
        if (inWord) {
          toks.add(cur.toString());
          cur.setLength(0);
          inWord = false;
        }
      } else {
        cur.append(ch);
        inWord = true;
      }
    }
    if (quote != 0) {
      throw new ScriptError("unterminated " + quote + " quote");
    }
    if (inWord) {
      toks.add(cur.toString());
    }
    return toks;
  }

  // ---------------------------------------------------------------- normalising

  static final class Normaliser {
    /** -ls "yyyy-MM-dd HH:mm", -stat %y/%x "yyyy-MM-dd HH:mm:ss" (and ,SSS / .SSS forms). */
    private static final Pattern TIME = Pattern.compile(
        "\\b\\d{4}-\\d{2}-\\d{2}[ T]\\d{2}:\\d{2}(?::\\d{2}(?:[.,]\\d{1,9})?)?(?:Z|[+-]\\d{2}:?\\d{2})?\\b");
    /** Java stack frames and the lines that belong to them. */
    private static final Pattern FRAME = Pattern.compile(
        "^\\s+(?:at \\S.*|\\.\\.\\. \\d+ more|Suppressed: .*)$");
    private static final Pattern CAUSED = Pattern.compile("^Caused by: .*$");

    private final List<Pattern> nn = new ArrayList<>();
    private final List<Pattern> users = new ArrayList<>();

    Normaliser(String fsUrl, Set<String> superUsers) {
      nn.add(Pattern.compile("hdfs://(?:127\\.0\\.0\\.1|localhost|\\[::1\\]|0\\.0\\.0\\.0):\\d+"));
      URI u = URI.create(fsUrl);
      if (u.getAuthority() != null) {
        nn.add(Pattern.compile(Pattern.quote(u.getScheme().toLowerCase(Locale.ROOT) + "://"
            + u.getAuthority()) + "(?![\\w.:-])"));
      }
      for (String name : superUsers) {
        users.add(Pattern.compile("(?<![\\w.@$-])" + Pattern.quote(name) + "(?![\\w$-])"));
      }
    }

    String line(String s) {
      for (Pattern p : nn) {
        s = p.matcher(s).replaceAll(Matcher.quoteReplacement("hdfs://<nn>"));
      }
      s = TIME.matcher(s).replaceAll("<time>");
      for (Pattern p : users) {
        s = p.matcher(s).replaceAll("<super>");
      }
      return s.stripTrailing();
    }

    /** Splits captured output into normalised lines; drops stack frames. */
    List<String> block(String text) {
      List<String> res = new ArrayList<>();
      if (text.isEmpty()) {
        return res;
      }
      String[] ls = text.split("\r?\n", -1);
      int n = ls.length;
      if (n > 0 && ls[n - 1].isEmpty()) {
        n--;   // the final newline
      }
      boolean inTrace = false;
      for (int i = 0; i < n; i++) {
        String l = ls[i];
        if (FRAME.matcher(l).matches()) {
          inTrace = true;
          continue;
        }
        if (inTrace && CAUSED.matcher(l).matches()) {
          continue;
        }
        inTrace = false;
        res.add(line(l));
      }
      return res;
    }
  }
}

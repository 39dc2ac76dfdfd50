package cairn.conformance;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Arrays;

/**
 * The kit's entry point: runs another program of the kit (the first
 * argument, a class name) and halts the JVM with status 124 if it is still
 * running after {@code CAIRN_JAVA_TIMEOUT} seconds (default 600). A client
 * that hangs on a server that never answers then fails its test with a
 * clear message instead of stalling the whole suite. run.sh execs the JVM,
 * so the process a test holds is still the JVM itself.
 */
public final class Watchdog {
  private Watchdog() {}

  public static void main(String[] args) throws Throwable {
    if (args.length < 1) {
      System.err.println("usage: Watchdog MAIN-CLASS [ARGS...]");
      System.exit(2);
    }
    long seconds = 600;
    String env = System.getenv("CAIRN_JAVA_TIMEOUT");
    if (env != null && !env.isEmpty()) {
      try {
        seconds = Long.parseLong(env.trim());
      } catch (NumberFormatException e) {
        System.err.println("CAIRN_JAVA_TIMEOUT is not a number of seconds: " + env);
        System.exit(2);
      }
    }
    String program = args[0];
    long limit = seconds;
    Thread timer = new Thread(() -> {
      try {
        Thread.sleep(limit * 1000);
      } catch (InterruptedException e) {
        return;
      }
      // Straight to file descriptor 2: the program may have replaced
      // System.err (ShellScript captures each command's output).
      PrintStream err = new PrintStream(new FileOutputStream(FileDescriptor.err), true);
      err.println("run.sh: " + program + " still running after " + limit
          + " s (CAIRN_JAVA_TIMEOUT); halting");
      Runtime.getRuntime().halt(124);
    }, "cairn-kit-watchdog");
    timer.setDaemon(true);
    timer.start();
    Method main = Class.forName(program).getMethod("main", String[].class);
    try {
      main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }
}

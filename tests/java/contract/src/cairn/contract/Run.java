package cairn.contract;

import java.util.ArrayList;
import java.util.List;
import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Result;
import org.junit.runner.notification.Failure;
import org.junit.runner.notification.RunListener;

/**
 * Runs contract classes (names without the package; none: all of them) in
 * this JVM against -Dcairn.fs, printing one line per test: "ok", "FAIL" with
 * the reason, or "skipped" (a test that declares itself not applicable, as
 * it would on HDFS). Exit status 1 when any test failed.
 */
public class Run {
  static final String[] ALL = {
    "CreateContract", "OpenContract", "SeekContract", "AppendContract", "ConcatContract",
    "RenameContract", "DeleteContract", "MkdirContract", "GetFileStatusContract",
    "ContentSummaryContract", "SetTimesContract", "UnbufferContract", "LeaseRecoveryContract",
    "SafeModeContract", "PathHandleContract", "VectoredReadContract", "BulkDeleteContract",
    "MultipartUploaderContract", "CopyFromLocalContract",
    "FileSystemContract", "WebHdfsFileSystemContract",
    "FsMainOperationsContract", "WebHdfsFsMainOperationsContract",
    "FileContextMainOperationsContract", "FileContextCreateMkdirContract",
    "FileContextPermissionContract", "FileContextUriContract", "FileContextUtilContract",
    "DistCpContract",
    // Last: it deletes everything under the root.
    "RootDirectoryContract",
  };

  public static void main(String[] args) throws Exception {
    String[] names = args.length == 0 ? ALL : args;
    List<String> failed = new ArrayList<>();
    int run = 0;
    int skipped = 0;
    for (String name : names) {
      JUnitCore core = new JUnitCore();
      core.addListener(new RunListener() {
        private boolean done;

        @Override
        public void testStarted(Description d) {
          done = false;
        }

        @Override
        public void testFailure(Failure f) {
          done = true;
          String why = String.valueOf(f.getMessage()).replace('\n', ' ');
          System.out.println("FAIL " + label(f.getDescription()) + ": " + why);
          failed.add(label(f.getDescription()));
        }

        @Override
        public void testAssumptionFailure(Failure f) {
          done = true;
          String why = String.valueOf(f.getMessage()).replace('\n', ' ');
          System.out.println("skipped " + label(f.getDescription()) + ": " + why);
        }

        @Override
        public void testFinished(Description d) {
          if (!done) {
            System.out.println("ok " + label(d));
          }
        }
      });
      Result r = core.run(Class.forName("cairn.contract." + name));
      run += r.getRunCount();
      skipped += r.getAssumptionFailureCount();
    }
    System.out.printf("contract tests: %d run, %d failed, %d skipped%n", run, failed.size(), skipped);
    System.out.flush();
    System.exit(failed.isEmpty() ? 0 : 1);
  }

  static String label(Description d) {
    String cls = d.getClassName();
    return cls.substring(cls.lastIndexOf('.') + 1) + "." + d.getMethodName();
  }
}

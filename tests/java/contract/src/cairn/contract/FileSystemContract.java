package cairn.contract;

import java.net.URI;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.FileSystemContractBaseTest;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.Before;

/**
 * Hadoop's older FileSystem contract (FileSystemContractBaseTest: mkdirs with
 * a umask, block-sized writes, renames, the root) over hdfs:// (-Dcairn.fs),
 * set up as HDFS's own run of it: the test umask, and /user/NAME as the
 * working directory.
 */
public class FileSystemContract extends FileSystemContractBaseTest {
  @Before
  public void setUp() throws Exception {
    fs = open(System.getProperty("cairn.fs"));
  }

  static FileSystem open(String url) throws Exception {
    Configuration conf = new Configuration();
    conf.set("fs.permissions.umask-mode", TEST_UMASK);
    return FileSystem.newInstance(URI.create(url), conf);
  }

  @Override
  protected String getDefaultWorkingDirectory() {
    try {
      return "/user/" + UserGroupInformation.getCurrentUser().getShortUserName();
    } catch (java.io.IOException e) {
      throw new IllegalStateException(e);
    }
  }
}

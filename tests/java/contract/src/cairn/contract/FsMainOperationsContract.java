package cairn.contract;

import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.io.IOException;
import org.apache.hadoop.fs.FSMainOperationsBaseTest;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.ParentNotDirectoryException;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.AccessControlException;
import org.junit.Test;

/**
 * FSMainOperationsBaseTest over hdfs:// as a user who is not the superuser
 * (its unreadable-directory tests need permission checks), as HDFS's own
 * run of it over WebHDFS.
 */
public class FsMainOperationsContract extends FSMainOperationsBaseTest {
  protected String property() {
    return "cairn.fs";
  }

  @Override
  protected FileSystem createFileSystem() throws Exception {
    return Clients.asUser(property());
  }

  @Override
  protected Path getDefaultWorkingDirectory() throws IOException {
    return fSys.makeQualified(new Path("/user/" + Clients.USER));
  }

  /**
   * The base test expects a lookup under a file to answer "missing"; HDFS
   * answers a user who is not the superuser AccessControlException
   * "... (is not a directory)" (FSDirectory.resolvePath), and its own run
   * replaces this test the same way. Creating there is a
   * ParentNotDirectoryException.
   */
  @Override
  @Test
  public void testMkdirsFailsForSubdirectoryOfExistingFile() throws Exception {
    Path file = getTestRootPath(fSys, "test/hadoop/file");
    createFile(file);
    Path sub = new Path(file, "subdir");
    try {
      fSys.mkdirs(sub);
      fail("mkdirs under a file");
    } catch (ParentNotDirectoryException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("(is not a directory)"));
    }
    try {
      fSys.exists(sub);
      fail("a lookup under a file");
    } catch (AccessControlException expected) {
      assertTrue(expected.getMessage(), expected.getMessage().contains("(is not a directory)"));
    }
  }
}

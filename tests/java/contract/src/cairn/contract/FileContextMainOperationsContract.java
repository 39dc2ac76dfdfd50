package cairn.contract;

import java.io.IOException;
import org.apache.hadoop.fs.FileContextMainOperationsBaseTest;
import org.apache.hadoop.fs.FileContextTestHelper;
import org.apache.hadoop.fs.Path;
import org.junit.BeforeClass;

/** FileContext (Hadoop's AbstractFileSystem `Hdfs`) over hdfs://, set up as HDFS's own run. */
public class FileContextMainOperationsContract extends FileContextMainOperationsBaseTest {
  @BeforeClass
  public static void connect() throws IOException {
    fc = Clients.fileContext();
  }

  @Override
  protected FileContextTestHelper createFileContextHelper() {
    return new FileContextTestHelper("/tmp/cairn-contract-fc-main");
  }

  @Override
  protected Path getDefaultWorkingDirectory() throws IOException {
    return fc.makeQualified(new Path(Clients.superuserHome()));
  }

  @Override
  protected boolean listCorruptedBlocksSupported() {
    return true;
  }
}

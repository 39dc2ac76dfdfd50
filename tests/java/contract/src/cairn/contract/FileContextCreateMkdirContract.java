package cairn.contract;

import java.io.IOException;
import org.apache.hadoop.fs.FileContextCreateMkdirBaseTest;
import org.apache.hadoop.fs.FileContextTestHelper;
import org.junit.BeforeClass;

public class FileContextCreateMkdirContract extends FileContextCreateMkdirBaseTest {
  @BeforeClass
  public static void connect() throws IOException {
    fc = Clients.fileContext();
  }

  @Override
  protected FileContextTestHelper createFileContextHelper() {
    return new FileContextTestHelper("/tmp/cairn-contract-fc-mkdir");
  }
}

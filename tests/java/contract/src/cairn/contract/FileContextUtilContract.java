package cairn.contract;

import org.apache.hadoop.fs.FileContextUtilBase;
import org.junit.Before;

public class FileContextUtilContract extends FileContextUtilBase {
  @Before
  @Override
  public void setUp() throws Exception {
    fc = Clients.fileContext();
    super.setUp();
  }
}

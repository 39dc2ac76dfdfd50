package cairn.contract;

import org.apache.hadoop.fs.FileContextURIBase;
import org.junit.Before;

/** Two FileContexts on the same cluster, as HDFS's own run. */
public class FileContextUriContract extends FileContextURIBase {
  @Before
  @Override
  public void setUp() throws Exception {
    fc1 = Clients.fileContext();
    fc2 = Clients.fileContext();
    super.setUp();
  }
}

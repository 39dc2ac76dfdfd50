package cairn.contract;

import org.junit.Assume;
import org.junit.Before;

/** {@link FileSystemContract} over webhdfs:// (-Dcairn.webfs). */
public class WebHdfsFileSystemContract extends FileSystemContract {
  @Before
  @Override
  public void setUp() throws Exception {
    String url = System.getProperty("cairn.webfs", "");
    Assume.assumeFalse("no -Dcairn.webfs given", url.isEmpty());
    fs = open(url);
  }
}

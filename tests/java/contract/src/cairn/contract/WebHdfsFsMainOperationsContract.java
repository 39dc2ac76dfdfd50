package cairn.contract;

import org.junit.Assume;
import org.junit.Before;

/** {@link FsMainOperationsContract} over webhdfs:// (-Dcairn.webfs). */
public class WebHdfsFsMainOperationsContract extends FsMainOperationsContract {
  @Override
  protected String property() {
    return "cairn.webfs";
  }

  @Before
  @Override
  public void setUp() throws Exception {
    Assume.assumeFalse("no -Dcairn.webfs given", System.getProperty("cairn.webfs", "").isEmpty());
    super.setUp();
  }
}

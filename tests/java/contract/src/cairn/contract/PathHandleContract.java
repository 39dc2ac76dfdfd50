package cairn.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Options;
import org.apache.hadoop.fs.contract.AbstractContractPathHandleTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

/** Parameterized by the superclass's {@code @Parameters} (handle options). */
public class PathHandleContract extends AbstractContractPathHandleTest {
  public PathHandleContract(String name, Options.HandleOpt[] opts, boolean serialized) {
    super(name, opts, serialized);
  }

  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new CairnContract(conf);
  }
}

package cairn.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractContractLeaseRecoveryTest;
import org.apache.hadoop.fs.contract.AbstractFSContract;

public class LeaseRecoveryContract extends AbstractContractLeaseRecoveryTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new CairnContract(conf);
  }
}

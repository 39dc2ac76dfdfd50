package cairn.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractFSContract;
import org.apache.hadoop.tools.contract.AbstractContractDistCpTest;

/**
 * DistCp's contract (hadoop-distcp's test jar): copies and updates between
 * the local file system and the cluster through the MapReduce local runner,
 * as HDFS's own run of it (no large-file scale tests).
 */
public class DistCpContract extends AbstractContractDistCpTest {
  @Override
  protected AbstractFSContract createContract(Configuration conf) {
    return new CairnContract(conf);
  }

  @Override
  protected int getDefaultDistCPSizeKb() {
    return 0;
  }
}

package cairn.contract;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.contract.AbstractBondedFSContract;

/**
 * Binds Hadoop's contract tests to the cluster named by the system property
 * {@code cairn.fs} (an hdfs:// URL), declaring what HDFS declares of itself:
 * the options below are the behaviours HDFS's own contract runs assert
 * (hdfs.xml in apache/hadoop's hadoop-hdfs test resources), so Cairn is held
 * to HDFS's behaviour, not to a weaker file system's.
 */
public class CairnContract extends AbstractBondedFSContract {
  private static final String[] HDFS_BEHAVIOURS = {
    "test.root-tests-enabled",
    "is-case-sensitive",
    "supports-append",
    "supports-atomic-directory-delete",
    "supports-atomic-rename",
    "supports-block-locality",
    "supports-concat",
    "supports-seek",
    "rejects-seek-past-eof",
    "supports-strict-exceptions",
    "supports-unix-permissions",
    "rename-returns-false-if-dest-exists",
    "rename-returns-false-if-source-missing",
    "supports-settimes",
    "supports-getfilestatus",
    "supports-file-reference",
    "supports-content-check",
    "supports-unbuffer",
    // DFSOutputStream is Syncable: hflush and hsync reach the DataNodes.
    "supports-hflush",
    "supports-hsync",
  };

  public CairnContract(Configuration conf) {
    super(conf);
    for (String option : HDFS_BEHAVIOURS) {
      conf.setBoolean("fs.contract." + option, true);
    }
    conf.setInt("fs.file.contract.test.random-seek-count", 500);
    String fs = System.getProperty("cairn.fs");
    if (fs == null || fs.isEmpty()) {
      throw new IllegalStateException("set -Dcairn.fs=hdfs://HOST:PORT");
    }
    conf.set("fs.contract." + String.format(FSNAME_OPTION, getScheme()), fs);
  }

  @Override
  public String getScheme() {
    return "hdfs";
  }
}

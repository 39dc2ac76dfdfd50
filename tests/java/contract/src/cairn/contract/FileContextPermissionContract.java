package cairn.contract;

import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileContextPermissionBase;

public class FileContextPermissionContract extends FileContextPermissionBase {
  @Override
  protected FileContext getFileContext() throws Exception {
    return Clients.fileContext();
  }
}

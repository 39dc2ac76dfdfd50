package cairn.contract;

import java.io.IOException;
import java.net.URI;
import java.security.PrivilegedExceptionAction;
import java.util.HashMap;
import java.util.Map;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileContext;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.security.UserGroupInformation;

/** File systems and file contexts on the clusters named by -Dcairn.fs / -Dcairn.webfs. */
final class Clients {
  /** A user who is not the superuser (permission checks apply to it). */
  static final String USER = "contract-user";

  private Clients() {}

  static String url(String property) {
    String url = System.getProperty(property, "");
    if (url.isEmpty()) {
      throw new IllegalStateException("set -D" + property);
    }
    return url;
  }

  static FileContext fileContext() throws IOException {
    return FileContext.getFileContext(URI.create(url("cairn.fs")), new Configuration());
  }

  /** {@link #USER}'s file systems, one per URL property, kept for the run. */
  private static final Map<String, FileSystem> AS_USER = new HashMap<>();

  /**
   * A file system of {@link #USER}, whose home directory the superuser makes
   * first. One per URL property for the whole run: the suites ask for it
   * before every test and never close it.
   */
  static synchronized FileSystem asUser(String property) throws Exception {
    FileSystem fs = AS_USER.get(property);
    if (fs == null) {
      try (FileSystem su = FileSystem.newInstance(URI.create(url("cairn.fs")), new Configuration())) {
        Path home = new Path("/user/" + USER);
        su.mkdirs(home);
        su.setOwner(home, USER, USER);
      }
      UserGroupInformation ugi = UserGroupInformation.createUserForTesting(USER, new String[] {USER});
      fs = ugi.doAs((PrivilegedExceptionAction<FileSystem>)
          () -> FileSystem.newInstance(URI.create(url(property)), new Configuration()));
      AS_USER.put(property, fs);
    }
    return fs;
  }

  static String superuserHome() throws IOException {
    return "/user/" + UserGroupInformation.getCurrentUser().getShortUserName();
  }
}

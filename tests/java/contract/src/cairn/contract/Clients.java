package cairn.contract;

import java.io.IOException;
import java.net.URI;
import java.security.PrivilegedExceptionAction;
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

  /** A file system of {@link #USER}, whose home directory the superuser makes first. */
  static FileSystem asUser(String property) throws Exception {
    try (FileSystem su = FileSystem.newInstance(URI.create(url("cairn.fs")), new Configuration())) {
      Path home = new Path("/user/" + USER);
      su.mkdirs(home);
      su.setOwner(home, USER, USER);
    }
    UserGroupInformation ugi = UserGroupInformation.createUserForTesting(USER, new String[] {USER});
    return ugi.doAs((PrivilegedExceptionAction<FileSystem>)
        () -> FileSystem.newInstance(URI.create(url(property)), new Configuration()));
  }

  static String superuserHome() throws IOException {
    return "/user/" + UserGroupInformation.getCurrentUser().getShortUserName();
  }
}

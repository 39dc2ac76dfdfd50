package cairn.conformance;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.hadoop.conf.Configuration;

/**
 * Command-line options of the kit's programs: {@code --name value} pairs
 * (only the names a program knows) and {@code -D key=value} settings for
 * the Hadoop client's Configuration. {@code --fs URL} is required and
 * becomes {@code fs.defaultFS}.
 */
final class KitArgs {
  final Configuration conf = new Configuration();
  final String fs;
  private final Map<String, String> values = new HashMap<>();

  KitArgs(String[] args, String... names) {
    List<String> known = new ArrayList<>(Arrays.asList(names));
    known.add("--fs");
    for (int i = 0; i < args.length; i++) {
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(args[i] + " needs a value");
      }
      if (args[i].equals("-D")) {
        String[] kv = args[++i].split("=", 2);
        conf.set(kv[0], kv.length > 1 ? kv[1] : "");
      } else if (known.contains(args[i])) {
        values.put(args[i], args[++i]);
      } else {
        throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    fs = values.get("--fs");
    if (fs == null) {
      throw new IllegalArgumentException("--fs is required");
    }
    conf.set("fs.defaultFS", fs);
  }

  String get(String name, String otherwise) {
    return values.getOrDefault(name, otherwise);
  }

  long getLong(String name, long otherwise) {
    String v = values.get(name);
    return v == null ? otherwise : Long.parseLong(v.trim());
  }

  /** A comma-separated list of numbers, or {@code otherwise}. */
  List<Long> getLongs(String name, String otherwise) {
    List<Long> out = new ArrayList<>();
    for (String s : get(name, otherwise).split(",")) {
      if (!s.isBlank()) {
        out.add(Long.parseLong(s.trim()));
      }
    }
    return out;
  }
}

//! bench/compare's rendering step (`--render-only`): the committed JSON of a
//! real `--quick` run (bench/fixtures/quick/, one file per mode) rendered
//! into a temp dir, with a failed run added to the main mode's copy. Checks
//! that the pages have their tables, that the Cairn/HDFS ratios are the
//! medians of the JSON's repetitions divided, that the repetition count and
//! the failed runs are on the page, that every plot is written, and that
//! rendering again writes the same bytes.
//!
//! Needs Python 3 with venv and PyPI for matplotlib (tests/python/setup.sh);
//! skipped without them unless CI is set.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The median of one figure's repetitions in a mode's JSON (as Python's statistics.median).
fn median(mode: &Value, key: Value) -> f64 {
    let fig = mode["figures"]
        .as_array()
        .expect("figures")
        .iter()
        .find(|f| f["key"] == key)
        .unwrap_or_else(|| panic!("no figure {key} in the fixture"));
    let mut v: Vec<f64> = fig["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect();
    assert!(!v.is_empty(), "{key} has no values");
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// x rounded to a whole number with thousands separators, as the pages print figures.
fn thousands(x: f64) -> String {
    let digits = format!("{x:.0}");
    let (sign, digits) = digits
        .strip_prefix('-')
        .map_or(("", digits.as_str()), |d| ("-", d));
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    format!("{sign}{out}")
}

/// The cells of the first table row that starts with `prefix`.
fn row<'a>(page: &'a str, prefix: &str) -> Vec<&'a str> {
    let line = page
        .lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no row {prefix:?} in:\n{page}"));
    line.trim_matches('|').split('|').map(str::trim).collect()
}

fn render(py: &Path, json: &Path, docs: &Path) {
    let out = common::output_within(
        Command::new(py)
            .arg(root().join("bench/compare"))
            .arg("--render-only")
            .arg("--json")
            .arg(json)
            .arg("--out")
            .arg(docs.join("benchmarks.md"))
            .arg("--tables-out")
            .arg(docs.join("datanode-tables.md")),
        Duration::from_secs(300),
        "bench/compare --render-only",
    );
    assert!(
        out.status.success(),
        "bench/compare --render-only failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every file under dir (relative path, bytes), sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("read_dir") {
            let p = e.expect("dir entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).expect("under dir").to_path_buf();
                out.push((rel, std::fs::read(&p).expect("read")));
            }
        }
    }
    out.sort();
    out
}

fn check_main_page(page: &str, main: &Value) {
    for heading in [
        "## Machine",
        "## NameNode: NNThroughputBenchmark operations (ops/s)",
        "## Data path: DFSIO-style",
        "## Where Cairn stands against the targets",
        "## Failures in this run",
    ] {
        assert!(page.contains(heading), "no {heading:?} in:\n{page}");
    }
    let reps = main["params"]["reps"].as_u64().expect("params.reps");
    if reps == 1 {
        assert!(page.contains("**One run per figure**"), "{page}");
    } else {
        assert!(
            page.contains(&format!("Each figure is the median of {reps} runs")),
            "{page}"
        );
    }
    // Ratios are medians divided: NNThroughputBenchmark create at 1 thread,
    // and the Java client's 1-thread write.
    let c = median(main, json!(["nnj", "Cairn", "create", 1]));
    let h = median(main, json!(["nnj", "HDFS", "create", 1]));
    let cells = row(page, "| create | 1 |");
    assert_eq!(cells[4], format!("{:.2}×", c / h), "{cells:?}");
    let (lo, hi) = (c / 2.0, c * 4.5); // the values put in: v, 2v, 9v
    assert_eq!(
        cells[2],
        format!("{} ({}–{})", thousands(c), thousands(lo), thousands(hi)),
        "{cells:?}"
    );
    let w = |s: &str| median(main, json!(["dfs", s, "Java", "write", 1]));
    let cells = row(page, "| write (MiB/s) | Java | 1 |");
    assert_eq!(
        cells[5],
        format!("{:.2}×", w("Cairn") / w("HDFS")),
        "{cells:?}"
    );
    assert_eq!(cells[3], thousands(w("Cairn")), "{cells:?}");
    // The failed run added to the fixture's copy, with why.
    assert!(
        page.contains("* `NNThroughputBenchmark -op open -threads 16 against hdfs://127.0.0.1:1: rc 1: injected by t62`"),
        "{page}"
    );
}

fn check_tables_page(page: &str, checksum: &Value) {
    for part in [
        "<!-- begin hdfs959 -->",
        "| configuration | HDFS-959 item | Java write MiB/s |",
        "| all on | – |",
        "<!-- begin checksum -->",
        "### Java (Hadoop 3.4.1) client",
        "Machine (at the start of this section's run):",
    ] {
        assert!(page.contains(part), "no {part:?} in:\n{page}");
    }
    let s = |sys: &str| median(checksum, json!(["ck", sys, "Java", 512, "write_s"]));
    let cells = row(page, "| 512 | *Cairn/HDFS* |");
    assert_eq!(
        cells[2],
        format!("{:.2}×", s("Cairn") / s("HDFS")),
        "{cells:?}"
    );
}

#[test]
fn renders_the_pages_from_a_quick_runs_json() {
    let Some(py) = common::python::python_venv("t62_bench_render") else {
        return;
    };
    let tmp = tempfile::tempdir().expect("temp dir");
    let json = tmp.path().join("json");
    std::fs::create_dir(&json).expect("mkdir");
    for mode in ["main", "hdfs959", "checksum"] {
        let from = root().join(format!("bench/fixtures/quick/{mode}.json"));
        std::fs::copy(&from, json.join(format!("{mode}.json")))
            .unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
    // A failed run, as the measuring step records one.
    let mut main = read_json(&json.join("main.json"));
    main["failed"].as_array_mut().expect("failed").push(json!({
        "what": "NNThroughputBenchmark -op open -threads 16 against hdfs://127.0.0.1:1",
        "why": "rc 1: injected by t62"
    }));
    // Three repetitions of one figure (a quick run has one): the page must
    // give their median, not their mean, with the min–max beside it.
    let create = main["figures"]
        .as_array_mut()
        .expect("figures")
        .iter_mut()
        .find(|f| f["key"] == json!(["nnj", "Cairn", "create", 1]))
        .expect("nnj/Cairn/create/1 in the fixture");
    let v = create["values"][0].as_f64().expect("a number");
    create["values"] = json!([v, 2.0 * v, 9.0 * v]);
    std::fs::write(json.join("main.json"), main.to_string()).expect("write main.json");

    let docs = tmp.path().join("docs");
    std::fs::create_dir(&docs).expect("mkdir");
    render(&py, &json, &docs);
    let page = std::fs::read_to_string(docs.join("benchmarks.md")).expect("benchmarks.md");
    check_main_page(&page, &main);
    let tables = std::fs::read_to_string(docs.join("datanode-tables.md")).expect("tables");
    check_tables_page(&tables, &read_json(&json.join("checksum.json")));

    let plots = docs.join("benchmarks");
    for name in [
        "nn-create",
        "nn-mkdirs",
        "nn-open",
        "nn-fileStatus",
        "nn-rename",
        "nn-delete",
        "dfsio-write",
        "dfsio-read",
        "dfsio-pread",
    ] {
        let svg = std::fs::read_to_string(plots.join(format!("{name}.svg")))
            .unwrap_or_else(|e| panic!("plot {name}: {e}"));
        assert!(
            svg.contains("<svg") && svg.contains("Cairn"),
            "{name}: {svg}"
        );
        assert!(
            page.contains(&format!("![{name}.svg](benchmarks/{name}.svg)")),
            "{name} not on the page"
        );
    }

    // The same JSON renders to the same bytes.
    let first = snapshot(&docs);
    render(&py, &json, &docs);
    assert!(first == snapshot(&docs), "a second rendering differs");
}

/// Runs one of bench/cairnbench's unittest modules (a section renderer on
/// its own made-up measurements).
fn python_unittest(module: &str) {
    let Some(py) = common::python::python_venv("t62_bench_render") else {
        return;
    };
    let what = format!("python -m unittest {module}");
    let out = common::output_within(
        Command::new(&py)
            .args(["-m", "unittest", "-v", module])
            .current_dir(root().join("bench")),
        Duration::from_secs(120),
        &what,
    );
    assert!(
        out.status.success(),
        "{what} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The scale section's renderer: bench/cairnbench/test_render_scale.py.
#[test]
fn renders_the_scale_section() {
    python_unittest("cairnbench.test_render_scale");
}

/// The ha section's renderer: bench/cairnbench/test_render_ha.py.
#[test]
fn renders_the_ha_section() {
    python_unittest("cairnbench.test_render_ha");
}

/// What the pages say about the order of the systems' runs, and
/// `runner.in_turn`: bench/cairnbench/test_render_common.py.
#[test]
fn says_how_the_runs_were_ordered() {
    python_unittest("cairnbench.test_render_common");
}

use std::time::{Duration, Instant};

use serde_json::Value;

use super::*;
use crate::safemode::{Counts, SafeModeConfig, StartupSafeMode};

fn counts(total: u64, safe: u64) -> Counts {
    Counts {
        block_total: total,
        block_safe: safe,
        live_datanodes: 1,
    }
}

fn loaded(t0: Instant) -> StartupProgress {
    let p = StartupProgress::default();
    let ms = |n| t0 + Duration::from_millis(n);
    p.with_phase(Phase::LoadingFsImage, |r| {
        r.span = Span {
            begin: Some(t0),
            end: Some(ms(40)),
        };
    });
    p.set_phase_file(
        Phase::LoadingFsImage,
        std::path::Path::new("/n/current/fsimage_0000000000000000007"),
        399,
    );
    p.add_step(
        Phase::LoadingFsImage,
        Step::typed(StepType::Inodes, 3, 3, t0, ms(30)),
    );
    p.with_phase(Phase::LoadingEdits, |r| {
        r.span = Span {
            begin: Some(ms(40)),
            end: Some(ms(60)),
        };
    });
    // Added out of order: HDFS lists file steps by file name.
    for (name, n) in [
        ("edits_0000000000000000011-0000000000000000012", 2),
        ("edits_0000000000000000008-0000000000000000010", 3),
    ] {
        p.add_step(
            Phase::LoadingEdits,
            Step::untyped(n, n, ms(41), ms(50))
                .on_file(&std::path::Path::new("/n/current").join(name), Some(100)),
        );
    }
    p.with_phase(Phase::SavingCheckpoint, |r| {
        r.span = Span {
            begin: Some(ms(60)),
            end: Some(ms(60)),
        };
    });
    p
}

#[test]
fn safe_mode_running_then_complete_as_hdfs_shows_it() {
    // Goal: HDFS's JSON while safe mode waits for blocks (RUNNING, the
    // safe blocks over the complete blocks at activation, the overall
    // percentage the mean of the phases') and once it has ended.
    let t0 = Instant::now();
    let p = loaded(t0);
    let sm = StartupSafeMode::new(SafeModeConfig::default(), t0);
    let before: Value = serde_json::from_str(&p.to_json(&sm, t0)).expect("json");
    assert_eq!(before["phases"][3]["status"], "PENDING");
    let act = t0 + Duration::from_millis(70);
    sm.check(counts(4, 0), act);
    sm.check(counts(4, 1), act + Duration::from_millis(5));
    let now = act + Duration::from_millis(30);
    let text = p.to_json(&sm, now);
    let v: Value = serde_json::from_str(&text).expect("json");
    assert_eq!(v["elapsedTime"], 100);
    // (1 + 1 + 1 + 1/4) / 4
    assert_eq!(
        v["percentComplete"].as_f64().expect("percent") as f32,
        0.8125
    );
    let safe = &v["phases"][3];
    assert_eq!(safe["name"], "SafeMode");
    assert_eq!(safe["desc"], "Safe mode");
    assert_eq!(safe["status"], "RUNNING");
    assert_eq!(safe["elapsedTime"], 30);
    assert_eq!(safe["percentComplete"], 0.25);
    let step = &safe["steps"][0];
    assert_eq!(step["name"], "AwaitingReportedBlocks");
    assert_eq!(
        (step["count"].as_u64(), step["total"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(step["elapsedTime"], 0);
    // The image phase, fields in HDFS's order.
    assert!(text.contains(
        r#"{"name":"LoadingFsImage","desc":"Loading fsimage","status":"COMPLETE","percentComplete":1.0,"elapsedTime":40,"file":"/n/current/fsimage_0000000000000000007","size":399,"steps":[{"name":"Inodes","desc":"inodes","count":3,"total":3,"percentComplete":1.0,"elapsedTime":30}]}"#
    ), "{text}");
    let edits = v["phases"][1]["steps"].as_array().expect("steps");
    assert!(edits[0]["file"]
        .as_str()
        .expect("file")
        .ends_with("0008-0000000000000000010"));
    assert!(edits[0].get("name").is_none());
    assert_eq!(edits[0]["size"], 100);

    sm.leave();
    let v: Value = serde_json::from_str(&p.to_json(&sm, now)).expect("json");
    assert_eq!(v["percentComplete"], 1.0);
    assert_eq!(v["phases"][3]["status"], "COMPLETE");
    assert_eq!(v["phases"][3]["steps"][0]["percentComplete"], 1.0);
}

#[test]
fn the_record_sums_each_phase() {
    // Goal: HDFS's StartupProgress record: per phase the steps' counts
    // and totals summed, no Context tag.
    let t0 = Instant::now();
    let p = loaded(t0);
    let sm = StartupSafeMode::new(SafeModeConfig::default(), t0);
    sm.check(counts(3, 0), t0 + Duration::from_millis(70));
    let r = p.record(&sm, "host", t0 + Duration::from_millis(100));
    let get = |name: &str| {
        r.metrics
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, v)| v.clone())
            .expect("metric")
    };
    assert_eq!(r.tags, vec![("Hostname".to_string(), "host".to_string())]);
    assert_eq!(get("LoadingEditsCount"), 5);
    assert_eq!(get("LoadingEditsTotal"), 5);
    assert_eq!(get("LoadingFsImageElapsedTime"), 40);
    assert_eq!(get("SafeModeTotal"), 3);
    assert_eq!(get("SafeModePercentComplete"), 0.0);
    // (3 + 0) / 4 as Java prints a float.
    assert_eq!(get("PercentComplete"), 0.75);
    assert_eq!(get("ElapsedTime"), 100);
}

#[test]
fn a_namespace_with_nothing_to_wait_for_ends_safe_mode_at_activation() {
    let t0 = Instant::now();
    let sm = StartupSafeMode::new(SafeModeConfig::default(), t0);
    sm.check(counts(0, 0), t0);
    let pr = sm.progress();
    assert_eq!((pr.began, pr.ended), (Some(t0), Some(t0)));
    // Counting stops once the thresholds are met (HDFS's counter runs
    // only while they are not).
    let sm = StartupSafeMode::new(
        SafeModeConfig {
            extension: Duration::from_secs(30),
            ..SafeModeConfig::default()
        },
        t0,
    );
    sm.check(counts(2, 0), t0);
    sm.check(counts(2, 2), t0);
    sm.check(counts(2, 2), t0);
    assert_eq!(sm.progress().count, 2);
    assert!(sm.progress().ended.is_none());
}

//! HDFS's startup progress: what the NameNode did between its start and
//! the end of start-up safe mode, in HDFS's four phases (loading the
//! image, loading the edits, saving a checkpoint, safe mode) and their
//! steps. Served as HDFS serves it: `GET /startupProgress` (the JSON the
//! web UI's "Startup Progress" tab reads) and the `StartupProgress`
//! metrics record on `/jmx` and `/prom`.
//!
//! The loading phases are recorded as they finish (the HTTP server starts
//! after the namespace is loaded, so nobody can watch them run); the
//! safe-mode phase is read live from [`StartupSafeMode`].

use std::sync::Mutex;
use std::time::Instant;

use cairn_common::web::jmx::Record;
use serde::Serialize;

use crate::safemode::{SafeModeProgress, StartupSafeMode};

/// HDFS's phases, in its order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    LoadingFsImage = 0,
    LoadingEdits = 1,
    SavingCheckpoint = 2,
    SafeMode = 3,
}

impl Phase {
    const ALL: [Phase; 4] = [
        Phase::LoadingFsImage,
        Phase::LoadingEdits,
        Phase::SavingCheckpoint,
        Phase::SafeMode,
    ];

    fn name(self) -> &'static str {
        match self {
            Phase::LoadingFsImage => "LoadingFsImage",
            Phase::LoadingEdits => "LoadingEdits",
            Phase::SavingCheckpoint => "SavingCheckpoint",
            Phase::SafeMode => "SafeMode",
        }
    }

    fn description(self) -> &'static str {
        match self {
            Phase::LoadingFsImage => "Loading fsimage",
            Phase::LoadingEdits => "Loading edits",
            Phase::SavingCheckpoint => "Saving checkpoint",
            Phase::SafeMode => "Safe mode",
        }
    }
}

/// HDFS's step types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepType {
    ErasureCodingPolicies,
    Inodes,
    DelegationTokens,
    CachePools,
    AwaitingReportedBlocks,
}

impl StepType {
    fn name(self) -> &'static str {
        match self {
            StepType::ErasureCodingPolicies => "ErasureCodingPolicies",
            StepType::Inodes => "Inodes",
            StepType::DelegationTokens => "DelegationTokens",
            StepType::CachePools => "CachePools",
            StepType::AwaitingReportedBlocks => "AwaitingReportedBlocks",
        }
    }

    fn description(self) -> &'static str {
        match self {
            StepType::ErasureCodingPolicies => "erasure coding policies",
            StepType::Inodes => "inodes",
            StepType::DelegationTokens => "delegation tokens",
            StepType::CachePools => "cache pools",
            StepType::AwaitingReportedBlocks => "awaiting reported blocks",
        }
    }
}

/// A begin and an end; either may be missing.
#[derive(Debug, Clone, Copy, Default)]
struct Span {
    begin: Option<Instant>,
    end: Option<Instant>,
}

impl Span {
    /// HDFS's elapsed time: end − begin, now − begin while running, 0
    /// before the begin.
    fn elapsed_ms(self, now: Instant) -> u64 {
        match (self.begin, self.end) {
            (Some(b), Some(e)) => e.saturating_duration_since(b).as_millis() as u64,
            (Some(b), None) => now.saturating_duration_since(b).as_millis() as u64,
            _ => 0,
        }
    }
}

/// One finished step: a typed one (inodes of an image) or one named by a
/// file (an edit-log segment).
#[derive(Debug, Clone)]
pub struct Step {
    kind: Option<StepType>,
    file: Option<String>,
    size: Option<u64>,
    count: u64,
    total: u64,
    span: Span,
}

impl Step {
    /// A step of type `kind` that did `count` of `total` between `begin`
    /// and `end`.
    pub fn typed(kind: StepType, count: u64, total: u64, begin: Instant, end: Instant) -> Self {
        Step::of(Some(kind), count, total, begin, end)
    }

    /// A step named only by its file (an edit-log segment: HDFS gives it
    /// no type) that did `count` of `total` between `begin` and `end`.
    pub fn untyped(count: u64, total: u64, begin: Instant, end: Instant) -> Self {
        Step::of(None, count, total, begin, end)
    }

    fn of(kind: Option<StepType>, count: u64, total: u64, begin: Instant, end: Instant) -> Self {
        Step {
            kind,
            file: None,
            size: None,
            count,
            total,
            span: Span {
                begin: Some(begin),
                end: Some(end),
            },
        }
    }

    /// The step's file and, when known, its size in bytes.
    pub fn on_file(mut self, file: &std::path::Path, size: Option<u64>) -> Self {
        self.file = Some(file.display().to_string());
        self.size = size;
        self
    }
}

#[derive(Debug, Clone, Default)]
struct PhaseRecord {
    span: Span,
    file: Option<String>,
    size: Option<u64>,
    steps: Vec<Step>,
}

/// The loading phases as recorded, and the view that adds safe mode.
#[derive(Debug, Default)]
pub struct StartupProgress {
    phases: Mutex<[PhaseRecord; 3]>,
}

impl StartupProgress {
    fn with<R>(&self, f: impl FnOnce(&mut [PhaseRecord; 3]) -> R) -> R {
        let mut p = self
            .phases
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut p)
    }

    fn with_phase(&self, phase: Phase, f: impl FnOnce(&mut PhaseRecord)) {
        // Safe mode is read from its state machine, never recorded here.
        self.with(|p| {
            if let Some(r) = p.get_mut(phase as usize) {
                f(r);
            }
        });
    }

    pub fn begin_phase(&self, phase: Phase) {
        self.with_phase(phase, |r| r.span.begin = Some(Instant::now()));
    }

    pub fn end_phase(&self, phase: Phase) {
        self.with_phase(phase, |r| r.span.end = Some(Instant::now()));
    }

    /// The file a phase worked on (the image loaded) and its size.
    pub fn set_phase_file(&self, phase: Phase, file: &std::path::Path, size: u64) {
        self.with_phase(phase, |r| {
            r.file = Some(file.display().to_string());
            r.size = Some(size);
        });
    }

    pub fn add_step(&self, phase: Phase, step: Step) {
        self.with_phase(phase, |r| r.steps.push(step));
    }

    /// Takes over what `other` recorded (start-up records before the
    /// NameNode's state exists).
    pub fn take_from(&self, other: StartupProgress) {
        let recorded = other
            .phases
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.with(|p| *p = recorded);
    }

    /// Every phase as HDFS's view computes it, safe mode from `safe_mode`.
    fn phases(&self, safe_mode: &StartupSafeMode) -> Vec<(Phase, PhaseRecord)> {
        let loading = self.with(|p| p.clone());
        let sm: SafeModeProgress = safe_mode.progress();
        let safe = PhaseRecord {
            span: Span {
                begin: sm.began,
                end: sm.ended,
            },
            file: None,
            size: None,
            // HDFS never begins this step: its elapsed time stays 0.
            steps: vec![Step {
                kind: Some(StepType::AwaitingReportedBlocks),
                file: None,
                size: None,
                count: sm.count,
                total: sm.total,
                span: Span::default(),
            }],
        };
        Phase::ALL
            .into_iter()
            .zip(loading.into_iter().chain(std::iter::once(safe)))
            .collect()
    }

    /// HDFS's `FsImageLoadTime` and `SafeModeTime`, milliseconds: from
    /// the image's load to the end of the edits' replay, and the time in
    /// start-up safe mode once it has ended (0 before).
    pub fn load_and_safe_mode_ms(&self, safe_mode: &StartupSafeMode) -> (u64, u64) {
        let load = self.with(|p| {
            Span {
                begin: p[Phase::LoadingFsImage as usize].span.begin,
                end: p[Phase::LoadingEdits as usize].span.end,
            }
            .elapsed_ms(Instant::now())
        });
        let sm = safe_mode.progress();
        let safe = match (sm.began, sm.ended) {
            (Some(b), Some(e)) => e.saturating_duration_since(b).as_millis() as u64,
            _ => 0,
        };
        (load, safe)
    }

    /// `GET /startupProgress`'s body, HDFS's fields in HDFS's order.
    pub fn to_json(&self, safe_mode: &StartupSafeMode, now: Instant) -> String {
        let view = View::new(self.phases(safe_mode), now);
        let phases = view
            .phases
            .iter()
            .map(|(phase, r)| PhaseJson {
                name: phase.name(),
                desc: phase.description(),
                status: view.status(r),
                percent_complete: view.percent(r),
                elapsed_time: r.span.elapsed_ms(now),
                file: r.file.clone(),
                size: r.size,
                steps: sorted_steps(&r.steps)
                    .into_iter()
                    .map(|s| StepJson {
                        name: s.kind.map(StepType::name),
                        desc: s.kind.map(StepType::description),
                        count: s.count,
                        file: s.file.clone(),
                        size: s.size,
                        total: s.total,
                        percent_complete: view.step_percent(r, s),
                        elapsed_time: s.span.elapsed_ms(now),
                    })
                    .collect(),
            })
            .collect();
        let body = ProgressJson {
            elapsed_time: view.elapsed_ms(),
            percent_complete: view.overall_percent(),
            phases,
        };
        serde_json::to_string(&body).unwrap_or_default()
    }

    /// HDFS's `StartupProgress` metrics record (no context tag, as HDFS's).
    pub fn record(&self, safe_mode: &StartupSafeMode, host: &str, now: Instant) -> Record {
        let view = View::new(self.phases(safe_mode), now);
        let mut r = Record::new("StartupProgress", "StartupProgress", "", host);
        r.tags.retain(|(k, _)| k != "Context");
        r.counter("ElapsedTime", view.elapsed_ms());
        r.gauge("PercentComplete", float(view.overall_percent()));
        for (phase, p) in &view.phases {
            let name = phase.name();
            r.counter(
                &format!("{name}Count"),
                p.steps.iter().map(|s| s.count).sum(),
            );
            r.counter(&format!("{name}ElapsedTime"), p.span.elapsed_ms(now));
            r.counter(
                &format!("{name}Total"),
                p.steps.iter().map(|s| s.total).sum(),
            );
            r.gauge(&format!("{name}PercentComplete"), float(view.percent(p)));
        }
        r
    }
}

/// A float as Java prints it (`0.33333334`, not its double widening).
fn float(v: f32) -> serde_json::Value {
    v.to_string()
        .parse::<f64>()
        .map(serde_json::Value::from)
        .unwrap_or_default()
}

/// HDFS's step order: steps without a file first, in the order they were
/// made; then by file, then size.
fn sorted_steps(steps: &[Step]) -> Vec<&Step> {
    let mut v: Vec<(usize, &Step)> = steps.iter().enumerate().collect();
    v.sort_by(|(i, a), (j, b)| (&a.file, a.size, i).cmp(&(&b.file, b.size, j)));
    v.into_iter().map(|(_, s)| s).collect()
}

/// HDFS's `StartupProgressView` arithmetic over one snapshot.
struct View {
    phases: Vec<(Phase, PhaseRecord)>,
    now: Instant,
}

impl View {
    fn new(phases: Vec<(Phase, PhaseRecord)>, now: Instant) -> Self {
        View { phases, now }
    }

    fn status(&self, r: &PhaseRecord) -> &'static str {
        match (r.span.begin, r.span.end) {
            (None, _) => "PENDING",
            (Some(_), None) => "RUNNING",
            (Some(_), Some(_)) => "COMPLETE",
        }
    }

    fn complete(&self, r: &PhaseRecord) -> bool {
        self.status(r) == "COMPLETE"
    }

    fn percent(&self, r: &PhaseRecord) -> f32 {
        if self.complete(r) {
            return 1.0;
        }
        let total: u64 = r.steps.iter().map(|s| s.total).sum();
        let count: u64 = r.steps.iter().map(|s| s.count).sum();
        bounded(count, total)
    }

    fn step_percent(&self, r: &PhaseRecord, s: &Step) -> f32 {
        if self.complete(r) {
            1.0
        } else {
            bounded(s.count, s.total)
        }
    }

    fn overall_percent(&self) -> f32 {
        let safe_done = self
            .phases
            .iter()
            .any(|(p, r)| *p == Phase::SafeMode && self.complete(r));
        if safe_done {
            return 1.0;
        }
        let sum: f32 = self.phases.iter().map(|(_, r)| self.percent(r)).sum();
        (sum / self.phases.len() as f32).clamp(0.0, 1.0)
    }

    /// From the image's load to the end of safe mode (or now).
    fn elapsed_ms(&self) -> u64 {
        let begin = self.phases.first().and_then(|(_, r)| r.span.begin);
        let end = self.phases.last().and_then(|(_, r)| r.span.end);
        Span { begin, end }.elapsed_ms(self.now)
    }
}

fn bounded(count: u64, total: u64) -> f32 {
    if total == 0 {
        0.0
    } else {
        (count as f32 / total as f32).clamp(0.0, 1.0)
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ProgressJson {
    elapsed_time: u64,
    percent_complete: f32,
    phases: Vec<PhaseJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PhaseJson {
    name: &'static str,
    desc: &'static str,
    status: &'static str,
    percent_complete: f32,
    elapsed_time: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    steps: Vec<StepJson>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct StepJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    desc: Option<&'static str>,
    count: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
    total: u64,
    percent_complete: f32,
    elapsed_time: u64,
}

#[cfg(test)]
mod tests;

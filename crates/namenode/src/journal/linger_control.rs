//! When the edit log's sync thread should linger for more edits: decided
//! by measuring, since the server cannot tell beforehand whether waiting
//! pays. Lingering (see `file::linger`) lets one sync serve more edits. A
//! client that trickles its calls (Hadoop's NNThroughputBenchmark: a few
//! calls arrive while a sync runs) then costs the NameNode a fifth to a
//! third less CPU a mutation and loses no throughput. A fixed set of
//! writers that each wait for their edit loses a third of its throughput,
//! because the wait takes away the overlap of its appends with the sync
//! (docs/namenode-cpu-tried.md, "A commit delay").
//!
//! So the controller tries both and keeps what the workload rewards: a
//! probe of four short epochs (not lingering, lingering, lingering, not:
//! a drift in the load falls on both alike) compares the edits made
//! durable a second each way, and the next ~second lingers only if
//! lingering kept at least [`KEEP_RATIO`] of the rate without it. It starts
//! without lingering, and an epoch broken by the log going idle is not
//! counted, so a stop in the load never decides.

use std::time::{Duration, Instant};

/// The length of one probe epoch.
const EPOCH: Duration = Duration::from_millis(25);
/// Epochs spent on the choice between probes (about 0.9 s).
const EXPLOIT_EPOCHS: u32 = 36;
/// Lingering is kept while it keeps this share of the rate without it:
/// a trickling client's rate does not drop (it rises a little, as the
/// NameNode leaves it more CPU); closed-loop writers lose a third.
const KEEP_RATIO: f64 = 0.95;
/// A park of the sync thread longer than this breaks an epoch: the load
/// stopped, and the epoch's rate says nothing about either choice.
const IDLE_BREAK: Duration = Duration::from_millis(10);
/// Fewer edits than this in a probe, each way, decide nothing.
const MIN_PROBE_EDITS: u64 = 32;

/// The probe's epochs in order: whether each lingers.
const PROBE: [bool; 4] = [false, true, true, false];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Measuring epoch `n` of [`PROBE`].
    Probe(usize),
    /// Running the choice for this many more epochs.
    Exploit(u32),
}

/// Edits and time summed over a probe's epochs of one kind.
#[derive(Debug, Default, Clone, Copy)]
struct Tally {
    edits: u64,
    time: Duration,
}

impl Tally {
    fn rate(&self) -> f64 {
        self.edits as f64 / self.time.as_secs_f64().max(1e-9)
    }
}

/// The adaptive choice, owned by the sync thread.
#[derive(Debug)]
pub(super) struct LingerControl {
    phase: Phase,
    /// What the exploit phase does.
    chosen: bool,
    epoch_start: Instant,
    epoch_edits: u64,
    broken: bool,
    /// Index 0: without lingering; 1: lingering.
    tallies: [Tally; 2],
    /// Probes decided, and how many of them chose to linger.
    decisions: u64,
    lingered: u64,
}

impl LingerControl {
    pub(super) fn new(now: Instant) -> Self {
        Self {
            phase: Phase::Probe(0),
            chosen: false,
            epoch_start: now,
            epoch_edits: 0,
            broken: false,
            tallies: [Tally::default(); 2],
            decisions: 0,
            lingered: 0,
        }
    }

    /// Whether batches of the current epoch may linger.
    pub(super) fn lingering(&self) -> bool {
        match self.phase {
            Phase::Probe(i) => PROBE[i],
            Phase::Exploit(_) => self.chosen,
        }
    }

    /// The sync thread waited `idle` for the first edit of a batch.
    pub(super) fn parked(&mut self, idle: Duration) {
        if idle > IDLE_BREAK {
            self.broken = true;
        }
    }

    /// A batch of `edits` became durable at `now`. Returns whether that
    /// ended a probe (a new choice was made).
    pub(super) fn batch_done(&mut self, edits: u64, now: Instant) -> bool {
        self.epoch_edits += edits;
        let elapsed = now.saturating_duration_since(self.epoch_start);
        if elapsed < EPOCH {
            return false;
        }
        let decisions = self.decisions;
        let (edits, broken) = (self.epoch_edits, self.broken);
        self.epoch_start = now;
        self.epoch_edits = 0;
        self.broken = false;
        self.phase = match self.phase {
            // A stop in the load: the probe starts over.
            Phase::Probe(_) if broken => {
                self.tallies = [Tally::default(); 2];
                Phase::Probe(0)
            }
            Phase::Probe(i) => {
                let t = &mut self.tallies[usize::from(PROBE[i])];
                t.edits += edits;
                t.time += elapsed;
                if i + 1 < PROBE.len() {
                    Phase::Probe(i + 1)
                } else {
                    self.decide();
                    Phase::Exploit(EXPLOIT_EPOCHS)
                }
            }
            Phase::Exploit(0) => Phase::Probe(0),
            Phase::Exploit(n) => Phase::Exploit(n - 1),
        };
        self.decisions != decisions
    }

    fn decide(&mut self) {
        let [off, on] = std::mem::take(&mut self.tallies);
        self.chosen = off.edits >= MIN_PROBE_EDITS
            && on.edits >= MIN_PROBE_EDITS
            && on.rate() >= KEEP_RATIO * off.rate();
        self.decisions += 1;
        self.lingered += u64::from(self.chosen);
    }

    /// Probes decided so far, and how many chose to linger.
    pub(super) fn decisions(&self) -> (u64, u64) {
        (self.decisions, self.lingered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs epochs of `EPOCH` with `rate(lingering)` edits each, in
    /// batches of a millisecond, until `epochs` have passed.
    fn drive(c: &mut LingerControl, start: Instant, epochs: u32, rate: impl Fn(bool) -> u64) {
        let ms = Duration::from_millis(1);
        let per_ms = EPOCH.as_millis() as u32;
        let mut now = start;
        for _ in 0..epochs * per_ms {
            now += ms;
            let edits = rate(c.lingering()) / u64::from(per_ms);
            let before = c.decisions().0;
            let decided = c.batch_done(edits, now);
            assert_eq!(decided, c.decisions().0 != before);
        }
    }

    #[test]
    fn it_lingers_when_lingering_costs_no_throughput() {
        let start = Instant::now();
        let mut c = LingerControl::new(start);
        assert!(!c.lingering(), "it starts without lingering");
        // A trickling client: lingering changes its rate little.
        drive(&mut c, start, 4, |l| if l { 200 } else { 205 });
        assert!(c.lingering());
        assert_eq!(c.decisions(), (1, 1));
    }

    #[test]
    fn it_stops_lingering_when_lingering_costs_throughput() {
        let start = Instant::now();
        let mut c = LingerControl::new(start);
        drive(&mut c, start, 4, |l| if l { 500 } else { 800 });
        assert!(!c.lingering());
        assert_eq!(c.decisions(), (1, 0));
    }

    #[test]
    fn a_choice_is_probed_again_after_about_a_second() {
        let start = Instant::now();
        let mut c = LingerControl::new(start);
        drive(&mut c, start, 4, |_| 200);
        assert!(c.lingering());
        // The load turns into closed-loop writers: the next probe sees it.
        let later = start + EPOCH * 4;
        drive(&mut c, later, 4 + EXPLOIT_EPOCHS + 1, |l| {
            if l {
                500
            } else {
                800
            }
        });
        assert!(!c.lingering());
        assert_eq!(c.decisions(), (2, 1));
    }

    #[test]
    fn a_stop_in_the_load_decides_nothing() {
        let start = Instant::now();
        let mut c = LingerControl::new(start);
        drive(&mut c, start, 2, |_| 200);
        c.parked(Duration::from_millis(50));
        assert!(!c.batch_done(1, start + EPOCH * 2 + Duration::from_millis(60)));
        assert_eq!(c.decisions(), (0, 0));
        assert!(!c.lingering(), "the probe starts over");
        // Too few edits decide against lingering.
        let mut c = LingerControl::new(start);
        drive(&mut c, start, 4, |_| 4);
        assert_eq!(c.decisions(), (1, 0));
        assert!(!c.lingering());
    }
}

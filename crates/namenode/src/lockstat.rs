//! How long a lock was held across the pieces of one piece of work (a full
//! block report takes the namespace lock once per batch): the total, the
//! longest single hold, and how many. Callers time their own guards.

use std::time::Duration;

/// Lock holds of one piece of work.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Holds {
    pub total: Duration,
    pub max: Duration,
    pub count: u64,
}

impl Holds {
    /// One hold of `d`.
    pub fn add(&mut self, d: Duration) {
        self.total += d;
        self.max = self.max.max(d);
        self.count += 1;
    }
}

//! What hears a run: [`Listener`], declared where the reports live. The run
//! ([`crate::Apply`]) pushes into it; the text printer, the streaming JSON
//! report and the CLI's event writers implement it.

use super::BlockReport;
use crate::engine::{Observer, Quiet};

/// Hears a run as it goes ([`Observer`]: each unit as it starts, each task
/// as it ends, each line of command output) and each unit's report once it
/// is final ([`crate::Apply::run_units`]).
pub trait Listener: Observer {
    /// The report of the next unit, in document order: its tasks are
    /// done and their changes on disk (or, in a dry run, planned).
    fn block(&mut self, report: BlockReport) {
        let _ = report;
    }
}

impl Listener for Quiet {}

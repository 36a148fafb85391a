//! What the engine decides and the reports show: the status of each task
//! and unit, and the region of a file closest to a search text that was
//! not found (PROTOCOL §9). Plain data, shared by both layers.

use schemars::JsonSchema;
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    Success,
    Failed,
    Skipped,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum BlockStatus {
    Success,
    Failed,
    /// Not run: the unit has a validation error.
    Malformed,
}

/// The region of a file most like the search text.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Closest {
    /// 1-based, inclusive.
    pub start_line: usize,
    pub end_line: usize,
    /// 0 to 1: the share of characters the two texts have in common.
    pub similarity: f64,
    /// A unified diff from the search text to the region.
    pub diff: String,
    /// When the two differ only in white space, or the search has lines the
    /// file cannot have (a copied fence or file name, blank lines at its
    /// ends): what exactly, in words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub difference: Option<String>,
}

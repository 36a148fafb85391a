//! Why a built-in command refused to run: something about the document
//! (a flag it does not take, a path outside the root, a link, a protected
//! place, its time limit). An ordinary failure is no refusal: the tool
//! says it on its output, GNU style, and ends with a non-zero status.
//!
//! The runner turns a refusal into the task's error (PROTOCOL §8).

use crate::engine::tree::FsError;
use crate::error_type::ErrorType;

/// Why a built-in command refused to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A file access refused: the error, and the message that says it
    /// (the command line in front, where the tool put it).
    File { error: FsError, message: String },
    /// Anything else.
    Other { kind: ErrorType, message: String },
}

impl Refusal {
    pub(crate) fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        Refusal::Other {
            kind,
            message: message.into(),
        }
    }

    /// The protocol's error type of the task it fails.
    pub(crate) fn error_type(&self) -> ErrorType {
        match self {
            Refusal::File { error, .. } => error.error_type(),
            Refusal::Other { kind, .. } => *kind,
        }
    }

    pub(crate) fn message(&self) -> &str {
        match self {
            Refusal::File { message, .. } | Refusal::Other { message, .. } => message,
        }
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl From<FsError> for Refusal {
    fn from(error: FsError) -> Self {
        Refusal::File {
            message: error.to_string(),
            error,
        }
    }
}

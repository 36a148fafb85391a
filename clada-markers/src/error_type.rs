//! The error types of the protocol (PROTOCOL §8), shared by diagnostics about the
//! document and by failures of tasks.

use schemars::JsonSchema;
use serde::Serialize;

/// What kind of failure an error is; fixed by the protocol.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    JsonSchema,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum ErrorType {
    MalformedStructure,
    InvalidUtf8,
    InputTooLarge,
    PathEscape,
    SymlinkNotAllowed,
    CommandNotAllowed,
    MatchCountMismatch,
    AlreadyApplied,
    IndentationMismatch,
    FileNotFound,
    FileExists,
    PermissionDenied,
    ExecFailed,
    ExecTimeout,
    LockTimeout,
    FileChanged,
    SandboxUnavailable,
    GitOperationFailed,
}

/// Who is at fault, broadly: the document, the run, or the system.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    Validation,
    Runtime,
    System,
}

impl ErrorType {
    /// The stable name, as in reports: `match_count_mismatch`.
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub const fn category(self) -> Category {
        match self {
            ErrorType::MalformedStructure
            | ErrorType::InvalidUtf8
            | ErrorType::InputTooLarge
            | ErrorType::PathEscape
            | ErrorType::SymlinkNotAllowed
            | ErrorType::CommandNotAllowed => Category::Validation,
            ErrorType::MatchCountMismatch
            | ErrorType::AlreadyApplied
            | ErrorType::IndentationMismatch
            | ErrorType::FileNotFound
            | ErrorType::FileExists
            | ErrorType::ExecFailed
            | ErrorType::ExecTimeout
            | ErrorType::FileChanged => Category::Runtime,
            ErrorType::PermissionDenied
            | ErrorType::LockTimeout
            | ErrorType::SandboxUnavailable
            | ErrorType::GitOperationFailed => Category::System,
        }
    }

    /// Whether running the same document again may succeed without a change.
    pub const fn retryable(self) -> bool {
        matches!(
            self,
            ErrorType::ExecFailed
                | ErrorType::ExecTimeout
                | ErrorType::LockTimeout
                | ErrorType::FileChanged
        )
    }
}

impl std::fmt::Display for ErrorType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use strum::IntoEnumIterator;

    #[test]
    fn the_name_is_the_one_json_carries() {
        for t in ErrorType::iter() {
            assert_eq!(serde_json::to_value(t).unwrap(), t.as_str());
        }
    }
}

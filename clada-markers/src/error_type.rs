//! The error types of the protocol (PROTOCOL §8), shared by diagnostics about the
//! document and by failures of tasks.

use schemars::JsonSchema;
use serde::Serialize;

/// What kind of failure an error is; fixed by the protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ErrorType {
    MalformedStructure,
    InvalidUtf8,
    InputTooLarge,
    PathEscape,
    SymlinkNotAllowed,
    CommandNotAllowed,
    MatchCountMismatch,
    AlreadyApplied,
    FileNotFound,
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
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorType::MalformedStructure => "malformed_structure",
            ErrorType::InvalidUtf8 => "invalid_utf8",
            ErrorType::InputTooLarge => "input_too_large",
            ErrorType::PathEscape => "path_escape",
            ErrorType::SymlinkNotAllowed => "symlink_not_allowed",
            ErrorType::CommandNotAllowed => "command_not_allowed",
            ErrorType::MatchCountMismatch => "match_count_mismatch",
            ErrorType::AlreadyApplied => "already_applied",
            ErrorType::FileNotFound => "file_not_found",
            ErrorType::PermissionDenied => "permission_denied",
            ErrorType::ExecFailed => "exec_failed",
            ErrorType::ExecTimeout => "exec_timeout",
            ErrorType::LockTimeout => "lock_timeout",
            ErrorType::FileChanged => "file_changed",
            ErrorType::SandboxUnavailable => "sandbox_unavailable",
            ErrorType::GitOperationFailed => "git_operation_failed",
        }
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
            | ErrorType::FileNotFound
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

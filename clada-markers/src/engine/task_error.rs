//! Why a task failed, typed ([`TaskError`]): the protocol's error type,
//! the message, and the facts its kind of failure comes with. The reports
//! put it into words; the engine and the commands make it.

use crate::engine::seek::Mismatch;
use crate::engine::tree::FsError;
use crate::error_type::ErrorType;

/// Why a task failed: its protocol error type (PROTOCOL §8), the message
/// a person reads, and the facts that come with its kind of failure.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub(crate) enum TaskError {
    /// A file access refused or failed: the path, and the OS error behind a
    /// system failure.
    #[error("{message}")]
    File {
        kind: ErrorType,
        message: String,
        path: Box<str>,
        os: Option<Box<str>>,
        /// For a path not found: the existing path most like it.
        closest: Option<Box<str>>,
    },
    /// The search text was not found as often as `count` asks (or the
    /// edit is already in the file): where it was, and what was closest.
    #[error("{message}")]
    Mismatch {
        kind: ErrorType,
        message: String,
        path: Box<str>,
        mismatch: Box<Mismatch>,
    },
    /// A command nobody approved: the `clada allow` line, shell-quoted,
    /// that would approve exactly it (PROTOCOL §6).
    #[error("{message}")]
    NotApproved { message: String, approve: Box<str> },
    /// Anything else: a command that failed or ran too long, a refused
    /// flag, a document error.
    #[error("{message}")]
    Other {
        kind: ErrorType,
        message: String,
        /// What to send instead, where the kind's own hint would not say.
        hint: Option<Box<str>>,
    },
}

impl TaskError {
    pub(crate) fn new(kind: ErrorType, message: impl Into<String>) -> Self {
        TaskError::Other {
            kind,
            message: message.into(),
            hint: None,
        }
    }

    /// The same error, with `hint` saying what to send instead.
    pub(crate) fn with_hint(mut self, text: impl Into<Box<str>>) -> Self {
        if let TaskError::Other { hint, .. } = &mut self {
            *hint = Some(text.into());
        }
        self
    }

    /// The protocol's error type.
    pub(crate) fn error_type(&self) -> ErrorType {
        match self {
            TaskError::File { kind, .. }
            | TaskError::Mismatch { kind, .. }
            | TaskError::Other { kind, .. } => *kind,
            TaskError::NotApproved { .. } => ErrorType::CommandNotAllowed,
        }
    }

    pub(crate) fn message(&self) -> &str {
        match self {
            TaskError::File { message, .. }
            | TaskError::Mismatch { message, .. }
            | TaskError::NotApproved { message, .. }
            | TaskError::Other { message, .. } => message,
        }
    }

    /// The message, to say more in front of it.
    pub(crate) fn message_mut(&mut self) -> &mut String {
        match self {
            TaskError::File { message, .. }
            | TaskError::Mismatch { message, .. }
            | TaskError::NotApproved { message, .. }
            | TaskError::Other { message, .. } => message,
        }
    }
}

impl From<FsError> for TaskError {
    fn from(e: FsError) -> Self {
        TaskError::File {
            kind: e.error_type(),
            message: e.to_string(),
            path: e.path().into(),
            os: e.os_detail().map(String::into_boxed_str),
            closest: None,
        }
    }
}

//! The arguments of the Python functions as clada's settings: names read
//! once and checked, then the same [`Apply`] the command line builds.
//! Nothing here touches Python.

use std::time::Duration;

use clada_markers::Apply;
use clada_markers::Settings;
use clada_markers::dialect::{Dialect, detect};
use clada_markers::engine::{Atomic, Author};

/// The dialects `convert` writes (as `clada convert --to`).
const TARGETS: [Dialect; 4] = [
    Dialect::Clada,
    Dialect::Aider,
    Dialect::Codex,
    Dialect::Udiff,
];

/// The CLI's defaults (`--timeout`, `--lock-timeout`).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);
const LOCK_TIMEOUT: Duration = Duration::from_secs(10);

/// A bad argument: what it was, what it may be. Python sees a
/// `ValueError`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct BadArgument(pub(crate) String);

fn names(list: &[Dialect]) -> String {
    let names: Vec<String> = list.iter().map(|d| format!("\"{}\"", d.name())).collect();
    names.join(", ")
}

/// `dialect=` (and `from_=`): a dialect, or `auto` to detect it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DialectChoice {
    Auto,
    Fixed(Dialect),
}

impl DialectChoice {
    pub(crate) fn parse(argument: &str, name: &str) -> Result<Self, BadArgument> {
        if argument == "auto" {
            return Ok(DialectChoice::Auto);
        }
        // Every dialect, besides `auto` (PROTOCOL §11).
        Dialect::named(argument)
            .map(DialectChoice::Fixed)
            .ok_or_else(|| {
                BadArgument(format!(
                    "{name}={argument:?} is not a dialect: use \"auto\", {}",
                    names(&Dialect::ALL)
                ))
            })
    }

    /// The dialect to read `text` in.
    pub(crate) fn of(self, text: &str) -> Dialect {
        match self {
            DialectChoice::Auto => detect(text),
            DialectChoice::Fixed(d) => d,
        }
    }
}

/// `to=` of `convert`.
pub(crate) fn target(argument: &str) -> Result<Dialect, BadArgument> {
    TARGETS
        .into_iter()
        .find(|d| d.name() == argument)
        .ok_or_else(|| {
            BadArgument(format!(
                "to={argument:?} is not a dialect clada writes: use {}",
                names(&TARGETS)
            ))
        })
}

/// `atomic=`: `None`/`False`, `True`/`"unit"`, `"document"`.
pub(crate) fn atomic(argument: Option<&str>) -> Result<Option<Atomic>, BadArgument> {
    match argument {
        None => Ok(None),
        Some("unit") => Ok(Some(Atomic::Unit)),
        Some("document") => Ok(Some(Atomic::Document)),
        Some(other) => Err(BadArgument(format!(
            "atomic={other:?} is not a choice: use None, \"unit\" (or True) or \"document\""
        ))),
    }
}

/// `match=`: how a SEARCH finds its text (issue 20's `--match`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Matching {
    /// The default: exact occurrences first, then one uniform indentation
    /// shift and trailing white space forgiven.
    Whitespace,
    /// Exact occurrences only.
    Exact,
}

impl Matching {
    pub(crate) fn parse(argument: &str) -> Result<Self, BadArgument> {
        match argument {
            "whitespace" => Ok(Matching::Whitespace),
            "exact" => Ok(Matching::Exact),
            other => Err(BadArgument(format!(
                "match={other:?} is not a matching mode: use \"whitespace\" or \"exact\""
            ))),
        }
    }
}

/// `timeout=` as given: a number of seconds, or a duration as the command
/// line writes it (`"30s"`, `"500ms"`, `"2m"`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Timeout<'a> {
    Seconds(f64),
    Text(&'a str),
}

/// `timeout=`: the limit of each command and of the whole run
/// (`--timeout` and `--total-timeout` both), and of the wait for the lock
/// when shorter than its 10 s. `None`: the CLI's defaults. Read as the
/// command line reads `--timeout` ([`clada_markers::units::duration`]),
/// above 0.
pub(crate) fn timeout(given: Option<Timeout<'_>>) -> Result<Option<Duration>, BadArgument> {
    let bad = |what: String| {
        BadArgument(format!(
            "timeout={what} is not a time limit: give seconds above 0 (timeout=120), a duration as the command line writes it (timeout=\"30s\", \"500ms\", \"2m\"), or None"
        ))
    };
    let limit = match given {
        None => return Ok(None),
        Some(Timeout::Seconds(seconds)) => {
            Duration::try_from_secs_f64(seconds).map_err(|_| bad(seconds.to_string()))?
        }
        Some(Timeout::Text(text)) => {
            clada_markers::units::duration(text).map_err(|_| bad(format!("{text:?}")))?
        }
    };
    if limit.is_zero() {
        return Err(bad(match given {
            Some(Timeout::Text(text)) => format!("{text:?}"),
            _ => "0".to_owned(),
        }));
    }
    Ok(Some(limit))
}

/// `git=`: `False` (no commits), `True` (commits as clada), or the author
/// of the commits, e.g. `"Ada <ada@example.com>"`.
pub(crate) fn git(author: Option<&str>, on: bool) -> Result<Option<Author>, BadArgument> {
    match author {
        Some(text) => text
            .parse()
            .map(Some)
            .map_err(|e| BadArgument(format!("git={text:?}: {e}"))),
        None => Ok(on.then(Author::default)),
    }
}

/// `allow=`: the command lines approved for this call, at the root,
/// trimmed (as `clada allow` without `--dir` keeps them).
pub(crate) fn allow(commands: Vec<String>) -> Result<Vec<String>, BadArgument> {
    commands
        .into_iter()
        .map(|c| {
            let trimmed = c.trim();
            if trimmed.is_empty() {
                Err(BadArgument(
                    "allow=(\"\",): an empty command approves nothing: give the exact command lines a RUN may carry, e.g. allow=(\"npm test\",)".to_owned(),
                ))
            } else {
                Ok(trimmed.to_owned())
            }
        })
        .collect()
}

/// Everything `apply` takes besides the document and the root.
#[derive(Debug)]
pub(crate) struct ApplySettings {
    pub(crate) dialect: DialectChoice,
    pub(crate) dry_run: bool,
    pub(crate) atomic: Option<Atomic>,
    pub(crate) matching: Matching,
    pub(crate) git: Option<Author>,
    pub(crate) allow: Vec<String>,
    pub(crate) timeout: Option<Duration>,
    /// `allow_empty=`: a document without any task is not an error.
    pub(crate) allow_empty: bool,
}

impl ApplySettings {
    /// `apply` set up as `clada apply --no-prompt --format json` would be
    /// with the same flags: clada's directories from the environment (the
    /// approvals of `clada allow`, the default lock), nobody asked.
    pub(crate) fn configure(
        &self,
        apply: Apply,
        dirs: Option<clada_markers::engine::Dirs>,
    ) -> Apply {
        let command_timeout = self.timeout.unwrap_or(COMMAND_TIMEOUT);
        let lock_timeout = self.timeout.map_or(LOCK_TIMEOUT, |t| t.min(LOCK_TIMEOUT));
        apply.dirs(dirs).settings(Settings {
            total_timeout: self.timeout,
            git: self.git.clone(),
            lock_timeout,
            timeout: command_timeout,
            approved: self.allow.clone(),
            dry_run: self.dry_run,
            atomic: self.atomic,
            matching: self.matching.into(),
            allow_empty: self.allow_empty,
            ..Settings::default()
        })
    }
}

impl From<Matching> for clada_markers::MatchMode {
    fn from(m: Matching) -> Self {
        match m {
            Matching::Whitespace => clada_markers::MatchMode::Whitespace,
            Matching::Exact => clada_markers::MatchMode::Exact,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dialects_are_named_as_on_the_command_line() {
        assert_eq!(
            DialectChoice::parse("auto", "dialect"),
            Ok(DialectChoice::Auto)
        );
        assert_eq!(
            DialectChoice::parse("codex", "dialect"),
            Ok(DialectChoice::Fixed(Dialect::Codex))
        );
        let BadArgument(message) = DialectChoice::parse("diff", "from_").unwrap_err();
        assert!(message.starts_with("from_=\"diff\""), "{message}");
        assert!(message.contains("\"aider\""), "{message}");
        assert_eq!(
            DialectChoice::parse("udiff", "dialect"),
            Ok(DialectChoice::Fixed(Dialect::Udiff))
        );
        assert_eq!(
            DialectChoice::parse("cline", "dialect"),
            Ok(DialectChoice::Fixed(Dialect::Cline))
        );
        assert_eq!(target("aider"), Ok(Dialect::Aider));
        assert_eq!(target("udiff"), Ok(Dialect::Udiff));
        // CML and Cline's blocks are read, not written.
        assert!(target("cml").is_err());
        assert!(target("cline").is_err());
    }

    #[test]
    fn a_timeout_is_a_positive_number_of_seconds_or_a_duration() {
        assert_eq!(timeout(None), Ok(None));
        let seconds = |s| timeout(Some(Timeout::Seconds(s)));
        let text = |t| timeout(Some(Timeout::Text(t)));
        assert_eq!(seconds(1.5), Ok(Some(Duration::from_millis(1500))));
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e300] {
            assert!(seconds(bad).is_err(), "{bad}");
        }
        assert_eq!(text("30s"), Ok(Some(Duration::from_secs(30))));
        assert_eq!(text("500ms"), Ok(Some(Duration::from_millis(500))));
        assert_eq!(text("2m"), Ok(Some(Duration::from_secs(120))));
        assert_eq!(text("7"), Ok(Some(Duration::from_secs(7))));
        for bad in ["", "0s", "ten", "-1s", "3 weeks"] {
            let BadArgument(message) = text(bad).unwrap_err();
            assert!(
                message.starts_with(&format!("timeout={bad:?}")),
                "{message}"
            );
        }
    }

    #[test]
    fn approvals_are_trimmed_and_never_empty() {
        assert_eq!(
            allow(vec![" npm test ".to_owned()]),
            Ok(vec!["npm test".to_owned()])
        );
        assert!(allow(vec!["  ".to_owned()]).is_err());
    }

    #[test]
    fn matching_modes_and_atomic_choices_are_checked() {
        assert_eq!(Matching::parse("exact"), Ok(Matching::Exact));
        assert!(Matching::parse("fuzzy").is_err());
        assert_eq!(atomic(Some("document")), Ok(Some(Atomic::Document)));
        assert!(atomic(Some("all")).is_err());
    }

    #[test]
    fn git_takes_an_author_or_a_switch() {
        assert_eq!(git(None, false), Ok(None));
        assert_eq!(git(None, true), Ok(Some(Author::default())));
        let ada = git(Some("Ada <ada@example.com>"), true).unwrap().unwrap();
        assert_eq!(ada.email, "ada@example.com");
        assert!(git(Some("<>"), true).is_err());
    }
}

//! Planning: what a task will do, decided without changing anything.
//!
//! A plan resolves the task's paths, reads what it needs through [`Tree`],
//! finds the matches and computes the new contents. It never writes, so
//! matching and path rules are tested against an in-memory tree. The
//! engine carries a plan out on its view of the tree ([`super::view`]).

use crate::engine::editing::Splice;
use crate::engine::fs::locate_task;
use crate::engine::matching::HintBudget;
use crate::engine::seek::Search;
use crate::engine::seek::{How, Mismatch};
use crate::engine::task_error::TaskError;
use crate::engine::tree::{Content, FsError, Kind, Tree};
use crate::error_type::ErrorType;
use crate::syntax::BOM;
use crate::syntax::Location;
use crate::syntax::{Op, TaskPath};

/// A side effect, fully computed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    /// Replace (or create) the file with these bytes.
    Write {
        at: Location,
        contents: Content,
    },
    /// Change these bytes of the file (read by the plan).
    Edit {
        at: Location,
        splice: Splice,
    },
    Move {
        from: Location,
        to: Location,
    },
    Remove {
        at: Location,
    },
    /// Run a command (see the runner).
    Run {
        command: String,
        dir: Option<Location>,
    },
    /// Nothing to do (a MOVE onto itself).
    Nothing,
}

/// What a task did, for the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Effect {
    Created {
        path: String,
    },
    Replaced {
        path: String,
    },
    Appended {
        path: String,
    },
    Edited {
        path: String,
        replacements: usize,
        lines: Vec<usize>,
        how: How,
    },
    Moved {
        from: String,
        to: String,
    },
    Removed {
        path: String,
    },
    Ran {
        command: String,
    },
}

/// A planned task: the action and what it will have done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) action: Action,
    pub(crate) effect: Effect,
}

/// Where an edit of the file at a location replaces (PROTOCOL §3 SEARCH
/// and SEARCH-START), or why it cannot: the view's answer, which keeps an
/// index of a file many edits change, or [`find_in`] over a file's text.
pub(crate) type Find<'f> = &'f dyn Fn(&Location, Search<'_>) -> Result<Splice, TaskError>;

/// Plans one operation against the current state of `files`, where `find`
/// finds an edit's place; `loose`: whether edits may look beyond exact
/// text (`--match whitespace`).
pub(crate) fn plan(
    op: &Op<'_>,
    files: &dyn Tree,
    find: Find<'_>,
    allow_escape: bool,
    loose: bool,
) -> Result<Plan, TaskError> {
    // Every path is resolved once, then checked where the change lands.
    let at = |p: &TaskPath<'_>| {
        let loc = locate_task(p, allow_escape).map_err(TaskError::from)?;
        files.check_lands(&loc)?;
        Ok::<_, TaskError>(loc)
    };
    match op {
        Op::Write {
            path,
            append,
            content,
        } => {
            let loc = at(path)?;
            let content = content.strip_prefix(BOM).unwrap_or(content);
            let kind = files.kind(&loc)?;
            let display = loc.display();
            match kind {
                Some(Kind::Dir) => return Err(FsError::IsDirectory { path: display }.into()),
                Some(Kind::Symlink) => return Err(FsError::Symlink { path: display }.into()),
                Some(Kind::Other) => return Err(FsError::NotRegular { path: display }.into()),
                Some(Kind::File) | None => {}
            }
            let (contents, effect) = if *append && kind == Some(Kind::File) {
                let existing = files.contents(&loc)?;
                let existing = existing.as_bytes();
                // Sent again, an append would add its text a second time:
                // applied before only when the file ends with its whole
                // lines (`42` is not in a file ending `142`).
                let tail = existing.len().wrapping_sub(content.len());
                if !content.trim().is_empty()
                    && existing.ends_with(content.as_bytes())
                    && (tail == 0 || existing.get(tail.wrapping_sub(1)) == Some(&b'\n'))
                {
                    return Err(TaskError::new(
                        ErrorType::AlreadyApplied,
                        format!(
                            "{display} already ends with the text to append: the append was applied before"
                        ),
                    ));
                }
                let mut old = Vec::with_capacity(existing.len() + content.len() + 1);
                old.extend_from_slice(existing);
                if !old.is_empty() && !old.ends_with(b"\n") {
                    old.push(b'\n');
                }
                old.extend_from_slice(content.as_bytes());
                (Content::from_bytes(old), Effect::Appended { path: display })
            } else if kind == Some(Kind::File) {
                (
                    Content::text(content.to_owned()),
                    Effect::Replaced { path: display },
                )
            } else {
                (
                    Content::text(content.to_owned()),
                    Effect::Created { path: display },
                )
            };
            Ok(Plan {
                action: Action::Write { at: loc, contents },
                effect,
            })
        }
        Op::Edit { .. } | Op::EditRange { .. } => {
            let Some((path, search)) = Search::of(op, loose) else {
                return Err(TaskError::new(
                    ErrorType::MalformedStructure,
                    "the task is not an edit",
                ));
            };
            let loc = at(path)?;
            let splice = find(&loc, search)?;
            // Its text found, an edit that changes nothing leaves the
            // file as it is (`unchanged_edit`, a warning).
            if let Op::Edit {
                search, replace, ..
            } = op
                && search == replace
            {
                return Ok(Plan {
                    action: Action::Nothing,
                    effect: Effect::Edited {
                        path: loc.display(),
                        replacements: 0,
                        lines: splice.lines().to_vec(),
                        how: splice.how().clone(),
                    },
                });
            }
            Ok(edit_plan(loc, splice))
        }
        Op::Move { from, to } => {
            let from_loc = at(from)?;
            let Some(name) = from_loc.name().map(str::to_owned) else {
                return Err(TaskError::new(
                    ErrorType::PathEscape,
                    "the root itself cannot be moved",
                ));
            };
            if files.kind(&from_loc)?.is_none() {
                return Err(FsError::NotFound {
                    path: from_loc.display(),
                }
                .into());
            }
            let to_loc = at(to)?;
            let into_dir = to.ends_with(['/', '\\'])
                || to_loc.is_root()
                || files.kind(&to_loc)? == Some(Kind::Dir);
            let target = if into_dir { to_loc.join(&name) } else { to_loc };
            // Where it lands, after the join (`s/.clada` into `./` is
            // `.clada`), and what it takes away.
            files.check_lands(&target)?;
            files.check_takes_away(&from_loc)?;
            let effect = Effect::Moved {
                from: from_loc.display(),
                to: target.display(),
            };
            if target == from_loc {
                return Ok(Plan {
                    action: Action::Nothing,
                    effect,
                });
            }
            if target
                .display()
                .starts_with(&format!("{}/", from_loc.display()))
            {
                return Err(TaskError::new(
                    ErrorType::PermissionDenied,
                    format!(
                        "cannot move {} into itself ({})",
                        from_loc.display(),
                        target.display()
                    ),
                ));
            }
            Ok(Plan {
                action: Action::Move {
                    from: from_loc,
                    to: target,
                },
                effect,
            })
        }
        Op::Remove { path } => {
            let loc = at(path)?;
            if loc.is_root() {
                return Err(TaskError::new(
                    ErrorType::PathEscape,
                    "the root itself cannot be removed",
                ));
            }
            if files.kind(&loc)?.is_none() {
                return Err(FsError::NotFound {
                    path: loc.display(),
                }
                .into());
            }
            files.check_takes_away(&loc)?;
            let effect = Effect::Removed {
                path: loc.display(),
            };
            Ok(Plan {
                action: Action::Remove { at: loc },
                effect,
            })
        }
        Op::Run { dir, command } => {
            let dir = match dir {
                Some(d) => Some(at(d)?),
                None => None,
            };
            let command = command.trim().to_owned();
            Ok(Plan {
                effect: Effect::Ran {
                    command: command.clone(),
                },
                action: Action::Run { command, dir },
            })
        }
    }
}

fn edit_plan(loc: Location, splice: Splice) -> Plan {
    let effect = Effect::Edited {
        path: loc.display(),
        replacements: splice.replacements(),
        lines: splice.lines().to_vec(),
        how: splice.how().clone(),
    };
    Plan {
        action: Action::Edit { at: loc, splice },
        effect,
    }
}

/// Finds where `search` replaces in `contents`, the file at `loc`, by
/// searching its whole text.
pub(crate) fn find_in(
    contents: &Content,
    loc: &Location,
    search: Search<'_>,
    hints: &HintBudget,
) -> Result<Splice, TaskError> {
    let (text, cr) = as_text(contents, loc)?;
    search
        .find_in(text, Some(cr), hints)
        .map(Splice::Plain)
        .map_err(|m| mismatch(loc, m))
}

/// A file's contents as the text an edit works on, and whether it holds
/// a CR.
pub(crate) fn as_text<'c>(
    contents: &'c Content,
    loc: &Location,
) -> Result<(&'c str, bool), TaskError> {
    match contents {
        Content::Text(t) => Ok((&t.text, t.cr)),
        Content::Bytes(bytes) => {
            let offset = std::str::from_utf8(bytes)
                .err()
                .map_or(0, |e| e.valid_up_to());
            Err(TaskError::new(
                ErrorType::InvalidUtf8,
                format!(
                    "{} is not valid UTF-8 (at byte offset {offset}); clada edits text files only",
                    loc.display()
                ),
            ))
        }
    }
}

pub(crate) fn mismatch(loc: &Location, m: Box<Mismatch>) -> TaskError {
    let what = |n: usize| if n == 1 { "match" } else { "matches" };
    let lines = |l: &[usize]| {
        let shown: Vec<String> = l.iter().map(usize::to_string).collect();
        let s = if l.len() == 1 { "" } else { "s" };
        format!("line{s} {}", shown.join(", "))
    };
    let (kind, message) = if let Some(i) = &m.indentation {
        (
            ErrorType::IndentationMismatch,
            format!(
                "the search text matches at line {} only with other indentation, and how to indent the replacement there is not determined",
                i.line
            ),
        )
    } else if m.already_applied && m.found > 0 {
        (
            ErrorType::AlreadyApplied,
            format!(
                "the replacement already stands where the search text occurs ({}): the edit was applied before",
                lines(&m.applied_lines)
            ),
        )
    } else if m.already_applied {
        (
            ErrorType::AlreadyApplied,
            "found no match, and the replacement stands with the edit's context as often as count asks: the edit was applied before".to_owned(),
        )
    } else if !m.applied_lines.is_empty() && m.found > 0 {
        (
            ErrorType::MatchCountMismatch,
            format!(
                "found {} {}, and the replacement already stands at {} of them ({}): the edit was partly applied before",
                m.found,
                what(m.found),
                m.applied_lines.len(),
                lines(&m.applied_lines)
            ),
        )
    } else {
        (
            ErrorType::MatchCountMismatch,
            format!(
                "found {} {}, expected {}",
                m.found,
                what(m.found),
                m.expected
            ),
        )
    };
    TaskError::Mismatch {
        kind,
        message,
        path: loc.display().into(),
        mismatch: m,
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::collections::BTreeMap;

    use super::*;
    use crate::syntax::Count;

    /// A tree in memory: paths to contents, `None` for a directory, links
    /// as `Some(b"->target")` entries listed in `links`.
    #[derive(Default)]
    struct Memory {
        files: RefCell<BTreeMap<String, Option<Vec<u8>>>>,
        links: Vec<String>,
    }

    impl Memory {
        fn with(entries: &[(&str, Option<&str>)]) -> Self {
            let t = Memory::default();
            for (p, c) in entries {
                t.files
                    .borrow_mut()
                    .insert((*p).to_owned(), c.map(|c| c.as_bytes().to_vec()));
            }
            t
        }
    }

    impl Tree for Memory {
        fn check_lands(&self, at: &Location) -> Result<(), FsError> {
            if crate::syntax::is_protected(at) {
                return Err(FsError::Protected {
                    path: at.display(),
                    why: "is protected",
                });
            }
            Ok(())
        }

        fn check_takes_away(&self, at: &Location) -> Result<(), FsError> {
            self.check_lands(at)
        }

        fn read(&self, at: &Location) -> Result<Vec<u8>, FsError> {
            let path = at.display();
            if self.links.contains(&path) {
                return Err(FsError::Symlink { path });
            }
            match self.files.borrow().get(&path) {
                Some(Some(c)) => Ok(c.clone()),
                Some(None) => Err(FsError::IsDirectory { path }),
                None => Err(FsError::NotFound { path }),
            }
        }
        fn kind(&self, at: &Location) -> Result<Option<Kind>, FsError> {
            let path = at.display();
            if self.links.contains(&path) {
                return Ok(Some(Kind::Symlink));
            }
            Ok(self
                .files
                .borrow()
                .get(&path)
                .map(|c| if c.is_some() { Kind::File } else { Kind::Dir }))
        }

        // Planning reads files and kinds only.
        fn open(&self, at: &Location) -> Result<Box<dyn std::io::Read + '_>, FsError> {
            Ok(Box::new(std::io::Cursor::new(self.read(at)?)))
        }

        fn list(&self, at: &Location) -> Result<Vec<crate::engine::tree::Entry>, FsError> {
            unreachable!("planning lists no directory: {at:?}")
        }

        fn metadata(&self, at: &Location) -> Result<crate::engine::tree::Meta, FsError> {
            unreachable!("planning reads no metadata: {at:?}")
        }

        fn read_link(&self, at: &Location) -> Result<String, FsError> {
            unreachable!("planning reads no link: {at:?}")
        }

        fn check_dir(&self, at: &Location) -> Result<(), FsError> {
            unreachable!("planning checks no working directory: {at:?}")
        }
    }

    /// Plans `op` against `t`, finding edits in each file's whole text.
    fn plan_in(
        op: &Op<'_>,
        t: &Memory,
        allow_escape: bool,
        loose: bool,
    ) -> Result<Plan, TaskError> {
        let hints = HintBudget::new(usize::MAX);
        let find =
            |at: &Location, search: Search<'_>| find_in(&t.contents(at)?, at, search, &hints);
        plan(op, t, &find, allow_escape, loose)
    }

    fn op_edit(path: &str, search: &str, replace: &str) -> Op<'static> {
        Op::Edit {
            path: path.to_owned().into(),
            count: Count::default(),
            matching: crate::syntax::Matching::default(),
            search: search.to_owned().into(),
            replace: replace.to_owned().into(),
        }
    }

    fn written(p: Plan) -> String {
        match p.action {
            Action::Write { contents, .. } => {
                String::from_utf8(contents.as_bytes().to_vec()).unwrap()
            }
            other => panic!("not a write: {other:?}"),
        }
    }

    fn edited(t: &Memory, p: Plan) -> String {
        match p.action {
            Action::Edit {
                at,
                splice: Splice::Plain(found),
            } => {
                let mut bytes = t.read(&at).unwrap();
                found.apply(&mut bytes);
                String::from_utf8(bytes).unwrap()
            }
            other => panic!("not an edit: {other:?}"),
        }
    }

    #[test]
    fn edits_read_the_file_and_compute_new_contents() {
        let t = Memory::with(&[("a.txt", Some("one\ntwo\n"))]);
        let p = plan_in(&op_edit("a.txt", "two\n", "2\n"), &t, false, true).unwrap();
        assert_eq!(
            p.effect,
            Effect::Edited {
                path: "a.txt".into(),
                replacements: 1,
                lines: vec![2],
                how: crate::engine::seek::How::default(),
            }
        );
        assert_eq!(edited(&t, p), "one\n2\n");
    }

    #[test]
    fn a_missing_file_is_file_not_found() {
        let e = plan_in(
            &op_edit("nope.txt", "x", "y"),
            &Memory::default(),
            false,
            true,
        )
        .unwrap_err();
        assert_eq!(e.error_type(), ErrorType::FileNotFound);
    }

    #[test]
    fn a_non_utf8_target_is_invalid_utf8() {
        let t = Memory::default();
        t.files
            .borrow_mut()
            .insert("b.bin".into(), Some(vec![b'a', 0xff]));
        let e = plan_in(&op_edit("b.bin", "a", "b"), &t, false, true).unwrap_err();
        assert_eq!(e.error_type(), ErrorType::InvalidUtf8);
        assert!(e.message().contains("offset 1"), "{}", e.message());
    }

    #[test]
    fn a_wrong_count_carries_the_facts() {
        let t = Memory::with(&[("a", Some("x\nx\n"))]);
        let e = plan_in(&op_edit("a", "x\n", "y\n"), &t, false, true).unwrap_err();
        assert_eq!(e.error_type(), ErrorType::MatchCountMismatch);
        assert_eq!(e.message(), "found 2 matches, expected 1");
        let TaskError::Mismatch { mismatch: m, .. } = e else {
            panic!()
        };
        assert_eq!(m.lines, vec![1, 2]);
    }

    #[test]
    fn append_adds_the_missing_line_feed_first() {
        let t = Memory::with(&[("log", Some("a"))]);
        let op = Op::Write {
            path: "log".into(),
            append: true,
            content: "b\n".into(),
        };
        let p = plan_in(&op, &t, false, true).unwrap();
        assert_eq!(p.effect, Effect::Appended { path: "log".into() });
        assert_eq!(written(p), "a\nb\n");
    }

    #[test]
    fn write_drops_a_byte_order_mark_and_refuses_directories_and_links() {
        let mut t = Memory::with(&[("d", None), ("f", Some("old"))]);
        t.links.push("l".into());
        let w = |p: &str| Op::Write {
            path: p.to_owned().into(),
            append: false,
            content: "\u{feff}new\n".into(),
        };
        assert_eq!(written(plan_in(&w("f"), &t, false, true).unwrap()), "new\n");
        assert_eq!(
            plan_in(&w("d"), &t, false, true).unwrap_err().error_type(),
            ErrorType::PermissionDenied
        );
        assert_eq!(
            plan_in(&w("l"), &t, false, true).unwrap_err().error_type(),
            ErrorType::SymlinkNotAllowed
        );
        assert_eq!(
            plan_in(&w("new/file"), &t, false, true).unwrap().effect,
            Effect::Created {
                path: "new/file".into()
            }
        );
    }

    #[test]
    fn move_into_a_directory_keeps_the_name() {
        let t = Memory::with(&[("a.txt", Some("x")), ("dest", None)]);
        let m = |to: &str| Op::Move {
            from: "a.txt".into(),
            to: to.to_owned().into(),
        };
        let target = |p: Plan| match p.action {
            Action::Move { to, .. } => to.display(),
            other => panic!("{other:?}"),
        };
        assert_eq!(
            target(plan_in(&m("dest"), &t, false, true).unwrap()),
            "dest/a.txt"
        );
        assert_eq!(
            target(plan_in(&m("new/"), &t, false, true).unwrap()),
            "new/a.txt"
        );
        assert_eq!(
            target(plan_in(&m("b.txt"), &t, false, true).unwrap()),
            "b.txt"
        );
        assert_eq!(
            plan_in(&m("a.txt"), &t, false, true).unwrap().action,
            Action::Nothing
        );
    }

    #[test]
    fn a_directory_cannot_move_into_itself() {
        let t = Memory::with(&[("src", None)]);
        let op = Op::Move {
            from: "src".into(),
            to: "src/inner/".into(),
        };
        assert_eq!(
            plan_in(&op, &t, false, true).unwrap_err().error_type(),
            ErrorType::PermissionDenied
        );
    }

    #[test]
    fn paths_out_of_the_root_need_allow_escape() {
        let t = Memory::default();
        let op = Op::Remove {
            path: "../x".into(),
        };
        assert_eq!(
            plan_in(&op, &t, false, true).unwrap_err().error_type(),
            ErrorType::PathEscape
        );
        assert_eq!(
            plan_in(&op, &t, true, true).unwrap_err().error_type(),
            ErrorType::FileNotFound
        );
    }
}

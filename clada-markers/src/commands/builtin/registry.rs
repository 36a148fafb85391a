//! The built-in commands, listed once (PROTOCOL §6): each one's name,
//! whether it changes the tree, the function that runs it and, for git,
//! the subcommands it runs. The dispatch, the test of a command line, the
//! messages that name them and the tests that hold the documentation to
//! them all read this table.

use std::io::Read;

use rustix::io::Errno;

use super::{Env, Out, Refusal, diff, files, git_command, search};
use crate::engine::tree::{Entry, FsError, Kind, Meta, Tree, TreeMut};
use crate::syntax::Location;

/// How a built-in runs: its arguments after its name, where it runs and
/// what it may touch, where its output goes; its exit status, or why it
/// refused.
pub(crate) type Run = fn(&[String], &Env<'_>, &mut Out<'_>) -> Result<i32, Refusal>;

/// One built-in command.
#[derive(Debug)]
pub(crate) struct Builtin {
    /// Its first word.
    pub(crate) name: &'static str,
    /// Whether it changes the tree (`mkdir touch rm mv cp`): in a dry run
    /// it changes the plan, which the tasks after it see (PROTOCOL §7).
    /// One that does not is given a tree it cannot change ([`run`]).
    pub(crate) changes: bool,
    pub(crate) run: Run,
    /// When only some of its subcommands are built in (git's read
    /// commands), their names: a line with another is no built-in.
    pub(crate) subcommands: &'static [git_command::Subcommand],
}

/// Every built-in command, in the order the documentation lists them.
pub(crate) const BUILTINS: &[Builtin] = &[
    reads("cat", files::cat),
    reads("head", |a, e, o| {
        files::head_tail(a, e, o, files::End::Head)
    }),
    reads("tail", |a, e, o| {
        files::head_tail(a, e, o, files::End::Tail)
    }),
    reads("grep", search::grep),
    reads("find", search::find),
    reads("ls", files::ls),
    reads("pwd", files::pwd),
    reads("tree", search::tree),
    reads("wc", files::wc),
    reads("diff", diff::diff),
    reads("file", files::file),
    reads("stat", files::stat),
    reads("realpath", files::realpath),
    reads("xxd", files::xxd),
    changes("mv", files::mv),
    changes("rm", files::rm),
    changes("cp", files::cp),
    changes("mkdir", files::mkdir),
    changes("touch", files::touch),
    Builtin {
        name: "git",
        changes: false,
        run: git_command::git,
        subcommands: git_command::SUBCOMMANDS,
    },
];

const fn reads(name: &'static str, run: Run) -> Builtin {
    Builtin {
        name,
        changes: false,
        run,
        subcommands: &[],
    }
}

const fn changes(name: &'static str, run: Run) -> Builtin {
    Builtin {
        name,
        changes: true,
        run,
        subcommands: &[],
    }
}

/// The built-in command whose first word is `name`.
pub(crate) fn named(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Whether `argv` names a built-in command (its flags are judged later, by
/// the tool itself).
pub(crate) fn is_builtin(argv: &[String]) -> bool {
    let Some(builtin) = argv.first().and_then(|name| named(name)) else {
        return false;
    };
    builtin.subcommands.is_empty()
        || argv
            .get(1)
            .is_some_and(|sub| builtin.subcommands.iter().any(|s| s.name == sub))
}

/// Runs the built-in command `argv` (first word included) and returns its
/// exit status. A command that does not change the tree reads it through
/// [`ReadOnly`].
pub(crate) fn run(argv: &[String], env: &Env<'_>, out: &mut Out<'_>) -> Result<i32, Refusal> {
    let Some((name, args)) = argv.split_first() else {
        return Err(env.unsupported(""));
    };
    match named(name) {
        Some(builtin) if builtin.changes => (builtin.run)(args, env, out),
        Some(builtin) => {
            let reading = Env {
                tree: &ReadOnly(env.tree),
                cwd: env.cwd.clone(),
                ..*env
            };
            (builtin.run)(args, &reading, out)
        }
        None => Err(Refusal::new(
            crate::error_type::ErrorType::CommandNotAllowed,
            format!("the built-in `{name}` is not available"),
        )),
    }
}

/// A tree as a command that only reads sees it: every change fails as on
/// a read-only file system.
struct ReadOnly<'t>(&'t dyn TreeMut);

impl Tree for ReadOnly<'_> {
    fn kind(&self, at: &Location) -> Result<Option<Kind>, FsError> {
        self.0.kind(at)
    }

    fn found(&self, at: &Location) -> Result<Kind, FsError> {
        self.0.found(at)
    }

    fn read(&self, at: &Location) -> Result<Vec<u8>, FsError> {
        self.0.read(at)
    }

    fn open(&self, at: &Location) -> Result<Box<dyn Read + '_>, FsError> {
        self.0.open(at)
    }

    fn list(&self, at: &Location) -> Result<Vec<Entry>, FsError> {
        self.0.list(at)
    }

    fn metadata(&self, at: &Location) -> Result<Meta, FsError> {
        self.0.metadata(at)
    }

    fn read_link(&self, at: &Location) -> Result<String, FsError> {
        self.0.read_link(at)
    }

    fn check_no_links(&self, at: &Location) -> Result<(), FsError> {
        self.0.check_no_links(at)
    }

    fn check_dir(&self, at: &Location) -> Result<(), FsError> {
        self.0.check_dir(at)
    }

    fn check_lands(&self, at: &Location) -> Result<(), FsError> {
        self.0.check_lands(at)
    }

    fn check_takes_away(&self, at: &Location) -> Result<(), FsError> {
        self.0.check_takes_away(at)
    }
}

fn read_only(at: &Location) -> FsError {
    FsError::Os {
        path: at.display(),
        op: "change",
        errno: Errno::ROFS,
    }
}

impl TreeMut for ReadOnly<'_> {
    fn create_dir(&self, at: &Location) -> Result<bool, FsError> {
        Err(read_only(at))
    }

    fn create_dirs(
        &self,
        at: &Location,
        _step: &mut dyn FnMut(usize, bool) -> bool,
    ) -> Result<bool, FsError> {
        Err(read_only(at))
    }

    fn write(&self, at: &Location, _data: &[u8]) -> Result<(), FsError> {
        Err(read_only(at))
    }

    fn remove(&self, at: &Location) -> Result<(), FsError> {
        Err(read_only(at))
    }

    fn rename(&self, from: &Location, _to: &Location) -> Result<(), FsError> {
        Err(read_only(from))
    }

    fn touch(&self, at: &Location, _access: bool, _modify: bool) -> Result<(), FsError> {
        Err(read_only(at))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    /// A document of the repository, its white space made single spaces.
    fn doc(path: &str) -> (String, String) {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(path);
        let text = std::fs::read_to_string(file).unwrap();
        let words = text.split_whitespace().collect::<Vec<_>>().join(" ");
        (text, words)
    }

    fn names(which: impl Fn(&Builtin) -> bool) -> String {
        let names: Vec<&str> = BUILTINS
            .iter()
            .filter(|b| which(b))
            .map(|b| b.name)
            .collect();
        names.join(" ")
    }

    fn git() -> Vec<&'static str> {
        named("git")
            .unwrap()
            .subcommands
            .iter()
            .map(|s| s.name)
            .collect()
    }

    #[test]
    fn the_protocol_and_the_readme_list_the_built_ins_of_the_registry() {
        let plain = names(|b| b.subcommands.is_empty());
        let git = git().join(" ");
        let changing = names(|b| b.changes);
        let (_, protocol) = doc("grammar/PROTOCOL.md");
        let listed =
            format!("first word is one of `{plain}`, or `git` with the subcommand `{git}`");
        assert!(
            protocol.contains(&listed),
            "PROTOCOL §6 should say: {listed}"
        );
        let plan = format!("The file commands (`{changing}`) change the plan");
        assert!(protocol.contains(&plan), "PROTOCOL §7 should say: {plan}");
        let (readme, words) = doc("README.md");
        let listed = format!("first word is `{plain}`, or `git` with `{git}`");
        assert!(words.contains(&listed), "the README should say: {listed}");
        assert!(words.contains(&plan), "the README should say: {plan}");
        // Each has its row in the README's tables of flags.
        let rows: Vec<&str> = readme.lines().filter(|l| l.starts_with("| `")).collect();
        let row = |start: &str| {
            rows.iter().any(|r| {
                let cell = r.split(" | ").next().unwrap_or("");
                cell.contains(&format!("{start}`")) || cell.contains(&format!("{start} "))
            })
        };
        for name in plain.split(' ') {
            assert!(row(&format!("`{name}")), "no row of flags for `{name}`");
        }
        for sub in git.split(' ') {
            assert!(
                row(&format!("`git {sub}")),
                "no row of flags for `git {sub}`"
            );
        }
    }

    #[test]
    fn a_line_is_built_in_when_the_registry_lists_its_first_words() {
        let argv = |line: &str| line.split(' ').map(str::to_owned).collect::<Vec<_>>();
        for builtin in BUILTINS.iter().filter(|b| b.subcommands.is_empty()) {
            assert!(is_builtin(&argv(builtin.name)), "{}", builtin.name);
        }
        for sub in git() {
            assert!(is_builtin(&argv(&format!("git {sub} -x"))), "git {sub}");
        }
        for line in [
            "git",
            "git push",
            "git -C x status",
            "echo hi",
            "sh -c x",
            "",
        ] {
            assert!(!is_builtin(&argv(line)), "{line}");
        }
        // One entry per name.
        for (i, b) in BUILTINS.iter().enumerate() {
            assert!(BUILTINS[..i].iter().all(|a| a.name != b.name), "{}", b.name);
        }
    }

    #[test]
    fn a_command_that_only_reads_cannot_change_the_tree() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        let root = crate::engine::fs::Root::open(dir.path()).unwrap();
        let reading = ReadOnly(&root);
        let at = |p: &str| Location::below_root(&[p]);
        assert_eq!(reading.read(&at("a.txt")).unwrap(), b"a\n");
        let refused = |r: Result<(), FsError>| matches!(r, Err(FsError::Os { errno, .. }) if errno == Errno::ROFS);
        assert!(refused(reading.write(&at("b.txt"), b"b")));
        assert!(refused(reading.create_dir(&at("d")).map(drop)));
        assert!(refused(reading.rename(&at("a.txt"), &at("c.txt"))));
        assert!(refused(reading.remove(&at("a.txt"))));
        assert!(refused(reading.touch(&at("a.txt"), true, true)));
        let names = std::fs::read_dir(dir.path()).unwrap().count();
        assert_eq!(names, 1, "only a.txt is there");
        assert!(
            BUILTINS
                .iter()
                .filter(|b| b.changes)
                .all(|b| b.subcommands.is_empty()),
            "git's subcommands only read"
        );
    }
}

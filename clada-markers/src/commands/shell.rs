//! Telling a command line that needs a shell from one that does not.
//!
//! A built-in command runs without a shell, so any syntax only a shell
//! understands would silently mean something else. This scanner follows
//! POSIX quoting (single quotes literal, double quotes with backslash
//! escapes, a backslash outside quotes escaping the next character) and
//! reports the first piece of shell syntax outside single quotes: pipes,
//! lists, redirections, expansions, globs, `~` or `#` at the start of a word,
//! subshells. A `$` or backquote inside double quotes counts too: the author
//! expects it expanded, and without a shell it would not be.

/// The first piece of shell syntax in `line`, if any.
pub(crate) fn shell_syntax(line: &str) -> Option<char> {
    #[derive(PartialEq)]
    enum State {
        Normal,
        Single,
        Double,
    }
    let mut state = State::Normal;
    let mut word_start = true;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match state {
            State::Single => {
                if c == '\'' {
                    state = State::Normal;
                }
            }
            State::Double => match c {
                '"' => state = State::Normal,
                '\\' => {
                    chars.next();
                }
                '$' | '`' => return Some(c),
                _ => {}
            },
            State::Normal => {
                match c {
                    '\'' => state = State::Single,
                    '"' => state = State::Double,
                    '\\' => {
                        chars.next();
                    }
                    '|' | '&' | ';' | '<' | '>' | '$' | '`' | '*' | '?' | '[' | '(' | ')'
                    | '\n' => {
                        return Some(c);
                    }
                    '~' | '#' if word_start => return Some(c),
                    _ => {}
                }
                word_start = c.is_whitespace();
                continue;
            }
        }
        word_start = false;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_unquoted_shell_syntax() {
        for (line, c) in [
            ("ls | wc", '|'),
            ("ls && pwd", '&'),
            ("ls; pwd", ';'),
            ("echo hi > f", '>'),
            ("cat < f", '<'),
            ("ls $(pwd)", '$'),
            ("ls $HOME", '$'),
            ("ls `pwd`", '`'),
            ("ls *.rs", '*'),
            ("ls file?.rs", '?'),
            ("ls [ab]", '['),
            ("ls ~", '~'),
            ("ls ~/x", '~'),
            ("ls # comment", '#'),
            ("(ls)", '('),
            ("cat \"$HOME/x\"", '$'),
        ] {
            assert_eq!(shell_syntax(line), Some(c), "{line}");
        }
    }

    #[test]
    fn quoted_and_escaped_syntax_is_plain_text() {
        for line in [
            "grep 'a|b' f",
            "grep \"a|b\" f",
            "grep a\\|b f",
            "ls a~b",
            "grep 'x$' f",
            "grep 'a*' f",
            "cat 'my file.txt'",
            "echo a#b",
            "cat \"say \\\"hi\\\"\"",
        ] {
            assert_eq!(shell_syntax(line), None, "{line}");
        }
    }
}

//! The arguments of a tool call to the MCP server (`clada mcp`, PROTOCOL
//! §10.2), checked before anything runs. A call names a tool and carries
//! the document and, for `apply`, three switches that only narrow the
//! server's own (`dry_run` only turns a dry run on, `atomic` only moves
//! from none to `unit` to `document`, `match` only from `whitespace` to
//! `exact`), `allow_empty` (a document without any task is then not
//! an error; it runs nothing either way) and `diff` (the text report shows
//! what the run changed, with diffs); it never names a root, an
//! approval or a wider policy. Anything else is refused with a message: a
//! tool nobody has as JSON-RPC error -32602 (invalid params), arguments a
//! tool refuses as a tool result with `isError` (MCP 2025-11-25, SEP-1303),
//! so that the model reads and corrects them.

use serde_json::{Map, Value};

use crate::engine::{Atomic, MatchMode};

/// The switches of a run a call may narrow: the server's (from its command
/// line), or a call's once narrowed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Switches {
    /// `--dry-run`.
    pub dry_run: bool,
    /// `--atomic[=unit|document]`.
    pub atomic: Option<Atomic>,
    /// `--match`.
    pub matching: MatchMode,
    /// `--allow-empty`: a document without any task is not an error.
    pub allow_empty: bool,
    /// `--diff`: the text report shows what the run changed, with each
    /// file's diff (the JSON report has it either way).
    pub diff: bool,
}

/// The server's tools.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tool {
    /// Applies the document (with the call's switches).
    Apply,
    /// Parses and checks the document.
    Check,
}

impl Tool {
    /// The tool of that name, if the server has one.
    pub fn named(name: &str) -> Option<Tool> {
        match name {
            "apply" => Some(Tool::Apply),
            "check" => Some(Tool::Check),
            _ => None,
        }
    }
}

/// A tool call, checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Call<'a> {
    pub tool: Tool,
    pub document: &'a str,
    /// The server's switches, narrowed by the call's (for `check`, the
    /// server's).
    pub switches: Switches,
}

/// Why a call is refused: the message for the client, sent as error
/// [`InvalidParams::CODE`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidParams(pub String);

impl InvalidParams {
    /// JSON-RPC's "invalid params".
    pub const CODE: i32 = -32602;
}

/// Checks the call of tool `name` with `arguments` on a server started
/// with `server`.
pub fn call<'a>(
    name: &str,
    arguments: &'a Map<String, Value>,
    server: Switches,
) -> Result<Call<'a>, InvalidParams> {
    let bad = |message: String| InvalidParams(message);
    let Some(tool) = Tool::named(name) else {
        return Err(bad(format!(
            "no tool `{name}`: the tools are `apply` and `check`"
        )));
    };
    for key in arguments.keys() {
        let known = match tool {
            Tool::Apply => [
                "document",
                "dry_run",
                "atomic",
                "match",
                "allow_empty",
                "diff",
            ]
            .contains(&key.as_str()),
            Tool::Check => key == "document",
        };
        if !known {
            return Err(bad(format!("`{name}` takes no argument `{key}`")));
        }
    }
    let document = arguments
        .get("document")
        .and_then(Value::as_str)
        .ok_or_else(|| bad(format!("`{name}` needs `document`, a string")))?;
    let document = crate::input::text(document).map_err(|d| bad(d.message.into_owned()))?;
    let mut switches = server;
    if tool == Tool::Apply {
        match arguments.get("dry_run") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => switches.dry_run |= *b,
            Some(_) => return Err(bad("`dry_run` is a boolean".to_owned())),
        }
        match arguments.get("diff") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => switches.diff |= *b,
            Some(_) => return Err(bad("`diff` is a boolean".to_owned())),
        }
        match arguments.get("allow_empty") {
            None | Some(Value::Null) => {}
            Some(Value::Bool(b)) => switches.allow_empty |= *b,
            Some(_) => return Err(bad("`allow_empty` is a boolean".to_owned())),
        }
        // The whole document, then each unit, then nothing rolls back: the
        // stricter of the server and the call.
        let asked = match arguments.get("atomic").map(|v| v.as_str()) {
            None => None,
            Some(Some("unit")) => Some(Atomic::Unit),
            Some(Some("document")) => Some(Atomic::Document),
            Some(_) => return Err(bad("`atomic` is \"unit\" or \"document\"".to_owned())),
        };
        switches.atomic = match (server.atomic, asked) {
            (Some(Atomic::Document), _) | (_, Some(Atomic::Document)) => Some(Atomic::Document),
            (Some(Atomic::Unit), _) | (_, Some(Atomic::Unit)) => Some(Atomic::Unit),
            (None, None) => None,
        };
        // `exact` narrows; `whitespace` on a server started with `--match
        // exact` would widen it, and is refused rather than ignored (the
        // caller asked for matching it will not get).
        switches.matching = match (server.matching, arguments.get("match").map(Value::as_str)) {
            (theirs, None) => theirs,
            (_, Some(Some("exact"))) => MatchMode::Exact,
            (MatchMode::Whitespace, Some(Some("whitespace"))) => MatchMode::Whitespace,
            (MatchMode::Exact, Some(Some("whitespace"))) => {
                return Err(bad(
                    "the server was started with --match exact: a call cannot widen it; send the call without `match`"
                        .to_owned(),
                ));
            }
            (_, Some(_)) => return Err(bad("`match` is \"exact\" or \"whitespace\"".to_owned())),
        };
    }
    Ok(Call {
        tool,
        document,
        switches,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    fn on(server: Switches, v: Value) -> Result<Switches, InvalidParams> {
        call("apply", &args(v), server).map(|c| c.switches)
    }

    #[test]
    fn a_call_narrows_the_servers_switches_and_never_widens_them() {
        use Atomic::{Document, Unit};
        let server = |dry_run, atomic| Switches {
            dry_run,
            atomic,
            matching: MatchMode::Whitespace,
            allow_empty: false,
            diff: false,
        };
        let doc = "x";
        // dry_run: false never undoes the server's --dry-run.
        let s = on(
            server(true, None),
            json!({"document": doc, "dry_run": false}),
        );
        assert_eq!(s, Ok(server(true, None)));
        let s = on(
            server(false, None),
            json!({"document": doc, "dry_run": true}),
        );
        assert_eq!(s, Ok(server(true, None)));
        // atomic: the stricter of the two.
        for (theirs, asked, got) in [
            (None, json!("unit"), Some(Unit)),
            (None, json!("document"), Some(Document)),
            (Some(Unit), json!("document"), Some(Document)),
            (Some(Document), json!("unit"), Some(Document)),
            (Some(Unit), json!("unit"), Some(Unit)),
        ] {
            let s = on(
                server(false, theirs),
                json!({"document": doc, "atomic": asked}),
            );
            assert_eq!(s, Ok(server(false, got)), "{theirs:?} {asked}");
        }
        let s = on(server(false, Some(Document)), json!({"document": doc}));
        assert_eq!(s, Ok(server(false, Some(Document))));
    }

    #[test]
    fn a_call_may_narrow_the_matching_to_exact_never_widen_it() {
        let server = |matching| Switches {
            matching,
            ..Switches::default()
        };
        let matching = |s: Switches, v| on(s, v).map(|s| s.matching);
        let (exact, ws) = (MatchMode::Exact, MatchMode::Whitespace);
        for (theirs, asked, got) in [
            (ws, json!({"document": "x"}), Some(ws)),
            (ws, json!({"document": "x", "match": "exact"}), Some(exact)),
            (
                ws,
                json!({"document": "x", "match": "whitespace"}),
                Some(ws),
            ),
            (exact, json!({"document": "x"}), Some(exact)),
            (
                exact,
                json!({"document": "x", "match": "exact"}),
                Some(exact),
            ),
            (exact, json!({"document": "x", "match": "whitespace"}), None),
            (ws, json!({"document": "x", "match": "fuzzy"}), None),
        ] {
            assert_eq!(
                matching(server(theirs), asked.clone()).ok(),
                got,
                "{theirs:?} {asked}"
            );
        }
    }

    #[test]
    fn unknown_tools_arguments_and_values_are_refused() {
        let s = Switches::default();
        for (name, v) in [
            ("run", json!({"document": "x"})),
            ("apply", json!({"document": "x", "root": "/"})),
            ("apply", json!({"document": "x", "atomic": "none"})),
            ("apply", json!({"document": "x", "atomic": null})),
            ("apply", json!({"document": "x", "dry_run": "false"})),
            ("apply", json!({"document": "x", "allow_empty": "yes"})),
            ("apply", json!({"document": "x", "diff": "yes"})),
            ("check", json!({"document": "x", "diff": true})),
            ("check", json!({"document": "x", "allow_empty": true})),
            ("apply", json!({"document": 1})),
            ("check", json!({"document": "x", "dry_run": true})),
            ("check", json!({})),
        ] {
            assert!(call(name, &args(v.clone()), s).is_err(), "{name} {v}");
        }
        let diffing = args(json!({"document": "x", "diff": true}));
        assert_eq!(
            call("apply", &diffing, s).map(|c| c.switches.diff),
            Ok(true)
        );
        let checking = args(json!({"document": "x"}));
        assert_eq!(call("check", &checking, s).map(|c| c.tool), Ok(Tool::Check));
    }
}

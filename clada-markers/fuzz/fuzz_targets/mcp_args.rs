//! The MCP server's tool calls (`clada_markers::mcp::call`, what `clada
//! mcp` runs before anything else) on any name, arguments and server
//! switches: no panic; a call is accepted exactly when the protocol says
//! (PROTOCOL §10.2: a known tool, only its arguments, `document` a string
//! of at most 50 MiB, `dry_run`, `allow_empty` and `diff` booleans or null, `atomic` "unit" or
//! "document", `match` "exact" or, on a server not started with `--match
//! exact`, "whitespace"), and then its switches are the server's narrowed, never
//! widened; anything else is refused with a message, sent as -32602.

#![no_main]

use clada_markers::MatchMode;
use clada_markers::engine::Atomic;
use clada_markers::mcp::{Call, InvalidParams, Switches, Tool, call};
use clada_markers::syntax::MAX_DOCUMENT_SIZE;
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Number, Value};

/// Names and strings a call is likely to hold, and some it should not.
const WORDS: &[&str] = &[
    "apply",
    "check",
    "document",
    "dry_run",
    "atomic",
    "unit",
    "none",
    "root",
    "match",
    "exact",
    "whitespace",
    "true",
    "",
    "Apply",
    "document ",
    "atomic\0",
    "dry-run",
    "allow_escape",
    "allow_empty",
    "diff",
];

fn word(u: &mut Unstructured<'_>) -> Result<String> {
    if u.ratio(3, 4)? {
        Ok((*u.choose(WORDS)?).to_owned())
    } else {
        let s: &str = u.arbitrary()?;
        Ok(s.to_owned())
    }
}

fn value(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let kinds = if depth == 0 { 5 } else { 7 };
    Ok(match u.choose_index(kinds)? {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        3 => Value::Number(u.arbitrary::<i64>()?.into()),
        4 => Value::String(word(u)?),
        5 => {
            let n = u.int_in_range(0..=3)?;
            Value::Array((0..n).map(|_| value(u, depth - 1)).collect::<Result<_>>()?)
        }
        _ => Value::Object(object(u, depth - 1)?),
    })
}

fn object(u: &mut Unstructured<'_>, depth: u32) -> Result<Map<String, Value>> {
    let mut m = Map::new();
    for _ in 0..u.int_in_range(0..=4)? {
        m.insert(word(u)?, value(u, depth)?);
    }
    Ok(m)
}

fn atomic(u: &mut Unstructured<'_>) -> Result<Option<Atomic>> {
    Ok(*u.choose(&[None, Some(Atomic::Unit), Some(Atomic::Document)])?)
}

fn rank(a: Option<Atomic>) -> u8 {
    match a {
        None => 0,
        Some(Atomic::Unit) => 1,
        Some(Atomic::Document) => 2,
    }
}

/// What PROTOCOL §10.2 accepts, said once more, independently.
fn accepted(name: &str, args: &Map<String, Value>, server: Switches) -> bool {
    let known: &[&str] = match name {
        "apply" => &["document", "dry_run", "atomic", "match", "allow_empty", "diff"],
        "check" => &["document"],
        _ => return false,
    };
    args.keys().all(|k| known.contains(&k.as_str()))
        && args
            .get("document")
            .and_then(Value::as_str)
            .is_some_and(|d| d.len() <= MAX_DOCUMENT_SIZE)
        && matches!(
            args.get("dry_run"),
            None | Some(Value::Null | Value::Bool(_))
        )
        && matches!(
            args.get("allow_empty"),
            None | Some(Value::Null | Value::Bool(_))
        )
        && matches!(args.get("diff"), None | Some(Value::Null | Value::Bool(_)))
        && args
            .get("atomic")
            .is_none_or(|a| a == "unit" || a == "document")
        && args.get("match").is_none_or(|m| {
            m == "exact" || (m == "whitespace" && server.matching == MatchMode::Whitespace)
        })
}

fn check(name: &str, args: &Map<String, Value>, server: Switches) {
    let result: std::result::Result<Call<'_>, InvalidParams> = call(name, args, server);
    assert_eq!(
        result.is_ok(),
        accepted(name, args, server),
        "{name} {args:?}"
    );
    match result {
        Ok(c) => {
            let tool = if name == "apply" {
                Tool::Apply
            } else {
                Tool::Check
            };
            assert_eq!(c.tool, tool);
            assert_eq!(
                Some(c.document),
                args.get("document").and_then(Value::as_str)
            );
            if c.tool == Tool::Check {
                assert_eq!(c.switches, server, "check changed the switches");
                return;
            }
            // Never wider than the server, and exactly the call's narrowing.
            let asked_dry = args.get("dry_run") == Some(&Value::Bool(true));
            assert_eq!(c.switches.dry_run, server.dry_run || asked_dry);
            let asked_empty = args.get("allow_empty") == Some(&Value::Bool(true));
            assert_eq!(c.switches.allow_empty, server.allow_empty || asked_empty);
            let asked_diff = args.get("diff") == Some(&Value::Bool(true));
            assert_eq!(c.switches.diff, server.diff || asked_diff);
            let asked = match args.get("atomic").and_then(Value::as_str) {
                Some("unit") => Some(Atomic::Unit),
                Some("document") => Some(Atomic::Document),
                _ => None,
            };
            assert!(
                rank(c.switches.atomic) >= rank(server.atomic),
                "atomic widened"
            );
            assert_eq!(
                rank(c.switches.atomic),
                rank(server.atomic).max(rank(asked))
            );
            let exact = server.matching == MatchMode::Exact
                || args.get("match").and_then(Value::as_str) == Some("exact");
            assert_eq!(c.switches.matching == MatchMode::Exact, exact, "matching");
        }
        Err(e) => {
            assert_eq!(InvalidParams::CODE, -32602);
            assert!(!e.0.is_empty(), "an empty message");
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(name) = word(&mut u) else { return };
    let Ok(dry_run) = u.arbitrary::<bool>() else {
        return;
    };
    let Ok(atomic) = atomic(&mut u) else { return };
    let Ok(exact) = u.arbitrary::<bool>() else {
        return;
    };
    let matching = if exact {
        MatchMode::Exact
    } else {
        MatchMode::Whitespace
    };
    let server = Switches {
        dry_run,
        atomic,
        matching,
        allow_empty: false,
        diff: false,
    };
    // Half the inputs: the arguments as a client would send them, any
    // JSON text; the rest built from the likely names and values.
    let args = if u.ratio(1, 2).unwrap_or(false) {
        match serde_json::from_slice::<Value>(u.take_rest()) {
            Ok(Value::Object(m)) => m,
            _ => return,
        }
    } else {
        match object(&mut u, 2) {
            Ok(m) => m,
            Err(_) => return,
        }
    };
    check(&name, &args, server);
});

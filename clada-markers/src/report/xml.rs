//! The result element of the XML protocol (PROTOCOL §9.3): blocks and failed
//! tasks with 0-based indices.

use std::fmt::Write as _;

use crate::report::{ApplyReport, BlockStatus, TaskStatus};

/// Renders the report as `<result …>`.
pub fn render_xml(report: &ApplyReport) -> String {
    let s = &report.summary;
    let mut out = String::new();
    // Tasks already applied before are neither (PROTOCOL §8).
    let already = if s.already_applied > 0 {
        format!(r#" already_applied="{}""#, s.already_applied)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        r#"<result blocks="{}" tasks="{}" succeeded="{}"{already} failed="{}">"#,
        s.blocks,
        s.tasks,
        s.succeeded,
        s.tasks.saturating_sub(s.succeeded + s.already_applied)
    );
    for b in &report.blocks {
        let status = match b.status {
            BlockStatus::Success => "success",
            BlockStatus::Failed => "failed",
            BlockStatus::Malformed => "malformed",
        };
        let failed: Vec<_> = b
            .tasks
            .iter()
            .filter(|t| t.status == TaskStatus::Failed)
            .collect();
        let head = format!(
            r#"  <block index="{}" status="{status}" tasks="{}""#,
            b.number - 1,
            b.tasks.len()
        );
        if failed.is_empty() && b.status != BlockStatus::Malformed {
            let _ = writeln!(out, "{head}/>");
            continue;
        }
        let _ = writeln!(out, "{head}>");
        if b.status == BlockStatus::Malformed && b.kind == "tasks" {
            for d in report.diagnostics.iter().filter(|d| {
                d.block == Some(b.number) && d.severity == crate::syntax::Severity::Error
            }) {
                let _ = writeln!(
                    out,
                    r#"    <error type="{}">{}</error>"#,
                    d.code,
                    escape(&d.message)
                );
            }
        }
        for t in failed {
            let _ = writeln!(out, r#"    <task index="{}" status="error">"#, t.number - 1);
            if let Some(e) = &t.error {
                let _ = writeln!(
                    out,
                    r#"      <error type="{}">{}</error>"#,
                    e.kind,
                    escape(&e.message)
                );
            }
            let _ = writeln!(out, "    </task>");
        }
        let _ = writeln!(out, "  </block>");
    }
    out.push_str("</result>\n");
    out
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            // XML 1.0 cannot hold most control characters, even escaped.
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

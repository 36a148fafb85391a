//! git's text forms that libgit2 does not write as git does, for the
//! built-in git ([`super::git_command`]): the `--stat` layout and its
//! rename names, `--numstat`, the similarity score, quoted names, a patch's
//! file header, and dates. Pure functions of bytes and numbers; nothing
//! here reads a repository.
//!
//! What libgit2 writes as git does is taken from it and not re-done here:
//! the patch (`Diff::print`), the stat's summary line
//! (`DiffStats::to_buf` with `DiffStatsFormat::SHORT`), renames
//! (`Diff::find_similar`, git's threshold). Its own `--stat`
//! (`DiffStatsFormat::FULL`) and `--numstat` (`NUMBER`) are not git's
//! (`tests/git_output.rs` holds them to it), nor are its `--name-only` and
//! `--name-status` (`DiffFormat::NameOnly`, `NameStatus`: names unquoted,
//! a rename as `R\told new` without its score), nor its similarity score,
//! which git2 does not expose anyway.

use std::collections::HashMap;

/// git's similarity index (diffcore-delta.c, diffcore-rename.c): both
/// contents cut into chunks ending at a line feed or at 64 bytes, hashed;
/// the bytes of `new` whose chunks are also in `old`, over the larger size.
pub(super) fn similarity_index(old: &[u8], new: &[u8]) -> usize {
    const MAX_SCORE: u64 = 60_000;
    fn chunks(data: &[u8]) -> HashMap<u32, u64> {
        const HASHBASE: u32 = 107_927;
        let text = !data[..data.len().min(8000)].contains(&0);
        let mut counts: HashMap<u32, u64> = HashMap::new();
        let (mut accum1, mut accum2, mut n) = (0u32, 0u32, 0u64);
        for (i, &c) in data.iter().enumerate() {
            // A CR before a LF does not count in text.
            if text && c == b'\r' && data.get(i + 1) == Some(&b'\n') {
                continue;
            }
            let old1 = accum1;
            accum1 = (accum1 << 7) ^ (accum2 >> 25);
            accum2 = (accum2 << 7) ^ (old1 >> 25);
            accum1 = accum1.wrapping_add(u32::from(c));
            n += 1;
            if n < 64 && c != b'\n' {
                continue;
            }
            let hash = accum1.wrapping_add(accum2.wrapping_mul(0x61)) % HASHBASE;
            *counts.entry(hash).or_default() += n;
            (accum1, accum2, n) = (0, 0, 0);
        }
        if n > 0 {
            let hash = accum1.wrapping_add(accum2.wrapping_mul(0x61)) % HASHBASE;
            *counts.entry(hash).or_default() += n;
        }
        counts
    }
    let max = old.len().max(new.len()) as u64;
    if max == 0 {
        return 100;
    }
    let from = chunks(old);
    let copied: u64 = chunks(new)
        .iter()
        .map(|(hash, &count)| from.get(hash).map_or(0, |&c| c.min(count)))
        .sum();
    let score = copied * MAX_SCORE / max;
    usize::try_from(score * 100 / MAX_SCORE).unwrap_or(0)
}

/// One file of `--stat`: lines added and removed, or for a binary file
/// its sizes (new, old).
pub(super) struct FileStat {
    pub(super) name: String,
    pub(super) added: usize,
    pub(super) deleted: usize,
    pub(super) binary: bool,
}

/// A rename as git's `--stat` shows it: `dir/{old => new}/file`, or each
/// name whole, quoted, when one needs quotes.
pub(super) fn rename_name(a: &str, b: &str) -> String {
    let (qa, qb) = (quoted(a, false), quoted(b, false));
    if qa != a || qb != b {
        return format!("{qa} => {qb}");
    }
    let (ab, bb) = (a.as_bytes(), b.as_bytes());
    // The common prefix, up to and including its last `/`.
    let mut pfx = 0;
    for (i, (x, y)) in ab.iter().zip(bb).enumerate() {
        if x != y {
            break;
        }
        if *x == b'/' {
            pfx = i + 1;
        }
    }
    // The common suffix, from its first `/`, not overlapping the prefix
    // (but allowed to share its final `/`).
    let adjust = usize::from(pfx > 0);
    let mut sfx = 0;
    let (mut i, mut j) = (ab.len(), bb.len());
    while i > 0 && j > 0 && i + adjust > pfx && j + adjust > pfx && ab[i - 1] == bb[j - 1] {
        i -= 1;
        j -= 1;
        if ab[i] == b'/' {
            sfx = ab.len() - i;
        }
    }
    let a_mid = ab.len().saturating_sub(pfx + sfx);
    let b_mid = bb.len().saturating_sub(pfx + sfx);
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    let middle = format!(
        "{} => {}",
        text(&ab[pfx..pfx + a_mid]),
        text(&bb[pfx..pfx + b_mid])
    );
    if pfx + sfx == 0 {
        middle
    } else {
        format!(
            "{}{{{middle}}}{}",
            text(&ab[..pfx]),
            text(&ab[ab.len() - sfx..])
        )
    }
}

fn decimal_width(n: usize) -> usize {
    n.to_string().len()
}

/// git's `--stat` for a terminal `width` columns wide (80 when the output
/// is not a terminal, as here): names, counts and `+`/`-` bars scaled as
/// git scales them; the summary line is libgit2's.
pub(super) fn stat_text(files: &[FileStat], width: usize) -> String {
    let mut max_len = 0;
    let mut max_change = 0;
    let mut number_width = 0;
    let mut bin_width = 0;
    for f in files {
        max_len = max_len.max(f.name.chars().count());
        if f.binary {
            bin_width = bin_width.max(14 + decimal_width(f.added) + decimal_width(f.deleted));
            number_width = 3;
        } else {
            max_change = max_change.max(f.added + f.deleted);
        }
    }
    number_width = number_width.max(decimal_width(max_change));
    let width = width.max(16 + 6 + number_width);
    let mut graph_width = if max_change + 4 > bin_width {
        max_change
    } else {
        bin_width - 4
    };
    let mut name_width = max_len;
    if name_width + number_width + 6 + graph_width > width {
        let most = (width * 3 / 8).saturating_sub(number_width + 6);
        if graph_width > most {
            graph_width = most.max(6);
        }
        let room = width.saturating_sub(number_width + 6 + graph_width);
        if name_width > room {
            name_width = room;
        } else {
            graph_width = width.saturating_sub(number_width + 6 + name_width);
        }
    }
    let scale = |it: usize| {
        if it == 0 {
            0
        } else {
            1 + it * graph_width.saturating_sub(1) / max_change
        }
    };
    let mut text = String::new();
    for f in files {
        let mut name = f.name.as_str();
        let mut len = name_width;
        let mut prefix = "";
        let name_len = name.chars().count();
        if name_width < name_len {
            prefix = "...";
            len = len.saturating_sub(3);
            let skip = name_len - len;
            let start = name.char_indices().nth(skip).map_or(name.len(), |(i, _)| i);
            name = &name[start..];
            if let Some(slash) = name.find('/') {
                name = &name[slash..];
            }
        }
        let pad = len.saturating_sub(name.chars().count());
        text.push_str(&format!(" {prefix}{name}{} |", " ".repeat(pad)));
        if f.binary {
            text.push_str(&format!(" {:>number_width$}", "Bin"));
            if f.added != 0 || f.deleted != 0 {
                text.push_str(&format!(" {} -> {} bytes", f.deleted, f.added));
            }
            text.push('\n');
            continue;
        }
        let (mut add, mut del) = (f.added, f.deleted);
        if graph_width <= max_change {
            let mut total = scale(add + del);
            if total < 2 && add > 0 && del > 0 {
                total = 2;
            }
            if add < del {
                add = scale(add);
                del = total.saturating_sub(add);
            } else {
                del = scale(del);
                add = total.saturating_sub(del);
            }
        }
        let change = f.added + f.deleted;
        let space = if change > 0 { " " } else { "" };
        text.push_str(&format!(" {change:>number_width$}{space}"));
        text.push_str(&"+".repeat(add));
        text.push_str(&"-".repeat(del));
        text.push('\n');
    }
    text
}

/// `--numstat`: `added<TAB>deleted<TAB>name`, `-` for a binary file.
pub(super) fn numstat_text(files: &[FileStat]) -> String {
    files
        .iter()
        .map(|f| {
            if f.binary {
                format!("-\t-\t{}\n", f.name)
            } else {
                format!("{}\t{}\t{}\n", f.added, f.deleted, f.name)
            }
        })
        .collect()
}

/// A path as git prints it (`core.quotePath`, on by default): in double
/// quotes, with C escapes and the bytes of a control character, `"`, `\`
/// or anything past ASCII in octal, when it holds one; with `space`, when it
/// holds a space too (status's short formats). libgit2 quotes a patch's
/// header the same way.
pub(super) fn quoted(path: &str, space: bool) -> String {
    let plain = |b: u8| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\';
    if path.bytes().all(|b| plain(b) && !(space && b == b' ')) {
        return path.to_owned();
    }
    let mut text = String::from('"');
    for b in path.bytes() {
        match b {
            b'"' | b'\\' => text.extend(['\\', char::from(b)]),
            7..=13 => text.extend(['\\', char::from(b"abtnvfr"[usize::from(b - 7)])]),
            b if plain(b) => text.push(char::from(b)),
            b => text.push_str(&format!("\\{b:03o}")),
        }
    }
    text.push('"');
    text
}

/// libgit2's file header of a patch, made git's: the similarity is git's
/// own score (libgit2 measures it its own way), and a `---`/`+++` line
/// whose name holds a space ends with a tab, as git ends it.
pub(super) fn git_header(header: &[u8], score: Option<usize>) -> Vec<u8> {
    let mut text = Vec::with_capacity(header.len() + 2);
    for line in header.split_inclusive(|&b| b == b'\n') {
        let body = line.strip_suffix(b"\n").unwrap_or(line);
        let name = body
            .strip_prefix(b"--- ")
            .or_else(|| body.strip_prefix(b"+++ "));
        match score {
            Some(n) if body.starts_with(b"similarity index ") => {
                text.extend_from_slice(format!("similarity index {n}%\n").as_bytes());
            }
            _ if name.is_some_and(|n| n.contains(&b' ')) => {
                text.extend_from_slice(body);
                text.extend_from_slice(b"\t\n");
            }
            _ => text.extend_from_slice(line),
        }
    }
    text
}

/// git's default date, `Mon Dec 7 21:19:21 2026 +0530`: the time in its
/// own offset (libgit2 reads offsets up to 14:59, within chrono's range).
/// A time chrono cannot hold (past the year 262,143) prints as the epoch,
/// as git prints one that `gmtime` cannot convert.
pub(super) fn git_date(t: git2::Time) -> String {
    use chrono::{DateTime, Datelike, FixedOffset};
    let date = FixedOffset::east_opt(t.offset_minutes().saturating_mul(60))
        .zip(DateTime::from_timestamp(t.seconds(), 0))
        .map(|(offset, utc)| utc.with_timezone(&offset));
    match date {
        // The year apart: chrono's `%Y` pads to 4 digits and signs a fifth,
        // git's `%d` does neither.
        Some(d) => format!(
            "{} {} {}",
            d.format("%a %b %-d %H:%M:%S"),
            d.year(),
            d.format("%z")
        ),
        None => "Thu Jan 1 00:00:00 1970 +0000".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_read_like_git() {
        let t = git2::Time::new(1_700_000_000, 0);
        assert_eq!(git_date(t), "Tue Nov 14 22:13:20 2023 +0000");
        let t = git2::Time::new(1_700_000_000, -90);
        assert_eq!(git_date(t), "Tue Nov 14 20:43:20 2023 -0130");
        // git 2.47 prints these for the same author lines.
        let t = git2::Time::new(253_402_300_800, 0);
        assert_eq!(git_date(t), "Sat Jan 1 00:00:00 10000 +0000");
        let t = git2::Time::new(951_782_400, 14 * 60 + 45);
        assert_eq!(git_date(t), "Tue Feb 29 14:45:00 2000 +1445");
        let t = git2::Time::new(i64::MAX, 0);
        assert_eq!(git_date(t), "Thu Jan 1 00:00:00 1970 +0000");
    }

    /// Expected output copied from git 2 for the same changes.
    #[test]
    fn stat_reads_like_git() {
        let f = |name: &str, added, deleted, binary| FileStat {
            name: name.to_owned(),
            added,
            deleted,
            binary,
        };
        let files = [
            f(
                "averyveryveryveryveryveryveryveryveryveryveryveryverylongdirectoryname/file.txt",
                1,
                0,
                false,
            ),
            f("b.txt", 10, 4, false),
            f("bin.dat", 5, 3, true),
            f("m.txt", 1, 1, false),
            f("src/deep/long_file_name_number_one.txt", 0, 50, false),
            f(
                &rename_name("src/deep/moved.txt", "src/other/moved.txt"),
                0,
                0,
                false,
            ),
        ];
        let pad = |name: &str| format!("{name:<50}");
        assert_eq!(
            stat_text(&files, 80),
            format!(
                " {} |   1 +\n {} |  14 ++++--\n {} | Bin 3 -> 5 bytes\n {} |   2 +-\n \
                 {} |  50 ---------------------\n {} |   0\n",
                pad(".../file.txt"),
                pad("b.txt"),
                pad("bin.dat"),
                pad("m.txt"),
                pad("src/deep/long_file_name_number_one.txt"),
                pad("src/{deep => other}/moved.txt"),
            )
        );
        assert_eq!(numstat_text(&files[1..3]), "10\t4\tb.txt\n-\t-\tbin.dat\n");
        assert_eq!(rename_name("a.txt", "b.txt"), "a.txt => b.txt");
        assert_eq!(rename_name("d/a.txt", "d/b.txt"), "d/{a.txt => b.txt}");
        assert_eq!(rename_name("x/f", "y/f"), "{x => y}/f");
        assert_eq!(rename_name("a/b/c", "a/c"), "a/{b => }/c");
        assert_eq!(rename_name("d/a", "d/é"), r#"d/a => "d/\303\251""#);
    }

    /// Scores git 2 gives the same renames (`R096`, `R072`, `R093`).
    #[test]
    fn similarity_reads_like_git() {
        let seq =
            |from: usize, to: usize| -> String { (from..=to).map(|n| format!("{n}\n")).collect() };
        let a = seq(1, 100);
        let a2 = a
            .replacen("\n5\n", "\nfive\n", 1)
            .replacen("\n50\n", "\nfifty\n", 1);
        assert_eq!(similarity_index(a.as_bytes(), a2.as_bytes()), 96);
        assert_eq!(
            similarity_index(seq(1, 40).as_bytes(), seq(1, 30).as_bytes()),
            72
        );
        let long = |n: usize| {
            format!(
                "{n} some longer line content that goes beyond sixty four bytes in total length yes\n"
            )
        };
        let e: String = (1..=300).map(long).collect();
        let e2: String = (21..=300).map(long).collect();
        assert_eq!(similarity_index(e.as_bytes(), e2.as_bytes()), 93);
        assert_eq!(similarity_index(b"same\n", b"same\n"), 100);
        assert_eq!(similarity_index(b"x\r\ny\r\n", b"x\ny\n"), 66);
    }
}

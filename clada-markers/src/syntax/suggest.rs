//! The words of a suggestion: the known word nearest to one misspelt
//! ("did you mean `path`?") and a choice of words in backquotes ("takes
//! `path` or `count`"). Pure functions of strings, for the diagnostics of
//! this layer and of the dialects.

/// The known word nearest to `word`, if it is near enough to be a likely
/// typo (or differs only in case).
pub(crate) fn nearest<'k>(word: &str, known: &[&'k str]) -> Option<&'k str> {
    if let Some(k) = known.iter().find(|k| k.eq_ignore_ascii_case(word)) {
        return Some(k);
    }
    let upper = word.to_ascii_uppercase();
    known
        .iter()
        .map(|k| {
            (
                strsim::damerau_levenshtein(&upper, &k.to_ascii_uppercase()),
                *k,
            )
        })
        .filter(|(d, k)| *d <= 2.max(k.len() / 3) && *d < k.len())
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// `a`, `a or b`, `a, b or c`, each in backquotes.
pub(crate) fn quoted_list(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("`{i}`")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
    }
}

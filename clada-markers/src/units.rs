//! Durations and sizes as people write them (PROTOCOL §10): the command
//! line's flags (`--timeout 30s`, `--max-output 10MB`) and the Python
//! package's `timeout=` read them here, so that both take the same text.

use std::time::Duration;

/// A number and the unit after it: `10MB` is (10, "MB").
fn number_and_unit(text: &str) -> Option<(f64, &str)> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    Some((number.parse().ok()?, unit.trim()))
}

/// `30s`, `500ms`, `2m`, `1h`, or bare seconds (`30`, `1.5`).
///
/// # Errors
///
/// The message says what was given and what a duration looks like.
pub fn duration(text: &str) -> Result<Duration, String> {
    let bad =
        || format!("`{text}` is not a duration: write e.g. 30s, 500ms, 2m or a number of seconds");
    let (value, unit) = number_and_unit(text).ok_or_else(bad)?;
    let seconds = match unit {
        "" | "s" | "sec" | "secs" => value,
        "ms" => value / 1000.0,
        "m" | "min" | "mins" => value * 60.0,
        "h" => value * 3600.0,
        _ => return Err(bad()),
    };
    if !seconds.is_finite() || !(0.0..=1e9).contains(&seconds) {
        return Err(bad());
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// `10MB`, `512KB`, `1MiB`, or bare bytes. KB, MB and GB are powers of
/// 1000; KiB, MiB and GiB powers of 1024. Units are not case-sensitive.
///
/// # Errors
///
/// The message says what was given and what a size looks like.
pub fn size(text: &str) -> Result<usize, String> {
    let bad =
        || format!("`{text}` is not a size: write e.g. 10MB, 512KB, 1MiB or a number of bytes");
    let (value, unit) = number_and_unit(text).ok_or_else(bad)?;
    let factor: f64 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" | "k" => 1e3,
        "mb" | "m" => 1e6,
        "gb" | "g" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        _ => return Err(bad()),
    };
    let bytes = value * factor;
    if !bytes.is_finite() || bytes < 0.0 || bytes > usize::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_durations() {
        assert_eq!(duration("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(duration("7"), Ok(Duration::from_secs(7)));
        assert_eq!(duration("1.5"), Ok(Duration::from_millis(1500)));
        for bad in ["", "s", "ten", "5x", "-1s", "1e99", "3 weeks"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn reads_sizes() {
        assert_eq!(size("10MB"), Ok(10_000_000));
        assert_eq!(size("512KB"), Ok(512_000));
        assert_eq!(size("1MiB"), Ok(1_048_576));
        assert_eq!(size("4096"), Ok(4096));
        assert_eq!(size("2kib"), Ok(2048));
        for bad in ["", "MB", "ten", "5XB", "-1", "1e400"] {
            assert!(size(bad).is_err(), "{bad}");
        }
    }
}

//! Where the keys of an index occur in a text: every occurrence of every
//! key, overlapping ones included, as an Aho-Corasick search with
//! overlapping matches reports them ([`super::editing`]'s index).
//!
//! Most keys hold a line feed (an edit's search text is whole lines, as
//! a rule): such a key can only occur where its first line ends at a line
//! feed of the text. Those keys are found without an automaton: walking
//! back from each line feed of the text over the line it ends, a rolling
//! hash of the bytes read is looked up at each length that is some key's
//! first line, and a key whose first line's hash matches is compared in
//! full. That reads each byte of the text about once, and building it is
//! hashing the keys' first lines, where an automaton of a thousand keys
//! of 128 bytes takes longer to build than to run over a megabyte. The
//! keys without a line feed (a text inside a line) are searched by an
//! Aho-Corasick automaton of those keys only.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

/// The multiplier of the rolling hash (odd, its bits well mixed).
const MUL: u64 = 0x9E37_79B9_7F4A_7C15;

/// The hash of a first line read backwards from its line feed: `bytes`
/// in reverse order, one step per byte.
fn step(hash: u64, byte: u8) -> u64 {
    hash.wrapping_mul(MUL).wrapping_add(u64::from(byte) + 1)
}

/// A hasher for keys that are hashes already: mixes them once.
#[derive(Default)]
struct Mixed(u64);

impl Hasher for Mixed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = step(self.0, b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(MUL) ^ (n >> 32);
    }
}

/// Finds every occurrence of a set of keys (see the module's
/// documentation).
#[derive(Clone, Debug)]
pub(crate) struct Keys {
    keys: Vec<Vec<u8>>,
    /// Keys with a line feed, by the hash and the length (line feed
    /// included) of their first line.
    by_first_line: HashMap<u64, Vec<u32>, BuildHasherDefault<Mixed>>,
    /// Whether some key's first line is `n + 1` bytes long, for each `n`.
    lengths: Vec<bool>,
    /// A bit for each first line's hash (its top bits): most lines of a
    /// text are no key's first line, and a bit says so before the map.
    seen: Vec<u64>,
    /// The keys without a line feed, and the id of each.
    loose: Option<(AhoCorasick, Vec<u32>)>,
}

impl Keys {
    /// The finder of `keys` (none empty); `None` when the automaton of
    /// those without a line feed cannot be built.
    pub(crate) fn new(keys: &[Vec<u8>]) -> Option<Keys> {
        let mut by_first_line: HashMap<u64, Vec<u32>, BuildHasherDefault<Mixed>> =
            HashMap::default();
        let mut lengths = Vec::new();
        let mut seen = vec![0u64; (1 << SEEN_BITS) / 64];
        let mut loose_ids = Vec::new();
        for (id, key) in keys.iter().enumerate() {
            let id = u32::try_from(id).ok()?;
            let Some(lf) = memchr::memchr(b'\n', key) else {
                loose_ids.push(id);
                continue;
            };
            let hash = key[..=lf].iter().rev().fold(0, |h, &b| step(h, b));
            by_first_line.entry(mixed(hash, lf)).or_default().push(id);
        }
        // Keys sharing their first line with many others go to the
        // automaton: each line of the text that is that first line would
        // compare them all.
        by_first_line.retain(|_, ids| {
            let shared = ids.len() > MAX_SHARED;
            if shared {
                loose_ids.append(ids);
            }
            !shared
        });
        for (&hash, ids) in &by_first_line {
            seen[bit(hash) / 64] |= 1 << (bit(hash) % 64);
            for &id in ids {
                let lf = memchr::memchr(b'\n', &keys[id as usize]).unwrap_or(0);
                if lengths.len() <= lf {
                    lengths.resize(lf + 1, false);
                }
                lengths[lf] = true;
            }
        }
        loose_ids.sort_unstable();
        let loose: Vec<&[u8]> = loose_ids
            .iter()
            .map(|&id| keys[id as usize].as_slice())
            .collect();
        let loose = if loose.is_empty() {
            None
        } else {
            // A contiguous NFA: built in a fraction of a DFA's time, and
            // each search after a splice is of a few hundred bytes.
            let searcher = AhoCorasick::builder()
                .match_kind(MatchKind::Standard)
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .build(&loose)
                .ok()?;
            Some((searcher, loose_ids))
        };
        Some(Keys {
            keys: keys.to_vec(),
            by_first_line,
            lengths,
            seen,
            loose,
        })
    }

    /// Every occurrence of a key in `hay` that ends after byte `after`,
    /// as its start and the key's id, in no particular order.
    pub(crate) fn find(&self, hay: &[u8], after: usize, out: &mut Vec<(usize, u32)>) {
        if let Some((searcher, ids)) = &self.loose {
            for m in searcher.find_overlapping_iter(hay) {
                if m.end() > after {
                    out.push((m.start(), ids[m.pattern().as_usize()]));
                }
            }
        }
        if self.lengths.is_empty() {
            return;
        }
        let longest = self.lengths.len();
        let mut line_start = 0;
        for lf in memchr::memchr_iter(b'\n', hay) {
            let mut hash = step(0, b'\n');
            // The first line of a key holds no other line feed: the bytes
            // before it lie on this line.
            let reach = (lf - line_start).min(longest - 1);
            for n in 0..=reach {
                if n > 0 {
                    hash = step(hash, hay[lf - n]);
                }
                if !self.lengths[n] {
                    continue;
                }
                let hash = mixed(hash, n);
                if self.seen[bit(hash) / 64] & (1 << (bit(hash) % 64)) == 0 {
                    continue;
                }
                let Some(ids) = self.by_first_line.get(&hash) else {
                    continue;
                };
                let start = lf - n;
                for &id in ids {
                    let key = &self.keys[id as usize];
                    let end = start + key.len();
                    if end > after && hay.get(start..end) == Some(key.as_slice()) {
                        out.push((start, id));
                    }
                }
            }
            line_start = lf + 1;
        }
    }
}

/// At most this many keys are found by one first line; those of a first
/// line more keys share are searched by the automaton.
const MAX_SHARED: usize = 8;

/// How many bits of a hash choose its bit in [`Keys::seen`].
const SEEN_BITS: u32 = 16;

/// The bit of [`Keys::seen`] that stands for `hash`.
fn bit(hash: u64) -> usize {
    (hash >> (64 - SEEN_BITS)) as usize
}

/// The hash of a first line with its length mixed in.
fn mixed(hash: u64, lf: usize) -> u64 {
    hash ^ (lf as u64).wrapping_mul(0xD6E8_FEB8_6659_FD93)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every occurrence of every key, by comparing at each position.
    fn plain(keys: &[Vec<u8>], hay: &[u8], after: usize) -> Vec<(usize, u32)> {
        let mut out = Vec::new();
        for (id, key) in keys.iter().enumerate() {
            for start in 0..hay.len() {
                let end = start + key.len();
                if end > after && hay.get(start..end) == Some(key.as_slice()) {
                    out.push((start, id as u32));
                }
            }
        }
        out.sort_unstable();
        out
    }

    fn found(keys: &[Vec<u8>], hay: &[u8], after: usize) -> Vec<(usize, u32)> {
        let mut out = Vec::new();
        Keys::new(keys).unwrap().find(hay, after, &mut out);
        out.sort_unstable();
        out
    }

    #[test]
    fn keys_with_and_without_a_line_feed_are_found_overlapping() {
        let keys: Vec<Vec<u8>> = ["a\na\n", "a\n", "\na", "a", "b\nc", "\n"]
            .iter()
            .map(|k| k.as_bytes().to_vec())
            .collect();
        let hay = b"a\na\na\nxb\nc\n";
        assert_eq!(found(&keys, hay, 0), plain(&keys, hay, 0));
        assert!(found(&keys, hay, 0).contains(&(2, 0)));
        assert_eq!(found(&keys, hay, 6), plain(&keys, hay, 6));
        // Keys sharing a first line with many others: by the automaton.
        let shared: Vec<Vec<u8>> = (0..20).map(|i| format!("a\n{i}\n").into_bytes()).collect();
        let hay = b"a\n3\na\n17\na\n";
        assert_eq!(found(&shared, hay, 0), vec![(0, 3), (4, 17)]);
        assert!(Keys::new(&shared).unwrap().by_first_line.is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// The finder reports what comparing at every position does, on
        /// texts of repeated lines and keys cut from them (a line feed
        /// first, last, inside, twice, or none).
        #[test]
        fn the_finder_finds_what_comparing_everywhere_finds(
            lines in proptest::collection::vec("[ab ]{0,3}", 0..12),
            cuts in proptest::collection::vec((0usize..40, 1usize..12), 1..8),
            after in 0usize..40,
        ) {
            let hay: Vec<u8> = lines.iter().flat_map(|l| format!("{l}\n").into_bytes()).collect();
            let mut keys: Vec<Vec<u8>> = cuts
                .iter()
                .filter_map(|&(s, n)| {
                    let s = s.min(hay.len());
                    let k = hay[s..(s + n).min(hay.len())].to_vec();
                    (!k.is_empty()).then_some(k)
                })
                .chain([b"a".to_vec(), b"\n\n".to_vec(), b"b \n".to_vec()])
                .collect();
            keys.sort_unstable();
            keys.dedup();
            prop_assert_eq!(found(&keys, &hay, after), plain(&keys, &hay, after));
        }
    }
}

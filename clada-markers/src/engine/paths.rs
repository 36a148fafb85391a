//! A map from locations to entries, kept as a tree of names: what the
//! view of a run holds (`super::view`).
//!
//! Each slot of the tree is one path; it may hold an entry of its own and
//! the slots of the names below it. Looking a path up walks its
//! components once, and what lies below a path is taken out, moved or put
//! back as one piece: moving a directory relinks one slot, whatever it
//! holds. Each slot counts the live entries below it (see [`Live`]), so
//! whether a directory holds anything is known without a walk.
//!
//! Nothing here recurses over the tree: a tree deepened by moves (each
//! nesting a directory under another path) is walked, cloned and dropped
//! with explicit stacks. The map does not know what its entries mean.

use std::collections::BTreeMap;
use std::collections::btree_map;

use crate::syntax::{Anchor, Location};

/// Whether an entry counts as something there (a removal leaves an entry
/// that does not).
pub(crate) trait Live {
    fn live(&self) -> bool;
}

/// Entries by location.
pub(crate) struct PathMap<T> {
    anchors: BTreeMap<Anchor, Slot<T>>,
}

/// What lay below a path, taken out of the map as a whole.
pub(crate) struct Below<T> {
    names: BTreeMap<String, Slot<T>>,
    /// Live entries in it.
    live: usize,
}

struct Slot<T> {
    entry: Option<T>,
    /// Live entries strictly below this slot.
    live: usize,
    below: BTreeMap<String, Slot<T>>,
}

/// Where a path stands in the map: its own entry, and the deepest entry
/// above it with the number of components of that entry's path.
pub(crate) struct Lookup<'m, T> {
    pub(crate) own: Option<&'m T>,
    pub(crate) above: Option<(usize, &'m T)>,
}

/// One step of a walk over the map, in the order of the paths: a slot
/// entered (its name, `None` for an anchor, and its entry), then every
/// slot below it, then `Leave`.
pub(crate) enum Visit<'m, T> {
    Enter {
        anchor: Anchor,
        name: Option<&'m str>,
        entry: Option<&'m T>,
        /// Whether a live entry lies below it.
        holds: bool,
    },
    Leave,
}

impl<T> Default for PathMap<T> {
    fn default() -> Self {
        PathMap {
            anchors: BTreeMap::new(),
        }
    }
}

impl<T> Default for Below<T> {
    fn default() -> Self {
        Below {
            names: BTreeMap::new(),
            live: 0,
        }
    }
}

impl<T> Default for Slot<T> {
    fn default() -> Self {
        Slot {
            entry: None,
            live: 0,
            below: BTreeMap::new(),
        }
    }
}

impl<T> std::fmt::Debug for PathMap<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Not the tree: it may be deeper than a recursive print can go.
        f.debug_struct("PathMap")
            .field("anchors", &self.anchors.len())
            .finish_non_exhaustive()
    }
}

impl<T> std::fmt::Debug for Below<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Below")
            .field("names", &self.names.len())
            .field("live", &self.live)
            .finish()
    }
}

impl<T> Drop for Slot<T> {
    /// Drops the slots below with a stack: a tree of any depth.
    fn drop(&mut self) {
        if self.below.is_empty() {
            return;
        }
        let mut pending = vec![std::mem::take(&mut self.below)];
        while let Some(names) = pending.pop() {
            for (_, mut slot) in names {
                let below = std::mem::take(&mut slot.below);
                if !below.is_empty() {
                    pending.push(below);
                }
            }
        }
    }
}

impl<T: Live> Slot<T> {
    fn is_empty(&self) -> bool {
        self.entry.is_none() && self.below.is_empty()
    }
}

impl<T: Live> PathMap<T> {
    /// Whether the map holds no entry at all.
    pub(crate) fn is_empty(&self) -> bool {
        self.anchors.is_empty()
    }

    fn slot(&self, at: &Location) -> Option<&Slot<T>> {
        let mut slot = self.anchors.get(&at.anchor)?;
        for part in at.parts() {
            slot = slot.below.get(part.as_str())?;
        }
        Some(slot)
    }

    fn slot_mut(&mut self, at: &Location) -> Option<&mut Slot<T>> {
        let mut slot = self.anchors.get_mut(&at.anchor)?;
        for part in at.parts() {
            slot = slot.below.get_mut(part.as_str())?;
        }
        Some(slot)
    }

    fn slot_or_new(&mut self, at: &Location) -> &mut Slot<T> {
        let mut slot = self.anchors.entry(at.anchor).or_default();
        for part in at.parts() {
            slot = slot.below.entry(part.clone()).or_default();
        }
        slot
    }

    /// Adds `delta` to the counts of the `depth` slots above the slot of
    /// the first `depth` components of `at`: the anchor's and those of its
    /// first `depth - 1` components.
    fn count(&mut self, at: &Location, depth: usize, delta: isize) {
        if delta == 0 || depth == 0 {
            return;
        }
        let Some(mut slot) = self.anchors.get_mut(&at.anchor) else {
            return;
        };
        let mut parts = at.parts()[..depth - 1].iter();
        loop {
            slot.live = slot.live.saturating_add_signed(delta);
            let Some(part) = parts.next() else { break };
            let Some(next) = slot.below.get_mut(part.as_str()) else {
                break;
            };
            slot = next;
        }
    }

    /// Removes the slots on the way to `at` that hold nothing any more.
    fn prune(&mut self, at: &Location) {
        // The shallowest slot from which everything down to `at` is
        // empty but for the way to `at`.
        let Some(mut slot) = self.anchors.get(&at.anchor) else {
            return;
        };
        let parts = at.parts();
        let mut cut = None;
        for (depth, part) in parts.iter().enumerate() {
            let only_way = slot.entry.is_none() && slot.below.len() == 1;
            match (only_way, cut) {
                (true, None) => cut = Some(depth),
                (false, _) => cut = None,
                (true, Some(_)) => {}
            }
            let Some(next) = slot.below.get(part.as_str()) else {
                return;
            };
            slot = next;
        }
        if !slot.is_empty() {
            return;
        }
        let cut = cut.unwrap_or(parts.len());
        if cut == 0 {
            self.anchors.remove(&at.anchor);
            return;
        }
        let parent = Location {
            anchor: at.anchor,
            parts: parts[..cut - 1].into(),
        };
        if let Some(slot) = self.slot_mut(&parent) {
            slot.below.remove(parts[cut - 1].as_str());
        }
    }

    pub(crate) fn get(&self, at: &Location) -> Option<&T> {
        self.slot(at)?.entry.as_ref()
    }

    /// The entry of `at`, to change in place; whether it is live must not
    /// change (replace it with [`PathMap::insert`] for that).
    pub(crate) fn get_mut(&mut self, at: &Location) -> Option<&mut T> {
        self.slot_mut(at)?.entry.as_mut()
    }

    /// Sets the entry of `at`; returns the one it replaces.
    pub(crate) fn insert(&mut self, at: &Location, entry: T) -> Option<T> {
        let live = isize::from(entry.live());
        let old = self.slot_or_new(at).entry.replace(entry);
        let delta = live - isize::from(old.as_ref().is_some_and(Live::live));
        self.count(at, at.parts().len(), delta);
        old
    }

    /// Takes the entry of `at` out; what lies below stays.
    pub(crate) fn remove(&mut self, at: &Location) -> Option<T> {
        let old = self.slot_mut(at)?.entry.take();
        let delta = -isize::from(old.as_ref().is_some_and(Live::live));
        self.count(at, at.parts().len(), delta);
        self.prune(at);
        old
    }

    /// Takes out everything below `at` (not its own entry).
    pub(crate) fn take_below(&mut self, at: &Location) -> Below<T> {
        let Some(slot) = self.slot_mut(at) else {
            return Below::default();
        };
        let below = Below {
            names: std::mem::take(&mut slot.below),
            live: std::mem::take(&mut slot.live),
        };
        self.count(
            at,
            at.parts().len(),
            -isize::try_from(below.live).unwrap_or(0),
        );
        self.prune(at);
        below
    }

    /// Puts `below` below `at`, in place of what was there (dropped).
    pub(crate) fn put_below(&mut self, at: &Location, below: Below<T>) {
        if below.names.is_empty() {
            drop(self.take_below(at));
            return;
        }
        let slot = self.slot_or_new(at);
        let old = std::mem::replace(&mut slot.live, below.live);
        slot.below = below.names;
        let delta = isize::try_from(below.live).unwrap_or(0) - isize::try_from(old).unwrap_or(0);
        self.count(at, at.parts().len(), delta);
    }

    /// Replaces the entries of the first components of `at` from the
    /// `from`-th on, one for each in `entries` (`None`: left as it is;
    /// `Some(None)`: no entry), in one walk; returns what they replaced,
    /// in the same form.
    pub(crate) fn replace_along(
        &mut self,
        at: &Location,
        from: usize,
        mut entries: Vec<Option<Option<T>>>,
    ) -> Vec<Option<Option<T>>> {
        let parts = at.parts();
        // The change in live entries at each depth.
        let mut deltas = vec![0isize; parts.len() + 1];
        let mut slot = self.anchors.entry(at.anchor).or_default();
        for depth in 0..=parts.len() {
            if depth > 0 {
                slot = slot.below.entry(parts[depth - 1].clone()).or_default();
            }
            let Some(change) = depth.checked_sub(from).and_then(|i| entries.get_mut(i)) else {
                continue;
            };
            if let Some(new) = change.take() {
                let live = isize::from(new.as_ref().is_some_and(Live::live));
                let old = std::mem::replace(&mut slot.entry, new);
                deltas[depth] = live - isize::from(old.as_ref().is_some_and(Live::live));
                *change = Some(old);
            }
        }
        // Each slot counts the changes below it.
        let mut below: isize = deltas.iter().sum();
        if let Some(mut slot) = self.anchors.get_mut(&at.anchor) {
            for depth in 0..=parts.len() {
                if depth > 0 {
                    match slot.below.get_mut(parts[depth - 1].as_str()) {
                        Some(next) => slot = next,
                        None => break,
                    }
                }
                below -= deltas[depth];
                slot.live = slot.live.saturating_add_signed(below);
            }
        }
        self.prune(at);
        entries
    }

    /// Whether a live entry lies below `at`.
    pub(crate) fn holds(&self, at: &Location) -> bool {
        self.slot(at).is_some_and(|s| s.live > 0)
    }

    /// The entry of `at`, and the deepest one above it.
    pub(crate) fn lookup(&self, at: &Location) -> Lookup<'_, T> {
        let mut found = Lookup {
            own: None,
            above: None,
        };
        let Some(mut slot) = self.anchors.get(&at.anchor) else {
            return found;
        };
        for (depth, part) in at.parts().iter().enumerate() {
            if let Some(entry) = &slot.entry {
                found.above = Some((depth, entry));
            }
            match slot.below.get(part.as_str()) {
                Some(next) => slot = next,
                None => return found,
            }
        }
        found.own = slot.entry.as_ref();
        found
    }

    /// The entries of the anchor of `at` and of each of its first
    /// components, in order: `n + 1` of them for `n` components.
    pub(crate) fn along(&self, at: &Location) -> Vec<Option<&T>> {
        let mut out = Vec::with_capacity(at.parts().len() + 1);
        let mut slot = self.anchors.get(&at.anchor);
        out.push(slot.and_then(|s| s.entry.as_ref()));
        for part in at.parts() {
            slot = slot.and_then(|s| s.below.get(part.as_str()));
            out.push(slot.and_then(|s| s.entry.as_ref()));
        }
        out
    }

    /// The names just below `at` that have an entry, in byte order.
    pub(crate) fn children(&self, at: &Location) -> Vec<(&str, &T)> {
        let Some(slot) = self.slot(at) else {
            return Vec::new();
        };
        slot.below
            .iter()
            .filter_map(|(name, s)| Some((name.as_str(), s.entry.as_ref()?)))
            .collect()
    }

    /// Visits every slot in the order of the paths (see [`Visit`]) until
    /// `visit` says to stop; returns whether it went to the end.
    pub(crate) fn walk<'m>(&'m self, mut visit: impl FnMut(Visit<'m, T>) -> bool) -> bool {
        fn enter<'m, T>(anchor: Anchor, name: Option<&'m str>, slot: &'m Slot<T>) -> Visit<'m, T> {
            Visit::Enter {
                anchor,
                name,
                entry: slot.entry.as_ref(),
                holds: slot.live > 0,
            }
        }
        for (&anchor, top) in &self.anchors {
            if !visit(enter(anchor, None, top)) {
                return false;
            }
            let mut stack: Vec<btree_map::Iter<'m, String, Slot<T>>> = vec![top.below.iter()];
            while let Some(names) = stack.last_mut() {
                match names.next() {
                    Some((name, slot)) => {
                        if !visit(enter(anchor, Some(name.as_str()), slot)) {
                            return false;
                        }
                        stack.push(slot.below.iter());
                    }
                    None => {
                        stack.pop();
                        if !visit(Visit::Leave) {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }
}

impl<T: Live + Clone> PathMap<T> {
    /// A copy of the entry of `at` and of what lies below it.
    pub(crate) fn copy_at(&self, at: &Location) -> (Option<T>, Below<T>) {
        let Some(slot) = self.slot(at) else {
            return (None, Below::default());
        };
        let below = Below {
            names: copy_names(&slot.below),
            live: slot.live,
        };
        (slot.entry.clone(), below)
    }
}

/// A deep copy of slots, made with a stack.
fn copy_names<T: Clone>(names: &BTreeMap<String, Slot<T>>) -> BTreeMap<String, Slot<T>> {
    struct Frame<'s, T> {
        names: btree_map::Iter<'s, String, Slot<T>>,
        made: BTreeMap<String, Slot<T>>,
        /// The slot these names are below: its name, entry and count.
        of: Option<(String, Option<T>, usize)>,
    }
    let mut stack = vec![Frame {
        names: names.iter(),
        made: BTreeMap::new(),
        of: None,
    }];
    loop {
        let Some(top) = stack.last_mut() else {
            return BTreeMap::new();
        };
        if let Some((name, slot)) = top.names.next() {
            stack.push(Frame {
                names: slot.below.iter(),
                made: BTreeMap::new(),
                of: Some((name.clone(), slot.entry.clone(), slot.live)),
            });
            continue;
        }
        let Some(done) = stack.pop() else {
            return BTreeMap::new();
        };
        let Some((name, entry, live)) = done.of else {
            return done.made;
        };
        if let Some(parent) = stack.last_mut() {
            parent.made.insert(
                name,
                Slot {
                    entry,
                    live,
                    below: done.made,
                },
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Debug, PartialEq)]
    enum E {
        Here(u32),
        Gone,
    }

    impl Live for E {
        fn live(&self) -> bool {
            matches!(self, E::Here(_))
        }
    }

    fn at(p: &str) -> Location {
        crate::syntax::resolve_path(p, true).unwrap()
    }

    /// Every entry, as `path=value`, in the map's order.
    fn entries(map: &PathMap<E>) -> Vec<String> {
        let mut out = Vec::new();
        let mut path: Vec<String> = Vec::new();
        map.walk(|v| {
            match v {
                Visit::Enter { name, entry, .. } => {
                    path.push(name.unwrap_or("").to_owned());
                    if let Some(e) = entry {
                        out.push(format!("{}={e:?}", path[1..].join("/")));
                    }
                }
                Visit::Leave => {
                    path.pop();
                }
            }
            true
        });
        out
    }

    #[test]
    fn a_subtree_moves_as_one_piece_and_the_counts_follow() {
        let mut m = PathMap::default();
        m.insert(&at("d"), E::Here(0));
        m.insert(&at("d/a"), E::Here(1));
        m.insert(&at("d/b/c"), E::Here(2));
        m.insert(&at("d/gone"), E::Gone);
        assert!(m.holds(&at("d")) && m.holds(&at("d/b")) && !m.holds(&at("d/a")));
        let below = m.take_below(&at("d"));
        assert!(!m.holds(&at("d")) && m.get(&at("d/a")).is_none());
        m.put_below(&at("x/y"), below);
        assert_eq!(
            entries(&m),
            [
                "d=Here(0)",
                "x/y/a=Here(1)",
                "x/y/b/c=Here(2)",
                "x/y/gone=Gone"
            ]
        );
        assert!(m.holds(&at("x")) && m.holds(&at("x/y/b")));
        m.remove(&at("x/y/b/c"));
        m.remove(&at("x/y/a"));
        // Only a removal is left below x: it holds nothing live.
        assert!(!m.holds(&at("x")));
        m.remove(&at("x/y/gone"));
        // Nothing left on the way to x/y: pruned.
        assert_eq!(entries(&m), ["d=Here(0)"]);
        m.remove(&at("d"));
        assert!(m.is_empty());
    }

    #[test]
    fn a_lookup_finds_the_deepest_entry_above() {
        let mut m = PathMap::default();
        m.insert(&at("a"), E::Here(1));
        m.insert(&at("a/b/c"), E::Here(3));
        let l = m.lookup(&at("a/b/c/d/e"));
        assert!(l.own.is_none());
        assert_eq!(l.above.map(|(n, e)| (n, e.clone())), Some((3, E::Here(3))));
        let l = m.lookup(&at("a/b"));
        assert_eq!(l.above.map(|(n, _)| n), Some(1));
        assert_eq!(m.lookup(&at("a/b/c")).own, Some(&E::Here(3)));
        assert_eq!(
            m.along(&at("a/b/c")),
            [None, Some(&E::Here(1)), None, Some(&E::Here(3))]
        );
        assert_eq!(m.children(&at("a")), []);
        assert_eq!(m.children(&at("a/b")), [("c", &E::Here(3))]);
    }

    #[test]
    fn a_tree_far_deeper_than_any_path_is_copied_walked_and_dropped() {
        let mut m = PathMap::default();
        let mut depth = 0;
        // Each move nests the tree under 1,000 more components.
        for round in 0..100 {
            let top = at("t");
            let below = m.take_below(&top);
            let base = format!("t/{}", "n/".repeat(999));
            m.put_below(&at(&base), below);
            m.insert(&at(&format!("{base}f{round}")), E::Here(round));
            depth += 1000;
        }
        assert!(depth >= 100_000);
        assert!(m.holds(&at("t")));
        let (_, copy) = m.copy_at(&at("t"));
        let mut other = PathMap::default();
        other.put_below(&at("u"), copy);
        let mut count = 0;
        other.walk(|v| {
            if let Visit::Enter { entry: Some(_), .. } = v {
                count += 1;
            }
            true
        });
        assert_eq!(count, 100);
        drop(m);
        drop(other);
    }
}

//! The memory `clada watch` shares between the watches of one file
//! (`clada_markers::watch`): a list of unit keys, one a line, read under a
//! lock from where each watch last looked. The input is a sequence of
//! steps: a watch passing a unit as `clada watch` does (lock, read what the
//! list gained, apply and remember the unit if it is new), a watch reading
//! the whole list, a watch starting again with no memory, any bytes
//! appended to the list (by hand, or a line left half written), the list
//! made shorter by hand, and two watches contending for the lock.
//!
//! Checked: no panic, and the list is read whatever it holds; what a watch
//! reads is exactly the whole lines the list gained since it last looked
//! (a list made shorter is read whole); remembering only appends, and the
//! list then ends with the key's line; while the lock is held no other
//! watch takes it; and, unless the list was made shorter by hand, no unit
//! is ever applied twice, whatever was appended to the list.

#![no_main]

#[path = "common/scratch.rs"]
mod scratch;

use std::collections::{HashMap, HashSet};
use std::io::Write as _;
use std::sync::Mutex;

use clada_markers::engine::Dirs;
use clada_markers::watch::{WatchState, key};
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;

/// Watches of the same file at once.
const WATCHES: usize = 3;
/// Steps of one input.
const MAX_STEPS: usize = 64;

struct Setup {
    states: Vec<WatchState>,
    keys: Vec<String>,
}

static SETUP: Mutex<Option<Setup>> = Mutex::new(None);

fn setup() -> Setup {
    let dir = scratch::fresh("watch");
    std::fs::create_dir_all(dir.join("root")).expect("scratch");
    let dirs = Dirs {
        config: dir.join("config"),
        state: dir.join("state"),
        runtime: dir.join("run"),
    };
    let file = dir.join("root/replies.md");
    let states: Vec<WatchState> = (0..WATCHES)
        .map(|_| WatchState::new(&dirs, &dir.join("root"), &file))
        .collect();
    // Makes the state's directory.
    drop(states[0].lock(&|| false).expect("lock"));
    let keys = (0..8).map(|i| key(&format!("unit {i}\n"))).collect();
    Setup { states, keys }
}

/// One watch's own memory, as `clada watch` keeps it.
#[derive(Default)]
struct Watch {
    applied: HashSet<String>,
    read: u64,
}

/// What the list holds from `from` on, read as the list promises: the
/// whole lines after `from` (from the start if the list is shorter), each
/// a key (a line that is not UTF-8 is no key, and holds no other), and
/// where they end.
fn expected(list: &[u8], from: u64) -> (Vec<String>, u64) {
    let from = if (list.len() as u64) < from {
        0
    } else {
        from as usize
    };
    let rest = &list[from..];
    let whole = rest.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    let text = String::from_utf8_lossy(&rest[..whole]);
    (
        text.lines().map(str::to_owned).collect(),
        (from + whole) as u64,
    )
}

fn read_list(s: &Setup) -> Vec<u8> {
    std::fs::read(s.states[0].list_path()).unwrap_or_default()
}

fn append(s: &Setup, bytes: &[u8]) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(s.states[0].list_path())
        .expect("list");
    f.write_all(bytes).expect("append");
}

fn steps(u: &mut Unstructured<'_>, s: &Setup) -> Result<()> {
    let mut watches: Vec<Watch> = (0..WATCHES).map(|_| Watch::default()).collect();
    // How often each unit was applied; `None` once the list was made
    // shorter by hand (it forgets, as it may).
    let mut applied: Option<HashMap<String, u32>> = Some(HashMap::new());
    let nothing = || false;
    for _ in 0..MAX_STEPS {
        if u.is_empty() {
            break;
        }
        let w = u.choose_index(WATCHES)?;
        match u.choose_index(6)? {
            // A watch passes a unit: as `Watch::pass` of `clada watch`.
            0 | 1 => {
                let unit = u.choose(&s.keys)?.clone();
                let held = s.states[w]
                    .lock(&nothing)
                    .expect("lock")
                    .expect("not stopped");
                let list = read_list(s);
                let got = held
                    .applied_since(watches[w].read)
                    .expect("the list is read whatever it holds");
                let (keys, at) = expected(&list, watches[w].read);
                assert_eq!(got, (keys.clone(), at), "read {list:?}");
                watches[w].applied.extend(keys);
                watches[w].read = at;
                if watches[w].applied.contains(&unit) {
                    continue;
                }
                if let Some(counts) = &mut applied {
                    let n = counts.entry(unit.clone()).or_default();
                    *n += 1;
                    assert_eq!(*n, 1, "{unit} applied twice; the list: {list:?}");
                }
                held.remember(&unit).expect("remember");
                watches[w].applied.insert(unit.clone());
                let after = read_list(s);
                assert!(after.starts_with(&list), "remember changed the list");
                assert!(
                    after.ends_with(format!("{unit}\n").as_bytes()),
                    "remember did not end the list with the key"
                );
            }
            // Everything the list holds, read whole.
            2 => {
                let held = s.states[w]
                    .lock(&nothing)
                    .expect("lock")
                    .expect("not stopped");
                let list = read_list(s);
                let all = held.applied().expect("the list is read whatever it holds");
                let want: HashSet<String> = expected(&list, 0).0.into_iter().collect();
                assert_eq!(all, want, "read whole {list:?}");
            }
            // A watch starts again, remembering nothing of its own.
            3 => watches[w] = Watch::default(),
            // Anything appended to the list by hand.
            4 => {
                let n = u.int_in_range(0..=48)?;
                let bytes = u.bytes(n)?;
                append(s, bytes);
            }
            // Two watches at once: the second cannot take the lock; the
            // list made shorter by hand meanwhile.
            _ => {
                let held = s.states[w]
                    .lock(&nothing)
                    .expect("lock")
                    .expect("not stopped");
                let other = (w + 1) % WATCHES;
                let second = s.states[other].lock(&|| true).expect("lock");
                assert!(second.is_none(), "two watches held the lock");
                if u.arbitrary::<bool>()? {
                    let len = read_list(s).len() as u64;
                    let keep = u.int_in_range(0..=len)?;
                    let f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(s.states[0].list_path());
                    if let Ok(f) = f
                        && keep < len
                    {
                        f.set_len(keep).expect("truncate");
                        applied = None;
                    }
                }
                drop(held);
            }
        }
    }
    Ok(())
}

fuzz_target!(|data: &[u8]| {
    let mut guard = SETUP.lock().unwrap_or_else(|e| e.into_inner());
    let s = guard.get_or_insert_with(setup);
    let _ = std::fs::remove_file(s.states[0].list_path());
    let _ = steps(&mut Unstructured::new(data), s);
});

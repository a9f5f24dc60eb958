//! One session file a user names by path (`tether sessions show PATH`,
//! `tether sessions import PATH`): a transcript, rollout or chat a
//! colleague sent, or what a headless run printed and a CI job saved.
//!
//! Which harness wrote it, and which of its kinds of file it is, is told
//! from its content: each harness's reader reads its first records and
//! its last ones (the last [`SNIFF_BYTES`], never the middle of a long
//! file: a run's output may name its session only in its last line), and
//! the reader that knows them best (its version among them, its evidence,
//! its sessions) takes the file. Of one harness's kinds of file that fit,
//! one whose reader knows every record another knows, and more, takes the
//! place of the other. Where two harnesses fit as well, the file is not
//! read and the candidates are named, for `--harness`. Then the file is
//! read as any of that harness's files is, with the same bounds.
//!
//! A SQLite file is tried as each harness's database (OpenCode's
//! `opencode.db`): each of its database sources' queries is run on a
//! private snapshot of the file and its write-ahead log (as the harness's
//! own database is read, never opened in place), its first rows read; a
//! query that does not run (another schema, another program's database)
//! does not fit, and a database past 256 MiB with its log is not read.

use std::collections::HashMap;
use std::io::{Read as _, Seek as _};
use std::path::Path;
use std::sync::Arc;

use tether_core::records::{RecordAnswer, RecordFile, RecordFormat, RecordSource};
use tether_core::registry::Registry;
use tether_core::spec::ServerSpec;
use tether_inventory::root::ConfigRoot;

use crate::read::{MAX_DOCUMENT_BYTES, MAX_FILE_BYTES, MAX_SQLITE_BYTES};
use crate::{Filter, Records, Source, contained};

/// Bytes read from the file's start to tell its harness.
pub const SNIFF_BYTES: usize = 256 << 10;
/// Records read from the file's start to tell its harness, at most; as
/// many again from its end.
pub const SNIFF_RECORDS: usize = 200;

/// Why a path could not be read as a session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ByPathError {
    /// Nothing there, or it could not be opened.
    #[error("cannot read it: {0}")]
    Unreadable(String),
    /// A directory, a FIFO, a socket or a device.
    #[error("it is {0}, not a session file")]
    NotAFile(&'static str),
    /// It holds nothing.
    #[error("it is empty")]
    Empty,
    /// Past the bound every session file has.
    #[error("it is larger than {} MiB, past what Tether reads", MAX_FILE_BYTES >> 20)]
    TooLarge,
    /// A database past the bound every harness's database has.
    #[error(
        "it is a database larger than {} MiB with its log, past what Tether reads",
        MAX_SQLITE_BYTES >> 20
    )]
    DatabaseTooLarge,
    /// Bytes that are no text (and no database a harness keeps).
    #[error("it is a binary file, not a session a harness wrote")]
    Binary,
    /// No harness's reader knows its records.
    #[error(
        "no harness's reader knows its records (a transcript, rollout, chat, event log, a harness's database, or a headless run's stream-json): it is not a session"
    )]
    NotASession,
    /// `--harness` named a harness with no reader.
    #[error("no harness {0:?} reads session files (see `tether sessions list --help`)")]
    NoSuchHarness(String),
    /// Several readers know it as well: give `--harness`.
    #[error("it reads as several harnesses' files ({}); say which with --harness", .0.join(", "))]
    Ambiguous(Vec<String>),
}

/// How well one source's reader knows the file's first and last records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Fit {
    /// Records whose version falls in the range its reader was verified on
    /// (same major number), or that name the harness's own session.
    plausible: usize,
    /// Records that gave evidence, a server, a session or a version.
    substantive: usize,
    /// Records the reader knew (read, dated, ignored, or known not read).
    known: usize,
}

/// The file's first records: its complete lines, or (a small document)
/// the whole of it.
fn first_records(prefix: &str, whole: bool) -> Vec<&str> {
    let complete = if whole {
        prefix
    } else {
        prefix.rsplit_once('\n').map_or(prefix, |(lines, _)| lines)
    };
    records_of(complete).take(SNIFF_RECORDS).collect()
}

/// The file's last records, at most [`SNIFF_RECORDS`], after its first
/// ones: of a file read whole, its records past the first; else its last
/// bytes' lines but the first, which the cut may have split.
fn last_records(sniffed: &Sniffed) -> Vec<&str> {
    let after_first: Vec<&str> = if sniffed.whole {
        records_of(&sniffed.text).skip(SNIFF_RECORDS).collect()
    } else {
        let tail = sniffed.tail.split_once('\n').map_or("", |(_, rest)| rest);
        records_of(tail).collect()
    };
    let skip = after_first.len().saturating_sub(SNIFF_RECORDS);
    after_first.into_iter().skip(skip).collect()
}

/// The non-empty lines of `text`, their ends trimmed.
fn records_of(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(str::trim_end).filter(|l| !l.is_empty())
}

fn major(version: &str) -> Option<&str> {
    version.split('.').next()
}

impl Records {
    /// The one file at `path`, read as the harness (`harness`, or the one
    /// its content says) wrote it, with the servers today's configuration
    /// gives each harness (`configured[kind]`). Bounded as every session
    /// file is; never written to, locked or moved.
    pub fn of_file(
        registry: &Registry,
        path: &Path,
        harness: Option<&str>,
        configured: HashMap<String, Vec<ServerSpec>>,
    ) -> Result<Records, ByPathError> {
        // A symbolic link reads as the file it points to: its folder and
        // name are what a reader places the file by (a transcript's
        // name is its session's id).
        let resolved = std::fs::canonicalize(path)
            .map_err(|e| ByPathError::Unreadable(e.kind().to_string()))?;
        let path = resolved.as_path();
        let sniffed = sniff(path)?;
        let (root_dir, rel) = place(path)?;
        let segments: Vec<String> = rel.split('/').map(str::to_owned).collect();

        let names: HashMap<String, Vec<String>> = configured
            .iter()
            .map(|(kind, specs)| (kind.clone(), specs.iter().map(|s| s.name.clone()).collect()))
            .collect();
        let (fits, known_harness) = if sniffed.sqlite {
            database_candidates(registry, harness, &names, &segments, path)
        } else {
            candidates(registry, harness, &names, &segments, &sniffed)
        };
        if let Some(want) = harness
            && !known_harness
        {
            return Err(ByPathError::NoSuchHarness(want.to_owned()));
        }
        let (kind, observer, chosen) = best(fits)?;
        // Shown as its folder and name, never its whole path.
        let root = ConfigRoot::new(root_dir, ".");
        let sources = chosen
            .into_iter()
            .map(|mut source| {
                // The file itself, as the one file of its source.
                source.pattern = rel.clone();
                source.root_var = None;
                Source {
                    kind: kind.clone(),
                    observer: Arc::clone(&observer),
                    source,
                    root: root.clone(),
                }
            })
            .collect();
        let mut records = Records {
            sources,
            configured,
            names,
            filter: Filter {
                harnesses: vec![kind],
                ..Filter::default()
            },
            files: Default::default(),
            sessions: Default::default(),
            cuts: Default::default(),
            kept: Default::default(),
            progress: Default::default(),
            run: Default::default(),
        };
        records.read(true);
        Ok(records)
    }
}

/// What the start and the end of a file show of it.
struct Sniffed {
    len: u64,
    /// A SQLite database.
    sqlite: bool,
    /// Its first bytes as text (none for a database).
    text: String,
    /// The text is the whole file.
    whole: bool,
    /// Its last [`SNIFF_BYTES`] as text, where the text is not the whole
    /// file (else empty).
    tail: String,
}

/// The file at `path`, checked to be a file within the bounds, and its
/// first bytes read.
fn sniff(path: &Path) -> Result<Sniffed, ByPathError> {
    let meta =
        std::fs::metadata(path).map_err(|e| ByPathError::Unreadable(e.kind().to_string()))?;
    if meta.is_dir() {
        return Err(ByPathError::NotAFile("a directory"));
    }
    if !meta.is_file() {
        return Err(ByPathError::NotAFile("a FIFO, a socket or a device"));
    }
    if meta.len() == 0 {
        return Err(ByPathError::Empty);
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(ByPathError::TooLarge);
    }
    let mut prefix = Vec::with_capacity(SNIFF_BYTES.min(meta.len() as usize));
    std::fs::File::open(path)
        .and_then(|f| f.take(SNIFF_BYTES as u64).read_to_end(&mut prefix))
        .map_err(|e| ByPathError::Unreadable(e.kind().to_string()))?;
    if prefix.is_empty() {
        return Err(ByPathError::Empty);
    }
    let sqlite = prefix.starts_with(b"SQLite format 3\0");
    if sqlite && meta.len() + wal_len(path) > MAX_SQLITE_BYTES {
        return Err(ByPathError::DatabaseTooLarge);
    }
    let text = if sqlite {
        String::new()
    } else {
        // Text, up to a character the prefix cut in two.
        let valid = match std::str::from_utf8(&prefix) {
            Ok(s) => s.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => return Err(ByPathError::Binary),
        };
        if prefix[..valid].contains(&0) {
            return Err(ByPathError::Binary);
        }
        String::from_utf8_lossy(&prefix[..valid]).into_owned()
    };
    let whole = meta.len() <= SNIFF_BYTES as u64;
    let tail = if sqlite || whole {
        String::new()
    } else {
        tail_of(path, meta.len())?
    };
    Ok(Sniffed {
        len: meta.len(),
        sqlite,
        text,
        whole,
        tail,
    })
}

/// The last [`SNIFF_BYTES`] of the file at `path`, `len` long, as text
/// (a character the cut split, or bytes that are no text, replaced).
fn tail_of(path: &Path, len: u64) -> Result<String, ByPathError> {
    let from = len.saturating_sub(SNIFF_BYTES as u64);
    let mut tail = Vec::with_capacity(SNIFF_BYTES);
    std::fs::File::open(path)
        .and_then(|mut f| {
            f.seek(std::io::SeekFrom::Start(from))?;
            f.take(SNIFF_BYTES as u64).read_to_end(&mut tail)
        })
        .map_err(|e| ByPathError::Unreadable(e.kind().to_string()))?;
    Ok(String::from_utf8_lossy(&tail).into_owned())
}

/// The length of the write-ahead log beside the database at `path` (its
/// newest rows), 0 where there is none.
fn wal_len(path: &Path) -> u64 {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    std::fs::metadata(wal)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map_or(0, |m| m.len())
}

/// The file's place, as a reader sees a file of its own: its folder and
/// its name (a server log's folder names its server), with the folder
/// above them as the root.
fn place(path: &Path) -> Result<(std::path::PathBuf, String), ByPathError> {
    let file_name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| ByPathError::Unreadable("its name is not UTF-8".to_owned()))?
        .to_owned();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(
        match (dir.parent(), dir.file_name().and_then(|n| n.to_str())) {
            (Some(up), Some(folder)) if !up.as_os_str().is_empty() => {
                (up.to_path_buf(), format!("{folder}/{file_name}"))
            }
            _ => (dir.to_path_buf(), file_name.clone()),
        },
    )
}

/// A kind of file one harness keeps that the file fits, and how well: its
/// sources (one for a text file; a database's every query that fits).
pub(crate) type Candidate = (
    Fit,
    String,
    Arc<dyn tether_core::observer::TransportObserver>,
    Vec<RecordSource>,
);

/// Each harness asked for (`harness`, or every one) with the names today's
/// configuration gives it, and the candidates `per` finds of it; and
/// whether `harness` is one the registry knows.
fn each_harness(
    registry: &Registry,
    harness: Option<&str>,
    names: &HashMap<String, Vec<String>>,
    mut per: impl FnMut(&tether_core::registry::Harness<'_>, &[String]) -> Vec<Candidate>,
) -> (Vec<Candidate>, bool) {
    let mut fits: Vec<Candidate> = Vec::new();
    let mut known_harness = harness.is_none();
    for h in registry.harnesses() {
        let kind = h.id.as_str();
        if harness.is_some_and(|want| want != kind) {
            continue;
        }
        known_harness = true;
        let configured = names.get(kind).map(Vec::as_slice).unwrap_or(&[]);
        fits.extend(per(&h, configured));
    }
    (fits, known_harness)
}

/// Most of the records known, and something read.
fn fits_well(fit: &Fit, records: usize) -> bool {
    records > 0 && fit.known * 2 >= records && fit.substantive > 0
}

/// Every kind of file (of `harness`, or of any) the file fits, and whether
/// `harness` is one the registry knows.
fn candidates(
    registry: &Registry,
    harness: Option<&str>,
    names: &HashMap<String, Vec<String>>,
    segments: &[String],
    sniffed: &Sniffed,
) -> (Vec<Candidate>, bool) {
    let first = first_records(&sniffed.text, sniffed.whole);
    let last = last_records(sniffed);
    each_harness(registry, harness, names, |h, configured| {
        let Some(reader) = h.roles.records else {
            return Vec::new();
        };
        let range = reader.records_verified_on();
        let mut fits = Vec::new();
        for source in contained(|| reader.record_sources()).unwrap_or_default() {
            let records: Vec<&str> = match source.format {
                RecordFormat::Sqlite => continue,
                RecordFormat::Document if sniffed.len > MAX_DOCUMENT_BYTES || !sniffed.whole => {
                    continue;
                }
                RecordFormat::Document => vec![sniffed.text.as_str()],
                _ => first.iter().chain(&last).copied().collect(),
            };
            if sniffed.sqlite {
                continue;
            }
            let file = RecordFile {
                role: &source.role,
                segments,
                session: None,
                configured,
            };
            let mut knew = Vec::new();
            let fit = fit_knowing(reader, &file, &records, range.as_ref(), &mut knew);
            if fits_well(&fit, records.len()) {
                let candidate = (
                    fit,
                    h.id.as_str().to_owned(),
                    Arc::clone(&h.plugin.observer),
                    vec![source],
                );
                fits.push((candidate, knew));
            }
        }
        undominated(fits)
    })
}

/// Of one harness's kinds of file that fit (each with which of the file's
/// first and last records its reader knows), those no other kind
/// describes better: a kind whose reader knows every record another's
/// knows, and one more, takes the other's place (a run's printed events
/// hold lines its saved events never do, and that its saved events'
/// reader does not know).
fn undominated<C>(fits: Vec<(C, Vec<bool>)>) -> Vec<C> {
    let covers =
        |a: &[bool], b: &[bool]| a.len() == b.len() && a.iter().zip(b).all(|(x, y)| *x || !*y);
    let dominated = |i: usize| {
        fits.iter().enumerate().any(|(j, (_, other))| {
            let mine = &fits[i].1;
            j != i && covers(other, mine) && !covers(mine, other)
        })
    };
    let keep: Vec<bool> = (0..fits.len()).map(|i| !dominated(i)).collect();
    fits.into_iter()
        .zip(keep)
        .filter_map(|((candidate, _), keep)| keep.then_some(candidate))
        .collect()
}

/// Every harness whose database the SQLite file at `path` is, and whether
/// `harness` is one the registry knows. A harness's database sources are
/// each tried on a private snapshot (`read_sqlite`, as its own database is
/// read): a source fits when its query runs on the file (its tables and
/// columns are there) and its first rows are ones the reader knows and
/// reads something of. A harness's sources that fit are read together,
/// their fits summed.
fn database_candidates(
    registry: &Registry,
    harness: Option<&str>,
    names: &HashMap<String, Vec<String>>,
    segments: &[String],
    path: &Path,
) -> (Vec<Candidate>, bool) {
    each_harness(registry, harness, names, |h, configured| {
        let Some(reader) = h.roles.records else {
            return Vec::new();
        };
        let range = reader.records_verified_on();
        let mut total = Fit::default();
        let mut sources = Vec::new();
        for source in contained(|| reader.record_sources()).unwrap_or_default() {
            let Some(query) = source
                .query
                .as_deref()
                .filter(|_| source.format == RecordFormat::Sqlite)
            else {
                continue;
            };
            let Some(rows) = first_rows(path, query) else {
                continue;
            };
            let records: Vec<&str> = rows.iter().map(String::as_str).collect();
            let file = RecordFile {
                role: &source.role,
                segments,
                session: None,
                configured,
            };
            let fit = fit(reader, &file, &records, range.as_ref());
            if fits_well(&fit, records.len()) {
                total.plausible += fit.plausible;
                total.substantive += fit.substantive;
                total.known += fit.known;
                sources.push(source);
            }
        }
        if sources.is_empty() {
            return Vec::new();
        }
        vec![(
            total,
            h.id.as_str().to_owned(),
            Arc::clone(&h.plugin.observer),
            sources,
        )]
    })
}

/// The first rows of `query` on the database at `path` (with its
/// write-ahead log beside it, if any), read from a private snapshot as a
/// harness's own database is; `None` where the query does not run on it
/// (another schema, another program's database).
fn first_rows(path: &Path, query: &str) -> Option<Vec<String>> {
    let open = |p: &Path| -> Option<(std::fs::File, u64)> {
        let file = std::fs::File::open(p).ok()?;
        let len = file.metadata().ok().filter(|m| m.is_file())?.len();
        Some((file, len))
    };
    let (mut db, len) = open(path)?;
    let mut wal_path = path.as_os_str().to_owned();
    wal_path.push("-wal");
    let wal = open(Path::new(&wal_path));
    let limited = format!("SELECT * FROM ({query}) LIMIT {SNIFF_RECORDS}");
    let mut rows = Vec::new();
    let outcome = crate::read::read_sqlite(&mut db, len, wal, &limited, |row| {
        rows.push(row.to_owned());
    });
    outcome.error.is_none().then_some(rows)
}

/// How well `reader` knows `records`, read as `file`'s.
pub(crate) fn fit(
    reader: &dyn tether_core::records::RecordReader,
    file: &RecordFile<'_>,
    records: &[&str],
    range: Option<&tether_core::records::VerifiedRange>,
) -> Fit {
    fit_knowing(reader, file, records, range, &mut Vec::new())
}

/// [`fit`], and which of `records` the reader knew, pushed to `knew`.
fn fit_knowing(
    reader: &dyn tether_core::records::RecordReader,
    file: &RecordFile<'_>,
    records: &[&str],
    range: Option<&tether_core::records::VerifiedRange>,
    knew: &mut Vec<bool>,
) -> Fit {
    let mut fit = Fit::default();
    for record in records {
        let before = fit.known;
        match contained(|| reader.read_record(file, record)) {
            Some(RecordAnswer::Read(r)) => {
                fit.known += 1;
                if !r.evidence.is_empty()
                    || !r.servers.is_empty()
                    || r.session.is_some()
                    || r.version.is_some()
                {
                    fit.substantive += 1;
                }
                let in_range = r.version.as_deref().zip(range).is_some_and(|(v, range)| {
                    major(v) == major(&range.oldest) || major(v) == major(&range.newest)
                });
                if in_range {
                    fit.plausible += 1;
                }
            }
            // A record that does not parse tells no harness's file.
            Some(RecordAnswer::Unknown | RecordAnswer::Unparsed { .. }) | None => {}
            Some(_) => fit.known += 1,
        }
        knew.push(fit.known > before);
    }
    fit
}

/// The harness a file is read as: its kind, its observer, and the sources
/// the file is read as.
type Chosen = (
    String,
    Arc<dyn tether_core::observer::TransportObserver>,
    Vec<RecordSource>,
);

/// The one harness's kind of file that fits best, or why none does.
fn best(mut fits: Vec<Candidate>) -> Result<Chosen, ByPathError> {
    // Best first; of one harness's kinds of file that fit as well, its
    // own files before a kind it keeps nowhere (`by_path`).
    fits.sort_by_key(|f| std::cmp::Reverse((f.0, !f.3.iter().any(|s| s.by_path))));
    let Some(best) = fits.first() else {
        return Err(ByPathError::NotASession);
    };
    let mut rivals: Vec<String> = fits
        .iter()
        .filter(|f| (f.0.plausible, f.0.substantive) == (best.0.plausible, best.0.substantive))
        .map(|f| f.1.clone())
        .collect();
    rivals.sort();
    rivals.dedup();
    if rivals.len() > 1 {
        return Err(ByPathError::Ambiguous(rivals));
    }
    let (_, kind, observer, source) = fits.swap_remove(0);
    Ok((kind, observer, source))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sniffed(text: String, tail: &str) -> Sniffed {
        let whole = tail.is_empty();
        Sniffed {
            len: text.len() as u64,
            sqlite: false,
            text,
            whole,
            tail: tail.to_owned(),
        }
    }

    /// GIVEN a file read whole with more records than the first taken, and
    /// one whose last bytes were read apart WHEN its last records are
    /// taken THEN they are those past the first (at most as many), and of
    /// the last bytes every line but the first, which the cut may split.
    #[test]
    fn the_last_records_follow_the_first_and_skip_a_split_line() {
        let lines: Vec<String> = (0..SNIFF_RECORDS + 250).map(|i| format!("r{i}")).collect();
        let whole = sniffed(lines.join("\n") + "\n", "");
        let last = last_records(&whole);
        assert_eq!(last.len(), SNIFF_RECORDS);
        assert_eq!(last.first().copied(), Some("r250"));
        assert_eq!(last.last().copied(), Some("r449"));
        let short = sniffed("a\nb\n".to_owned(), "");
        assert!(last_records(&short).is_empty(), "all among the first");
        let apart = sniffed("head\n".to_owned(), "lit line\nx\n\ny\nz");
        assert_eq!(last_records(&apart), ["x", "y", "z"]);
    }

    /// GIVEN three kinds of one harness's file that fit: one knowing a
    /// record another does not, and all it knows; and a third knowing a
    /// different record WHEN the undominated are kept THEN the one known
    /// less is dropped; kinds knowing the same, or different records, stay.
    #[test]
    fn a_kind_knowing_more_of_the_same_takes_the_others_place() {
        let kind = |role: &'static str, knew: &[bool]| (role, knew.to_vec());
        let kept = undominated(vec![
            kind("events", &[true, true, false]),
            kind("output", &[true, true, true]),
            kind("cut", &[true, true, true]),
        ]);
        assert_eq!(kept, ["output", "cut"]);
        let kept = undominated(vec![kind("a", &[true, false]), kind("b", &[false, true])]);
        assert_eq!(kept, ["a", "b"]);
    }
}

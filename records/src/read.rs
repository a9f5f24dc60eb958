//! Reading one file's records, bounded and read-only: from where the last
//! read stopped to its last complete record, in fixed-size pieces, so
//! memory stays flat whatever the file's size.
//!
//! `read_records`: 256 KiB pieces, records split with `memchr`, a record cut by
//! a piece's end is the only copy; a file past 1 GiB (a document past 4 MiB) is
//! not read; a record past 16 MiB is skipped (the file read on past it), one
//! that is not UTF-8 too, each counted; a last line without its newline waits
//! (while following) or is read (at rest). `read_sqlite`: a harness's database
//! (at most 256 MiB with its log) is copied with its write-ahead log into a
//! private temporary directory and queried there (the source's one `SELECT` of
//! metadata columns, each row a JSON array), never opened in place: SQLite
//! would lock it and write its `-shm` even read-only. A schema that does not
//! fit is a sentence, not an error.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use tether_core::records::RecordFormat;

/// Files larger than this are not read.
pub const MAX_FILE_BYTES: u64 = 1 << 30;
/// Records (lines) longer than this are refused, and the file read on past them.
pub const MAX_RECORD_BYTES: usize = 16 << 20;
/// A [`RecordFormat::Document`] file larger than this is not read.
pub const MAX_DOCUMENT_BYTES: u64 = 4 << 20;
/// How much is read at a time.
const PIECE: usize = 256 * 1024;

/// What reading a file ran into, besides its records.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOutcome {
    /// Bytes consumed (up to and including the last complete record).
    pub consumed: u64,
    /// Records longer than [`MAX_RECORD_BYTES`], skipped.
    pub oversized: u64,
    /// Records that are not UTF-8, skipped.
    pub not_utf8: u64,
    /// Bytes after the last complete record (a file being written): left
    /// for the next read.
    pub pending: u64,
    /// Why reading stopped early, if it did.
    pub error: Option<String>,
    /// It stopped inside a record past the bound, still being written: the
    /// next read goes on skipping it to its end.
    pub skipping: bool,
}

/// Reads `file` (`len` bytes long) from `offset`, handing each complete
/// record to `each`. Lines: a record ends at `\n` (a trailing `\r` is
/// dropped); what follows the last `\n` is left pending unless `at_rest`
/// (the file is not being written: then it is a record too). Document: the
/// whole file is one record. `within`: the last read stopped inside a
/// record past the bound (its [`ReadOutcome::skipping`]).
pub fn read_records(
    file: &mut std::fs::File,
    len: u64,
    offset: u64,
    format: RecordFormat,
    at_rest: bool,
    within: bool,
    mut each: impl FnMut(&str),
) -> ReadOutcome {
    let mut out = ReadOutcome {
        consumed: offset,
        ..ReadOutcome::default()
    };
    let limit = match format {
        RecordFormat::Lines => MAX_FILE_BYTES,
        RecordFormat::Document => MAX_DOCUMENT_BYTES,
        // Read by `read_sqlite`.
        RecordFormat::Sqlite => return out,
        _ => {
            out.error = Some("a record format this Tether does not read".to_owned());
            return out;
        }
    };
    if len > limit {
        out.error = Some(format!(
            "larger than {} MiB; not read",
            limit / (1024 * 1024)
        ));
        return out;
    }
    if offset > 0
        && let Err(e) = file.seek(SeekFrom::Start(offset))
    {
        out.error = Some(format!("cannot seek in it: {}", e.kind()));
        return out;
    }
    if format == RecordFormat::Document {
        let mut bytes = Vec::new();
        match file.take(limit + 1).read_to_end(&mut bytes) {
            Ok(_) if bytes.len() as u64 > limit => {
                out.error = Some("it grew past its bound while read; not read".into());
            }
            Ok(_) => match std::str::from_utf8(&bytes) {
                Ok(text) => {
                    each(text);
                    out.consumed = offset + bytes.len() as u64;
                }
                Err(_) => out.not_utf8 += 1,
            },
            Err(e) => out.error = Some(format!("cannot read it: {}", e.kind())),
        }
        return out;
    }
    // The file is read only as far as its length was when it was looked
    // at, and in pieces: a file that keeps growing is read next time.
    let mut remaining = len.saturating_sub(offset);
    let mut buf: Vec<u8> = Vec::with_capacity(PIECE);
    let mut piece = vec![0u8; PIECE];
    // Within a record longer than the bound: skip to its end.
    let mut skipping = within;
    while remaining > 0 {
        let want = PIECE.min(usize::try_from(remaining).unwrap_or(PIECE));
        let n = match file.read(&mut piece[..want]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                out.error = Some(format!("cannot read it: {}", e.kind()));
                break;
            }
        };
        remaining -= n as u64;
        let mut chunk = &piece[..n];
        if skipping {
            match memchr::memchr(b'\n', chunk) {
                Some(i) => {
                    skipping = false;
                    out.oversized += 1;
                    out.consumed += (i + 1) as u64;
                    chunk = &chunk[i + 1..];
                }
                None => {
                    out.consumed += n as u64;
                    continue;
                }
            }
        }
        // Records wholly inside this piece are read in place; only a
        // record cut by the piece's end is copied.
        let mut start = 0;
        let joined;
        let data: &[u8] = if buf.is_empty() {
            chunk
        } else {
            buf.extend_from_slice(chunk);
            joined = std::mem::take(&mut buf);
            &joined
        };
        for end in memchr::memchr_iter(b'\n', data) {
            let line = &data[start..end];
            hand(line, &mut out, &mut each);
            out.consumed += (end + 1 - start) as u64;
            start = end + 1;
        }
        let rest = &data[start..];
        if rest.len() > MAX_RECORD_BYTES {
            skipping = true;
            out.consumed += rest.len() as u64;
        } else {
            buf.extend_from_slice(rest);
        }
    }
    if skipping {
        if at_rest {
            out.oversized += 1;
        } else {
            // Counted when its end is read.
            out.skipping = true;
        }
    } else if !buf.is_empty() {
        if at_rest && out.error.is_none() {
            hand(&buf, &mut out, &mut each);
            out.consumed += buf.len() as u64;
        } else {
            out.pending = buf.len() as u64;
        }
    }
    out
}

/// A SQLite database (with its write-ahead log) larger than this is not read.
pub const MAX_SQLITE_BYTES: u64 = 256 << 20;
/// Rows read from one query, at most.
pub const MAX_SQLITE_ROWS: u64 = 1_000_000;

/// Reads the rows of `query` from a private snapshot of a harness's SQLite
/// database: `db` (`db_len` bytes) and its write-ahead log `wal`, copied
/// into a directory of Tether's own (0700), opened there, and removed when
/// done. The harness's files are only read: SQLite itself would lock them
/// and write to their shared-memory file even when opened read-only. Each
/// row is handed to `each` as a JSON array of its values (text longer than
/// the record bound, and blobs, as null).
pub fn read_sqlite(
    db: &mut std::fs::File,
    db_len: u64,
    wal: Option<(std::fs::File, u64)>,
    query: &str,
    mut each: impl FnMut(&str),
) -> ReadOutcome {
    let mut out = ReadOutcome::default();
    let total = db_len + wal.as_ref().map_or(0, |(_, len)| *len);
    if total > MAX_SQLITE_BYTES {
        out.error = Some(format!(
            "larger than {} MiB with its log; not read",
            MAX_SQLITE_BYTES / (1024 * 1024)
        ));
        return out;
    }
    let snapshot = match tempfile::Builder::new().prefix("tether-records-").tempdir() {
        Ok(dir) => dir,
        Err(e) => {
            out.error = Some(format!("no room for a private snapshot: {}", e.kind()));
            return out;
        }
    };
    let path = snapshot.path().join("snapshot.db");
    let copy = |from: &mut std::fs::File, to: &Path| -> std::io::Result<u64> {
        let mut target = std::fs::File::create(to)?;
        std::io::copy(&mut from.take(MAX_SQLITE_BYTES + 1), &mut target)
    };
    if let Err(e) = copy(db, &path) {
        out.error = Some(format!("cannot read it: {}", e.kind()));
        return out;
    }
    if let Some((mut wal, _)) = wal
        && let Err(e) = copy(&mut wal, &snapshot.path().join("snapshot.db-wal"))
    {
        out.error = Some(format!("cannot read its log: {}", e.kind()));
        return out;
    }
    let rows = (|| -> rusqlite::Result<u64> {
        let conn = rusqlite::Connection::open_with_flags(
            &path,
            rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.pragma_update(None, "query_only", true)?;
        let mut statement = conn.prepare(query)?;
        let columns = statement.column_count();
        let mut rows = statement.query([])?;
        let mut n = 0u64;
        while let Some(row) = rows.next()? {
            n += 1;
            if n > MAX_SQLITE_ROWS {
                break;
            }
            let mut values = Vec::with_capacity(columns);
            for i in 0..columns {
                use rusqlite::types::ValueRef;
                values.push(match row.get_ref(i)? {
                    ValueRef::Integer(v) => serde_json::Value::from(v),
                    ValueRef::Real(v) => serde_json::Value::from(v),
                    ValueRef::Text(t) if t.len() <= MAX_RECORD_BYTES => {
                        match std::str::from_utf8(t) {
                            Ok(t) => serde_json::Value::from(t),
                            Err(_) => serde_json::Value::Null,
                        }
                    }
                    _ => serde_json::Value::Null,
                });
            }
            each(&serde_json::Value::Array(values).to_string());
        }
        Ok(n)
    })();
    match rows {
        Ok(n) if n > MAX_SQLITE_ROWS => {
            out.error = Some(format!(
                "more than {MAX_SQLITE_ROWS} rows; the rest not read"
            ));
        }
        Ok(_) => {}
        // Its schema is not the one the reader knows (a newer version), or
        // it is no database: said, never fatal.
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::NotADatabase =>
        {
            out.error = Some("its database cannot be read: not a SQLite database".into());
        }
        // SQLITE_ERROR at prepare: a table or column the query names is not there.
        Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::Unknown => {
            out.error = Some(
                "its database is not in the shape this Tether reads (a newer version?)".into(),
            );
        }
        Err(rusqlite::Error::SqliteFailure(e, _)) => {
            out.error = Some(format!("its database cannot be read ({:?})", e.code));
        }
        Err(_) => {
            out.error = Some(
                "its database is not in the shape this Tether reads (a newer version?)".into(),
            );
        }
    }
    out.consumed = total;
    out
}

fn hand(line: &[u8], out: &mut ReadOutcome, each: &mut impl FnMut(&str)) {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if line.len() > MAX_RECORD_BYTES {
        out.oversized += 1;
        return;
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return;
    }
    match std::str::from_utf8(line) {
        Ok(text) => each(text),
        Err(_) => out.not_utf8 += 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn read(bytes: &[u8], offset: u64, at_rest: bool) -> (Vec<String>, ReadOutcome) {
        let mut f = tempfile::tempfile().expect("file");
        f.write_all(bytes).expect("write");
        f.seek(SeekFrom::Start(0)).expect("seek");
        let mut lines = Vec::new();
        let out = read_records(
            &mut f,
            bytes.len() as u64,
            offset,
            RecordFormat::Lines,
            at_rest,
            false,
            |l| lines.push(l.to_owned()),
        );
        (lines, out)
    }

    #[test]
    fn complete_lines_are_read_and_a_partial_one_waits() {
        let (lines, out) = read(b"a\r\nb\n\nc", 0, false);
        assert_eq!(lines, ["a", "b"]);
        assert_eq!(out.consumed, 6);
        assert_eq!(out.pending, 1);
        let (lines, out) = read(b"a\r\nb\n\nc", out.consumed, true);
        assert_eq!(lines, ["c"]);
        assert_eq!(out.consumed, 7);
    }

    #[test]
    fn invalid_utf8_and_oversized_lines_are_skipped_and_counted() {
        let mut bytes = b"ok\n\xff\xfe\n".to_vec();
        bytes.extend(std::iter::repeat_n(b'x', MAX_RECORD_BYTES + PIECE * 2));
        bytes.extend_from_slice(b"\nafter\n");
        let (lines, out) = read(&bytes, 0, true);
        assert_eq!(lines, ["ok", "after"]);
        assert_eq!(out.not_utf8, 1);
        assert_eq!(out.oversized, 1);
        assert_eq!(out.consumed, bytes.len() as u64);
    }

    #[test]
    fn lines_cut_by_pieces_are_joined() {
        let line = "y".repeat(PIECE - 3);
        let bytes = format!("{line}\n{line}\n");
        let (lines, out) = read(bytes.as_bytes(), 0, false);
        assert_eq!(lines, [line.clone(), line]);
        assert_eq!(out.pending, 0);
    }
}

#[cfg(test)]
mod following {
    use super::*;
    use std::io::Write;

    /// A record past the bound still being written is skipped across reads,
    /// and counted once, when its end comes.
    #[test]
    fn an_oversized_record_being_written_is_skipped_across_reads() {
        let mut f = tempfile::tempfile().expect("file");
        f.write_all(b"ok\n").expect("w");
        f.write_all(&vec![b'x'; MAX_RECORD_BYTES + 10]).expect("w");
        let len = f.metadata().expect("meta").len();
        f.seek(SeekFrom::Start(0)).expect("seek");
        let mut lines = Vec::new();
        let first = read_records(&mut f, len, 0, RecordFormat::Lines, false, false, |l| {
            lines.push(l.to_owned())
        });
        assert_eq!(lines, ["ok"]);
        assert!(first.skipping);
        assert_eq!(first.oversized, 0);
        f.seek(SeekFrom::End(0)).expect("end");
        f.write_all(b"yyy\nafter\n").expect("w");
        let len = f.metadata().expect("meta").len();
        let second = read_records(
            &mut f,
            len,
            first.consumed,
            RecordFormat::Lines,
            false,
            first.skipping,
            |l| lines.push(l.to_owned()),
        );
        assert_eq!(
            lines,
            ["ok", "after"],
            "the tail of the long record is no record"
        );
        assert_eq!(second.oversized, 1);
        assert!(!second.skipping);
    }
}

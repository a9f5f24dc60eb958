//! Reading one file's records, bounded and read-only: from where the last
//! read stopped to its last complete record, in fixed-size pieces, so
//! memory stays flat whatever the file's size.

use std::io::{Read, Seek, SeekFrom};

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
}

/// Reads `file` (`len` bytes long) from `offset`, handing each complete
/// record to `each`. Lines: a record ends at `\n` (a trailing `\r` is
/// dropped); what follows the last `\n` is left pending unless `at_rest`
/// (the file is not being written: then it is a record too). Document: the
/// whole file is one record.
pub fn read_records(
    file: &mut std::fs::File,
    len: u64,
    offset: u64,
    format: RecordFormat,
    at_rest: bool,
    mut each: impl FnMut(&str),
) -> ReadOutcome {
    let mut out = ReadOutcome {
        consumed: offset,
        ..ReadOutcome::default()
    };
    let limit = match format {
        RecordFormat::Lines => MAX_FILE_BYTES,
        RecordFormat::Document => MAX_DOCUMENT_BYTES,
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
    let mut skipping = false;
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
        out.oversized += 1;
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

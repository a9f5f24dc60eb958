//! The hashing and stamping the ledger, the kept summaries and the facts
//! share: FNV-1a ([`fnv1a`]), which file a path was ([`Identity`]), a
//! ledger row as read ([`file_stamp`]) and this build's reader
//! ([`generation`]). A leaf: it names no other module here, so `ledger`,
//! `kept` and `facts` each import it and none imports another to hash.

use std::sync::OnceLock;

use tether_core::store::RecordFileRow;

/// Which file a path was, and as it was, when looked at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Identity {
    /// The file system's device.
    pub device: u64,
    /// The inode.
    pub inode: u64,
    /// The size.
    pub size: u64,
    /// The modification time, in nanoseconds since the epoch.
    pub modified_ns: u64,
}

impl Identity {
    /// `meta`'s identity.
    pub fn of(meta: &std::fs::Metadata) -> Self {
        use std::os::unix::fs::MetadataExt;
        let modified_ns = meta
            .modified()
            .ok()
            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        Identity {
            device: meta.dev(),
            inode: meta.ino(),
            size: meta.len(),
            modified_ns,
        }
    }
}

/// A hash (FNV-1a, 64 bits) of `bytes`.
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// This build's reader: its version and the executable's size and time, so
/// a row another build wrote (whose readers may read the same bytes
/// otherwise) is read again.
pub fn generation() -> &'static str {
    static GENERATION: OnceLock<String> = OnceLock::new();
    GENERATION.get_or_init(|| {
        let exe = std::env::current_exe()
            .and_then(std::fs::metadata)
            .map(|m| Identity::of(&m))
            .unwrap_or_default();
        format!(
            "{}/{}-{}",
            env!("CARGO_PKG_VERSION"),
            exe.size,
            exe.modified_ns
        )
    })
}

/// What a row says of the file as read (its path, size, time, offset and
/// tail): a session summary built from it names it so.
pub(crate) fn file_stamp(row: &RecordFileRow) -> u64 {
    let mut bytes = Vec::with_capacity(row.path.len() + 40);
    bytes.extend_from_slice(row.path.as_bytes());
    for n in [
        row.device,
        row.inode,
        row.size,
        row.modified_ns,
        row.offset,
        row.tail_hash,
    ] {
        bytes.extend_from_slice(&n.to_le_bytes());
    }
    fnv1a(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The store keeps these hashes between runs: FNV-1a's published
    /// vectors pin them, so a move or rewrite cannot change them.
    #[test]
    fn fnv1a_gives_the_published_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}

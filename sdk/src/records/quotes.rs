//! The quotes of one record, for [`super::Blanker`]: found 64 bytes at a
//! time (a mask of each block's quote bytes, so a short string costs no
//! call), and a stretch with none passed by `memchr`.

/// The quote bytes of a record, handed out in order.
#[derive(Clone)]
pub(super) struct Quotes<'a> {
    bytes: &'a [u8],
    /// Where the current block starts.
    block: usize,
    /// The current block's quotes not yet handed out: bit i for byte
    /// `block + i`.
    mask: u64,
}

impl<'a> Quotes<'a> {
    /// The quotes of `bytes`, from its start.
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        let mut quotes = Quotes {
            bytes,
            block: 0,
            mask: 0,
        };
        quotes.seek(0);
        quotes
    }

    /// The next quote, escaped or not.
    #[inline]
    pub(super) fn next(&mut self) -> Option<usize> {
        loop {
            if self.mask != 0 {
                let i = self.mask.trailing_zeros() as usize;
                self.mask &= self.mask - 1;
                return Some(self.block + i);
            }
            let next = self.block + 64;
            if next >= self.bytes.len() {
                return None;
            }
            let end = self.bytes.len().min(next + 64);
            self.block = next;
            self.mask = quote_mask(&self.bytes[next..end]);
            if self.mask == 0 {
                // A long stretch without quotes (a body): jump it.
                let found = memchr::memchr(b'"', self.bytes.get(end..)?)?;
                self.seek(end + found);
            }
        }
    }

    /// The next quote not escaped (after an even run of backslashes).
    #[inline]
    pub(super) fn next_unescaped(&mut self) -> Option<usize> {
        loop {
            let at = self.next()?;
            if !escaped(self.bytes, at) {
                return Some(at);
            }
        }
    }

    /// Hands out the quotes at or after `at` from now on (before or after
    /// where it was).
    pub(super) fn seek(&mut self, at: usize) {
        let block = at - at % 64;
        let end = self.bytes.len().min(block + 64);
        self.block = block;
        self.mask = match self.bytes.get(block..end) {
            Some(bytes) => quote_mask(bytes) & (!0u64 << (at - block)),
            None => 0,
        };
    }
}

/// Whether the quote at `at` is escaped.
#[inline]
fn escaped(bytes: &[u8], at: usize) -> bool {
    if at == 0 || bytes[at - 1] != b'\\' {
        return false;
    }
    let run = bytes[..at]
        .iter()
        .rev()
        .take_while(|b| **b == b'\\')
        .count();
    run % 2 == 1
}

/// Bit i set where `bytes[i]` is a quote (`bytes` at most 64 long).
#[inline]
fn quote_mask(bytes: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if let Ok(block) = <&[u8; 64]>::try_from(bytes) {
        return quote_mask_sse2(block);
    }
    quote_mask_words(bytes)
}

/// [`quote_mask`] of a whole block, sixteen bytes at a time with SSE2,
/// which every x86-64 has.
#[cfg(target_arch = "x86_64")]
#[inline]
fn quote_mask_sse2(block: &[u8; 64]) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let mut mask = 0u64;
    for (i, part) in block.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of every x86-64 target (nothing to check
        // at run time), and `part` is 16 bytes long: the unaligned load
        // reads exactly those.
        let bits = unsafe {
            let v = _mm_loadu_si128(part.as_ptr().cast::<__m128i>());
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8)))
        };
        // The mask is 16 bits: one per byte.
        mask |= u64::from(bits as u16) << (16 * i);
    }
    mask
}

/// [`quote_mask`] eight bytes at a time, on any machine.
#[inline]
fn quote_mask_words(bytes: &[u8]) -> u64 {
    let mut mask = 0u64;
    let mut shift = 0;
    for word in bytes.chunks(8) {
        let mut w = [0u8; 8];
        // Bytes past the end stay 0, never a quote.
        w[..word.len()].copy_from_slice(word);
        mask |= byte_mask(u64::from_le_bytes(w)) << shift;
        shift += 8;
    }
    mask
}

/// Eight bits: bit k set where byte k of `word` is a quote.
#[inline]
fn byte_mask(word: u64) -> u64 {
    const LOWS: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let x = word ^ (0x0101_0101_0101_0101 * u64::from(b'"'));
    // The high bit of each byte of `x` that is zero, exactly.
    let zero = !(((x & LOWS) + LOWS) | x | LOWS);
    // Gathered into the top byte, byte k's to bit k.
    (zero >> 7).wrapping_mul(0x0102_0408_1020_4080) >> 56
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_masks_agree_with_a_byte_by_byte_look() {
        let text = br#"{"a":"b\"c","long":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\\"}"#;
        for start in 0..text.len() {
            let end = text.len().min(start + 64);
            let part = &text[start..end];
            let expected = part
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'"')
                .fold(0u64, |m, (i, _)| m | 1 << i);
            assert_eq!(quote_mask(part), expected, "{start}");
            assert_eq!(quote_mask_words(part), expected, "{start}");
        }
    }

    #[test]
    fn every_quote_is_handed_out_across_blocks_and_jumps() {
        let mut text = String::from("\"a\\\"b\"");
        text.push_str(&"x".repeat(300));
        text.push_str("\"\\\\\"");
        text.push_str(&"y".repeat(64));
        text.push('"');
        let expected: Vec<usize> = text
            .bytes()
            .enumerate()
            .filter(|(_, b)| *b == b'"')
            .map(|(i, _)| i)
            .collect();
        let mut quotes = Quotes::new(text.as_bytes());
        let got: Vec<usize> = std::iter::from_fn(|| quotes.next()).collect();
        assert_eq!(got, expected);
        // Unescaped only: the `\"` at 3 is skipped, the one after `\\` is not.
        let mut quotes = Quotes::new(text.as_bytes());
        let got: Vec<usize> = std::iter::from_fn(|| quotes.next_unescaped()).collect();
        let unescaped: Vec<usize> = expected.into_iter().filter(|i| *i != 3).collect();
        assert_eq!(got, unescaped);
        // A seek back hands out again what was handed out.
        let mut quotes = Quotes::new(text.as_bytes());
        quotes.seek(306);
        assert_eq!(quotes.next(), Some(306));
        quotes.seek(0);
        assert_eq!(quotes.next(), Some(0));
    }
}

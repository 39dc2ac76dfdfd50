//! CRC composition: the CRC of `A ++ B` from `crc(A)`, `crc(B)` and `|B|`
//! alone, as HDFS's COMPOSITE_CRC file checksums need (BLOCK_CHECKSUM,
//! PROTOCOL.md §3.8).
//!
//! For the reflected CRCs HDFS stores (CRC32C and zlib's CRC32, both with
//! all-ones initial value and final xor) the pre- and post-conditioning
//! cancel out, leaving `crc(A ++ B) = crc(A) · x^(8·|B|) ⊕ crc(B)` in
//! `GF(2)[x]` modulo the CRC polynomial. Polynomials are held the way the
//! table-driven CRC holds them: bit 31 is the x^0 term, bit 0 the x^31 term,
//! and the x^32 term of the modulus is implicit. A [`CrcComposer`] folds a
//! stream of chunk CRCs into one CRC per stripe, the shape of the digest a
//! DataNode returns for BLOCK_CHECKSUM in COMPOSITE_CRC mode.

use crate::checksum::ChecksumKind;

/// The polynomial 1 (x^0), in the reflected layout.
const ONE: u32 = 0x8000_0000;
/// Reflected Castagnoli polynomial (CRC32C).
const CRC32C_POLY: u32 = 0x82F6_3B78;
/// Reflected IEEE polynomial (zlib's CRC32).
const CRC32_POLY: u32 = 0xEDB8_8320;

/// Why CRCs could not be composed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComposeError {
    /// Only CRC32 and CRC32C compose.
    #[error("checksum type {0:?} has no CRC polynomial to compose with")]
    NotACrc(ChecksumKind),
    /// A CRC ran past the end of its stripe instead of ending on it.
    #[error(
        "position {position} in the stripe after {len_bytes} more bytes \
         exceeds the stripe length {stripe_bytes} without stripe alignment"
    )]
    Misaligned {
        position: u128,
        len_bytes: u64,
        stripe_bytes: u64,
    },
}

/// The reflected polynomial of a checksum kind, if it is a CRC.
pub fn polynomial(kind: ChecksumKind) -> Option<u32> {
    match kind {
        ChecksumKind::Crc32c => Some(CRC32C_POLY),
        ChecksumKind::Crc32 => Some(CRC32_POLY),
        ChecksumKind::Null => None,
    }
}

/// `a · b mod poly`, all three reflected.
fn multiply(a: u32, b: u32, poly: u32) -> u32 {
    let mut product = 0u32;
    // `a · x^i`, starting at i = 0.
    let mut shifted = a;
    // Walk b's terms from x^0 (bit 31) up to x^31 (bit 0).
    for i in (0..32).rev() {
        if b & (1 << i) != 0 {
            product ^= shifted;
        }
        // Multiply by x: the x^31 term (bit 0) becomes x^32, which reduces
        // to the rest of the modulus.
        let carry = shifted & 1 != 0;
        shifted >>= 1;
        if carry {
            shifted ^= poly;
        }
    }
    product
}

/// `x^(8 · len_bytes) mod poly`: what a CRC is multiplied by to move it
/// `len_bytes` bytes to the left. Square-and-multiply over the bits of
/// `len_bytes`, so any length costs at most 64 squarings.
pub fn monomial(len_bytes: u64, poly: u32) -> u32 {
    let mut result = ONE;
    // x^8: one byte.
    let mut power = ONE >> 8;
    let mut n = len_bytes;
    while n != 0 {
        if n & 1 != 0 {
            result = multiply(result, power, poly);
        }
        power = multiply(power, power, poly);
        n >>= 1;
    }
    result
}

/// The CRC of `A ++ B` given `crc(A)`, `crc(B)` and `|B|` in bytes.
pub fn compose(crc_a: u32, crc_b: u32, len_b: u64, poly: u32) -> u32 {
    multiply(crc_a, monomial(len_b, poly), poly) ^ crc_b
}

/// Folds consecutive CRCs into one CRC per stripe of `stripe_bytes` data
/// bytes (the last stripe may be shorter). The monomial of the usual CRC
/// length is computed once; other lengths (a partial last chunk) compute
/// their own.
#[derive(Debug)]
pub struct CrcComposer {
    poly: u32,
    hint_bytes: u64,
    hint_monomial: u32,
    stripe_bytes: u64,
    current: u32,
    in_stripe: u64,
    digest: Vec<u8>,
}

impl CrcComposer {
    /// A composer for CRCs of `kind`, most of which cover `hint_bytes`
    /// bytes, emitting one CRC per `stripe_bytes` (`u64::MAX`: one CRC for
    /// everything).
    ///
    /// # Errors
    /// [`ComposeError::NotACrc`] for [`ChecksumKind::Null`].
    pub fn new(
        kind: ChecksumKind,
        hint_bytes: u64,
        stripe_bytes: u64,
    ) -> Result<Self, ComposeError> {
        let poly = polynomial(kind).ok_or(ComposeError::NotACrc(kind))?;
        Ok(CrcComposer {
            poly,
            hint_bytes,
            hint_monomial: monomial(hint_bytes, poly),
            stripe_bytes,
            current: 0,
            in_stripe: 0,
            digest: Vec::new(),
        })
    }

    /// Appends the CRC `crc` of the next `len_bytes` bytes.
    ///
    /// # Errors
    /// [`ComposeError::Misaligned`] when the bytes cross a stripe boundary
    /// instead of ending on it (HDFS refuses the same).
    pub fn update(&mut self, crc: u32, len_bytes: u64) -> Result<(), ComposeError> {
        let m = if len_bytes == self.hint_bytes {
            self.hint_monomial
        } else {
            monomial(len_bytes, self.poly)
        };
        // Composing onto an empty stripe (current = 0) gives `crc` itself.
        self.current = multiply(self.current, m, self.poly) ^ crc;
        let position = u128::from(self.in_stripe) + u128::from(len_bytes);
        if position > u128::from(self.stripe_bytes) {
            return Err(ComposeError::Misaligned {
                position,
                len_bytes,
                stripe_bytes: self.stripe_bytes,
            });
        }
        if position == u128::from(self.stripe_bytes) {
            self.flush();
        } else {
            // Below stripe_bytes, so it fits in a u64.
            self.in_stripe = self.in_stripe.saturating_add(len_bytes);
        }
        Ok(())
    }

    fn flush(&mut self) {
        self.digest.extend_from_slice(&self.current.to_be_bytes());
        self.current = 0;
        self.in_stripe = 0;
    }

    /// The composed CRCs, 4 big-endian bytes each: one per full stripe, plus
    /// one for a partial last stripe. Empty when nothing was added.
    pub fn digest(mut self) -> Vec<u8> {
        if self.in_stripe > 0 {
            self.flush();
        }
        self.digest
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::{crc32, crc32c, pseudo_random, Crc32cImpl};

    fn crc_of(kind: ChecksumKind, data: &[u8]) -> u32 {
        match kind {
            ChecksumKind::Crc32c => crc32c(Crc32cImpl::Software, data),
            ChecksumKind::Crc32 => crc32(data),
            ChecksumKind::Null => 0,
        }
    }

    const KINDS: [ChecksumKind; 2] = [ChecksumKind::Crc32c, ChecksumKind::Crc32];

    #[test]
    fn monomials_of_small_lengths() {
        for poly in [CRC32C_POLY, CRC32_POLY] {
            assert_eq!(monomial(0, poly), ONE);
            // x^8 and x^16 have no reduction yet.
            assert_eq!(monomial(1, poly), ONE >> 8);
            assert_eq!(monomial(2, poly), ONE >> 16);
            // x^32 ≡ the modulus without its implicit top term.
            assert_eq!(monomial(4, poly), poly);
            assert_eq!(multiply(ONE, 0x1234_5678, poly), 0x1234_5678);
            assert_eq!(multiply(0x1234_5678, ONE, poly), 0x1234_5678);
            assert_eq!(multiply(0, 0x1234_5678, poly), 0);
        }
    }

    #[test]
    fn composition_matches_the_crc_of_concatenated_data() {
        let data = pseudo_random(5000, 7);
        for kind in KINDS {
            let poly = polynomial(kind).expect("a CRC");
            for split in [0, 1, 3, 4, 511, 512, 513, 2048, 4999, 5000] {
                let (a, b) = data.split_at(split);
                let got = compose(crc_of(kind, a), crc_of(kind, b), b.len() as u64, poly);
                assert_eq!(got, crc_of(kind, &data), "{kind:?} split at {split}");
            }
        }
    }

    #[test]
    fn composer_over_chunks_gives_the_whole_crc() {
        for kind in KINDS {
            for len in [1usize, 511, 512, 513, 1024, 3000, 65536 + 17] {
                let data = pseudo_random(len, len as u64);
                let mut c = CrcComposer::new(kind, 512, u64::MAX).expect("composer");
                for chunk in data.chunks(512) {
                    c.update(crc_of(kind, chunk), chunk.len() as u64)
                        .expect("no stripes");
                }
                assert_eq!(
                    c.digest(),
                    crc_of(kind, &data).to_be_bytes().to_vec(),
                    "{kind:?} {len}"
                );
            }
        }
    }

    #[test]
    fn striped_composer_emits_one_crc_per_stripe() {
        let data = pseudo_random(2048 * 3 + 700, 11);
        for kind in KINDS {
            let mut c = CrcComposer::new(kind, 512, 2048).expect("composer");
            for chunk in data.chunks(512) {
                c.update(crc_of(kind, chunk), chunk.len() as u64)
                    .expect("aligned");
            }
            let want: Vec<u8> = data
                .chunks(2048)
                .flat_map(|s| crc_of(kind, s).to_be_bytes())
                .collect();
            assert_eq!(c.digest(), want, "{kind:?}");
        }
    }

    #[test]
    fn misaligned_stripes_and_null_checksums_are_refused() {
        let mut c = CrcComposer::new(ChecksumKind::Crc32c, 512, 700).expect("composer");
        c.update(1, 512).expect("inside the stripe");
        assert!(matches!(
            c.update(2, 512),
            Err(ComposeError::Misaligned { position: 1024, .. })
        ));
        let mut c = CrcComposer::new(ChecksumKind::Crc32c, 512, u64::MAX).expect("composer");
        c.update(1, u64::MAX - 1).expect("fits");
        assert!(c.update(2, 512).is_err());
        assert_eq!(
            CrcComposer::new(ChecksumKind::Null, 512, 512).err(),
            Some(ComposeError::NotACrc(ChecksumKind::Null))
        );
        let empty = CrcComposer::new(ChecksumKind::Crc32, 512, 0).expect("composer");
        assert!(empty.digest().is_empty());
    }
}

//! Configuration bytes → text, as Windows writes them: UTF-8 with or without a byte-order mark,
//! and UTF-16 (little- or big-endian) with one, which is what Notepad saves as "Unicode" and what
//! the profile API SQLIOSim reads through accepts. Line endings (CRLF or LF) are left to the INI
//! reader. A file with NUL bytes but no byte-order mark is refused: it is UTF-16 we cannot tell
//! the byte order of, or not text at all, and reading it as UTF-8 would turn every line into
//! junk that the run then ignores.

use encoding_rs::{Encoding, UTF_8};

/// Why configuration bytes are not text we can read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Undecodable {
    /// NUL bytes without a byte-order mark.
    #[error(
        "it holds NUL bytes ({nuls} of {len}) but no byte-order mark: UTF-16 without a BOM, or not \
         a text file; save it as UTF-8, or as \"Unicode\" (UTF-16 with a BOM)"
    )]
    NulWithoutBom {
        /// NUL bytes found.
        nuls: usize,
        /// File length.
        len: usize,
    },
}

/// Decodes configuration `bytes`: a BOM picks UTF-8, UTF-16LE or UTF-16BE; without one the
/// text is UTF-8 (invalid sequences become U+FFFD, as before).
pub fn decode(bytes: &[u8]) -> Result<String, Undecodable> {
    let found = Encoding::for_bom(bytes);
    if found.is_none() {
        let nuls = bytes.iter().filter(|&&b| b == 0).count();
        if nuls > 0 {
            return Err(Undecodable::NulWithoutBom {
                nuls,
                len: bytes.len(),
            });
        }
    }
    let (encoding, bom_len) = found.unwrap_or((UTF_8, 0));
    let (text, _had_errors) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
    Ok(text.into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utf16(text: &str, big_endian: bool) -> Vec<u8> {
        let mut out = if big_endian {
            vec![0xFE, 0xFF]
        } else {
            vec![0xFF, 0xFE]
        };
        for unit in text.encode_utf16() {
            let b = if big_endian {
                unit.to_be_bytes()
            } else {
                unit.to_le_bytes()
            };
            out.extend_from_slice(&b);
        }
        out
    }

    #[test]
    fn every_windows_encoding_gives_the_same_text() {
        let text = "[CONFIG]\r\nTestCycles=2\r\n";
        let mut bom8 = vec![0xEF, 0xBB, 0xBF];
        bom8.extend_from_slice(text.as_bytes());
        for bytes in [
            text.as_bytes().to_vec(),
            bom8,
            utf16(text, false),
            utf16(text, true),
        ] {
            assert_eq!(decode(&bytes).expect("decodes"), text);
        }
    }

    #[test]
    fn nul_bytes_without_a_bom_are_refused() {
        let bytes: Vec<u8> = utf16("[CONFIG]", false)[2..].to_vec();
        let err = decode(&bytes).expect_err("no BOM");
        assert_eq!(err, Undecodable::NulWithoutBom { nuls: 8, len: 16 });
        assert!(err.to_string().contains("byte-order mark"));
    }
}

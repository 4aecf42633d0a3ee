//! Text files as Windows writes them → text: UTF-8 with or without a byte-order mark, and
//! UTF-16 (little- or big-endian) with one, which is what Notepad saves as "Unicode", what the
//! profile API SQLIOSim reads its configuration through accepts, and what Windows SQLIOSim may
//! save its XML error log as. Line endings (CRLF or LF) are left to the readers.
//!
//! Two callers, two rules for NUL bytes without a byte-order mark. A configuration
//! ([`decode`]) with any is refused: it is UTF-16 we cannot tell the byte order of, or not text
//! at all, and reading it as UTF-8 would turn every line into junk that the run then ignores.
//! Evidence (`sqliosim report`'s logs and summaries, [`decode_evidence`]) may end in NULs where
//! a power cut left a zero-filled tail, which its readers take as a log cut short; only a file
//! whose first character is printable ASCII in UTF-16 (a NUL beside it) is refused there.

use encoding_rs::{Encoding, UTF_8};

/// Why bytes are not text we can read.
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
    /// UTF-16 (a NUL beside the first character) without a byte-order mark.
    #[error(
        "it looks like UTF-16 (a NUL byte beside each character) but has no byte-order mark, so \
         its byte order is unknown; convert it, e.g. iconv -f UTF-16LE -t UTF-8, or save it with \
         a BOM"
    )]
    Utf16WithoutBom,
}

/// Decodes configuration `bytes`: a BOM picks UTF-8, UTF-16LE or UTF-16BE; without one the
/// text is UTF-8 (invalid sequences become U+FFFD, as before) and may hold no NUL.
pub fn decode(bytes: &[u8]) -> Result<String, Undecodable> {
    if Encoding::for_bom(bytes).is_none() {
        let nuls = bytes.iter().filter(|&&b| b == 0).count();
        if nuls > 0 {
            return Err(Undecodable::NulWithoutBom {
                nuls,
                len: bytes.len(),
            });
        }
    }
    Ok(with_bom(bytes))
}

/// Decodes evidence `bytes` (an XML log or JSON summary) as [`decode`] does, except that NULs
/// are refused only when the text starts as UTF-16 without a BOM would: a zero-filled tail is
/// left to the reader.
pub fn decode_evidence(bytes: &[u8]) -> Result<String, Undecodable> {
    let text_char = |c: u8| c.is_ascii_graphic() || c.is_ascii_whitespace();
    let utf16_start = matches!(bytes, [0, c, ..] | [c, 0, ..] if text_char(*c));
    if Encoding::for_bom(bytes).is_none() && utf16_start {
        return Err(Undecodable::Utf16WithoutBom);
    }
    Ok(with_bom(bytes))
}

/// `bytes` in the encoding their BOM names (the BOM dropped), else as UTF-8.
fn with_bom(bytes: &[u8]) -> String {
    let (encoding, bom_len) = Encoding::for_bom(bytes).unwrap_or((UTF_8, 0));
    let (text, _had_errors) = encoding.decode_without_bom_handling(&bytes[bom_len..]);
    text.into_owned()
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

    #[test]
    fn evidence_refuses_bomless_utf16_but_keeps_a_zeroed_tail() {
        let log = "<LOG><ENTRY/>";
        for big_endian in [false, true] {
            let bytes = utf16(log, big_endian)[2..].to_vec();
            assert_eq!(decode_evidence(&bytes), Err(Undecodable::Utf16WithoutBom));
            assert_eq!(decode_evidence(&utf16(log, big_endian)).as_deref(), Ok(log));
        }
        let mut cut = log.as_bytes().to_vec();
        cut.extend_from_slice(&[0; 8]);
        assert_eq!(
            decode_evidence(&cut).as_deref(),
            Ok("<LOG><ENTRY/>\0\0\0\0\0\0\0\0")
        );
    }
}

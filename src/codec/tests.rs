//! The codec's round trips and its refusals.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use proptest::prelude::*;

use super::*;

versions! {
    /// A format for the tests.
    enum Toy: "toy", writes V3 {
        /// The old one.
        V2 = 2,
        /// The new one.
        V3 = 3,
    }
}

proptest! {
    #[test]
    fn fields_read_back_as_written(a: u8, b: u16, c: u32, d: u64, bytes: Vec<u8>, raw: Vec<u8>) {
        let path = PathBuf::from(OsStr::from_bytes(&raw));
        let mut w = Writer::new();
        w.put_u8(a).put_u16(b).put_u32(c).put_u64(d).put_bytes(&bytes).put_path(&path);
        let v = w.into_vec();
        let mut r = Reader::new(&v);
        prop_assert_eq!(r.u8(), Some(a));
        prop_assert_eq!(r.u16(), Some(b));
        prop_assert_eq!(r.u32(), Some(c));
        prop_assert_eq!(r.u64(), Some(d));
        prop_assert_eq!(r.bytes(), Some(bytes.as_slice()));
        prop_assert_eq!(r.path(), Some(path));
        prop_assert!(r.is_empty());
    }

    #[test]
    fn short_input_is_none_never_a_panic(v: Vec<u8>) {
        let mut r = Reader::new(&v);
        while r.u64().is_some() || r.u8().is_some() {}
        prop_assert!(r.is_empty());
        let mut r = Reader::new(&v);
        let before = r.position();
        if r.bytes().is_none() {
            prop_assert_eq!(r.position(), before, "a failed take leaves the reader where it was");
        }
    }

    #[test]
    fn a_field_at_an_offset_is_the_field_taken_there_in_order(v: Vec<u8>, off in 0usize..80) {
        let mut in_order = Reader::new(&v);
        let reached = in_order.skip(off).is_some();
        let mut at = Reader::at(&v, off);
        prop_assert_eq!(at.position(), off);
        if reached {
            prop_assert_eq!((at.u16(), at.u32(), at.u64()), (in_order.u16(), in_order.u32(), in_order.u64()));
            prop_assert_eq!(at.position(), in_order.position());
        } else {
            prop_assert_eq!(at.u8(), None, "nothing to read past the end");
        }
    }
}

#[test]
fn a_version_not_read_is_refused_naming_what_is_read() {
    assert_eq!(Toy::check(2), Ok(Toy::V2));
    assert_eq!(Toy::CURRENT.number(), 3);
    let e = Toy::check(7).expect_err("7 is not read");
    assert_eq!(
        e.to_string(),
        "toy format version 7; this build of sqliosim reads versions 2, 3"
    );
    let f = e.at("/x/y.toy").to_string();
    assert!(f.starts_with("/x/y.toy: toy format version 7;"), "{f}");
}

#[test]
fn a_field_at_an_offset_is_little_endian() {
    let b = [0xAA, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08];
    assert_eq!(Reader::at(&b, 1).u16(), Some(0x0201));
    assert_eq!(Reader::at(&b, 1).u32(), Some(0x0403_0201));
    assert_eq!(Reader::at(&b, 1).u64(), Some(0x0807_0605_0403_0201));
    assert_eq!(Reader::at(&b, 2).u64(), None, "one byte short");
    assert_eq!(Reader::at(&b, 99).position(), 99);
}

#[test]
fn crc_of_parts_is_the_crc_of_the_whole() {
    assert_eq!(crc32_of(&[b"ab", b"", b"cd"]), crc32(b"abcd"));
}

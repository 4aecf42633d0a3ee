//! HRESULT and SYSTEXT in the XML log against the entries Microsoft's SQLIOSim is published to
//! write (shared/reference/sqliosim.md §7): a validation failure carries 0x80070467 and its
//! text, a long-I/O warning `Error: 0x00000000`, and an I/O error the Win32 HRESULT of its
//! errno with the Linux errno named in the description.

use roxmltree::Document;
use sqliosim::findings::FindingClass;

use super::fixtures;

const REFERENCE: &str = "/work/shared/reference/sqliosim.md";

/// (HRESULT, SYSTEXT) of the published CBUF::ValidateBuffer entry.
fn published_validation() -> (String, String) {
    let text = std::fs::read_to_string(REFERENCE).expect("the SQLIOSim reference");
    let line = text
        .lines()
        .find(|l| l.starts_with("<ENTRY ") && l.contains("Func='CBUF::ValidateBuffer'"))
        .expect("a published validation entry");
    let attr = |name: &str| {
        let re = regex::Regex::new(&format!("{name}='([^']*)'")).unwrap();
        re.captures(line).unwrap()[1].to_string()
    };
    (attr("HRESULT"), attr("SYSTEXT"))
}

/// The HRESULT the published XSLT view shows for a long-I/O warning.
fn published_long_io() -> String {
    let text = std::fs::read_to_string(REFERENCE).expect("the SQLIOSim reference");
    let re = regex::Regex::new(
        r"Display Monitor \| Error: (0x[0-9A-F]{8}) Error Text: Description: \d+ IO requests are outstanding",
    )
    .unwrap();
    re.captures(&text).expect("a published long-I/O row")[1].to_string()
}

#[test]
fn hresults_are_those_of_sqliosims_published_entries() {
    let dir = tempfile::tempdir().unwrap();
    fixtures::run(dir.path(), &fixtures::every_class(), 50);
    let raw = std::fs::read_to_string(dir.path().join("sqliosim.log.xml")).unwrap();
    let doc = Document::parse(&raw).unwrap();
    let (hr, sys) = published_validation();
    assert_eq!(hr, "0x80070467");
    let mut validations = 0;
    for e in doc.descendants().filter(|n| n.has_tag_name("ENTRY")) {
        let class = e
            .children()
            .find(|c| c.has_tag_name("FINDING"))
            .and_then(|f| f.attribute("CLASS"));
        let got = (
            e.attribute("HRESULT").unwrap(),
            e.attribute("SYSTEXT").unwrap(),
        );
        let text = e
            .children()
            .find(|c| c.has_tag_name("EXTENDED_DESCRIPTION"));
        let text = text.and_then(|t| t.text()).unwrap_or_default();
        match class {
            Some(c) if c == FindingClass::ReadError.as_str() => {
                assert_eq!(got.0, "0x8007045D", "EIO is ERROR_IO_DEVICE");
                assert!(text.contains("EIO (errno 5: Input/output error)"), "{text}");
            }
            Some(c) if c == FindingClass::WriteError.as_str() => {
                assert_eq!(got.0, "0x80070070", "ENOSPC is ERROR_DISK_FULL");
                assert!(text.contains("ENOSPC (errno 28"), "{text}");
            }
            Some(_) => {
                assert_eq!(got, (hr.as_str(), sys.as_str()), "{text}");
                validations += 1;
            }
            None if e.attribute("Func") == Some("CheckForLongIO") => {
                assert_eq!(got, (published_long_io().as_str(), ""));
            }
            None => {}
        }
    }
    assert_eq!(validations, 12, "every validation class carries 0x80070467");
}

//! The HRESULT and SYSTEXT of an ENTRY: the one table from Linux errno to the Win32 error SQL
//! Server would have seen, and SQLIOSim's codes for validation failures and notices.
//!
//! SQLIOSim writes `HRESULT_FROM_WIN32(code)` (`0x80070000 | code`) with the system's text for
//! it, and scripts grep for those values (`0x80070467` above all), so the log carries the
//! Windows code and text; the Linux errno is named in the entry's description instead
//! ([`errno_text`]). The Win32 codes and texts are Microsoft's published System Error Codes.

/// A Win32 error code with its name and its system text (FormatMessage's, en-US).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Win32 {
    /// The code (ERROR_IO_DEVICE is 1117).
    pub code: u32,
    /// Its name in winerror.h.
    pub name: &'static str,
    /// Its system text, SQLIOSim's SYSTEXT.
    pub text: &'static str,
}

impl Win32 {
    /// `HRESULT_FROM_WIN32(code)`: 0 stays 0, anything else is `0x80070000 | code`.
    pub fn hresult(self) -> u32 {
        if self.code == 0 {
            0
        } else {
            0x8007_0000 | (self.code & 0xFFFF)
        }
    }
}

const fn w(code: u32, name: &'static str, text: &'static str) -> Win32 {
    Win32 { code, name, text }
}

/// What a validation (checksum, content) failure carries, as in SQLIOSim's CBUF::ValidateBuffer.
pub const DISK_OPERATION_FAILED: Win32 = w(
    1127,
    "ERROR_DISK_OPERATION_FAILED",
    "While accessing the hard disk, a disk operation failed even after retries.",
);

/// What an errno without a row below carries: E_FAIL (a Win32 code would be a guess).
pub const E_FAIL: u32 = 0x8000_4005;
/// E_FAIL's system text.
pub const E_FAIL_TEXT: &str = "Unspecified error";

/// One row of the table: a Linux errno, its name, and the Win32 error it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrnoRow {
    /// The errno.
    pub errno: i32,
    /// Its name in errno.h.
    pub name: &'static str,
    /// The Win32 error.
    pub win32: Win32,
}

const fn row(errno: i32, name: &'static str, win32: Win32) -> ErrnoRow {
    ErrnoRow { errno, name, win32 }
}

/// The errno → Win32 table (the only one).
pub const ERRNO_TABLE: &[ErrnoRow] = &[
    row(
        libc::EIO,
        "EIO",
        w(
            1117,
            "ERROR_IO_DEVICE",
            "The request could not be performed because of an I/O device error.",
        ),
    ),
    row(
        libc::ENOSPC,
        "ENOSPC",
        w(
            112,
            "ERROR_DISK_FULL",
            "There is not enough space on the disk.",
        ),
    ),
    row(
        libc::EACCES,
        "EACCES",
        w(5, "ERROR_ACCESS_DENIED", "Access is denied."),
    ),
    row(
        libc::EPERM,
        "EPERM",
        w(5, "ERROR_ACCESS_DENIED", "Access is denied."),
    ),
    row(
        libc::ENOENT,
        "ENOENT",
        w(
            2,
            "ERROR_FILE_NOT_FOUND",
            "The system cannot find the file specified.",
        ),
    ),
    row(
        libc::EINVAL,
        "EINVAL",
        w(87, "ERROR_INVALID_PARAMETER", "The parameter is incorrect."),
    ),
    row(
        libc::ETIMEDOUT,
        "ETIMEDOUT",
        w(
            121,
            "ERROR_SEM_TIMEOUT",
            "The semaphore timeout period has expired.",
        ),
    ),
    row(
        libc::ENOMEM,
        "ENOMEM",
        w(
            8,
            "ERROR_NOT_ENOUGH_MEMORY",
            "Not enough memory resources are available to process this command.",
        ),
    ),
    row(
        libc::EROFS,
        "EROFS",
        w(19, "ERROR_WRITE_PROTECT", "The media is write protected."),
    ),
    row(
        libc::ENXIO,
        "ENXIO",
        w(
            55,
            "ERROR_DEV_NOT_EXIST",
            "The specified network resource or device is no longer available.",
        ),
    ),
    row(
        libc::ENODEV,
        "ENODEV",
        w(
            55,
            "ERROR_DEV_NOT_EXIST",
            "The specified network resource or device is no longer available.",
        ),
    ),
    row(
        libc::EBUSY,
        "EBUSY",
        w(170, "ERROR_BUSY", "The requested resource is in use."),
    ),
];

/// The table's row for `errno`, if it has one.
pub fn errno_row(errno: i32) -> Option<&'static ErrnoRow> {
    ERRNO_TABLE.iter().find(|r| r.errno == errno)
}

/// The Linux errno as the description names it: `EIO (errno 5: Input/output error)`.
pub fn errno_text(errno: i32) -> String {
    let name = errno_row(errno).map_or("errno", |r| r.name);
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    let text = text
        .rfind(" (os error ")
        .map_or(text.as_str(), |i| &text[..i]);
    if name == "errno" {
        format!("errno {errno}: {text}")
    } else {
        format!("{name} (errno {errno}: {text})")
    }
}

/// What an entry's HRESULT and SYSTEXT say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Nothing: `HRESULT=''` (SQLIOSim's summaries and echo).
    None,
    /// `0x00000000` with an empty SYSTEXT (SQLIOSim's long-I/O warnings and dump notices).
    Success,
    /// A failed system call: the errno's Win32 HRESULT and text.
    Errno(i32),
    /// A page that failed validation: 0x80070467 and its text.
    ValidationFailed,
}

impl Status {
    /// The status of a message's errno: none, 0 (success) or a failed call.
    pub fn from_errno(errno: Option<i32>) -> Status {
        match errno {
            None => Status::None,
            Some(0) => Status::Success,
            Some(e) => Status::Errno(e),
        }
    }

    /// The HRESULT attribute: `0x%08X`, or empty.
    pub fn hresult(self) -> String {
        let v = match self {
            Status::None => return String::new(),
            Status::Success => 0,
            Status::Errno(e) => errno_row(e).map_or(E_FAIL, |r| r.win32.hresult()),
            Status::ValidationFailed => DISK_OPERATION_FAILED.hresult(),
        };
        format!("0x{v:08X}")
    }

    /// The SYSTEXT attribute: the Win32 text, or empty.
    pub fn systext(self) -> &'static str {
        match self {
            Status::None | Status::Success => "",
            Status::Errno(e) => errno_row(e).map_or(E_FAIL_TEXT, |r| r.win32.text),
            Status::ValidationFailed => DISK_OPERATION_FAILED.text,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hr(errno: i32) -> (String, &'static str) {
        let s = Status::Errno(errno);
        (s.hresult(), s.systext())
    }

    #[test]
    fn eio_is_error_io_device() {
        assert_eq!(hr(libc::EIO).0, "0x8007045D");
        assert!(hr(libc::EIO).1.contains("I/O device error"));
    }

    #[test]
    fn enospc_is_error_disk_full() {
        assert_eq!(hr(libc::ENOSPC).0, "0x80070070");
    }

    #[test]
    fn eacces_and_eperm_are_error_access_denied() {
        assert_eq!(hr(libc::EACCES).0, "0x80070005");
        assert_eq!(hr(libc::EPERM).0, "0x80070005");
    }

    #[test]
    fn enoent_is_error_file_not_found() {
        assert_eq!(hr(libc::ENOENT).0, "0x80070002");
    }

    #[test]
    fn einval_is_error_invalid_parameter() {
        assert_eq!(hr(libc::EINVAL).0, "0x80070057");
    }

    #[test]
    fn etimedout_is_error_sem_timeout() {
        assert_eq!(hr(libc::ETIMEDOUT).0, "0x80070079");
    }

    #[test]
    fn enomem_is_error_not_enough_memory() {
        assert_eq!(hr(libc::ENOMEM).0, "0x80070008");
    }

    #[test]
    fn erofs_is_error_write_protect() {
        assert_eq!(hr(libc::EROFS).0, "0x80070013");
    }

    #[test]
    fn enxio_and_enodev_are_error_dev_not_exist() {
        assert_eq!(hr(libc::ENXIO).0, "0x80070037");
        assert_eq!(hr(libc::ENODEV).0, "0x80070037");
    }

    #[test]
    fn ebusy_is_error_busy() {
        assert_eq!(hr(libc::EBUSY).0, "0x800700AA");
    }

    #[test]
    fn every_row_is_tested_above_and_errnos_are_unique() {
        // A row added without its test above shows here first.
        assert_eq!(ERRNO_TABLE.len(), 12);
        let mut seen: Vec<i32> = ERRNO_TABLE.iter().map(|r| r.errno).collect();
        seen.sort_unstable();
        seen.dedup();
        assert_eq!(seen.len(), ERRNO_TABLE.len());
    }

    #[test]
    fn validation_failures_are_sqliosims_0x80070467() {
        let s = Status::ValidationFailed;
        assert_eq!(s.hresult(), "0x80070467");
        assert_eq!(
            s.systext(),
            "While accessing the hard disk, a disk operation failed even after retries."
        );
    }

    #[test]
    fn unmapped_errno_is_e_fail_and_none_is_empty() {
        assert_eq!(hr(libc::EILSEQ), ("0x80004005".into(), "Unspecified error"));
        assert_eq!(Status::None.hresult(), "");
        assert_eq!(Status::from_errno(Some(0)).hresult(), "0x00000000");
        assert_eq!(Status::Success.systext(), "");
    }

    #[test]
    fn the_description_names_the_linux_errno() {
        assert_eq!(errno_text(libc::EIO), "EIO (errno 5: Input/output error)");
        assert!(errno_text(libc::EILSEQ).starts_with("errno 84: "));
    }
}

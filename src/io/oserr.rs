//! Which side of the line a failed request falls on: what the device did wrong (an integrity
//! finding), what the platform refused because of how we asked (our error), a device or mount
//! that went away (the run stops), or a full filesystem (a condition).
//!
//! Pure: the errno decides. Errors without an errno are the device's when they say a transfer
//! moved nothing (a short write), and the tool's otherwise (its own I/O service stopped).

use std::io;

/// The class of a failed read, write, flush or resize.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// The device failed the request (EIO, a media or checksum error): an integrity finding.
    Device,
    /// The platform refused the request because of how it was made (EINVAL on direct I/O,
    /// EOPNOTSUPP, EFBIG, …): an environment error, never a finding.
    Refused,
    /// A request only a bug of the tool can make (bad descriptor or address) or a failure of
    /// the tool's own machinery: an internal failure.
    ToolBug,
    /// The device or mount went away, or went read-only: the run cannot go on.
    Gone,
    /// Out of space or quota: a condition, not corruption.
    NoSpace,
}

impl ErrorClass {
    /// True when the failure is an integrity finding.
    pub fn is_finding(self) -> bool {
        self == ErrorClass::Device
    }
}

/// Classifies an errno.
pub fn classify_errno(errno: i32) -> ErrorClass {
    use libc::*;
    match errno {
        ENOSPC | EDQUOT => ErrorClass::NoSpace,
        ENOTCONN | ENODEV | ENXIO | ESHUTDOWN | ESTALE | EROFS | ENOMEDIUM | ENOLINK
        | EHOSTDOWN | EHOSTUNREACH | ENETDOWN | ENETUNREACH | ECONNRESET | ECONNABORTED | EPIPE => {
            ErrorClass::Gone
        }
        EINVAL | EOPNOTSUPP | EFBIG | EOVERFLOW | EACCES | EPERM | ENOSYS | ESPIPE | EISDIR
        | ENOMEM | EAGAIN | EINTR | EMFILE | ENFILE | ETXTBSY => ErrorClass::Refused,
        // The kernel canceled the request: io_uring could not start the worker thread a
        // buffered or blocking request is handed to (RLIMIT_NPROC, `ulimit -u`). No block
        // device answers a transfer with it, and the tool never cancels a request.
        ECANCELED => ErrorClass::Refused,
        EBADF | EFAULT => ErrorClass::ToolBug,
        // EIO, EILSEQ, EBADMSG, ENODATA, EREMOTEIO, ETIMEDOUT, and anything unknown: the
        // device's answer, as it always was.
        _ => ErrorClass::Device,
    }
}

/// Classifies an I/O error (see the module documentation for errors without an errno).
pub fn classify(e: &io::Error) -> ErrorClass {
    match e.raw_os_error() {
        Some(errno) => classify_errno(errno),
        None if matches!(
            e.kind(),
            io::ErrorKind::WriteZero | io::ErrorKind::UnexpectedEof
        ) =>
        {
            ErrorClass::Device
        }
        None => ErrorClass::ToolBug,
    }
}

/// What to do about a refused request with `errno`, in one sentence.
pub fn advice(errno: Option<i32>) -> &'static str {
    use libc::*;
    match errno {
        Some(EINVAL) => "the request does not meet the direct-I/O rules of this filesystem or device (alignment of offset, length or buffer): put the files on a filesystem whose direct-I/O unit divides 4096, or set NoBuffering=FALSE to run with buffered I/O; if the alignment above divides the offset and length, report it as a sqliosim bug",
        Some(EOPNOTSUPP) | Some(ENOSYS) => "the filesystem does not support this operation: set Sparse=TRUE or StampFiles=TRUE for files that cannot be preallocated, NoBuffering=FALSE where direct I/O is not supported, or use another filesystem",
        Some(EFBIG) | Some(EOVERFLOW) => "the file would pass the largest size this filesystem or the file size limit (ulimit -f) allows: lower MaxSize, or raise the limit",
        Some(EACCES) | Some(EPERM) => "check the permissions and attributes of the file (chattr +i, +a) and any security policy (SELinux, AppArmor)",
        Some(ENOMEM) | Some(EAGAIN) | Some(EMFILE) | Some(ENFILE) => "the system is short of memory or descriptors: lower MaxMemoryMB, the user counts or MaxOutstandingIO",
        Some(ECANCELED) => "the kernel canceled the request: io_uring could not start a worker thread for it; raise the limit on processes and threads (ulimit -u), or use --engine libaio or psync",
        Some(EBADF) | Some(EFAULT) => "this is a sqliosim bug: please report it with the error log",
        None => "this is a failure of sqliosim itself: please report it with the error log",
        Some(_) => "check the filesystem and the configuration",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_errors_stay_findings_and_the_rest_do_not() {
        for e in [libc::EIO, libc::EILSEQ, libc::EBADMSG, libc::ENODATA, 1234] {
            assert_eq!(classify_errno(e), ErrorClass::Device, "errno {e}");
        }
        for e in [
            libc::EINVAL,
            libc::EOPNOTSUPP,
            libc::EFBIG,
            libc::EOVERFLOW,
            libc::ECANCELED,
        ] {
            assert_eq!(classify_errno(e), ErrorClass::Refused, "errno {e}");
        }
        for e in [libc::ENOTCONN, libc::ENODEV, libc::ESHUTDOWN, libc::ESTALE] {
            assert_eq!(classify_errno(e), ErrorClass::Gone, "errno {e}");
        }
        assert_eq!(classify_errno(libc::ENOSPC), ErrorClass::NoSpace);
        assert_eq!(classify_errno(libc::EDQUOT), ErrorClass::NoSpace);
        assert_eq!(classify_errno(libc::EBADF), ErrorClass::ToolBug);
        assert!(ErrorClass::Device.is_finding() && !ErrorClass::NoSpace.is_finding());
    }

    #[test]
    fn errors_without_errno_split_short_transfers_from_tool_failures() {
        let short = io::Error::new(io::ErrorKind::WriteZero, "write transferred no bytes");
        assert_eq!(classify(&short), ErrorClass::Device);
        assert_eq!(
            classify(&io::Error::other("the I/O service stopped")),
            ErrorClass::ToolBug
        );
        let refused = io::Error::from_raw_os_error(libc::EINVAL);
        assert_eq!(classify(&refused), ErrorClass::Refused);
        assert!(advice(Some(libc::EINVAL)).contains("NoBuffering=FALSE"));
    }
}

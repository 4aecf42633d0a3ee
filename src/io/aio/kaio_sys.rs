//! The kernel's AIO interface, as the `kaio` back end calls it: the `struct iocb` and
//! `struct io_event` layouts of linux/aio_abi.h and the four system calls (`io_setup`,
//! `io_submit`, `io_getevents`, `io_destroy`) through `libc::syscall`.
//!
//! Written here rather than taken from a crate: neither libc nor linux-raw-sys carries
//! aio_abi.h, and the crates that do (aio-bindings, linux-aio-sys, io-engine-aio-bindings) are
//! bindgen builds of one header, unmaintained since 2018–2019 (linux-aio-sys is GPL-3.0 too),
//! for two structs and four calls whose ABI the kernel keeps stable. The size assertions below
//! check the layouts at compile time.

use std::io;

/// The kernel's `aio_context_t`: an opaque handle (the address of the completion ring).
pub type AioContext = libc::c_ulong;

/// `IOCB_CMD_PREAD`: read `aio_nbytes` bytes into the buffer at `aio_buf`.
pub const IOCB_CMD_PREAD: u16 = 0;
/// `IOCB_CMD_PWRITE`: write `aio_nbytes` bytes from the buffer at `aio_buf`.
pub const IOCB_CMD_PWRITE: u16 = 1;
/// `IOCB_CMD_POLL` (Linux 4.18): complete once the file is ready for the events in `aio_buf`.
pub const IOCB_CMD_POLL: u16 = 5;
/// `IOCB_CMD_PREADV`: read into the `aio_nbytes` iovecs at `aio_buf`.
pub const IOCB_CMD_PREADV: u16 = 7;
/// `IOCB_CMD_PWRITEV`: write from the `aio_nbytes` iovecs at `aio_buf`.
pub const IOCB_CMD_PWRITEV: u16 = 8;

/// `struct iocb` of linux/aio_abi.h: one request. `aio_key` and `aio_rw_flags` share a 64-bit
/// word whose order follows the byte order (the header's `PADDED` macro).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct Iocb {
    /// Handed back in the completion's `data`.
    pub aio_data: u64,
    /// Set by the kernel (KIOCB_KEY); zero on submission.
    #[cfg(target_endian = "little")]
    pub aio_key: u32,
    /// RWF_* flags of the read or write (preadv2's flags).
    pub aio_rw_flags: i32,
    /// Set by the kernel (KIOCB_KEY); zero on submission.
    #[cfg(target_endian = "big")]
    pub aio_key: u32,
    /// One of the `IOCB_CMD_*` values.
    pub aio_lio_opcode: u16,
    /// Request priority (IOCB_FLAG_IOPRIO); unused here.
    pub aio_reqprio: i16,
    /// The file descriptor.
    pub aio_fildes: u32,
    /// The buffer, the iovec array, or (POLL) the event mask.
    pub aio_buf: u64,
    /// Bytes of the buffer, or the number of iovecs.
    pub aio_nbytes: u64,
    /// Byte offset in the file.
    pub aio_offset: i64,
    /// Must be zero.
    pub aio_reserved2: u64,
    /// IOCB_FLAG_*; unused here.
    pub aio_flags: u32,
    /// The eventfd of IOCB_FLAG_RESFD; unused here.
    pub aio_resfd: u32,
}

/// `struct io_event` of linux/aio_abi.h: one completion.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct IoEvent {
    /// The request's `aio_data`.
    pub data: u64,
    /// The address of the request's iocb.
    pub obj: u64,
    /// Bytes moved (or, for POLL, the ready events), or a negative errno.
    pub res: i64,
    /// Secondary result; unused.
    pub res2: i64,
}

const _: () = assert!(std::mem::size_of::<Iocb>() == 64);
const _: () = assert!(std::mem::size_of::<IoEvent>() == 32);

fn check(ret: libc::c_long) -> io::Result<usize> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

/// `io_setup`: a context that takes `events` requests in flight.
pub fn setup(events: u32) -> io::Result<AioContext> {
    let mut ctx: AioContext = 0;
    // SAFETY: the kernel writes the new context into `ctx`, which lives across the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_io_setup,
            events as libc::c_long,
            &mut ctx as *mut AioContext,
        )
    };
    check(ret).map(|_| ctx)
}

/// `io_submit`: sends the requests `iocbs` points at; the number the kernel took. An error
/// means it took none, and belongs to the first request (or to the context).
///
/// # Safety
///
/// Each address in `iocbs` is a valid [`Iocb`] whose buffers (or iovecs and their buffers)
/// stay valid, and untouched by anyone else, until its completion has been collected.
pub unsafe fn submit(ctx: AioContext, iocbs: &mut [usize]) -> io::Result<usize> {
    // SAFETY: an array of `iocbs.len()` pointers (usize has a pointer's size and alignment);
    // what they point to is the caller's promise.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_io_submit,
            ctx,
            iocbs.len() as libc::c_long,
            iocbs.as_mut_ptr(),
        )
    };
    check(ret)
}

/// `io_getevents`: collects between `min` and `events.len()` completions; with `wait` false
/// it returns at once with what is there (a zero timeout).
pub fn get_events(
    ctx: AioContext,
    min: usize,
    events: &mut [IoEvent],
    wait: bool,
) -> io::Result<usize> {
    let zero = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    let timeout = if wait {
        std::ptr::null()
    } else {
        &zero as *const libc::timespec
    };
    // SAFETY: the kernel writes at most `events.len()` events into `events`, and reads the
    // timeout, both alive across the call.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_io_getevents,
            ctx,
            min as libc::c_long,
            events.len() as libc::c_long,
            events.as_mut_ptr(),
            timeout,
        )
    };
    check(ret)
}

/// `io_destroy`: cancels what it can of the context's requests, waits for the rest, and
/// releases the context.
pub fn destroy(ctx: AioContext) -> io::Result<()> {
    // SAFETY: the context is the caller's own and is not used after this call.
    let ret = unsafe { libc::syscall(libc::SYS_io_destroy, ctx) };
    check(ret).map(|_| ())
}

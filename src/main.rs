//! The `sqliosim` binary: hands the command line to `app::run` and maps the outcome to an exit code.

#[global_allocator]
static ALLOCATOR: memory::Reserved = memory::Reserved;

fn main() -> std::process::ExitCode {
    memory::set_aside();
    sqliosim::exit::to_exit_code(sqliosim::app::run(std::env::args_os().collect()))
}

/// The binary's allocator: the system allocator, with a reserve of address space set aside at
/// start and a clear exit 2 when memory runs out for good.
///
/// Why our own: under `ulimit -v` or a small memory cgroup a run refuses what it cannot
/// allocate through its fallible doors (I/O buffers, bounded reads: exit 2 naming the limit),
/// but the shutdown that follows still allocates — a message, a thread's stack, a summary —
/// and an allocation that fails there went to Rust's allocation-failure handler, which aborts
/// (exit 134, "memory allocation of N bytes failed"), so an environment limit looked like a
/// crash. Stable Rust has no hook for that handler (`set_alloc_error_hook` is unstable) and no
/// crate gives one, so the binary wraps [`System`]:
///
/// - the first time an allocation fails, the reserve ([`RESERVE_BYTES`] of address space,
///   never touched, so it costs no memory) is given back and the allocation tried again, which
///   leaves the shutdown the room it needs to say what happened and exit 2;
/// - a large request that still fails returns null, as the allocator contract says, so the
///   fallible doors (`try_reserve`, the aligned buffers) see their error and say it;
/// - a small one that still fails cannot be answered by anything but an abort: the process
///   says so on stderr (one `write`, no allocation) and ends with exit 2, the environment's
///   code, never 134.
// The allocator wrapper is the binary's only unsafe code: a `GlobalAlloc` cannot be written
// without it.
#[allow(unsafe_code)]
mod memory {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::sync::atomic::{AtomicPtr, Ordering};

    /// Address space set aside at start and given back at the first failed allocation.
    pub const RESERVE_BYTES: usize = 16 << 20;

    /// Requests at least this large that fail even after the reserve went are returned as null
    /// (the callers that ask for this much ask fallibly); smaller ones end the process.
    const LARGE: usize = 1 << 20;

    const RESERVE_ALIGN: usize = 4096;

    static RESERVE: AtomicPtr<u8> = AtomicPtr::new(std::ptr::null_mut());

    /// The global allocator of the `sqliosim` binary.
    pub struct Reserved;

    /// Sets the reserve aside; called first thing in `main`.
    pub fn set_aside() {
        let Ok(layout) = Layout::from_size_align(RESERVE_BYTES, RESERVE_ALIGN) else {
            return;
        };
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let old = RESERVE.swap(p, Ordering::AcqRel);
            if !old.is_null() {
                // SAFETY: `old` came from `System.alloc` with this same layout and was owned by
                // RESERVE alone.
                unsafe { System.dealloc(old, layout) };
            }
        }
    }

    /// Gives the reserve back; true when there was one.
    fn release() -> bool {
        let p = RESERVE.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if p.is_null() {
            return false;
        }
        if let Ok(layout) = Layout::from_size_align(RESERVE_BYTES, RESERVE_ALIGN) {
            // SAFETY: `p` came from `System.alloc` with this layout in `set_aside`, and the swap
            // above made this call its only owner.
            unsafe { System.dealloc(p, layout) };
        }
        true
    }

    /// What is left when an allocation failed: the reserve given back and `retry` tried once
    /// more; a large request's null returned; a small one ends the process with exit 2.
    fn short(size: usize, retry: impl Fn() -> *mut u8) -> *mut u8 {
        if release() {
            let p = retry();
            if !p.is_null() {
                return p;
            }
        }
        if size >= LARGE {
            return std::ptr::null_mut();
        }
        const MSG: &[u8] = b"sqliosim: cannot allocate memory: the memory limit (ulimit -v, or the memory cgroup) is too small for this run; raise it or lower MaxMemoryMB, MaxOutstandingIO and the users; stopped with exit 2\n";
        // SAFETY: write(2) and _exit(2) are async-signal-safe and allocate nothing; MSG is a
        // valid buffer of its length.
        unsafe {
            libc::write(2, MSG.as_ptr().cast(), MSG.len());
            libc::_exit(2)
        }
    }

    // SAFETY: every method hands the request to `System` unchanged and returns its answer, or (on
    // failure) `System`'s answer to the same request made again, or null; the reserve is a
    // separate `System` block only `set_aside` and `release` touch.
    unsafe impl GlobalAlloc for Reserved {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            // SAFETY: forwarded with the caller's guarantees.
            let p = unsafe { System.alloc(layout) };
            if p.is_null() {
                // SAFETY: as above.
                return short(layout.size(), || unsafe { System.alloc(layout) });
            }
            p
        }

        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            // SAFETY: forwarded with the caller's guarantees.
            let p = unsafe { System.alloc_zeroed(layout) };
            if p.is_null() {
                // SAFETY: as above.
                return short(layout.size(), || unsafe { System.alloc_zeroed(layout) });
            }
            p
        }

        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: forwarded with the caller's guarantees (`ptr` came from this allocator,
            // which is `System`'s).
            unsafe { System.dealloc(ptr, layout) }
        }

        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            // SAFETY: forwarded with the caller's guarantees.
            let p = unsafe { System.realloc(ptr, layout, new_size) };
            if p.is_null() {
                // SAFETY: a failed realloc leaves `ptr` valid, so it may be asked again.
                return short(new_size, || unsafe {
                    System.realloc(ptr, layout, new_size)
                });
            }
            p
        }
    }
}

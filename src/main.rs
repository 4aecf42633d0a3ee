//! The `sqliosim` binary: hands the command line to `app::run` and maps the outcome to an exit code.

#[global_allocator]
static ALLOCATOR: memory::Reserved = memory::Reserved;

fn main() -> std::process::ExitCode {
    memory::set_aside();
    memory::hook_thread_start();
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

    /// Under an address-space limit (`ulimit -v`), keeps glibc to one malloc arena. Each
    /// thread's own arena reserves 64 MiB of address space, so with a dozen threads the limit
    /// was met inside glibc, where nothing can answer it ("Fatal glibc error: failed to
    /// register TLS destructor: out of memory", an abort), rather than at the run's fallible
    /// doors. One arena costs some contention on `malloc`, which the run's I/O path does not
    /// use (its buffers are allocated before it starts); without a limit nothing changes.
    fn one_arena_under_a_limit() {
        let limit = rustix::process::getrlimit(rustix::process::Resource::As);
        if limit.current.is_some() {
            // SAFETY: mallopt only sets a glibc tunable; called before any thread exists.
            unsafe { libc::mallopt(libc::M_ARENA_MAX, 1) };
        }
    }

    /// Sets the reserve aside; called first thing in `main`.
    pub fn set_aside() {
        one_arena_under_a_limit();
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
        exhausted()
    }

    /// The panic std raises when a new thread cannot map its signal stack (an `mmap` the
    /// allocator never sees): "failed to allocate an alternative stack: Cannot allocate
    /// memory". It is the memory limit, not a defect, and is said as such.
    const THREAD_START: &str = "failed to allocate an alternative stack";

    /// Makes std's thread-start panic above the environment's exit 2; every other panic goes
    /// to the default hook unchanged.
    pub fn hook_thread_start() {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info
                .payload_as_str()
                .is_some_and(|m| m.starts_with(THREAD_START))
            {
                exhausted();
            }
            default(info);
        }));
    }

    /// Says that memory ran out and ends the process with exit 2.
    fn exhausted() -> ! {
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

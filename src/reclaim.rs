//! Memory back to the OS once brands' actors stop (issue 57): the runtime's worker threads call
//! [`when_idle`] when they park.

/// How often an idle worker thread asks mimalloc to return its free pages.
const EVERY: std::time::Duration = std::time::Duration::from_secs(10);

/// When a worker thread parks (nothing to run), at most every [`EVERY`]: mimalloc collects
/// this thread's heap and returns free pages to the OS (`mi_collect`). A brand's actor frees its
/// caches on the worker that ran it; without this those pages stay in the thread's heap, so RSS
/// stayed at its peak after 20,000 brands' actors had passivated (docs/benchmarks/, issue 57).
pub fn when_idle() {
    thread_local! {
        static LAST: std::cell::Cell<Option<std::time::Instant>> = const { std::cell::Cell::new(None) };
    }
    LAST.with(|last| {
        let now = std::time::Instant::now();
        if last.get().is_none_or(|at| now.duration_since(at) >= EVERY) {
            last.set(Some(now));
            collect();
        }
    });
}

/// mimalloc collects the calling thread's heap and returns its free pages to the OS. The
/// embedded store's commit thread calls it when idle ([`engage_storage::set_idle_hook`]): the
/// memtables a flush freed were allocated there.
pub fn collect() {
    // SAFETY: `mi_collect` takes no pointer and may be called from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) };
}

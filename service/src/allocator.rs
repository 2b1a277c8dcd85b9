//! gangs-server's global allocator: jemalloc for the many small allocations of the hot path
//! (requests, records, updates, freed on other threads than the ones that made them), the
//! system's malloc for the few large ones.
//!
//! Why split: jemalloc took a quarter less of the server's CPU per action than glibc's malloc,
//! but it writes the zeros of a large zeroed allocation, where glibc hands out fresh pages from
//! the kernel untouched. sled asks for 20.5 MB zeroed at start (41 metrics histograms of 65,536
//! counters, built even without its metrics feature), most of which is never written: with
//! jemalloc alone that was 24 MB of resident memory in every server, empty or not
//! (docs/performance.md, "The allocator"). Large allocations are rare and each already costs a
//! system call, so sending them to the system's allocator costs the hot path nothing.
//!
//! With glibc, [`init`] fixes its mmap threshold at [`LARGE`]: every large block is then mapped
//! on its own and unmapped when freed. Left to itself, glibc raises the threshold each time a
//! mapped block is freed, after which large blocks come from its heap and stay resident when
//! freed (measured: 14 MB more at 10,000 games than with jemalloc alone).
//!
//! Contract: a block is freed (and resized) by the allocator that made it. Both sides route by
//! the block's size, which `GlobalAlloc` hands to `dealloc` and `realloc` as it was at
//! allocation; a `realloc` that crosses the threshold moves the block to the other side.

use std::alloc::{GlobalAlloc, Layout, System};

/// Allocations of this many bytes or more go to the system's allocator: far above the sizes of
/// the hot path (an update or a record is at most a few KB; a connection's write buffer 64 KB),
/// and at the size where glibc maps fresh pages for a block (its mmap threshold starts at
/// 128 KB), which is what leaves a zeroed block untouched.
pub const LARGE: usize = 256 * 1024;

/// Routes each allocation by its size: `Small` below [`LARGE`], `Large` from it on.
pub struct SplitBySize<Small, Large> {
    pub small: Small,
    pub large: Large,
}

#[cfg(feature = "jemalloc")]
pub type ServerAllocator = SplitBySize<tikv_jemallocator::Jemalloc, System>;

#[cfg(feature = "jemalloc")]
pub const SERVER_ALLOCATOR: ServerAllocator = SplitBySize {
    small: tikv_jemallocator::Jemalloc,
    large: System,
};

/// Run first thing in `main`, before any large allocation: see the module's comment.
#[cfg(feature = "jemalloc")]
pub fn init() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets a parameter of glibc's malloc; called before other threads
    // exist. Its answer (1 on success) changes nothing we rely on: without it, large blocks
    // are served all the same, from glibc's heap.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE as libc::c_int);
    }
}

impl<Small, Large> SplitBySize<Small, Large> {
    fn is_large(size: usize) -> bool {
        size >= LARGE
    }
}

// SAFETY: every method hands the request to exactly one of two allocators that uphold
// `GlobalAlloc`'s contract, chosen by the block's size, and a block's size is the same when it
// is freed or resized as when it was made (GlobalAlloc's own contract), so each block goes back
// to the allocator that made it; a resize that changes sides allocates on the new side, copies
// the smaller of the two sizes and frees on the old side.
unsafe impl<Small: GlobalAlloc, Large: GlobalAlloc> GlobalAlloc for SplitBySize<Small, Large> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if Self::is_large(layout.size()) {
            self.large.alloc(layout)
        } else {
            self.small.alloc(layout)
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if Self::is_large(layout.size()) {
            self.large.alloc_zeroed(layout)
        } else {
            self.small.alloc_zeroed(layout)
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if Self::is_large(layout.size()) {
            self.large.dealloc(ptr, layout)
        } else {
            self.small.dealloc(ptr, layout)
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let was_large = Self::is_large(layout.size());
        if was_large == Self::is_large(new_size) {
            return if was_large {
                self.large.realloc(ptr, layout, new_size)
            } else {
                self.small.realloc(ptr, layout, new_size)
            };
        }
        // SAFETY: the caller guarantees that `new_size`, rounded up to the alignment, does not
        // overflow `isize` (GlobalAlloc::realloc's contract).
        let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
        let moved = self.alloc(new_layout);
        if !moved.is_null() {
            std::ptr::copy_nonoverlapping(ptr, moved, layout.size().min(new_size));
            self.dealloc(ptr, layout);
        }
        moved
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// The system's allocator, counting the blocks it holds.
    #[derive(Default)]
    struct Counting {
        live: AtomicUsize,
    }

    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            self.live.fetch_add(1, Ordering::Relaxed);
            System.alloc(layout)
        }
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            self.live.fetch_add(1, Ordering::Relaxed);
            System.alloc_zeroed(layout)
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            self.live.fetch_sub(1, Ordering::Relaxed);
            System.dealloc(ptr, layout)
        }
    }

    fn split() -> SplitBySize<Counting, Counting> {
        SplitBySize {
            small: Counting::default(),
            large: Counting::default(),
        }
    }

    fn live(split: &SplitBySize<Counting, Counting>) -> (usize, usize) {
        (
            split.small.live.load(Ordering::Relaxed),
            split.large.live.load(Ordering::Relaxed),
        )
    }

    #[test]
    fn each_size_goes_to_its_side_and_comes_back_to_it() {
        let split = split();
        let small = Layout::from_size_align(LARGE - 1, 8).unwrap();
        let large = Layout::from_size_align(LARGE, 4096).unwrap();
        unsafe {
            let a = split.alloc(small);
            assert_eq!(live(&split), (1, 0));
            let b = split.alloc_zeroed(large);
            assert_eq!(live(&split), (1, 1));
            assert_eq!(b as usize % 4096, 0, "alignment kept");
            assert!(std::slice::from_raw_parts(b, LARGE).iter().all(|&x| x == 0));
            split.dealloc(a, small);
            split.dealloc(b, large);
        }
        assert_eq!(live(&split), (0, 0));
    }

    #[test]
    fn a_resize_across_the_threshold_moves_the_block_and_keeps_its_bytes() {
        let split = split();
        let start = Layout::from_size_align(1000, 16).unwrap();
        unsafe {
            let p = split.alloc(start);
            for i in 0..1000 {
                *p.add(i) = (i % 251) as u8;
            }
            // Grows past the threshold: now on the large side, the bytes copied.
            let grown = split.realloc(p, start, 2 * LARGE);
            assert_eq!(live(&split), (0, 1));
            assert_eq!(grown as usize % 16, 0);
            for i in 0..1000 {
                assert_eq!(*grown.add(i), (i % 251) as u8);
            }
            // Shrinks below it again: back on the small side, the kept prefix intact.
            let big = Layout::from_size_align(2 * LARGE, 16).unwrap();
            let shrunk = split.realloc(grown, big, 500);
            assert_eq!(live(&split), (1, 0));
            for i in 0..500 {
                assert_eq!(*shrunk.add(i), (i % 251) as u8);
            }
            // A resize within one side stays on it.
            let small = Layout::from_size_align(500, 16).unwrap();
            let same_side = split.realloc(shrunk, small, 4000);
            assert_eq!(live(&split), (1, 0));
            assert_eq!(*same_side.add(499), (499 % 251) as u8);
            split.dealloc(same_side, Layout::from_size_align(4000, 16).unwrap());
        }
        assert_eq!(live(&split), (0, 0));
    }
}

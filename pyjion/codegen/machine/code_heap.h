// pyjion's code heap: the executable memory of compiled functions.
//
// Private anonymous pages (VirtMem::alloc; no shared dual mapping, which
// fork() would share and which maps every page twice), carved into arenas.
// Code pages are read+execute; the pages a new block touches are made
// read+write only while its code is copied in, then read+execute again, so no
// page is ever writable and executable at once (W^X). The bookkeeping (free
// ranges, block sizes) lives in ordinary heap memory, never in the code pages:
// freeing a block changes no page protection.
//
// Not thread-safe by itself: every call is made with the GIL held (see
// code_heap.cpp for why the protection flips rely on that too).
#pragma once

#include <asmjit/core.h>
#include <cstddef>

namespace pyjion {
namespace code_heap {

struct Stats {
    size_t live_bytes;     // bytes of the blocks currently allocated
    size_t mapped_bytes;   // bytes of all arenas (the cached empty one included)
    size_t allocations;    // blocks currently allocated
    size_t arenas;         // arenas currently mapped
};

// Lays out the holder's sections, places them in a new block and resolves
// every address; *entry is the start of the block, *size the bytes of code
// (the block may be larger: see code_heap.cpp).
asmjit::Error place(asmjit::CodeHolder &holder, void **entry, size_t *size);

// Frees the block that starts at entry (from place()); an arena left without
// blocks is returned to the OS unless it is the one empty arena kept cached.
void release(void *entry);

Stats stats();

}  // namespace code_heap
}  // namespace pyjion

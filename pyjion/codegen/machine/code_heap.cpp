#include "machine/code_heap.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>

namespace pyjion {
namespace code_heap {

namespace {

using asmjit::Error;
using asmjit::kErrorOk;
namespace VirtMem = asmjit::VirtMem;
using VirtMem::MemoryFlags;

constexpr size_t kArenaSize = size_t(1) << 20;   // a request larger than this gets an arena of its own
constexpr size_t kGranule = 16;                  // block sizes and addresses are multiples of this

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

struct Arena {
    uintptr_t base;
    size_t size;
    size_t blocks = 0;                     // allocated blocks in the arena
    std::map<size_t, size_t> free_ranges;  // offset -> length; never two adjacent ones
};

// One per process, never destroyed: machine code (and the CompiledCode objects
// that free it) may outlive module teardown at exit.
class Heap {
public:
    Error place(asmjit::CodeHolder &holder, void **entry, size_t *size);
    void release(void *entry);
    Stats stats() const { return Stats{live_bytes_, mapped_bytes_, live_.size(), arenas_.size()}; }

private:
    struct Block {
        Arena *arena;
        size_t size;
    };
    Error allocate(size_t size, uintptr_t *out);
    Error new_arena(size_t size);
    void add_free(Arena *arena, size_t offset, size_t length);
    void remove_free(Arena *arena, std::map<size_t, size_t>::iterator range);
    void unmap(Arena *arena);
    size_t page_size();

    std::map<uintptr_t, std::unique_ptr<Arena>> arenas_;   // by base address
    // Every free range of every arena as (length, address): the smallest range
    // that fits a request is the first one not below (request, 0).
    std::set<std::pair<size_t, uintptr_t>> by_length_;
    std::unordered_map<uintptr_t, Block> live_;            // allocated blocks by address
    Arena *cached_ = nullptr;                              // the one empty arena kept mapped
    size_t live_bytes_ = 0;
    size_t mapped_bytes_ = 0;
    size_t page_size_ = 0;
};

Heap &heap()
{
    static Heap *h = new Heap();
    return *h;
}

size_t Heap::page_size()
{
    if (page_size_ == 0) page_size_ = VirtMem::info().pageSize;
    return page_size_;
}

Error Heap::new_arena(size_t size)
{
    void *p = nullptr;
    // Mapped read+write (a private writable mapping: Linux charges its commit
    // once, for the whole arena), then read+execute at once: a page is
    // writable only while place() copies code into it. Mapped read+execute
    // directly, each range first made writable would be charged separately
    // and stay a mapping of its own in /proc/self/maps.
    ASMJIT_PROPAGATE(VirtMem::alloc(&p, size, MemoryFlags::kAccessRW));
    Error err = VirtMem::protect(p, size, MemoryFlags::kAccessRX);
    if (err != kErrorOk) {
        VirtMem::release(p, size);
        return err;
    }
    auto arena = std::make_unique<Arena>();
    arena->base = reinterpret_cast<uintptr_t>(p);
    arena->size = size;
    Arena *a = arena.get();
    arenas_.emplace(a->base, std::move(arena));
    mapped_bytes_ += size;
    add_free(a, 0, size);
    return kErrorOk;
}

void Heap::add_free(Arena *arena, size_t offset, size_t length)
{
    arena->free_ranges.emplace(offset, length);
    by_length_.emplace(length, arena->base + offset);
}

void Heap::remove_free(Arena *arena, std::map<size_t, size_t>::iterator range)
{
    by_length_.erase({range->second, arena->base + range->first});
    arena->free_ranges.erase(range);
}

void Heap::unmap(Arena *arena)
{
    // An empty arena is one free range (neighbours always coalesce).
    if (!arena->free_ranges.empty()) remove_free(arena, arena->free_ranges.begin());
    if (cached_ == arena) cached_ = nullptr;
    VirtMem::release(reinterpret_cast<void *>(arena->base), arena->size);
    mapped_bytes_ -= arena->size;
    arenas_.erase(arena->base);
}

Error Heap::allocate(size_t size, uintptr_t *out)
{
    size = round_up(size, kGranule);
    auto fit = by_length_.lower_bound({size, 0});
    if (fit == by_length_.end()) {
        ASMJIT_PROPAGATE(new_arena(size > kArenaSize ? round_up(size, page_size()) : kArenaSize));
        fit = by_length_.lower_bound({size, 0});
    }
    const size_t length = fit->first;
    const uintptr_t addr = fit->second;
    Arena *arena = std::prev(arenas_.upper_bound(addr))->second.get();
    const size_t offset = addr - arena->base;
    remove_free(arena, arena->free_ranges.find(offset));
    if (length > size) add_free(arena, offset + size, length - size);
    if (arena == cached_) cached_ = nullptr;
    arena->blocks++;
    live_.emplace(addr, Block{arena, size});
    live_bytes_ += size;
    *out = addr;
    return kErrorOk;
}

void Heap::release(void *entry)
{
    auto it = live_.find(reinterpret_cast<uintptr_t>(entry));
    if (it == live_.end()) return;
    Arena *arena = it->second.arena;
    size_t offset = it->first - arena->base;
    size_t length = it->second.size;
    live_bytes_ -= length;
    live_.erase(it);
    // Coalesce with the free neighbours on either side.
    auto next = arena->free_ranges.lower_bound(offset);
    if (next != arena->free_ranges.end() && next->first == offset + length) {
        length += next->second;
        auto after = std::next(next);
        remove_free(arena, next);
        next = after;
    }
    if (next != arena->free_ranges.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == offset) {
            offset = prev->first;
            length += prev->second;
            remove_free(arena, prev);
        }
    }
    add_free(arena, offset, length);
    if (--arena->blocks > 0) return;
    // Empty: keep one standard arena for the next compiles, return the rest.
    if (cached_ == nullptr && arena->size == kArenaSize) {
        cached_ = arena;
    } else {
        unmap(arena);
    }
}

// Placement flips page protection of live code: pages shared with other
// blocks are read+write, not executable, while the copy runs. That is safe
// because all machine code runs, and all code is written, with the GIL held
// (machine code calls C functions that may release the GIL, but they take it
// back before returning into machine code), so no thread executes machine
// code while this one, holding the GIL, writes. Compiled code never writes into
// its own pages: inline caches and other per-site state live in SiteData on
// the C++ heap.
Error Heap::place(asmjit::CodeHolder &holder, void **entry, size_t *size)
{
    using namespace asmjit;
    *entry = nullptr;
    ASMJIT_PROPAGATE(holder.flatten());
    ASMJIT_PROPAGATE(holder.resolveUnresolvedLinks());
    // The size before relocation counts an address-table slot for every
    // called function; calls that end up within rel32 reach do not use
    // theirs. The slack stays allocated: shrinking the allocation (as
    // JitRuntime::add does) made AsmJit's pool grow without bound when code
    // was compiled and released repeatedly.
    size_t reserved = holder.codeSize();
    if (reserved == 0) return DebugUtils::errored(kErrorNoCodeGenerated);
    uintptr_t addr = 0;
    ASMJIT_PROPAGATE(allocate(reserved, &addr));
    void *block = reinterpret_cast<void *>(addr);
    Error err = holder.relocateToBase(addr);
    if (err == kErrorOk) {
        const size_t page = page_size();
        const uintptr_t first = addr / page * page;
        const size_t span = round_up(addr + reserved, page) - first;
        void *pages = reinterpret_cast<void *>(first);
        err = VirtMem::protect(pages, span, MemoryFlags::kAccessRW);
        if (err == kErrorOk) {
            err = holder.copyFlattenedData(block, reserved,
                                           CopySectionFlags::kPadSectionBuffer | CopySectionFlags::kPadTargetBuffer);
            if (VirtMem::protect(pages, span, MemoryFlags::kAccessRX) != kErrorOk) {
                // Other functions' code shares these pages: it cannot run.
                std::fprintf(stderr, "pyjion: cannot make code pages executable again\n");
                std::abort();
            }
            VirtMem::flushInstructionCache(block, reserved);
        }
    }
    if (err != kErrorOk) {
        release(block);
        return err;
    }
    *entry = block;
    *size = holder.codeSize();
    return kErrorOk;
}

}  // namespace

Error place(asmjit::CodeHolder &holder, void **entry, size_t *size) { return heap().place(holder, entry, size); }

void release(void *entry) { heap().release(entry); }

Stats stats() { return heap().stats(); }

}  // namespace code_heap
}  // namespace pyjion

// The object that owns one function's machine code (a block of the code heap,
// codegen/machine/code_heap.h, freed when the code object dies) and its annotations.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/inline_cache.h"

namespace pyjion {

// Kept per bytecode instruction and per call for as long as the code lives
// (dis_native's annotations), so kept small: 16 bytes each, nothing on the
// heap (a std::string per entry made them 48 and 40 bytes, plus a heap
// block for every name longer than 15 characters).
struct NativeMark {
    uint32_t native_offset;
    int32_t bytecode_offset;
    int32_t oparg;
    uint8_t opcode;           // the number; opcode_name() gives the name
};

struct NativeCall {
    uint32_t native_offset;   // offset just after the call instruction
    const char *name;         // interned (intern_name): lives as long as the process
};

// A copy of `name` that lives as long as the process, one per distinct text
// (called with the GIL held).
const char *intern_name(const char *name);

// A loop header the OSR entry can enter (see Compiler::find_loops).
struct OsrLoop {
    int header;   // landing code unit of the backward jumps
    int end;      // code unit of the last backward jump to it
    int depth;    // value-stack depth at the header
};

class CompiledCode {
public:
    CompiledCode(void *entry, size_t size, std::vector<NativeMark> marks, std::vector<NativeCall> calls,
                 std::vector<std::unique_ptr<SiteData>> site_data)
        : entry_(entry), size_(size), marks_(std::move(marks)), calls_(std::move(calls)),
          site_data_(std::move(site_data)) {}
    ~CompiledCode();
    CompiledCode(const CompiledCode &) = delete;
    CompiledCode &operator=(const CompiledCode &) = delete;

    void *entry() const { return entry_; }
    size_t size() const { return size_; }
    const std::vector<NativeMark> &marks() const { return marks_; }
    const std::vector<NativeCall> &calls() const { return calls_; }

    void set_osr(void *entry, std::vector<OsrLoop> loops)
    {
        osr_entry_ = entry;
        loops_ = std::move(loops);
    }
    void *osr_entry() const { return osr_entry_; }
    // The optimising tier's side exits taken so far, per kind
    // (runtime/unboxed.h; counters in this code's site data); nullptr for
    // baseline code.
    void set_exit_counts(const uint64_t *counts) { exit_counts_ = counts; }
    const uint64_t *exit_counts() const { return exit_counts_; }
    const std::vector<OsrLoop> &loops() const { return loops_; }
    // The header of the innermost loop whose body spans code unit `unit`, or
    // nullptr. Bodies are contiguous ranges [header, end] in 3.11's layout;
    // code placed out of line (some exception handlers) is in no loop.
    const OsrLoop *loop_around(int unit) const
    {
        const OsrLoop *best = nullptr;
        for (const OsrLoop &l : loops_) {
            if (l.header <= unit && unit <= l.end && (best == nullptr || l.end - l.header < best->end - best->header))
                best = &l;
        }
        return best;
    }

private:
    void *entry_;
    size_t size_;
    std::vector<NativeMark> marks_;
    std::vector<NativeCall> calls_;
    std::vector<std::unique_ptr<SiteData>> site_data_;   // inline caches the code points into
    const uint64_t *exit_counts_ = nullptr;
    void *osr_entry_ = nullptr;
    std::vector<OsrLoop> loops_;
};

}  // namespace pyjion

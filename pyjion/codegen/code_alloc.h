// The object that owns one function's machine code (a block of the code heap,
// codegen/code_heap.h, freed when the code object dies) and its annotations.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "inline_cache.h"

namespace pyjion {

struct NativeMark {
    int bytecode_offset;
    std::string opcode;
    int oparg;
    uint32_t native_offset;
};

struct NativeCall {
    uint32_t native_offset;   // offset just after the call instruction
    std::string name;
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

private:
    void *entry_;
    size_t size_;
    std::vector<NativeMark> marks_;
    std::vector<NativeCall> calls_;
    std::vector<std::unique_ptr<SiteData>> site_data_;   // inline caches the code points into
};

}  // namespace pyjion

// What the machine code is made of: bytes emitted per bytecode opcode, in
// the function body (hot) and in out-of-line stubs (cold), summed over every
// successful compile since start-up. It costs a few additions per compiled
// instruction and answers "why is this code big" (docs/code-size.md).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace pyjion::size_stats {

// Code that belongs to no one instruction: prologue, epilogue, OSR entry,
// the shared exits.
constexpr int kFrameBucket = 256;

struct Bucket {
    uint64_t instructions = 0;
    uint64_t hot_bytes = 0;
    uint64_t cold_bytes = 0;
};
using Table = std::array<Bucket, kFrameBucket + 1>;

void add(const Table &one_compile);   // once the compile has succeeded
Table totals();

}  // namespace pyjion::size_stats

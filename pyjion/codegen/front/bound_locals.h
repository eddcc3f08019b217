// Which fast locals are certainly bound (not NULL) before each instruction, so
// LOAD_FAST and STORE_FAST can leave out their NULL tests there. A forward
// "definitely assigned" analysis over the jumps and exception handlers:
// arguments start bound, STORE_FAST of a value that is certainly an object
// binds (hand-made bytecode may store a NULL), DELETE_FAST unbinds, and where
// paths meet a local is bound only if it is on every path.
#pragma once

#include <cstdint>
#include <vector>

#include "front/bytecode.h"

namespace pyjion {

// For a BINARY_OP + or += (instruction number k) that the next instruction
// stores back into a local: that local's index (the string concatenation
// there may be done in place, and leaves the local empty if it fails); else -1.
int concat_target(const Bytecode &bytecode, int k);

class BoundLocals {
public:
    BoundLocals(const Bytecode &bytecode, PyCodeObject *code);

    // True if local `index` cannot be NULL when instruction number `k` starts.
    bool certain(int k, int index) const
    {
        if (k < 0 || k >= (int)states_.size() || index < 0 || index >= nlocals_) return false;
        const std::vector<uint64_t> &s = states_[k];
        return !s.empty() && (s[index / 64] >> (index % 64)) & 1;
    }

    // The same for every local at once: bit i of word i / 64, or nullptr if
    // instruction number k is not reached.
    const uint64_t *certain_bits(int k) const
    {
        if (k < 0 || k >= (int)states_.size() || states_[k].empty()) return nullptr;
        return states_[k].data();
    }

private:
    int nlocals_;
    std::vector<std::vector<uint64_t>> states_;   // per instruction; empty = not reached
};

}  // namespace pyjion

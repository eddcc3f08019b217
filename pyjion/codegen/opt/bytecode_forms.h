// What the optimising tier reads off an instruction where CPython versions
// encode it differently (3.11's and 3.13's bytecode): the conditional jumps
// a comparison fuses with, the comparison's operator, the unit a backward
// jump's eval breaker reports an error at, and the fast locals an
// instruction stores to.
#pragma once

#include "front/bytecode.h"
#include "front/opcodes.h"

namespace pyjion::opt {

// A conditional jump on a bool (the jump a COMPARE_OP on unboxed values fuses with).
inline bool is_pop_jump(int opcode)
{
#if PY_VERSION_HEX >= 0x030D0000
    return opcode == POP_JUMP_IF_FALSE || opcode == POP_JUMP_IF_TRUE;
#else
    return opcode == POP_JUMP_FORWARD_IF_FALSE || opcode == POP_JUMP_FORWARD_IF_TRUE ||
           opcode == POP_JUMP_BACKWARD_IF_FALSE || opcode == POP_JUMP_BACKWARD_IF_TRUE;
#endif
}

inline bool jumps_when_true(int opcode)
{
#if PY_VERSION_HEX >= 0x030D0000
    return opcode == POP_JUMP_IF_TRUE;
#else
    return opcode == POP_JUMP_FORWARD_IF_TRUE || opcode == POP_JUMP_BACKWARD_IF_TRUE;
#endif
}

// COMPARE_OP's operator (Py_LT ... Py_GE): 3.13 keeps it in oparg >> 5 (bit 4
// asks for a bool, the low bits are a mask its specialised forms use).
inline int compare_operator(int oparg)
{
#if PY_VERSION_HEX >= 0x030D0000
    return oparg >> 5;
#else
    return oparg;
#endif
}

// The code unit where an error from the eval breaker at a backward jump
// is raised (its handler looked up): 3.11 jumps first and checks after
// (the unit before the target), 3.13 checks at the jump itself.
inline int breaker_unit(const Instr &jump)
{
#if PY_VERSION_HEX >= 0x030D0000
    return jump.index;
#else
    return jump.target - 1;
#endif
}

// The fast locals instruction `ins` writes (stores, deletes or clears), in
// the order it writes them: their number (0, 1 or 2) and indexes.
struct LocalWrites {
    int n = 0;
    int local[2] = {-1, -1};
    bool stores = false;   // values from the stack (the top first); else deleted or cleared
};
inline LocalWrites local_writes(const Instr &ins)
{
    LocalWrites w;
    switch (ins.opcode) {
    case STORE_FAST: case DELETE_FAST:
#if PY_VERSION_HEX >= 0x030D0000
    case LOAD_FAST_AND_CLEAR:
#endif
        w.n = 1;
        w.local[0] = ins.oparg;
        w.stores = ins.opcode == STORE_FAST;
        break;
#if PY_VERSION_HEX >= 0x030D0000
    case STORE_FAST_LOAD_FAST:
        w.n = 1;
        w.local[0] = ins.oparg >> 4;
        w.stores = true;
        break;
    case STORE_FAST_STORE_FAST:   // the top value into oparg >> 4, the next into oparg & 15
        w.n = 2;
        w.local[0] = ins.oparg >> 4;
        w.local[1] = ins.oparg & 15;
        w.stores = true;
        break;
#endif
    default:
        break;
    }
    return w;
}

}  // namespace pyjion::opt

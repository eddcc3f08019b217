// The BINARY_OP operators machine code computes itself on machine numbers,
// shared by the baseline's fast paths (baseline/specialize.cpp) and the
// optimising tier's unboxed arithmetic (opt/type_infer.cpp).
#pragma once

#include <Python.h>
#include "opcode.h"

namespace pyjion {

// On int64 (with overflow checks, and Python's floor rounding for // and %).
inline bool int64_operator(int nb)
{
    switch (nb) {
    case NB_ADD: case NB_INPLACE_ADD: case NB_SUBTRACT: case NB_INPLACE_SUBTRACT:
    case NB_MULTIPLY: case NB_INPLACE_MULTIPLY: case NB_FLOOR_DIVIDE: case NB_INPLACE_FLOOR_DIVIDE:
    case NB_REMAINDER: case NB_INPLACE_REMAINDER: case NB_AND: case NB_INPLACE_AND:
    case NB_OR: case NB_INPLACE_OR: case NB_XOR: case NB_INPLACE_XOR:
        return true;
    default:
        return false;
    }
}

// On doubles (true division by zero is left to the interpreter's error).
// float ** float: the optimising tier computes it with the C library's pow
// where float.__pow__ would (a positive finite base, a finite exponent, a
// finite result), and leaves every other case to the generic operator.
inline bool double_power(int nb) { return nb == NB_POWER || nb == NB_INPLACE_POWER; }

inline bool double_operator(int nb)
{
    switch (nb) {
    case NB_ADD: case NB_INPLACE_ADD: case NB_SUBTRACT: case NB_INPLACE_SUBTRACT:
    case NB_MULTIPLY: case NB_INPLACE_MULTIPLY: case NB_TRUE_DIVIDE: case NB_INPLACE_TRUE_DIVIDE:
        return true;
    default:
        return false;
    }
}

}  // namespace pyjion

// Machine code that reads and writes ints inline, for the CPython being built
// against (its int representation: cpython/object_layout.h). Every inline int
// path goes through these, so a version's representation is written once.
#pragma once

#include <asmjit/x86.h>

#include "cpython/object_layout.h"

namespace pyjion::int_emit {

namespace x86 = asmjit::x86;

// value = the int at `obj` if it has at most one digit (|v| < 2**30), else
// jump to `fail`. Clobbers rax; `value` must not be rax.
void load_one_digit(x86::Assembler &a, const x86::Gp &obj, const x86::Gp &value, const asmjit::Label &fail);

// Jumps to `fail` unless the int at `obj` has at most two digits (|v| < 2**60).
// Clobbers rax and rcx.
void check_two_digits(x86::Assembler &a, const x86::Gp &obj, const asmjit::Label &fail);

// Rewrites the int object `box` (a dead one-owner operand) to hold the value
// in `value`, whose magnitude (< 2**30) is in eax. Clobbers rdx and r8.
void store_one_digit(x86::Assembler &a, const x86::Gp &box, const x86::Gp &value);

}  // namespace pyjion::int_emit

// Fast paths for the commonest operand types, each guarded by a type check
// that falls back to the generic CPython call: small (one-digit) ints and
// floats in BINARY_OP and COMPARE_OP, and COMPARE_OP fused with the
// conditional jump that follows it (no bool object is made). Only the int
// path's common case is inline; floats, the generic call and the rarer int
// outcomes sit in the cold section, so the code that runs stays short.
#pragma once

#include "baseline/compiler.h"

namespace pyjion {

// Jumps to `fail` unless `obj` is exactly of type `type`. Leaves the type's
// address in rax.
void guard_type(Compiler &c, const x86::Gp &obj, PyTypeObject *type, const asmjit::Label &fail);

// rax = the cached int object (a new reference) for the value in `value`
// if it is in the small-int cache's range, then a jump to `done` (none if
// `done` is an invalid label: the code falls through); else a jump to
// `not_small`. Uses rcx.
void box_small_int(Compiler &c, const asmjit::x86::Gp &value, const asmjit::Label &not_small,
                   const asmjit::Label &done);
// value = the int `obj` as a machine integer, or jump to `fail` if it has more
// than one 30-bit digit. Clobbers rax.
void load_small_int(Compiler &c, const x86::Gp &obj, const x86::Gp &value, const asmjit::Label &fail);

// Python's floor division and modulo of r8 by r9 (r9 != 0): quotient in rax,
// remainder in rdx, both rounded towards negative infinity. Clobbers rcx.
void floor_divmod(Compiler &c);

// BINARY_OP `nb_op`; the generic path is a slot helper (runtime_slots.h).
void emit_binary_op(Compiler &c, int nb_op);

// BINARY_SUBSCR's inline paths for what the quickened instruction has seen:
// {list, tuple} when the code was not quickened yet, one of them for
// BINARY_SUBSCR_LIST_INT / _TUPLE_INT / _STR_INT (3.13), none for the other
// kinds (dicts, __getitem__, an adaptive site: other containers or never run).
struct SubscrPaths {
    bool list, tuple, str;
};
SubscrPaths subscr_paths(Compiler &c);

// COMPARE_OP `op` (Py_LT ... Py_GE); fuses a following POP_JUMP_*_IF_TRUE/FALSE.
void emit_compare_op(Compiler &c, int op);

}  // namespace pyjion

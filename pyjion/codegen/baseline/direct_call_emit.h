// The direct-call stub's emission (baseline/direct_call_emit.cpp): machine
// code that enters a compiled callee's machine code without the hook; the
// runtime half (frames, the checks C code makes) is runtime/direct_call.h.
#pragma once

#include <asmjit/x86.h>

namespace pyjion {
class Compiler;

// At a CALL with `nargs` positional arguments (no keyword names) and the
// callable in value-stack slot `base` or `base + 1`: machine code that, when
// the callee is a plain Python function taking exactly these arguments and is
// already compiled (and nothing needs to see the call), pushes its frame and
// enters its machine code, then jumps to `done` with the result (or NULL) in
// rax and prev_instr at `cache_unit` (an invalid `done`: falls through
// instead). Anything else jumps to `generic`.
void emit_direct_call(Compiler &c, int base, int nargs, int cache_unit, const asmjit::Label &generic,
                      const asmjit::Label &done);

}  // namespace pyjion

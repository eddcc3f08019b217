// The direct-call stub on CPython 3.13 (baseline/direct_call_emit.h): not
// made yet; every call takes its site's generic path, which enters compiled
// callees through their vectorcall (py313/direct_call.cpp).
#include "baseline/compiler.h"
#include "baseline/direct_call_emit.h"

namespace pyjion {

void emit_direct_call(Compiler &c, int, int, int, const asmjit::Label &generic, const asmjit::Label &done)
{
    // With `done` given the caller expects a jump either way; else falling
    // through means "called", so the generic path is taken explicitly.
    (void)done;
    c.as().jmp(generic);
}

}  // namespace pyjion

#include "code_alloc.h"

namespace pyjion {

asmjit::JitRuntime &jit_runtime()
{
    // Never destroyed: machine code may outlive module teardown at exit.
    static auto *rt = new asmjit::JitRuntime();
    return *rt;
}

CompiledCode::~CompiledCode()
{
    if (entry_ != nullptr) jit_runtime().release(entry_);
}

}  // namespace pyjion

// Visitors: Generators, coroutines and async generators.
// An opcode still marked NOT_YET leaves its code object to the interpreter.
#include "compiler.h"

#include "../codegen_api.h"
#include "opcodes.h"
#include "runtime.h"

namespace pyjion {

using namespace asmjit;

#define NOT_YET(name) \
    void Compiler::visit_##name(const Instr &ins) { unsupported(ins); }
NOT_YET(RETURN_GENERATOR)
NOT_YET(YIELD_VALUE)
NOT_YET(SEND)
NOT_YET(GET_AWAITABLE)
NOT_YET(GET_AITER)
NOT_YET(GET_ANEXT)
NOT_YET(END_ASYNC_FOR)
NOT_YET(BEFORE_ASYNC_WITH)
NOT_YET(ASYNC_GEN_WRAP)
NOT_YET(GET_YIELD_FROM_ITER)
#undef NOT_YET

}  // namespace pyjion

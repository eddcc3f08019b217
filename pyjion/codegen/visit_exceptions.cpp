// Visitors: Raising and handling exceptions, with statements.
// An opcode still marked NOT_YET leaves its code object to the interpreter.
#include "compiler.h"

#include "../codegen_api.h"
#include "opcodes.h"
#include "runtime.h"

namespace pyjion {

using namespace asmjit;

#define NOT_YET(name) \
    void Compiler::visit_##name(const Instr &ins) { unsupported(ins); }
NOT_YET(PUSH_EXC_INFO)
NOT_YET(POP_EXCEPT)
NOT_YET(CHECK_EXC_MATCH)
NOT_YET(CHECK_EG_MATCH)
NOT_YET(RERAISE)
NOT_YET(RAISE_VARARGS)
NOT_YET(WITH_EXCEPT_START)
NOT_YET(BEFORE_WITH)
NOT_YET(PREP_RERAISE_STAR)
#undef NOT_YET

}  // namespace pyjion

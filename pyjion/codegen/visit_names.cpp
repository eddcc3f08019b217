// Visitors: Names, attributes, globals, imports, cells and closures.
// An opcode still marked NOT_YET leaves its code object to the interpreter.
#include "compiler.h"

#include "../codegen_api.h"
#include "opcodes.h"
#include "runtime.h"

namespace pyjion {

using namespace asmjit;

#define NOT_YET(name) \
    void Compiler::visit_##name(const Instr &ins) { unsupported(ins); }
NOT_YET(LOAD_GLOBAL)
NOT_YET(LOAD_NAME)
NOT_YET(STORE_NAME)
NOT_YET(DELETE_NAME)
NOT_YET(STORE_GLOBAL)
NOT_YET(DELETE_GLOBAL)
NOT_YET(LOAD_ATTR)
NOT_YET(STORE_ATTR)
NOT_YET(DELETE_ATTR)
NOT_YET(LOAD_METHOD)
NOT_YET(IMPORT_NAME)
NOT_YET(IMPORT_FROM)
NOT_YET(IMPORT_STAR)
NOT_YET(LOAD_BUILD_CLASS)
NOT_YET(SETUP_ANNOTATIONS)
NOT_YET(LOAD_ASSERTION_ERROR)
NOT_YET(PRINT_EXPR)
NOT_YET(LOAD_CLASSDEREF)
NOT_YET(MAKE_CELL)
NOT_YET(LOAD_CLOSURE)
NOT_YET(LOAD_DEREF)
NOT_YET(STORE_DEREF)
NOT_YET(DELETE_DEREF)
NOT_YET(COPY_FREE_VARS)
NOT_YET(DELETE_FAST)
#undef NOT_YET

}  // namespace pyjion

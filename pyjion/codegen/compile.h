// Compiles one code object to machine code placed in executable memory.
#pragma once

#include <memory>

#include "machine/code_alloc.h"
#include "baseline/compiler.h"

namespace pyjion {

// Throws CompileError when the code cannot be compiled.
std::unique_ptr<CompiledCode> compile_code(PyCodeObject *code, const CompileOptions &options);

}  // namespace pyjion

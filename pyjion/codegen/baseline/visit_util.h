// Small pieces the visitor files share (baseline/visit_*.cpp, pyNNN/visit_*.cpp).
#pragma once

#include "baseline/compiler.h"
#include "codegen_api.h"

namespace pyjion::visit {

[[noreturn]] inline void bad_oparg(const Instr &ins, const char *what)
{
    throw CompileError{PYJION_RESULT_COMPILER_ERROR, std::string(opcode_name(ins.opcode)) + " at offset " +
                                                         std::to_string(ins.offset()) + ": " + what +
                                                         " index out of range"};
}

// co_names[index], checked at compile time.
inline PyObject *name_at(PyCodeObject *code, int index, const Instr &ins)
{
    if (index < 0 || index >= PyTuple_GET_SIZE(code->co_names)) bad_oparg(ins, "co_names");
    return PyTuple_GET_ITEM(code->co_names, index);
}

inline int local_index(PyCodeObject *code, const Instr &ins)
{
    if (ins.oparg < 0 || ins.oparg >= code->co_nlocalsplus) bad_oparg(ins, "localsplus");
    return ins.oparg;
}

// After a helper that consumed `consumed` values and returned a new reference
// (or NULL) in rax: model the inputs gone, take the error exit on NULL, push.
inline void push_result(Compiler &c, int consumed)
{
    c.drop(consumed);
    c.jump_if_error_zero(asmjit::x86::rax, c.depth());
    c.push(asmjit::x86::rax);
}

// After a helper that consumed `consumed` values and returned an int status
// in eax: model the inputs gone, take the error exit when negative.
inline void check_status(Compiler &c, int consumed)
{
    c.drop(consumed);
    c.jump_if_error_negative(asmjit::x86::eax, c.depth());
}

// A unary operator: Fn(operand) consumes it and returns the result or NULL.
template <auto Fn>
void unary(Compiler &c)
{
    c.set_prev_instr();
    c.em().call<Fn>(c.top(0));
    push_result(c, 1);
}

}  // namespace pyjion::visit

// CPython 3.11's own opcodes that 3.13 replaced: the conditional jumps by
// direction, JUMP_IF_*_OR_POP, RESUME's and COMPARE_OP's operands, and the
// operations 3.13 made intrinsics or split (FORMAT_VALUE, LIST_TO_TUPLE,
// UNARY_POSITIVE, PRINT_EXPR, IMPORT_STAR, PREP_RERAISE_STAR,
// ASYNC_GEN_WRAP), LOAD_CLOSURE, LOAD_CLASSDEREF and SEND.
#include "baseline/compiler.h"

#include "codegen_api.h"
#include "cpython/interp_state.h"
#include "front/opcodes.h"
#include "runtime/runtime.h"
#include "runtime/runtime_slots.h"
#include "baseline/specialize.h"
#include "baseline/visit_util.h"
#include "runtime/runtime_names.h"
#include "runtime/runtime_objects.h"

namespace pyjion {

using namespace asmjit;
using visit::push_result;
using visit::local_index;

void Compiler::visit_RESUME(const Instr &ins)
{
    emit_warmup_tick();
    if (ins.oparg < 2) eval_breaker_check();
}

void Compiler::visit_COMPARE_OP(const Instr &ins)
{
    if (ins.oparg < Py_LT || ins.oparg > Py_GE) unsupported(ins);
    emit_compare_op(*this, ins.oparg);
}

void Compiler::visit_POP_JUMP_FORWARD_IF_FALSE(const Instr &ins) { pop_jump_if_bool(ins, false); }
void Compiler::visit_POP_JUMP_FORWARD_IF_TRUE(const Instr &ins) { pop_jump_if_bool(ins, true); }
void Compiler::visit_POP_JUMP_BACKWARD_IF_FALSE(const Instr &ins) { pop_jump_if_bool(ins, false); }
void Compiler::visit_POP_JUMP_BACKWARD_IF_TRUE(const Instr &ins) { pop_jump_if_bool(ins, true); }
void Compiler::visit_POP_JUMP_FORWARD_IF_NONE(const Instr &ins) { pop_jump_if_none(ins, true); }
void Compiler::visit_POP_JUMP_FORWARD_IF_NOT_NONE(const Instr &ins) { pop_jump_if_none(ins, false); }
void Compiler::visit_POP_JUMP_BACKWARD_IF_NONE(const Instr &ins) { pop_jump_if_none(ins, true); }
void Compiler::visit_POP_JUMP_BACKWARD_IF_NOT_NONE(const Instr &ins) { pop_jump_if_none(ins, false); }
void Compiler::visit_JUMP_IF_FALSE_OR_POP(const Instr &ins) { jump_or_pop(ins, false); }
void Compiler::visit_JUMP_IF_TRUE_OR_POP(const Instr &ins) { jump_or_pop(ins, true); }


void Compiler::visit_LIST_TO_TUPLE(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.call<&objrt::list_to_tuple>(top(0));
    push_result(*this, 1);
}

void Compiler::visit_UNARY_POSITIVE(const Instr &) { visit::unary<&objrt::consume1<PyNumber_Positive>>(*this); }

void Compiler::visit_FORMAT_VALUE(const Instr &ins)
{
    bool have_spec = (ins.oparg & 0x04) != 0;
    int conversion = ins.oparg & 0x03;
    em_.set_prev_instr(ins.index);
    if (have_spec) {
        em_.call<&objrt::format_value>(top(1), top(0), conversion);
    } else {
        em_.call<&objrt::format_value>(top(0), nullptr, conversion);
    }
    push_result(*this, have_spec ? 2 : 1);
}

void Compiler::visit_IMPORT_STAR(const Instr &)
{
    pop_to(x86::rsi);   // the helper releases the module
    set_prev_instr();
    em().call<&rtn::pyj_import_star>(Lea(Emitter::frame_address()), x86::rsi);
    jump_if_error_negative(x86::eax, depth());
}

void Compiler::visit_PRINT_EXPR(const Instr &)
{
    pop_to(x86::rsi);   // the helper releases the value
    set_prev_instr();
    em().call<&rtn::pyj_print_expr>(Emitter::tstate, x86::rsi);
    jump_if_error_negative(x86::eax, depth());
}

// The same as LOAD_FAST in 3.11: the cell object itself, for MAKE_FUNCTION's closure tuple.
void Compiler::visit_LOAD_CLOSURE(const Instr &ins)
{
    local_index(code(), ins);
    visit_LOAD_FAST(ins);
}

void Compiler::visit_LOAD_CLASSDEREF(const Instr &ins)
{
    int index = local_index(code(), ins);
    set_prev_instr();
    em().call<&rtn::pyj_load_classderef>(Lea(Emitter::frame_address()), index);
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

// [orig, excs] -> [exception to raise, or None]
void Compiler::visit_PREP_RERAISE_STAR(const Instr &)
{
    auto &a = as();
    set_prev_instr();
    em().call<&rt::pyj_rt_prep_reraise_star>(top(1), top(0));
    a.mov(x86::r14, x86::rax);
    release_top(2);
    jump_if_error_zero(x86::r14, depth());
    push(x86::r14);
}

void Compiler::visit_ASYNC_GEN_WRAP(const Instr &)
{
    auto &a = as();
    set_prev_instr();
    em().call<&rt::pyj_rt_async_gen_wrap>(top());
    jump_if_error_zero(x86::rax, depth());
    a.mov(x86::rdi, top());
    a.mov(top(), x86::rax);
    em().decref(x86::rdi);
}

void Compiler::visit_SEND(const Instr &ins)
{
    auto &a = as();
    Label next = a.newLabel();
    set_prev_instr();
    em().call<&rt::pyj_rt_send>(Lea(em().stack(depth())), Emitter::tstate);
    a.test(x86::eax, x86::eax);
    a.js(error_exit(depth() - 1));
    a.jz(next);
    drop(1);
    jump_to(ins.target);
    grow(1);
    a.bind(next);
}

}  // namespace pyjion

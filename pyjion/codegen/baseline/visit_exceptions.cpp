// Visitors: raising and handling exceptions, with statements.
// Handlers are reached through error_exit(), which follows co_exceptiontable;
// these visitors implement what runs inside them. Each calls a helper that
// works on the value stack (`sp`, one past the top) like ceval's instruction.
#include "baseline/compiler.h"

#include "codegen_api.h"
#include "front/opcodes.h"
#include "runtime/runtime.h"

namespace pyjion {

using namespace asmjit;

void Compiler::visit_PUSH_EXC_INFO(const Instr &)
{
    em().call<&rt::pyj_rt_push_exc_info>(Emitter::tstate, Lea(em().stack(depth())));
    grow(1);
}

void Compiler::visit_POP_EXCEPT(const Instr &)
{
    set_prev_instr();   // releasing the old exception may run __del__
    em().call<&rt::pyj_rt_pop_except>(Emitter::tstate, Lea(em().stack(depth())));
    drop(1);
}

void Compiler::visit_CHECK_EXC_MATCH(const Instr &)
{
    set_prev_instr();
    em().call<&rt::pyj_rt_check_exc_match>(Emitter::tstate, Lea(em().stack(depth())));
    jump_if_error_negative(x86::eax, depth() - 1);
}

void Compiler::visit_CHECK_EG_MATCH(const Instr &)
{
    set_prev_instr();
    em().call<&rt::pyj_rt_check_eg_match>(Emitter::tstate, Lea(em().stack(depth())));
    jump_if_error_negative(x86::eax, depth() - 1);
}

void Compiler::visit_RERAISE(const Instr &ins)
{
    auto &a = as();
    int depth_before = depth();
    set_prev_instr();
    em().call<&rt::pyj_rt_reraise>(Lea(Emitter::frame_address()), Lea(em().stack(depth())), ins.oparg);
    a.test(x86::eax, x86::eax);
    a.jnz(error_exit(depth_before));
    // The exception value moved into the thread state; with oparg, prev_instr
    // now holds the original raising offset (set at run time).
    a.jmp(error_exit_at(ins.index, depth_before - 1, Raise::Reraise, ins.index, ins.oparg == 0));
    drop(1);
}

void Compiler::visit_RAISE_VARARGS(const Instr &ins)
{
    auto &a = as();
    if (ins.oparg > 2) unsupported(ins);
    set_prev_instr();
    em().call<&rt::pyj_rt_raise>(Emitter::tstate, Lea(em().stack(depth())), ins.oparg);
    drop(ins.oparg);
    a.test(x86::eax, x86::eax);
    a.jnz(error_exit(depth(), Raise::Reraise));
    a.jmp(error_exit(depth()));
}

void Compiler::visit_WITH_EXCEPT_START(const Instr &)
{
    set_prev_instr();
    em().call<&rt::pyj_rt_with_except_start>(Lea(em().stack(depth())));
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

void Compiler::visit_BEFORE_WITH(const Instr &)
{
    set_prev_instr();
    em().call<&rt::pyj_rt_before_with>(Emitter::tstate, Lea(em().stack(depth())));
    jump_if_error_negative(x86::eax, depth());
    grow(1);
}


}  // namespace pyjion

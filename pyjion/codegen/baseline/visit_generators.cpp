// Visitors: generators, coroutines and async generators.
// The call that creates a generator runs in the interpreter (up to
// RETURN_GENERATOR); compiled code takes over at every resume, dispatching on
// prev_instr (Compiler::emit_resume_dispatch), so interpreter and machine code
// can hand a generator frame back and forth: all its state lives in the frame.
#include "baseline/compiler.h"

#include "codegen_api.h"
#include "front/opcodes.h"
#include "runtime/runtime.h"
#include "runtime/helpers.h"
#include "machine/frame_emit.h"

namespace pyjion {

using namespace asmjit;

// Never executed by machine code: it marks the first resume point.
void Compiler::visit_RETURN_GENERATOR(const Instr &)
{
    as().ud2();
    grow(1);   // resuming pushes the sent value
}

// The frame keeps its values; its instruction pointer names the resume point
// (3.11: this instruction; 3.13: the next one, as the interpreter leaves it).
void Compiler::visit_YIELD_VALUE(const Instr &ins)
{
    auto &a = as();
    pop_to(x86::r14);
    a.mov(Emitter::frame_d(layout::kFrameStackTop), code()->co_nlocalsplus + depth());
    em().set_prev_instr(ins.index + 1 - layout::kResumeUnitBias);
    frame_emit::suspend_generator(em(), ins.oparg);
    a.jmp(exit_suspend());
    grow(1);   // the resume pushes the sent value
}


void Compiler::visit_GET_YIELD_FROM_ITER(const Instr &)
{
    set_prev_instr();
    em().call<&rt::pyj_rt_get_yield_from_iter>(Lea(em().stack(depth())), code()->co_flags);
    jump_if_error_negative(x86::eax, depth() - 1);
}

void Compiler::visit_GET_AWAITABLE(const Instr &ins)
{
    set_prev_instr();
    em().call<&rt::pyj_rt_get_awaitable>(Lea(em().stack(depth())), ins.oparg);
    jump_if_error_negative(x86::eax, depth() - 1);
}

void Compiler::visit_GET_AITER(const Instr &)
{
    set_prev_instr();
    em().call<&rt::pyj_rt_get_aiter>(Lea(em().stack(depth())));
    jump_if_error_negative(x86::eax, depth() - 1);
}

void Compiler::visit_GET_ANEXT(const Instr &)
{
    set_prev_instr();
    em().call<&rt::pyj_rt_get_anext>(Lea(em().stack(depth())));
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

void Compiler::visit_END_ASYNC_FOR(const Instr &ins)
{
    auto &a = as();
    set_prev_instr();
    em().call<&rt::pyj_rt_end_async_for>(Lea(em().stack(depth())));
    a.test(x86::eax, x86::eax);
    a.jnz(error_exit(depth() - 1, Raise::Reraise));
    drop(2);
}

void Compiler::visit_BEFORE_ASYNC_WITH(const Instr &)
{
    set_prev_instr();
    em().call<&rt::pyj_rt_before_async_with>(Lea(em().stack(depth())));
    jump_if_error_negative(x86::eax, depth());
    grow(1);
}


}  // namespace pyjion

// CPython 3.11's frame bookkeeping in machine code (machine/frame_emit.h).
#include "machine/frame_emit.h"

#include "cpython/interp_state.h"
#include "runtime/helpers.h"

namespace pyjion::frame_emit {

using namespace asmjit;

namespace {
const char kNoWhere[] = "";   // _Py_CheckRecursiveCall's "where" suffix, as the interpreter passes it
}  // namespace

const bool kExitClearsFrame = false;   // _PyEval_Vector and gen_send_ex2 clear it

const bool kHandoffEmitsLine = false;   // the interpreter's maybe_call_line_trace reads prev_instr

void handoff_line_event(Emitter &, int) {}

void link(Emitter &e, const x86::Gp &frame_address)
{
    auto &a = e.as();
    a.mov(x86::rcx, x86::qword_ptr(Emitter::tstate, layout::kTstateCFrame));
    a.mov(x86::rax, x86::qword_ptr(x86::rcx, layout::kCFrameCurrentFrame));
    a.mov(Emitter::frame_q(layout::kFramePrevious), x86::rax);
    a.mov(x86::qword_ptr(x86::rcx, layout::kCFrameCurrentFrame), frame_address);
    a.mov(Emitter::frame_b(layout::kFrameIsEntry), 1);
}

void unlink(Emitter &e)
{
    auto &a = e.as();
    a.mov(x86::rcx, x86::qword_ptr(Emitter::tstate, layout::kTstateCFrame));
    a.mov(x86::rax, Emitter::frame_q(layout::kFramePrevious));
    a.mov(x86::qword_ptr(x86::rcx, layout::kCFrameCurrentFrame), x86::rax);
}

// if (ts->recursion_remaining-- <= 0 && _Py_CheckRecursiveCall(ts, "")) fail;
// on failure _Py_CheckRecursiveCall has already undone the decrement.
void enter_recursion(Emitter &e, const Label &failed)
{
    auto &a = e.as();
    Label resume = a.newLabel();
    a.mov(x86::eax, x86::dword_ptr(Emitter::tstate, layout::kTstateRecursionRemaining));
    a.lea(x86::ecx, x86::ptr(x86::rax, -1));
    a.mov(x86::dword_ptr(Emitter::tstate, layout::kTstateRecursionRemaining), x86::ecx);
    a.test(x86::eax, x86::eax);
    Label slow = e.cold([resume, failed](Emitter &e) {
        auto &a = e.as();
        e.call<&_Py_CheckRecursiveCall>(Emitter::tstate, kNoWhere);
        a.test(x86::eax, x86::eax);
        a.jz(resume);
        a.jmp(failed);
    });
    a.jle(slow);
    a.bind(resume);
}

void leave_recursion(Emitter &e)
{
    e.as().inc(x86::dword_ptr(Emitter::tstate, layout::kTstateRecursionRemaining));
}

void tracing_check(Emitter &e, PyCodeObject *, const Label &handoff, bool)
{
    auto &a = e.as();
    a.mov(x86::rax, x86::qword_ptr(Emitter::tstate, layout::kTstateCFrame));
    a.cmp(x86::byte_ptr(x86::rax, layout::kCFrameUseTracing), 0);
    a.jne(handoff);
}

void eval_breaker_check(Emitter &e, const Label &pending)
{
    auto &a = e.as();
    e.load_address(x86::rax, pyj_eval_breaker_address());
    a.cmp(x86::dword_ptr(x86::rax), 0);
    a.jne(pending);
}

void clear_and_pop(Emitter &) {}

// gen_send_ex2 gives the exception state back when the frame returns.
void suspend_generator(Emitter &e, int)
{
    e.as().mov(Emitter::frame_b(layout::kGenFrameStateFromFrame), layout::kFrameSuspended);
}

}  // namespace pyjion::frame_emit

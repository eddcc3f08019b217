// CPython 3.13's frame bookkeeping in machine code (machine/frame_emit.h).
// The machine code is entered as the frame evaluator is (_PyEval_Vector
// pushes the frame, the evaluator links, runs, and clears and pops it), so
// it honours _PyEval_EvalFrameDefault's contract.
#include "machine/frame_emit.h"

#include "runtime/helpers.h"
#include "py313/frame_runtime.h"

namespace pyjion::frame_emit {

using namespace asmjit;

const bool kExitClearsFrame = true;

void link(Emitter &e, const x86::Gp &frame_address)
{
    auto &a = e.as();
    a.mov(x86::rax, x86::qword_ptr(Emitter::tstate, layout::kTstateCurrentFrame));
    a.mov(Emitter::frame_q(layout::kFramePrevious), x86::rax);
    a.mov(x86::qword_ptr(Emitter::tstate, layout::kTstateCurrentFrame), frame_address);
}

void unlink(Emitter &e)
{
    auto &a = e.as();
    a.mov(x86::rax, Emitter::frame_q(layout::kFramePrevious));
    a.mov(x86::qword_ptr(Emitter::tstate, layout::kTstateCurrentFrame), x86::rax);
}

// The entry counts kCStackUnits of C stack (the compiled code's own C frame)
// and one Python frame; either below zero goes to the slow check.
void enter_recursion(Emitter &e, const Label &failed)
{
    auto &a = e.as();
    Label resume = a.newLabel();
    Label slow = e.cold([resume, failed](Emitter &e) {
        auto &a = e.as();
        e.call<&py313::recursion_overflow>(Emitter::tstate);
        a.test(x86::eax, x86::eax);
        a.jz(resume);
        a.jmp(failed);
    });
    a.sub(x86::dword_ptr(Emitter::tstate, layout::kTstateCRecursionRemaining), py313::kCStackUnits);
    a.dec(x86::dword_ptr(Emitter::tstate, layout::kTstatePyRecursionRemaining));
    a.mov(x86::eax, x86::dword_ptr(Emitter::tstate, layout::kTstateCRecursionRemaining));
    a.or_(x86::eax, x86::dword_ptr(Emitter::tstate, layout::kTstatePyRecursionRemaining));
    a.js(slow);   // either count below zero
    a.bind(resume);
}

void leave_recursion(Emitter &e)
{
    auto &a = e.as();
    a.inc(x86::dword_ptr(Emitter::tstate, layout::kTstatePyRecursionRemaining));
    a.add(x86::dword_ptr(Emitter::tstate, layout::kTstateCRecursionRemaining), py313::kCStackUnits);
}

// layout::tracing_active in machine code: the instrumentation version (a
// stale one is brought up to date out of line where the interpreter's
// instrumenting would change nothing else: py313::instrumentation_caught_up),
// then whether the code is instrumented for any event (its active monitors,
// a few bytes, compared out of line in the widest pieces that fit, where it
// has monitoring data at all). At an instruction
// boundary: the frame holds everything, so the stale path may call C.
void tracing_check(Emitter &e, PyCodeObject *code, const Label &handoff)
{
    auto &a = e.as();
    Label quiet = a.newLabel(), current = a.newLabel();
    Label stale = e.cold([code, handoff, current](Emitter &e) {
        auto &a = e.as();
        e.call<&py313::instrumentation_caught_up>(Emitter::tstate, code);
        a.test(x86::al, x86::al);
        a.jz(handoff);
        e.load_address(x86::rcx, code);
        a.jmp(current);
    });
    a.mov(x86::rax, x86::qword_ptr(Emitter::tstate, layout::kTstateEvalBreaker));
    a.and_(x86::rax, ~static_cast<int32_t>(layout::kEvalEventsMask));
    e.load_address(x86::rcx, code);
    a.cmp(x86::rax, x86::qword_ptr(x86::rcx, layout::kCodeInstrumentationVersion));
    a.jne(stale);
    a.bind(current);
    a.mov(x86::rax, x86::qword_ptr(x86::rcx, layout::kCodeMonitoring));
    a.test(x86::rax, x86::rax);
    // Code that was never monitored has no monitoring data: the common case
    // ends here; the comparison of the active monitors is out of line.
    Label monitored = e.cold([handoff, quiet](Emitter &e) {
        auto &a = e.as();
        int32_t at = layout::kMonitoringActive, left = layout::kMonitoringActiveSize;
        while (left > 0) {
            int32_t piece = left >= 8 ? 8 : left >= 4 ? 4 : left >= 2 ? 2 : 1;
            x86::Mem bytes = x86::ptr(x86::rax, at, static_cast<uint32_t>(piece));
            a.cmp(bytes, 0);
            a.jne(handoff);
            at += piece;
            left -= piece;
        }
        a.jmp(quiet);
    });
    a.jnz(monitored);
    a.bind(quiet);
}

const bool kHandoffEmitsLine = true;

void handoff_line_event(Emitter &e, int prev_unit)
{
    e.call<&py313::handoff_line_event>(Emitter::tstate, Lea(Emitter::frame_address()), prev_unit);
}

void eval_breaker_check(Emitter &e, const Label &pending)
{
    auto &a = e.as();
    a.test(x86::byte_ptr(Emitter::tstate, layout::kTstateEvalBreaker), static_cast<int>(layout::kEvalEventsMask));
    a.jnz(pending);
}

void clear_and_pop(Emitter &e)
{
    e.call<&_PyEval_FrameClearAndPop>(Emitter::tstate, Lea(Emitter::frame_address()));
}

void suspend_generator(Emitter &e, int oparg)
{
    e.call<&py313::suspend_generator>(Emitter::tstate, Lea(Emitter::frame_address()), oparg);
}

}  // namespace pyjion::frame_emit

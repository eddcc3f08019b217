// CPython 3.13's frame bookkeeping in machine code (machine/frame_emit.h).
// The machine code is entered as the frame evaluator is (_PyEval_Vector
// pushes the frame, the evaluator links, runs, and clears and pops it), so
// it honours _PyEval_EvalFrameDefault's contract.
#include "machine/frame_emit.h"

#include "runtime/helpers.h"
#include "py313/frame_runtime.h"
#include "machine/process_stub.h"

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

namespace {

// layout::tracing_active in full: the instrumentation version (a stale one
// is brought up to date out of line where the interpreter's instrumenting
// would change nothing else: py313::instrumentation_caught_up), then whether
// the code is instrumented for any event (its active monitors, a few bytes,
// compared in the widest pieces that fit, where it has monitoring data at
// all). At an instruction boundary: the frame holds everything, so the stale
// path may call C. Falls through to its end where tracing is off.
void full_tracing_check(Emitter &e, PyCodeObject *code, const Label &handoff)
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

// The common case of that check, shared by every site of every function
// (one copy stays in the instruction cache; inline it was ~50 bytes at each
// site, after every call and at every jump target, code that fills the
// cache of long functions): ZF set where the frame's code is current with
// the thread's instrumentation version and has no monitoring data, so
// nothing can be traced. Runs in the caller's context (rbx the frame, r12
// the thread state); clobbers rax and rcx, as the inline check does.
void emit_tracing_stub(x86::Assembler &a)
{
    Label done = a.newLabel();
    a.mov(x86::rax, x86::qword_ptr(Emitter::tstate, layout::kTstateEvalBreaker));
    a.and_(x86::rax, ~static_cast<int32_t>(layout::kEvalEventsMask));
    a.mov(x86::rcx, Emitter::frame_q(layout::kFrameCode));
    a.cmp(x86::rax, x86::qword_ptr(x86::rcx, layout::kCodeInstrumentationVersion));
    a.jne(done);
    a.cmp(x86::qword_ptr(x86::rcx, layout::kCodeMonitoring), 0);
    a.bind(done);
    a.ret();
}

const void *tracing_stub()
{
    static const void *stub = make_process_stub("pyjion::tracing_check_stub", emit_tracing_stub);
    return stub;
}

}  // namespace

// The machine code's own frame runs `code` (its f_executable, which the
// stub reads). Outside loops the site calls the shared stub (code that runs
// once per call is fetched cold: its bytes cost more than a call and a
// return); where the stub finds anything (rare: a tool was turned on or off
// somewhere, or the code was ever monitored) the full check runs out of
// line. Inside a loop, which stays in the cache, the check is inline.
void tracing_check(Emitter &e, PyCodeObject *code, const Label &handoff, bool in_loop)
{
    auto &a = e.as();
    const void *stub = in_loop ? nullptr : tracing_stub();
    if (stub == nullptr) {
        full_tracing_check(e, code, handoff);
        return;
    }
    Label quiet = a.newLabel();
    Label full = e.cold([code, handoff, quiet](Emitter &e) {
        full_tracing_check(e, code, handoff);
        e.as().jmp(quiet);
    });
    e.call(stub, "frame_emit::tracing_stub");
    a.jne(full);
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

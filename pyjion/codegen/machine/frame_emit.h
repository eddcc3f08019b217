// Machine code for what every compiled frame does with the thread state, in
// version-neutral terms: link and unlink the frame as the thread's current
// frame, count its recursion level, check for a tracer or monitoring, check
// the eval breaker, and (where the frame evaluator owns that) clear and pop
// the frame. Implemented per CPython version in pyNNN/frame_emit.cpp.
//
// All of them run with Emitter's fixed registers (frame, tstate) set and may
// clobber rax, rcx and rdx (calls: every caller-saved register).
#pragma once

#include <asmjit/x86.h>

#include "machine/emitter.h"

namespace pyjion::frame_emit {

// frame->previous = the thread's current frame; the current frame = the
// frame at `frame_address` (its real address, not Emitter::frame).
void link(Emitter &e, const x86::Gp &frame_address);

// The thread's current frame = frame->previous.
void unlink(Emitter &e);

// Counts this frame's recursion level as the interpreter does on entering a
// frame; over the limit, RecursionError is set, the level is not held, and
// control goes to `failed`.
void enter_recursion(Emitter &e, const asmjit::Label &failed);

// Gives the level back (every exit of a frame that holds it).
void leave_recursion(Emitter &e);

// Jumps to `handoff` when the code must run in the interpreter because a
// tracer, profiler or sys.monitoring wants to see it (3.11: use_tracing;
// 3.13: the instrumentation version of `code` is not the thread's).
// `in_loop`: the check runs on every turn of a loop, so it stays inline
// where a version shares the check's common case among sites elsewhere.
void tracing_check(Emitter &e, PyCodeObject *code, const asmjit::Label &handoff, bool in_loop);

// A hand-off to the interpreter at an instruction that may carry a line
// event (a line start or a jump target), with the frame's position and
// stack top stored and the frame still linked; `prev_unit` is the
// instruction the machine code ran last. 3.13's interpreter takes the
// frame's position for the previous instruction, so it would not emit that
// line event: the machine code does (eax non-zero: an error, the
// instruction raises it). 3.11's interpreter reads the previous instruction
// from prev_instr: kHandoffEmitsLine is false, nothing is emitted.
extern const bool kHandoffEmitsLine;
void handoff_line_event(Emitter &e, int prev_unit);

// Jumps to `pending` when the eval breaker asks for attention (signals,
// pending calls, a GIL drop request, an async exception...).
void eval_breaker_check(Emitter &e, const asmjit::Label &pending);

// Whether a frame's machine code clears and pops its frame when it returns
// (as the frame evaluator must on 3.12+), or leaves that to its caller (3.11).
extern const bool kExitClearsFrame;

// Clears the (unlinked) frame and pops it off the data stack, or for a
// generator's frame marks it cleared: what the interpreter does at a return
// (nothing on versions whose caller does it).
void clear_and_pop(Emitter &e);

// YIELD_VALUE's hand-back of a generator frame (after its stack top and
// position are stored): the generator's state set to suspended with
// `oparg`, the exception state given back to the caller, where the version
// does that in the frame rather than in gen_send.
void suspend_generator(Emitter &e, int oparg);

}  // namespace pyjion::frame_emit

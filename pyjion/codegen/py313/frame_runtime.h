// C helpers behind CPython 3.13's frame bookkeeping (py313/frame_emit.cpp)
// and the runtime's frame handling there.
#pragma once

#include "cpython/frame_layout.h"

// Exported (PyAPI, internal/pycore_ceval.h, which C++ cannot include): what
// the interpreter does to a frame that returns or raises out: unlinked
// already, its references released (a frame object takes its data over) and
// popped off the data stack; a generator's is marked cleared and its
// exception state given back.
extern "C" PyAPI_FUNC(void) _PyEval_FrameClearAndPop(PyThreadState *tstate, _PyInterpreterFrame *frame);

namespace pyjion::py313 {

// C stack units a compiled frame's entry counts. The interpreter's C entry
// counts 2 (PY_EVAL_C_STACK_UNITS, private to ceval.c: its C frame is big,
// and Py_C_RECURSION_LIMIT's 10,000 units are sized for an 8 MB stack);
// a call between compiled frames uses about 180 bytes of C stack (machine
// code, rt313::call, direct::call_stealing), so one unit each lets compiled
// recursion go twice as deep (about 10,000 frames, as stock's inlined calls
// do under a raised limit) and still well within the stack. The hook's C
// stack guard (cstack_guard.h) stays the backstop for small thread stacks.
constexpr int kCStackUnits = 1;

// The slow path of a frame's entry count (py313/frame_emit.cpp): both
// counters already taken. 0: go on (within the headroom an error handler
// gets); -1: RecursionError set and both counters given back.
int recursion_overflow(PyThreadState *ts);

// A frame handed to the interpreter at the instruction its instr_ptr names
// (linked, its stack top stored), when `prev_unit` is the instruction the
// machine code ran last: the interpreter takes the frame's own position for
// the previous instruction, so its INSTRUMENTED_LINE there would never see a
// new line. Emits that line event as _Py_call_instrumentation_line would
// (Python/instrumentation.c: when the instruction is instrumented for lines,
// and is on another line than `prev_unit`, or follows RESUME), through
// sys.monitoring's exported line event, and takes the line event off the
// instruction for tools that answer DISABLE, as the interpreter does. 0, or
// -1 with the tool's exception set (the instruction raises it).
int handoff_line_event(PyThreadState *ts, _PyInterpreterFrame *frame, int prev_unit);

// YIELD_VALUE: the generator owning `frame` suspended (oparg 1: inside a
// yield from / await), the exception state handed back to the caller.
void suspend_generator(PyThreadState *ts, _PyInterpreterFrame *frame, int oparg);

}  // namespace pyjion::py313

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

// C stack units a compiled frame's entry counts. The interpreter counts two
// (PY_EVAL_C_STACK_UNITS, private to ceval.c) for its own C frame, about 560
// bytes with the call into it, but none for the Python-to-Python calls it
// inlines; a compiled frame is a C frame for every call, of about 250-300
// bytes (measured with VmStk over 2,000-deep recursion): one unit, or code
// recursing 5,000 frames deep, which stock 3.13 runs (test_functools'
// test_lru_recursion), would exhaust the 10,000 units.
constexpr int kCStackUnits = 1;

// The slow path of a frame's entry count (py313/frame_emit.cpp): both
// counters already taken. 0: go on (within the headroom an error handler
// gets); -1: RecursionError set and both counters given back.
int recursion_overflow(PyThreadState *ts);

// YIELD_VALUE: the generator owning `frame` suspended (oparg 1: inside a
// yield from / await), the exception state handed back to the caller.
void suspend_generator(PyThreadState *ts, _PyInterpreterFrame *frame, int oparg);

}  // namespace pyjion::py313

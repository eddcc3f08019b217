// Python-to-Python calls from machine code without _PyFunction_Vectorcall and
// _PyEval_Vector: the callee's frame is pushed on the thread's data stack and
// handed straight to the frame evaluator (the pyjion hook, which runs the
// callee's machine code). CPython 3.11 does not export the functions that
// push, clear and pop frames, so this file does their work itself, following
// Python/ceval.c and Python/frame.c of 3.11. 3.11-specific: port with
// frame_layout.h.
#pragma once

#include "../codegen_api.h"
#include "frame_layout.h"

namespace pyjion::direct {

// Kept up to date by the hook (pyjion/_eval.pyx) through the capsule API.
extern PyjionHookState hook_state;

// Calls `func` (exactly a PyFunctionObject) with the `nargs` positional
// arguments at args[0..nargs), when the call can be made directly: plain
// positional parameters (defaults allowed), no *args/**kwargs/keyword-only
// parameters, not a generator or coroutine, room left in the data-stack chunk.
// On a direct call, STEALS the reference to `func` and to every argument and
// returns the result (NULL with an exception set on error) with *done = true.
// Otherwise touches nothing and sets *done = false: the caller makes the
// generic call.
PyObject *try_call(PyThreadState *ts, PyObject *func, PyObject *const *args, Py_ssize_t nargs, bool *done);

}  // namespace pyjion::direct

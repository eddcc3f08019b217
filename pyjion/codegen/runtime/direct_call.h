// Python-to-Python calls from machine code without _PyFunction_Vectorcall and
// _PyEval_Vector: the callee's frame is pushed on the thread's data stack and
// handed straight to the frame evaluator (the pyjion hook, which runs the
// callee's machine code). CPython 3.11 does not export the functions that
// push, clear and pop frames, so py311/direct_call.cpp does their work
// itself, following Python/ceval.c and Python/frame.c of 3.11. On 3.13
// (py313/direct_call.cpp) calls take the generic path for now, and
// vectorcall() is the compiled functions' entry (_PyEval_Vector's work).
#pragma once

#include "codegen_api.h"
#include "cpython/frame_layout.h"

#include <asmjit/x86.h>
#include <cstdint>

namespace pyjion::direct {

// Code flags that keep a call off the shared stub (which binds exact
// positional arguments only and enters machine code itself): parameters
// that arg_binding.h fills, and functions whose call creates a generator.
constexpr int kTakesVarArgs = CO_VARARGS | CO_VARKEYWORDS;
constexpr int kMakesGenerator = CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE;

// Kept up to date by the hook (pyjion/_eval.pyx) through the capsule API.
extern PyjionHookState hook_state;

// The hook is the interpreter's frame evaluator (see PyjionHookState).
bool hook_is_evaluator(PyThreadState *ts);

// Runs the machine code of a compiled callee's record for its pushed
// `frame` (a call or a generator's resume), counted, and timed while the
// profiler runs (by the hook's run_timed, with no call back through the
// hook's frame evaluator). A tail call either way.
[[gnu::always_inline]] inline PyObject *enter_compiled(PyjionCodeView *rec, PyThreadState *ts,
                                                       _PyInterpreterFrame *frame)
{
    rec->calls++;
    if (hook_state.profiling) return hook_state.run_timed(rec, ts, frame);
    return rec->entry(ts, frame, 0);
}

// Releases what a finished frame owns (3.11's _PyFrame_Clear, frame objects
// included); does not pop it.
void clear_frame(PyThreadState *ts, _PyInterpreterFrame *frame);

// FOR_ITER on an exact generator: gen_iternext's result (the next value, or
// NULL with or without an exception). A generator whose code is compiled is
// resumed by entering its machine code here, doing what gen_send_ex2 does
// around _PyEval_EvalFrame; any other goes through tp_iternext.
PyObject *gen_next(PyObject *gen, PyThreadState *ts);

// SEND (yield from, await): PyIter_Send's result, status and *presult. An
// exact generator or coroutine whose code is compiled is resumed here, as
// gen_next does; any other receiver goes through PyIter_Send.
PySendResult gen_send(PyThreadState *ts, PyObject *receiver, PyObject *value, PyObject **presult);

// What try_call did: called directly, or left the call to the caller's
// generic path because it cannot be made directly, or because its arguments
// do not bind (the generic call raises CPython's TypeError; then
// release_unbound_call in arg_binding.h releases the references).
enum class CallPath { kCalled, kGeneric, kUnbound };

// Calls `func` (exactly a PyFunctionObject) with the `nargs` positional
// arguments at args[0..nargs) and, if `kwnames` is not NULL, one keyword
// argument per name after them, when the call can be made directly: a plain
// function (vectorcall not replaced, no class body), arguments that bind
// (arg_binding.h: *args, **kwargs, keyword-only parameters and defaults as
// 3.11 binds them), room left in the data-stack chunk (a generator or
// coroutine function's frame is pushed too, and the generator made from it).
// On a direct call (*path = kCalled), STEALS the reference to `func` and to
// every argument (the callee's frame takes them, as the interpreter's CALL
// does) and returns the result (NULL with an exception set on error).
// Otherwise touches nothing and returns NULL with *path saying why.
PyObject *try_call(PyThreadState *ts, PyObject *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                   CallPath *path);

// Calls the class `cls` (its metaclass exactly `type`) with the `nargs`
// positional arguments at args[0..nargs) when that call only allocates the
// instance (object.__new__) and runs a Python __init__: the instance is made
// here and __init__ called through try_call, without type_call, slot_tp_init
// and the argument tuple (__init__'s frame takes new references, as the
// tuple would), counting the recursion level _PyObject_MakeTpCall would.
// On such a call STEALS `cls` and the arguments and returns the
// instance (NULL with an exception set on error) with *done = true;
// otherwise touches nothing and sets *done = false.
PyObject *try_construct(PyThreadState *ts, PyObject *cls, PyObject *const *args, Py_ssize_t nargs, bool *done);

// A Python function's vectorcall (PyjionCodegenAPI.vectorcall): the call
// _PyFunction_Vectorcall makes, through try_call when the callee's machine
// code can be entered directly (compiled, the hook the frame evaluator, no
// tracer: the frame pushed here, the machine code entered without
// _PyEval_Vector and the hook, timed while profiling); for an interpreted
// callee with positional arguments that bind without arg_binding.h while the hook is the evaluator,
// the frame is pushed here and handed to the hook (the hook's C entry gives
// this vectorcall to such functions); otherwise _PyFunction_Vectorcall itself.
PyObject *vectorcall(PyObject *func, PyObject *const *args, size_t nargsf, PyObject *kwnames);

#if PY_VERSION_HEX >= 0x030D0000
// The interpreter's CALL of a plain Python function (3.13): `func` (exactly
// a PyFunctionObject whose vectorcall is CPython's) called with the `nargs`
// positional arguments at args[0..nargs) and one keyword argument per name
// of `kwnames` (not NULL) after them. STEALS the reference to `func` and to
// every argument, which the callee's frame takes over (so an argument dies
// where the callee drops it, as on stock), binding them as the interpreter
// does (its TypeError when they do not bind; the references released then
// too); the frame runs in the machine code or through the frame evaluator,
// which clears and pops it. Not `kwnames`, which stays the caller's.
// hook_only: the machine code is entered only while the hook is the frame
// evaluator (a call from machine code after pyjion.disable() is stock's).
// drop_after_push (stolen, may be NULL) is released once the frame holds
// the arguments, before it runs (CALL_FUNCTION_EX's argument tuple).
PyObject *call_stealing(PyThreadState *ts, PyObject *func, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames, bool hook_only, PyObject *drop_after_push);
#endif

// Calls that vectorcall made itself so far, compiled and interpreted callees
// alike (a test reads it).
uint64_t vectorcall_calls();

// CPython's own vectorcall of Python functions (_PyFunction_Vectorcall; not
// exported by 3.13, which gives it to every new function: read off one).
#if PY_VERSION_HEX >= 0x030D0000
vectorcallfunc function_vectorcall();
// The same as a variable, for code that must not call (nullptr until
// function_vectorcall() first ran, which the module's set-up does).
extern vectorcallfunc cpython_vectorcall;
// Where PyInterpreterState keeps its eval_frame (opaque to C++).
extern const Py_ssize_t interp_eval_frame_offset;
// cstack_floor_tls_offset(), as a variable for code that must not call.
extern const int32_t cstack_floor_offset;
#else
inline vectorcallfunc function_vectorcall() { return _PyFunction_Vectorcall; }
#endif

// A function called as CPython calls a plain one: its vectorcall is
// _PyFunction_Vectorcall or the one above.
inline bool plain_vectorcall(vectorcallfunc vc) { return vc == function_vectorcall() || vc == vectorcall; }

// ---- the direct-call stub (direct_call_emit.cpp) and its runtime pieces ----

// Releases a directly called frame whose machine code has returned (3.11's
// _PyFrame_Clear, frame objects included) and pops it off the data stack.
void finish_frame(PyThreadState *ts, _PyInterpreterFrame *frame);

// The thread-pointer-relative offset of this thread's C stack floor (the
// C-stack guard's limit; 0 until measured), for a `fs:` load in machine code.
int32_t cstack_floor_tls_offset();

}  // namespace pyjion::direct

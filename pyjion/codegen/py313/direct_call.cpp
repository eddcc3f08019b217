// Calls of Python functions from machine code on CPython 3.13 (see
// runtime/direct_call.h). Machine code does not push callee frames itself
// here yet: every call takes its site's generic path (PyObject_Vectorcall),
// which reaches a compiled function through its vectorcall, vectorcall()
// below. That is _PyEval_Vector's work with exported functions: the frame
// pushed and bound by _PyEvalFramePushAndInit, then run by the machine code
// or by the frame evaluator, either of which clears and pops it.
#include "runtime/direct_call.h"

#include "cpython/interp_state.h"
#include "cstack_guard.h"
#include "py313/exact_call.h"
#include "py313/frame_runtime.h"

namespace pyjion::direct {

PyjionHookState hook_state = {-1, nullptr, 0, nullptr, 0};
vectorcallfunc cpython_vectorcall = nullptr;

namespace {

uint64_t g_vectorcall_calls = 0;

}  // namespace

const Py_ssize_t interp_eval_frame_offset = pyj_interp_eval_frame_offset();

bool hook_is_evaluator(PyThreadState *ts) { return hook_evaluates(ts); }

vectorcallfunc function_vectorcall()
{
    // Every function starts with CPython's own vectorcall: read it off one.
    static vectorcallfunc own = [] {
        PyObject *globals = PyDict_New();
        PyObject *code = globals ? reinterpret_cast<PyObject *>(PyCode_NewEmpty("pyjion", "f", 0)) : nullptr;
        PyObject *func = code ? PyFunction_New(code, globals) : nullptr;
        vectorcallfunc vc = func ? reinterpret_cast<PyFunctionObject *>(func)->vectorcall : nullptr;
        Py_XDECREF(func);
        Py_XDECREF(code);
        Py_XDECREF(globals);
        if (vc == nullptr) PyErr_Clear();
        return vc;
    }();
    cpython_vectorcall = own;
    return own;
}

// 3.13's frame evaluator clears and pops its frame: nothing is left to the
// caller. (Not called on 3.13: the evaluator's exit does it.)
void clear_frame(PyThreadState *ts, _PyInterpreterFrame *frame) { _PyEval_FrameClearAndPop(ts, frame); }

void finish_frame(PyThreadState *ts, _PyInterpreterFrame *frame) { _PyEval_FrameClearAndPop(ts, frame); }

PyObject *gen_next(PyObject *gen, PyThreadState *) { return Py_TYPE(gen)->tp_iternext(gen); }

PySendResult gen_send(PyThreadState *, PyObject *receiver, PyObject *value, PyObject **presult)
{
    return PyIter_Send(receiver, value, presult);
}

PyObject *try_call(PyThreadState *, PyObject *, PyObject *const *, Py_ssize_t, PyObject *, CallPath *path)
{
    *path = CallPath::kGeneric;
    return nullptr;
}

PyObject *try_construct(PyThreadState *, PyObject *, PyObject *const *, Py_ssize_t, bool *done)
{
    *done = false;
    return nullptr;
}

uint64_t vectorcall_calls() { return g_vectorcall_calls; }

// _PyEval_Vector with the machine code as the evaluator where the code is
// compiled: the frame takes new references to the function and every
// argument (_PyEvalFramePushAndInit consumes them, binding defaults,
// keywords, *args and **kwargs as the interpreter does, and raising its
// TypeError), then runs; whoever runs it clears and pops it.
PyObject *call_stealing(PyThreadState *ts, PyObject *func, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                        bool hook_only, PyObject *drop_after_push)
{
    auto *fn = reinterpret_cast<PyFunctionObject *>(func);
    auto *code = reinterpret_cast<PyCodeObject *>(fn->func_code);
    if (pyj_cstack_exhausted()) {
        // Every call here nests C frames (the interpreter cannot inline a
        // call through this vectorcall): near the end of a small thread
        // stack, RecursionError rather than a crash.
        Py_ssize_t total = nargs + (kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0);
        for (Py_ssize_t i = 0; i < total; i++) Py_DECREF(args[i]);
        Py_DECREF(func);
        Py_XDECREF(drop_after_push);
        return nullptr;
    }
    // A call of a generator function makes the generator (RETURN_GENERATOR):
    // the interpreter does that; machine code takes over at its resumes.
    bool direct = !(code->co_flags & kMakesGenerator) && (!hook_only || hook_is_evaluator(ts));
    PyjionCodeView *rec = direct ? record_if_compiled(ts, code) : nullptr;
    // Code that is not a function body proper (no CO_OPTIMIZED) runs with
    // the globals as its locals, as _PyFunction_Vectorcall gives them.
    _PyInterpreterFrame *frame = push_positional_args(ts, fn, code, args, nargs, kwnames);
    if (frame == nullptr) {
        PyObject *locals = (code->co_flags & CO_OPTIMIZED) ? nullptr : Py_NewRef(fn->func_globals);
        frame = _PyEvalFramePushAndInit(ts, fn, locals, args, static_cast<size_t>(nargs), kwnames);
    }
    Py_XDECREF(drop_after_push);
    if (frame == nullptr) return nullptr;
    if (rec != nullptr) return enter_compiled(rec, ts, frame);
    return direct ? run_interpreted(ts, frame, code) : pyj_eval_frame(ts, frame);
}

PyObject *vectorcall(PyObject *func, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    PyThreadState *ts = PyThreadState_Get();
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t total = nargs + (kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0);
    Py_INCREF(func);
    for (Py_ssize_t i = 0; i < total; i++) Py_INCREF(args[i]);
    g_vectorcall_calls++;
    return call_stealing(ts, func, args, nargs, kwnames, false, nullptr);
}

int32_t cstack_floor_tls_offset()
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));   // x86-64 glibc: the thread pointer points at itself
    return static_cast<int32_t>(reinterpret_cast<uintptr_t>(&pyj_stack_floor) - tp);
}

const int32_t cstack_floor_offset = cstack_floor_tls_offset();

}  // namespace pyjion::direct

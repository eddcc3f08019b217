#include "runtime/runtime.h"
#include "runtime/cpython_api.h"

#include "runtime/direct_call.h"
#include "cpython/interp_state.h"

#include <cstdio>
#include <cstdlib>

namespace pyjion::rt {

// BINARY_OP ** and **=: the interpreter's _PyNumber_PowerNoMod is not exported.
PyObject *pyj_rt_power(PyObject *base, PyObject *exp) { return PyNumber_Power(base, exp, Py_None); }

PyObject *pyj_rt_inplace_power(PyObject *base, PyObject *exp) { return PyNumber_InPlacePower(base, exp, Py_None); }

// `s = s + t` / `s += t` on str with a STORE_FAST back into s (the local
// holds `left`): appends in place when nothing else holds the string, as the
// interpreter's BINARY_OP_INPLACE_ADD_UNICODE does, instead of copying the
// whole string every time. Returns 1 if the case does not apply (nothing
// touched); else consumes both operands and stores the result in the local
// (the STORE_FAST is done): 0, or -1 with an exception and the local empty.
int pyj_rt_concat_into_local(PyObject **local, PyObject *left, PyObject *right)
{
    if (!PyUnicode_CheckExact(left) || Py_TYPE(right) != Py_TYPE(left) || *local != left) return 1;
    Py_DECREF(left);   // the stack's reference; the local keeps the string alive
    PyUnicode_Append(local, right);
    Py_DECREF(right);
    return *local == nullptr ? -1 : 0;
}

// LOAD_FAST of a local that holds no value.
void pyj_rt_unbound_local(_PyInterpreterFrame *frame, int index)
{
    PyObject *name = PyTuple_GetItem(layout::frame_code(frame)->co_localsplusnames, index);
    if (name == nullptr) return;
    PyErr_Format(PyExc_UnboundLocalError,
                 "cannot access local variable '%U' where it is not associated with a value", name);
}

// The interpreter's eval-breaker work, from exported pieces: signal handlers
// and pending calls, a GIL hand-over another thread asked for, and an
// asynchronous exception (PyThreadState_SetAsyncExc). Returns -1 with an
// exception set, as the interpreter's eval_frame_handle_pending does.
int pyj_rt_eval_breaker(PyThreadState *ts)
{
#if PY_VERSION_HEX >= 0x030D0000
    // 3.13 exports the interpreter's own (the scheduled collection included).
    return _Py_HandlePending(ts);
#endif
    if (Py_MakePendingCalls() < 0) return -1;
    if (pyj_gil_drop_requested(ts)) {
        PyEval_SaveThread();        // drop_gil() waits for the requesting thread to take it
        PyEval_RestoreThread(ts);
    }
    if (ts->async_exc != nullptr) {
        PyObject *exc = pyj_take_async_exc(ts);
        PyErr_SetNone(exc);
        Py_DECREF(exc);
        return -1;
    }
    return 0;
}

// Hands the frame to CPython's interpreter (sys.settrace() started while it ran
// compiled), through the hook when it is loaded: the hook knows the loop-header
// traps it may have set in this code (pyjion/tiering.h).
// Before a frame is handed to the interpreter: its code's warm-up count
// (co_warmup, counting up to 0 where 3.11 quickens the code) goes on from
// the machine code's count (Compiler::kWarmupDelay), so the interpreter
// specialises where it would have had it run the frame all along; past the
// delay, at its next RESUME or backward jump (_PyCode_Quicken is not
// exported).
void pyj_rt_sync_warmup(_PyInterpreterFrame *frame, const uint64_t *count)
{
#if PY_VERSION_HEX < 0x030D0000
    PyCodeObject *code = frame->f_code;
    if (code->co_warmup == 0) return;   // quickened already
    constexpr int delay = QUICKENING_WARMUP_DELAY;   // Compiler::kWarmupDelay
    int want = *count >= delay ? -1 : static_cast<int>(*count) - delay;
    if (want > code->co_warmup) code->co_warmup = want;
#else
    // 3.13 warms each instruction up on its own counter: nothing to pass on.
    (void)frame;
    (void)count;
#endif
}

PyObject *pyj_rt_interpret(PyThreadState *ts, _PyInterpreterFrame *frame, int throwflag)
{
    PyjionEntry interpret = direct::hook_state.interpret;
    if (interpret != nullptr) return interpret(ts, frame, throwflag);
    return _PyEval_EvalFrameDefault(ts, frame, throwflag);
}

const char *debug_slot_problem(PyObject *value, model::SlotKind kind, PyCodeObject *code)
{
    using model::Kind;
    if (!kind.boxed_in_frame()) return nullptr;   // an unboxed value: the frame slot is not kept up to date
    if (value == nullptr) return kind.may_be_null() ? nullptr : "is NULL";
    if (kind.kind == Kind::Null) return "holds an object where the model has NULL";
    if (Py_REFCNT(value) <= 0) return "holds a dead object";
    if (Py_TYPE(value) == nullptr) return "holds an object without a type";
    if (kind.kind == Kind::Const) {
        if (code == nullptr) return "has a constant of no code object";
        PyObject *consts = code->co_consts;
        if (kind.const_index() >= static_cast<uint32_t>(PyTuple_GET_SIZE(consts)) ||
            PyTuple_GET_ITEM(consts, kind.const_index()) != value) {
            return "does not hold its constant";
        }
    }
    if (kind.kind == Kind::KnownType && Py_TYPE(value) != kind.type()) return "holds an object of another type";
    return nullptr;
}

// Debug builds (config(debug=True)): at a bytecode boundary, the frame must
// be as the model says: each value-stack slot below the modelled depth and
// each local holds what its kind allows (a live object; NULL only where the
// kind allows one; a Const its constant). Otherwise: what and where on
// stderr, and abort.
void pyj_rt_debug_check_frame(_PyInterpreterFrame *frame, const model::Snapshot *expected)
{
    PyCodeObject *code = layout::frame_code(frame);
    auto fail = [&](const char *what, int index, int count, const char *problem, model::SlotKind kind) {
        fprintf(stderr, "pyjion: %s %d of %d (modelled %s) %s before offset %d of %s\n", what, index, count,
                kind.describe().c_str(), problem, expected->unit * 2, PyUnicode_AsUTF8(code->co_qualname));
        abort();
    };
    int nlocals = static_cast<int>(expected->locals.size());
    if (nlocals != code->co_nlocalsplus) {
        fprintf(stderr, "pyjion: the model has %d locals, %s has %d\n", nlocals,
                PyUnicode_AsUTF8(code->co_qualname), code->co_nlocalsplus);
        abort();
    }
    PyObject **stack = frame->localsplus + nlocals;
    int depth = expected->depth();
    for (int i = 0; i < depth; i++) {
        if (const char *problem = debug_slot_problem(stack[i], expected->stack[i], code)) {
            fail("stack slot", i, depth, problem, expected->stack[i]);
        }
    }
    for (int i = 0; i < nlocals; i++) {
        if (const char *problem = debug_slot_problem(frame->localsplus[i], expected->locals[i], code)) {
            fail("local", i, nlocals, problem, expected->locals[i]);
        }
    }
}

}  // namespace pyjion::rt

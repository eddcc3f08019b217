// The two halves of a call from machine code on CPython 3.13 that binds
// nothing but defaults (positional arguments for positional parameters: the
// interpreter's CALL_PY_EXACT_ARGS, and the default-filling part of its
// general call): the callee's frame pushed as the interpreter pushes it, and the record of compiled code the frame may run
// in. Inline: rt313::call's fast path and direct::call_stealing share them,
// and they are on the way of every such call.
#pragma once

#include "code_extra.h"
#include "cstack_guard.h"
#include "py313/frame.h"
#include "runtime/direct_call.h"

namespace pyjion::direct {

// The frame of `fn` called with positional arguments only, for its
// positional parameters, where nothing needs binding but defaults (no
// keywords, *args, **kwargs or keyword-only parameters): pushed as
// _PyFrame_PushUnchecked does, the frame taking the function and the
// arguments (their references move into its first locals), the missing
// trailing parameters taking new references to their defaults as
// _PyEvalFramePushAndInit gives them. nullptr where _PyEvalFramePushAndInit
// must bind (or raise its TypeError) or grow the data stack.
[[gnu::always_inline]] inline _PyInterpreterFrame *push_positional_args(PyThreadState *ts, PyFunctionObject *fn,
                                                                        PyCodeObject *code, PyObject *const *args,
                                                                        Py_ssize_t nargs, PyObject *kwnames)
{
    constexpr int kNotSimple = CO_VARARGS | CO_VARKEYWORDS;
    Py_ssize_t argcount = code->co_argcount;
    if (kwnames != nullptr || nargs > argcount || code->co_kwonlyargcount != 0 ||
        (code->co_flags & (kNotSimple | CO_OPTIMIZED)) != CO_OPTIMIZED ||
        !_PyThreadState_HasStackSpace(ts, code->co_framesize)) {
        return nullptr;
    }
    Py_ssize_t missing = argcount - nargs;
    PyObject *defaults = fn->func_defaults;
    if (missing > 0 && (defaults == nullptr || PyTuple_GET_SIZE(defaults) < missing)) return nullptr;
    _PyInterpreterFrame *frame = _PyFrame_PushUnchecked(ts, fn, static_cast<int>(argcount));
    for (Py_ssize_t i = 0; i < nargs; i++) frame->localsplus[i] = args[i];
    if (missing > 0) {
        PyObject *const *tail = &PyTuple_GET_ITEM(defaults, PyTuple_GET_SIZE(defaults) - missing);
        for (Py_ssize_t i = 0; i < missing; i++) frame->localsplus[nargs + i] = Py_NewRef(tail[i]);
    }
    return frame;
}

// `code`'s record where a call enters its machine code: compiled, pyjion
// enabled, no profiler counting calls, no tracer or monitoring wanting the
// interpreter, and C stack left (3.13 enters compiled code through the
// function's vectorcall, so the hook need not be the evaluator). nullptr:
// the frame evaluator runs it.
[[gnu::always_inline]] inline PyjionCodeView *record_if_compiled(PyThreadState *ts, PyCodeObject *code)
{
    auto *extra = static_cast<PyjCodeExtraLayout *>(code->co_extra);
    Py_ssize_t index = hook_state.record_index;
    if (extra == nullptr || index < 0 || index >= extra->ce_size) return nullptr;
    auto *rec = static_cast<PyjionCodeView *>(extra->ce_extras[index]);
    if (rec == nullptr || rec->state != PYJION_CODE_COMPILED || rec->entry == nullptr || hook_state.profiling ||
        !hook_state.enabled || layout::tracing_active(ts, code)) {
        return nullptr;
    }
    return pyj_cstack_low() ? nullptr : rec;
}

}  // namespace pyjion::direct

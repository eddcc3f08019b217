// The two halves of a call from machine code on CPython 3.13 that binds
// nothing (the callee takes exactly the positional arguments given: the
// interpreter's CALL_PY_EXACT_ARGS): the callee's frame pushed as the
// interpreter pushes it, and the record of compiled code the frame may run
// in. Inline: rt313::call's fast path and direct::call_stealing share them,
// and they are on the way of every such call.
#pragma once

#include "code_extra.h"
#include "cstack_guard.h"
#include "py313/frame.h"
#include "runtime/direct_call.h"

namespace pyjion::direct {

// The frame of `fn` called with exactly its positional parameters and
// nothing to bind (no defaults used, keywords, *args or **kwargs), pushed as
// _PyFrame_PushUnchecked does: the frame takes the function and the
// arguments (their references move into its first locals). nullptr where
// _PyEvalFramePushAndInit must bind the arguments or grow the data stack.
[[gnu::always_inline]] inline _PyInterpreterFrame *push_exact_args(PyThreadState *ts, PyFunctionObject *fn, PyCodeObject *code,
                                            PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    constexpr int kNotSimple = CO_VARARGS | CO_VARKEYWORDS;
    if (kwnames != nullptr || code->co_argcount != nargs || code->co_kwonlyargcount != 0 ||
        (code->co_flags & (kNotSimple | CO_OPTIMIZED)) != CO_OPTIMIZED ||
        !_PyThreadState_HasStackSpace(ts, code->co_framesize)) {
        return nullptr;
    }
    _PyInterpreterFrame *frame = _PyFrame_PushUnchecked(ts, fn, static_cast<int>(nargs));
    for (Py_ssize_t i = 0; i < nargs; i++) frame->localsplus[i] = args[i];
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

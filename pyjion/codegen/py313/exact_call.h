// The two halves of a call from machine code on CPython 3.13 that binds
// nothing but defaults (positional arguments for positional parameters: the
// interpreter's CALL_PY_EXACT_ARGS, and the default-filling part of its
// general call): the callee's frame pushed as the interpreter pushes it, and the record of compiled code the frame may run
// in. Inline: rt313::call's fast path and direct::call_stealing share them,
// and they are on the way of every such call.
#pragma once

#include "code_extra.h"
#include "cpython/interp_state.h"
#include "py313/frame.h"
#include "runtime/direct_call.h"

namespace pyjion::direct {

// The frame of `fn` called with positional arguments only, for its
// positional parameters, where nothing needs binding but defaults (no
// keywords, *args, **kwargs or keyword-only parameters): pushed as
// _PyFrame_PushUnchecked pushes it, the frame taking the function and the
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
    // The frame as _PyFrame_PushUnchecked and _PyFrame_Initialize make it
    // (3.13: the function's reference taken over, its code's and builtins'
    // and globals' fields filled, no frame object, the first instruction;
    // `previous` is set when the frame is linked), except that the locals
    // past the arguments are cleared below in a loop the compiler keeps a
    // loop: the header's loop becomes a call of memset, and a call makes
    // every caller of this save registers.
    int nlocals = code->co_nlocalsplus;
    auto *frame = reinterpret_cast<_PyInterpreterFrame *>(ts->datastack_top);
    ts->datastack_top += code->co_framesize;
    frame->f_funcobj = reinterpret_cast<PyObject *>(fn);
    frame->f_executable = Py_NewRef(reinterpret_cast<PyObject *>(code));
    frame->f_builtins = fn->func_builtins;
    frame->f_globals = fn->func_globals;
    frame->f_locals = nullptr;
    frame->stacktop = nlocals;
    frame->frame_obj = nullptr;
    frame->instr_ptr = _PyCode_CODE(code);
    frame->return_offset = 0;
    frame->owner = FRAME_OWNED_BY_THREAD;
    for (Py_ssize_t i = 0; i < nargs; i++) frame->localsplus[i] = args[i];
    if (missing > 0) {
        PyObject *const *tail = &PyTuple_GET_ITEM(defaults, PyTuple_GET_SIZE(defaults) - missing);
        for (Py_ssize_t i = 0; i < missing; i++) frame->localsplus[nargs + i] = Py_NewRef(tail[i]);
    }
    for (int i = static_cast<int>(argcount); i < nlocals; i++) {
        frame->localsplus[i] = nullptr;
        __asm__ volatile("" ::: "memory");
    }
    return frame;
}

// What the hook's record of `code` tells machine code, or nullptr (no
// record; no record index yet: -1 compares above every size).
[[gnu::always_inline]] inline PyjionCodeView *code_view(PyCodeObject *code)
{
    auto *extra = static_cast<PyjCodeExtraLayout *>(code->co_extra);
    Py_ssize_t index = hook_state.record_index;
    if (extra == nullptr || static_cast<size_t>(index) >= static_cast<size_t>(extra->ce_size)) return nullptr;
    return static_cast<PyjionCodeView *>(extra->ce_extras[index]);
}

// The interpreter's frame evaluation function (NULL: its own).
[[gnu::always_inline]] inline void *frame_evaluator(PyThreadState *ts)
{
    return *reinterpret_cast<void **>(reinterpret_cast<char *>(ts->interp) + interp_eval_frame_offset);
}

// `code`'s record where its machine code may be entered as far as pyjion
// goes: compiled, pyjion enabled (3.13 enters compiled code through the
// function's vectorcall, so the hook need not be the evaluator). The
// callers add tracing and the C stack, and enter it with enter_compiled
// (runtime/direct_call.h).
[[gnu::always_inline]] inline PyjionCodeView *compiled_view(PyCodeObject *code)
{
    PyjionCodeView *rec = code_view(code);
    if (rec == nullptr || rec->state != PYJION_CODE_COMPILED || rec->entry == nullptr || !hook_state.enabled) {
        return nullptr;
    }
    return rec;
}


// compiled_view where no tracer or monitoring wants the interpreter (the
// caller has checked the C stack). nullptr: the frame evaluator runs it.
[[gnu::always_inline]] inline PyjionCodeView *record_if_compiled(PyThreadState *ts, PyCodeObject *code)
{
    PyjionCodeView *rec = compiled_view(code);
    return rec != nullptr && !layout::tracing_active(ts, code) ? rec : nullptr;
}

// A frame pushed for `code` that does not enter machine code now: the
// frame evaluator runs it. One exception: code whose machine code awaits
// its recompile (PROFILING: the optimising tier's code given up, or eager
// mode's first code) is recompiled by the hook at the next call it sees;
// without the hook installed it sees none, so every call would go on in
// the interpreter, through pyjion's vectorcall, slower than stock. Its
// frame goes to the hook's entry, which recompiles and runs it (not where
// another PEP 523 function, a debugger's, is the evaluator). A tail call.
[[gnu::always_inline]] inline PyObject *run_interpreted(PyThreadState *ts, _PyInterpreterFrame *frame,
                                                        PyCodeObject *code)
{
    void *evaluator = frame_evaluator(ts);
    PyjionCodeView *rec = code_view(code);
    if (rec != nullptr && rec->state == PYJION_CODE_PROFILING && hook_state.enabled &&
        hook_state.evaluator != nullptr && (evaluator == nullptr || evaluator == hook_state.evaluator)) {
        return reinterpret_cast<_PyFrameEvalFunction>(hook_state.evaluator)(ts, frame, 0);
    }
    return pyj_eval_frame(ts, frame);
}

// The hook is the interpreter's frame evaluator (hook_is_evaluator, inline).
[[gnu::always_inline]] inline bool hook_evaluates(PyThreadState *ts)
{
    return hook_state.evaluator != nullptr && frame_evaluator(ts) == hook_state.evaluator;
}

// record_if_compiled, with the C stack, for the call helper's fast path, which must make no
// call of its own (so it saves no registers and ends in tail calls): where
// it could only tell by calling out (this thread's C stack not measured
// yet, the code's instrumentation version behind the thread's) it says
// "not compiled", and the interpreter runs that one frame (which catches
// the code up; the first entry into machine code through call_stealing
// measures the stack).
[[gnu::always_inline]] inline PyjionCodeView *record_if_compiled_quick(PyThreadState *ts, PyCodeObject *code)
{
    PyjionCodeView *rec = compiled_view(code);
    if (rec == nullptr ||
        (ts->eval_breaker & ~static_cast<uintptr_t>(layout::kEvalEventsMask)) != code->_co_instrumentation_version ||
        layout::code_monitored(code)) {
        return nullptr;
    }
    // This thread's C stack floor as the direct-call runtime keeps it (each
    // file has its own copy of cstack_guard.h's variable; this one is
    // measured when the thread first enters machine code through
    // call_stealing). 0: not measured on this thread yet.
    uintptr_t floor;
    __asm__("movq %%fs:(%1), %0" : "=r"(floor) : "r"(static_cast<intptr_t>(cstack_floor_offset)));
    char here;
    return floor == 0 || reinterpret_cast<uintptr_t>(&here) < floor ? nullptr : rec;
}

}  // namespace pyjion::direct

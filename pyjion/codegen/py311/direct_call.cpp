// Direct Python-to-Python calls (see direct_call.h).
#include "runtime/direct_call.h"

#include "code_extra.h"
#include "cstack_guard.h"
#include "runtime/arg_binding.h"
#include "cpython/interp_state.h"
#include "front/opcodes.h"

#include <cstring>

namespace pyjion::direct {

PyjionHookState hook_state = {-1, nullptr, 0, nullptr};

namespace {

// A frame object outlives its frame (a traceback or sys._getframe() kept it):
// move the frame's data into the frame object, as 3.11's take_ownership does.
void hand_over_to_frame_object(PyFrameObject *fo, _PyInterpreterFrame *frame)
{
    // The caller's frame object becomes f_back while `previous` still links
    // the frames (PyFrame_GetBack makes it if needed; it keeps any pending
    // exception, but may fail on memory: then f_back stays NULL, as in CPython).
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    PyFrameObject *back = fo->f_back == nullptr ? PyFrame_GetBack(fo) : nullptr;
    PyErr_Restore(et, ev, tb);

    Py_ssize_t size = reinterpret_cast<char *>(&frame->localsplus[frame->stacktop]) - reinterpret_cast<char *>(frame);
    auto *owned = reinterpret_cast<_PyInterpreterFrame *>(fo->_f_frame_data);
    std::memcpy(owned, frame, size);
    fo->f_frame = owned;
    owned->owner = FRAME_OWNED_BY_FRAME_OBJECT;
    if (_PyFrame_IsIncomplete(owned)) {
        owned->prev_instr = _PyCode_CODE(owned->f_code) + owned->f_code->_co_firsttraceable;
    }
    if (back != nullptr) fo->f_back = back;   // the new reference goes to f_back
    owned->previous = nullptr;
    if (!PyObject_GC_IsTracked(reinterpret_cast<PyObject *>(fo))) {
        PyObject_GC_Track(fo);
    }
}

// A generator function's code runs only COPY_FREE_VARS and MAKE_CELL before
// its RETURN_GENERATOR: that unit, if nothing else (EXTENDED_ARG included)
// comes first; else nullptr.
const _Py_CODEUNIT *generator_start(PyCodeObject *code)
{
    const _Py_CODEUNIT *unit = _PyCode_CODE(code);
    const _Py_CODEUNIT *end = unit + Py_SIZE(code);
    for (; unit < end; unit++) {
        int op = _Py_OPCODE(*unit);
        if (op == RETURN_GENERATOR) return unit;
        if (op != COPY_FREE_VARS && op != MAKE_CELL) return nullptr;
    }
    return nullptr;
}

// What a plain generator function's frame does up to its RETURN_GENERATOR
// (3.11's _PyEval_EvalFrameDefault: the recursion check, the code's
// COPY_FREE_VARS and MAKE_CELL, then _Py_MakeCoro and RETURN_GENERATOR's
// frame copy). `frame` was pushed with its arguments bound; its contents move
// into the new generator's embedded frame and it is popped.
PyObject *make_generator(PyThreadState *ts, _PyInterpreterFrame *frame, const _Py_CODEUNIT *start)
{
    PyFunctionObject *func = frame->f_func;
    PyCodeObject *code = frame->f_code;
    PyObject **locals = frame->localsplus;
    bool failed = pyj_enter_recursive_call(ts, "");
    if (!failed) ts->recursion_remaining++;
    for (const _Py_CODEUNIT *unit = _PyCode_CODE(code); unit < start && !failed; unit++) {
        int oparg = _Py_OPARG(*unit);
        if (_Py_OPCODE(*unit) == COPY_FREE_VARS) {
            PyObject *closure = func->func_closure;
            int offset = code->co_nlocalsplus - oparg;
            for (int i = 0; i < oparg; i++) locals[offset + i] = Py_NewRef(PyTuple_GET_ITEM(closure, i));
        } else if (PyObject *cell = PyCell_New(locals[oparg])) {
            Py_XSETREF(locals[oparg], cell);
        } else {
            failed = true;
        }
    }
    PyGenObject *gen = failed ? nullptr
                              : PyObject_GC_NewVar(PyGenObject, &PyGen_Type,
                                                   code->co_nlocalsplus + code->co_stacksize);
    if (gen == nullptr) {
        finish_frame(ts, frame);   // releases the arguments
        return nullptr;
    }
    gen->gi_code = reinterpret_cast<PyCodeObject *>(Py_NewRef(code));
    gen->gi_weakreflist = nullptr;
    gen->gi_name = Py_NewRef(func->func_name);
    gen->gi_qualname = Py_NewRef(func->func_qualname);
    gen->gi_exc_state.exc_value = nullptr;
    gen->gi_exc_state.previous_item = nullptr;
    gen->gi_origin_or_finalizer = nullptr;
    gen->gi_hooks_inited = 0;
    gen->gi_closed = 0;
    gen->gi_running_async = 0;
    // The frame's references (function, code, locals) move with it.
    auto *gen_frame = reinterpret_cast<_PyInterpreterFrame *>(gen->gi_iframe);
    std::memcpy(gen_frame, frame, reinterpret_cast<char *>(&locals[code->co_nlocalsplus]) - reinterpret_cast<char *>(frame));
    gen_frame->previous = nullptr;
    gen_frame->prev_instr = const_cast<_Py_CODEUNIT *>(start);
    gen_frame->owner = FRAME_OWNED_BY_GENERATOR;
    gen->gi_frame_state = FRAME_CREATED;
    ts->datastack_top = reinterpret_cast<PyObject **>(frame);
    PyObject_GC_Track(gen);
    return reinterpret_cast<PyObject *>(gen);
}

const Py_ssize_t eval_frame_offset = pyj_interp_eval_frame_offset();

// The hook is the interpreter's frame evaluator (interp->eval_frame).
__attribute__((always_inline)) inline bool evaluator_is_hook(PyThreadState *ts)
{
    void *current = *reinterpret_cast<void **>(reinterpret_cast<char *>(ts->interp) + eval_frame_offset);
    return hook_state.evaluator != nullptr && current == hook_state.evaluator;
}

// The callee's record when its machine code may be entered without the hook:
// it is compiled, the hook is the interpreter's frame evaluator, and no
// tracer needs to see the call; the C stack guard is the hook's own. Inline
// in the direct paths (a call or a generator resume each ask once), the
// record's own fields first. (The profiler times such calls: enter_compiled.)
__attribute__((always_inline)) inline PyjionCodeView *entry_record(PyThreadState *ts, PyCodeObject *code)
{
    auto *extra = static_cast<PyjCodeExtraLayout *>(code->co_extra);
    Py_ssize_t index = hook_state.record_index;
    if (extra == nullptr || index < 0 || index >= extra->ce_size) return nullptr;
    auto *rec = static_cast<PyjionCodeView *>(extra->ce_extras[index]);
    if (rec == nullptr || rec->state != PYJION_CODE_COMPILED || ts->cframe->use_tracing) {
        return nullptr;
    }
    if (!evaluator_is_hook(ts)) return nullptr;
    return pyj_cstack_low() ? nullptr : rec;   // near the end: the hook raises RecursionError
}
}  // namespace


// Releases what the frame owns (3.11's _PyFrame_Clear), with one more level
// of recursion budget spent meanwhile, as _PyEvalFrameClearAndPop does.
void clear_frame(PyThreadState *ts, _PyInterpreterFrame *frame)
{
    ts->recursion_remaining--;
    if (frame->frame_obj != nullptr) {
        PyFrameObject *fo = frame->frame_obj;
        frame->frame_obj = nullptr;
        if (Py_REFCNT(fo) > 1) {
            hand_over_to_frame_object(fo, frame);
            Py_DECREF(fo);
            ts->recursion_remaining++;
            return;
        }
        Py_DECREF(fo);
    }
    for (int i = 0; i < frame->stacktop; i++) Py_XDECREF(frame->localsplus[i]);
    Py_XDECREF(frame->f_locals);
    Py_DECREF(frame->f_func);
    Py_DECREF(frame->f_code);
    ts->recursion_remaining++;
}

bool hook_is_evaluator(PyThreadState *ts) { return evaluator_is_hook(ts); }

namespace {

// The frame of `code` goes on top of the data stack if the current chunk has
// room (pushing a new chunk is the generic path's business): its base, or
// nullptr. (3.11 sizes a frame as _PyEvalFramePushAndInit does.)
__attribute__((always_inline)) inline PyObject **frame_room(PyThreadState *ts, PyCodeObject *code, Py_ssize_t *slots)
{
    *slots = code->co_nlocalsplus + code->co_stacksize + FRAME_SPECIALS_SIZE;
    PyObject **base = ts->datastack_top;
    return base != nullptr && base + *slots < ts->datastack_limit ? base : nullptr;
}

// Positional arguments that bind without arg_binding.h: exactly the
// parameters, or the missing trailing ones all with defaults (3.11's
// CALL_PY_EXACT_ARGS and CALL_PY_WITH_DEFAULTS): nothing can fail or run code.
__attribute__((always_inline)) inline bool binds_positionally(PyFunctionObject *func, PyCodeObject *code,
                                                              Py_ssize_t nargs)
{
    if (nargs > code->co_argcount || code->co_kwonlyargcount != 0 || (code->co_flags & kTakesVarArgs)) return false;
    Py_ssize_t defaults = func->func_defaults != nullptr ? PyTuple_GET_SIZE(func->func_defaults) : 0;
    return nargs + defaults >= code->co_argcount;
}

// The locals of such a call: the arguments (their references move into the
// frame, or new ones with `new_refs`), the defaults of the missing ones (new
// references), then empty.
template <bool new_refs>
__attribute__((always_inline)) inline void place_positionally(PyObject **locals, PyFunctionObject *func,
                                                              PyCodeObject *code, PyObject *const *args,
                                                              Py_ssize_t nargs)
{
    Py_ssize_t i = 0;
    for (; i < nargs; i++) locals[i] = new_refs ? Py_NewRef(args[i]) : args[i];
    PyObject *defaults = func->func_defaults;
    Py_ssize_t first_default = code->co_argcount - (defaults != nullptr ? PyTuple_GET_SIZE(defaults) : 0);
    for (; i < code->co_argcount; i++) locals[i] = Py_NewRef(PyTuple_GET_ITEM(defaults, i - first_default));
    for (; i < code->co_nlocalsplus; i++) locals[i] = nullptr;
}

}  // namespace

PyObject *try_call(PyThreadState *ts, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                   PyObject *kwnames, CallPath *path)
{
    auto *func = reinterpret_cast<PyFunctionObject *>(callable);
    auto *code = reinterpret_cast<PyCodeObject *>(func->func_code);
    *path = CallPath::kGeneric;
    // A function whose vectorcall was replaced, or code with locals (class
    // bodies), takes the generic path, as in the interpreter.
    if (!plain_vectorcall(func->vectorcall) || !(code->co_flags & CO_OPTIMIZED)) return nullptr;
    Py_ssize_t slots;
    PyObject **base = frame_room(ts, code, &slots);
    if (base == nullptr) return nullptr;
    auto *frame = reinterpret_cast<_PyInterpreterFrame *>(base);
    PyObject **locals = frame->localsplus;
    // Positional arguments that bind as they are (the common case): nothing
    // to check, nothing to allocate; else the two steps of arg_binding.h.
    bool positional = kwnames == nullptr && binds_positionally(func, code, nargs);
    Py_ssize_t to_kwargs = 0;
    if (positional) {
        place_positionally<false>(locals, func, code, args, nargs);
    } else {
        for (int i = 0; i < code->co_nlocalsplus; i++) locals[i] = nullptr;
        // Arguments that would not bind are the generic path's TypeError;
        // nothing has changed yet (the frame is not pushed).
        to_kwargs = place_arguments(locals, func, args, nargs, kwnames);
        if (to_kwargs < 0) {
            *path = CallPath::kUnbound;
            return nullptr;
        }
    }
    // Committed: the frame takes `func` and the arguments, as the
    // interpreter's CALL does (_PyEvalFramePushAndInit).
    *path = CallPath::kCalled;
    ts->datastack_top = base + slots;
    _PyFrame_InitializeSpecials(frame, func, nullptr, code->co_nlocalsplus);
    if (!positional && !complete_binding(locals, func, args, nargs, kwnames, to_kwargs)) {
        finish_frame(ts, frame);
        return nullptr;
    }

    if ((code->co_flags & kMakesGenerator) == CO_GENERATOR) {
        // A plain generator function already compiled: the generator is made
        // here, without the hook and the interpreter's RETURN_GENERATOR.
        PyjionCodeView *rec = entry_record(ts, code);
        const _Py_CODEUNIT *start = rec != nullptr ? generator_start(code) : nullptr;
        if (start != nullptr) {
            rec->calls++;
            return make_generator(ts, frame, start);
        }
    }
    PyObject *result;
    // Any other generator or coroutine function's frame is run by the hook:
    // the interpreter's RETURN_GENERATOR moves its contents into the new
    // object and leaves this frame empty to release.
    PyjionCodeView *rec = (code->co_flags & kMakesGenerator) ? nullptr : entry_record(ts, code);
    if (rec != nullptr) {
        result = enter_compiled(rec, ts, frame);
    } else {
        result = pyj_eval_frame(ts, frame);   // the hook decides (or the interpreter runs it)
    }

    finish_frame(ts, frame);
    return result;
}

namespace {
uint64_t g_vectorcall_calls = 0;   // GIL held

// An interpreted callee's call with positional arguments that bind
// (binds_positionally): its frame is pushed here, taking new references,
// and handed to the hook, which counts the call and runs the interpreter;
// nullptr with *called false if the data-stack chunk has no room.
__attribute__((always_inline)) inline PyObject *call_interpreted(PyThreadState *ts, PyFunctionObject *func,
                                                                 PyCodeObject *code, PyObject *const *args,
                                                                 Py_ssize_t nargs, bool *called)
{
    Py_ssize_t slots;
    PyObject **base = frame_room(ts, code, &slots);
    *called = base != nullptr;
    if (!*called) return nullptr;
    auto *frame = reinterpret_cast<_PyInterpreterFrame *>(base);
    place_positionally<true>(frame->localsplus, func, code, args, nargs);
    ts->datastack_top = base + slots;
    _PyFrame_InitializeSpecials(frame, reinterpret_cast<PyFunctionObject *>(Py_NewRef(func)), nullptr,
                                code->co_nlocalsplus);
    PyObject *result = pyj_eval_frame(ts, frame);
    finish_frame(ts, frame);
    return result;
}
}  // namespace

uint64_t vectorcall_calls() { return g_vectorcall_calls; }

PyObject *vectorcall(PyObject *func, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    // A callee whose machine code can be entered directly gains, and so does
    // an interpreted one called with positional arguments while the hook is
    // the evaluator: its frame is pushed here and handed to the hook, without
    // _PyEval_Vector and initialize_locals. Any other call takes CPython's
    // own path (_PyEval_Vector binds keywords faster than try_call's general
    // binding, and the hook sees the call either way).
    PyThreadState *ts = _PyThreadState_UncheckedGet();
    auto *fn = reinterpret_cast<PyFunctionObject *>(func);
    auto *code = reinterpret_cast<PyCodeObject *>(fn->func_code);
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (entry_record(ts, code) == nullptr) {
        if (kwnames == nullptr && binds_positionally(fn, code, nargs) && !(code->co_flags & kMakesGenerator) &&
            (code->co_flags & CO_OPTIMIZED) && evaluator_is_hook(ts)) {
            bool called;
            PyObject *result = call_interpreted(ts, fn, code, args, nargs, &called);
            if (called) {
                g_vectorcall_calls++;
                return result;
            }
        }
        return _PyFunction_Vectorcall(func, args, nargsf, kwnames);
    }
    Py_ssize_t total = nargs + (kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0);
    // The frame takes new references, as _PyEval_Vector gives it.
    Py_INCREF(func);
    for (Py_ssize_t i = 0; i < total; i++) Py_INCREF(args[i]);
    CallPath path;
    PyObject *result = try_call(ts, func, args, nargs, kwnames, &path);
    if (path == CallPath::kCalled) {
        g_vectorcall_calls++;
        return result;
    }
    for (Py_ssize_t i = 0; i < total; i++) Py_DECREF(args[i]);
    Py_DECREF(func);
    return _PyFunction_Vectorcall(func, args, nargsf, kwnames);   // (raises the binding's TypeError)
}

PyObject *try_construct(PyThreadState *ts, PyObject *callable, PyObject *const *args, Py_ssize_t nargs, bool *done)
{
    constexpr Py_ssize_t kMaxArgs = 15;
    static PyObject *init_name = PyUnicode_InternFromString("__init__");
    static PyObject *no_args = PyTuple_New(0);
    *done = false;
    auto *cls = reinterpret_cast<PyTypeObject *>(callable);
    // A Python class (object.__new__) whose __init__ is a plain Python
    // function: its tp_init is the slot that calls that function.
    if (!(cls->tp_flags & Py_TPFLAGS_HEAPTYPE) || cls->tp_new != PyBaseObject_Type.tp_new ||
        cls->tp_init == PyBaseObject_Type.tp_init || nargs > kMaxArgs || init_name == nullptr || no_args == nullptr) {
        return nullptr;
    }
    PyObject *init = _PyType_Lookup(cls, init_name);
    if (init == nullptr || Py_TYPE(init) != &PyFunction_Type) return nullptr;
    *done = true;
    Py_INCREF(init);   // allocation may run a collection, and the class change
    // The level _PyObject_MakeTpCall counts; then object.__new__, which
    // ignores the arguments when __init__ is overridden: it checks for
    // abstract methods, allocates and sets up the instance dict.
    bool too_deep = pyj_enter_recursive_call(ts, " while calling a Python object");
    PyObject *self = too_deep ? nullptr : cls->tp_new(cls, no_args, nullptr);
    PyObject *res = nullptr;
    if (self == nullptr) {
        Py_DECREF(init);
    } else {
        // __init__'s frame takes new references: type_call's argument tuple
        // keeps the caller's until the call returns.
        PyObject *call_args[kMaxArgs + 2];   // [slot for vectorcall, self, args...]
        call_args[1] = Py_NewRef(self);
        for (Py_ssize_t i = 0; i < nargs; i++) call_args[i + 2] = Py_NewRef(args[i]);
        CallPath path;
        res = try_call(ts, init, call_args + 1, nargs + 1, nullptr, &path);   // takes init and call_args
        if (path != CallPath::kCalled) {
            res = PyObject_Vectorcall(init, call_args + 1, (nargs + 1) | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
            Py_DECREF(init);
            for (Py_ssize_t i = 1; i < nargs + 2; i++) Py_DECREF(call_args[i]);
        }
    }
    // Released in type_call's order (the result, then the instance on error),
    // then the CALL's own references: the class, then the arguments.
    if (res != nullptr && res != Py_None) {
        PyErr_Format(PyExc_TypeError, "__init__() should return None, not '%.200s'", Py_TYPE(res)->tp_name);
    }
    bool ok = res == Py_None;
    Py_XDECREF(res);
    if (!ok) Py_CLEAR(self);
    if (!too_deep) ts->recursion_remaining++;
    Py_DECREF(callable);
    for (Py_ssize_t i = 0; i < nargs; i++) Py_DECREF(args[i]);
    return self;
}

void finish_frame(PyThreadState *ts, _PyInterpreterFrame *frame)
{
    clear_frame(ts, frame);
    // The frame was pushed inside the current chunk: popping is resetting the top.
    ts->datastack_top = reinterpret_cast<PyObject **>(frame);
}

namespace {

// gen_send_ex2's resume (Objects/genobject.c, 3.11) of a generator or
// coroutine whose frame can run (created or suspended) and whose code is
// compiled (rec): `value` (borrowed) goes on the frame's value stack and the
// machine code is entered without the hook. PYGEN_NEXT with the yielded
// value, PYGEN_RETURN with the returned one (the frame then released), or
// PYGEN_ERROR with the exception set.
__attribute__((always_inline)) inline PySendResult resume_compiled(PyGenObject *gen, PyjionCodeView *rec,
                                                                   PyObject *value, PyThreadState *ts,
                                                                   PyObject **presult)
{
    auto *frame = reinterpret_cast<_PyInterpreterFrame *>(gen->gi_iframe);
    // The generator's exception state is linked in while it runs.
    frame->localsplus[frame->stacktop++] = Py_NewRef(value);
    frame->previous = ts->cframe->current_frame;
    gen->gi_exc_state.previous_item = ts->exc_info;
    ts->exc_info = &gen->gi_exc_state;
    gen->gi_frame_state = FRAME_EXECUTING;
    PyObject *result = enter_compiled(rec, ts, frame);
    if (gen->gi_frame_state == FRAME_EXECUTING) gen->gi_frame_state = FRAME_COMPLETED;
    ts->exc_info = gen->gi_exc_state.previous_item;
    gen->gi_exc_state.previous_item = nullptr;
    frame->previous = nullptr;

    *presult = result;
    if (result != nullptr && gen->gi_frame_state == FRAME_SUSPENDED) return PYGEN_NEXT;
    if (result == nullptr && PyErr_ExceptionMatches(PyExc_StopIteration)) {
        const char *msg = PyCoro_CheckExact(gen) ? "coroutine raised StopIteration" : "generator raised StopIteration";
        _PyErr_FormatFromCause(PyExc_RuntimeError, "%s", msg);
    }
    // Finished: the frame can never run again; break the cycle a stored
    // exception's traceback may make, then release the frame.
    Py_CLEAR(gen->gi_exc_state.exc_value);
    gen->gi_frame_state = FRAME_CLEARED;
    clear_frame(ts, frame);
    return result != nullptr ? PYGEN_RETURN : PYGEN_ERROR;
}

}  // namespace

// FOR_ITER's resume of a compiled generator: gen_iternext's work around
// gen_send_ex2.
PyObject *gen_next(PyObject *obj, PyThreadState *ts)
{
    auto *gen = reinterpret_cast<PyGenObject *>(obj);
    auto *frame = reinterpret_cast<_PyInterpreterFrame *>(gen->gi_iframe);
    // Only a generator that can be resumed (not running, not finished) whose
    // code may be entered directly; anything else, errors included, is
    // gen_iternext's.
    PyjionCodeView *rec = gen->gi_frame_state < FRAME_EXECUTING ? entry_record(ts, frame->f_code) : nullptr;
    if (rec == nullptr) return Py_TYPE(obj)->tp_iternext(obj);
    PyObject *result;
    PySendResult status = resume_compiled(gen, rec, Py_None, ts, &result);
    if (status == PYGEN_RETURN) {
        // Returned: the loop ends; a value other than None travels in StopIteration.
        if (result != Py_None) _PyGen_SetStopIterationValue(result);
        Py_CLEAR(result);
    }
    return result;
}

PySendResult gen_send(PyThreadState *ts, PyObject *receiver, PyObject *value, PyObject **presult)
{
    PyTypeObject *type = Py_TYPE(receiver);
    if (type == &PyGen_Type || type == &PyCoro_Type) {
        auto *gen = reinterpret_cast<PyGenObject *>(receiver);
        auto *frame = reinterpret_cast<_PyInterpreterFrame *>(gen->gi_iframe);
        // A frame that can run, and not the just-started generator that a
        // value other than None is sent to (gen_send_ex2 raises for that).
        bool resumable = gen->gi_frame_state == FRAME_SUSPENDED ||
                         (gen->gi_frame_state == FRAME_CREATED && value == Py_None);
        PyjionCodeView *rec = resumable ? entry_record(ts, frame->f_code) : nullptr;
        if (rec != nullptr) return resume_compiled(gen, rec, value, ts, presult);
    }
    return PyIter_Send(receiver, value, presult);
}

int32_t cstack_floor_tls_offset()
{
    uintptr_t tp;
    __asm__("mov %%fs:0, %0" : "=r"(tp));   // x86-64 glibc: the thread pointer points at itself
    return static_cast<int32_t>(reinterpret_cast<uintptr_t>(&pyj_stack_floor) - tp);
}

}  // namespace pyjion::direct

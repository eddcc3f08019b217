// Runtime helpers for raising and handling exceptions (see runtime.def).
// Helpers taking `sp` work on the frame's value stack exactly as ceval.c's
// instruction does: sp points one past the top value.
#include "runtime/runtime.h"

#include "cpython/interp_state.h"
#include "cpython/object_layout.h"
#include "runtime/cpython_api.h"

namespace pyjion::rt {

namespace {

const char kCannotCatch[] = "catching classes that do not inherit from BaseException is not allowed";
const char kCannotCatchGroup[] = "catching ExceptionGroup with except* is not allowed. Use except instead.";

// ceval's "Log traceback info": prev_instr already names the failing instruction.
void add_traceback(_PyInterpreterFrame *frame)
{
    if (_PyFrame_IsIncomplete(frame)) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyFrameObject *f = PyEval_GetFrame();   // this frame: compiled code links it as current
    PyErr_Restore(type, value, tb);
    if (f != nullptr) PyTraceBack_Here(f);
}

#if PY_VERSION_HEX >= 0x030D0000
// 3.13 reports exceptions to sys.monitoring (settrace and setprofile are
// built on it): the RAISE event for this frame's instruction (the exported
// emitter returns at once when no tool listens for it). The PY_UNWIND event
// has no exported emitter: not reported from machine code.
void trace_exception(PyThreadState *ts, _PyInterpreterFrame *frame)
{
    _PyEval_MonitorRaise(ts, frame, frame->instr_ptr);
}

void trace_unwind(PyThreadState *, _PyInterpreterFrame *) {}
#else
// ceval's call_trace for this (current, compiled) frame: the tracer runs with
// tracing off and f_lineno set for the duration of the call.
int call_trace(PyThreadState *ts, _PyInterpreterFrame *frame, Py_tracefunc func, PyObject *obj, int what,
               PyObject *arg)
{
    if (ts->tracing) return 0;
    PyFrameObject *f = PyEval_GetFrame();
    if (f == nullptr) return -1;
    ts->tracing++;
    ts->cframe->use_tracing = 0;
    PyCodeObject *code = frame->f_code;
    f->f_lineno = frame->prev_instr < _PyCode_CODE(code)
                      ? code->co_firstlineno
                      : PyCode_Addr2Line(code, _PyInterpreterFrame_LASTI(frame) * (int)sizeof(_Py_CODEUNIT));
    int result = func(obj, f, what, arg != nullptr ? arg : Py_None);
    f->f_lineno = 0;
    ts->cframe->use_tracing = (ts->c_tracefunc != nullptr || ts->c_profilefunc != nullptr) ? 255 : 0;
    ts->tracing--;
    return result;
}

// ceval's call_exc_trace: the 'exception' event, keeping the exception.
void trace_exception(PyThreadState *ts, _PyInterpreterFrame *frame)
{
    if (ts->c_tracefunc == nullptr) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (value == nullptr) value = Py_NewRef(Py_None);
    PyErr_NormalizeException(&type, &value, &tb);
    PyObject *arg = PyTuple_Pack(3, type, value, tb != nullptr ? tb : Py_None);
    if (arg == nullptr) {
        PyErr_Restore(type, value, tb);
        return;
    }
    int err = call_trace(ts, frame, ts->c_tracefunc, ts->c_traceobj, PyTrace_EXCEPTION, arg);
    Py_DECREF(arg);
    if (err == 0) {
        PyErr_Restore(type, value, tb);
    } else {
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    }
}

// ceval's TRACE_FUNCTION_UNWIND: a 'return' event (arg None) as the
// exception leaves the frame; errors of the tracer are ignored.
void trace_unwind(PyThreadState *ts, _PyInterpreterFrame *frame)
{
    if (!ts->cframe->use_tracing) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (ts->c_tracefunc != nullptr &&
        call_trace(ts, frame, ts->c_tracefunc, ts->c_traceobj, PyTrace_RETURN, nullptr) != 0) {
        PyErr_Clear();
    }
    if (ts->c_profilefunc != nullptr &&
        call_trace(ts, frame, ts->c_profilefunc, ts->c_profileobj, PyTrace_RETURN, nullptr) != 0) {
        PyErr_Clear();
    }
    PyErr_Restore(type, value, tb);
}

#endif

void ensure_exception()
{
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_SystemError, "error return without exception set");
}

PyObject **stack_base(_PyInterpreterFrame *frame) { return frame->localsplus + layout::frame_code(frame)->co_nlocalsplus; }

void pop_to(_PyInterpreterFrame *frame, int depth, int level)
{
    PyObject **stack = stack_base(frame);
    for (int i = depth - 1; i >= level; i--) Py_CLEAR(stack[i]);
}

int check_except_type_valid(PyObject *right)
{
    if (PyTuple_Check(right)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(right); i++) {
            if (!PyExceptionClass_Check(PyTuple_GET_ITEM(right, i))) {
                PyErr_SetString(PyExc_TypeError, kCannotCatch);
                return -1;
            }
        }
    } else if (!PyExceptionClass_Check(right)) {
        PyErr_SetString(PyExc_TypeError, kCannotCatch);
        return -1;
    }
    return 0;
}

int check_except_star_type_valid(PyObject *right)
{
    if (check_except_type_valid(right) < 0) return -1;
    int is_group = 0;
    if (PyTuple_Check(right)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(right) && !is_group; i++) {
            is_group = PyObject_IsSubclass(PyTuple_GET_ITEM(right, i), PyExc_BaseExceptionGroup);
            if (is_group < 0) return -1;
        }
    } else {
        is_group = PyObject_IsSubclass(right, PyExc_BaseExceptionGroup);
        if (is_group < 0) return -1;
    }
    if (is_group) {
        PyErr_SetString(PyExc_TypeError, kCannotCatchGroup);
        return -1;
    }
    return 0;
}

// except*: split `exc` into the part matching `type` and the rest.
int exception_group_match(PyObject *exc, PyObject *type, PyObject **match, PyObject **rest)
{
    if (Py_IsNone(exc)) {
        *match = Py_NewRef(Py_None);
        *rest = Py_NewRef(Py_None);
        return 0;
    }
    if (PyErr_GivenExceptionMatches(exc, type)) {
        if (PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_BaseExceptionGroup)) {
            *match = Py_NewRef(exc);
        } else {
            // A bare exception is wrapped in a group with an empty message.
            PyObject *wrapped = PyObject_CallFunction(PyExc_BaseExceptionGroup, "s(O)", "", exc);
            if (wrapped == nullptr) return -1;
            *match = wrapped;
        }
        *rest = Py_NewRef(Py_None);
        return 0;
    }
    if (PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_BaseExceptionGroup)) {
        PyObject *pair = PyObject_CallMethod(exc, "split", "(O)", type);
        if (pair == nullptr) return -1;
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            Py_DECREF(pair);
            PyErr_SetString(PyExc_TypeError, "ExceptionGroup.split must return a 2-tuple");
            return -1;
        }
        *match = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
        *rest = Py_NewRef(PyTuple_GET_ITEM(pair, 1));
        Py_DECREF(pair);
        return 0;
    }
    *match = Py_NewRef(Py_None);
    *rest = Py_NewRef(Py_None);
    return 0;
}

}  // namespace

// No handler covers the failing instruction: the exception leaves the frame.
void pyj_rt_error_exit(PyThreadState *ts, _PyInterpreterFrame *frame, int depth, int add_tb)
{
    ensure_exception();
    if (add_tb) {
        add_traceback(frame);
        trace_exception(ts, frame);
    }
    pop_to(frame, depth, 0);
    trace_unwind(ts, frame);
}

// A handler covers it: unwind to the handler's level, push lasti if asked and
// the (normalised) exception, as ceval's exception_unwind does. Returns -1 if
// that itself failed (the stack is then empty and the new error set).
int pyj_rt_unwind_to_handler(PyThreadState *ts, _PyInterpreterFrame *frame, int depth, int add_tb, int level,
                             int lasti)
{
    ensure_exception();
    if (add_tb) {
        add_traceback(frame);
        trace_exception(ts, frame);
    }
    pop_to(frame, depth, level);
    PyObject **sp = stack_base(frame) + level;
    if (lasti) {
        PyObject *offset = PyLong_FromLong(_PyInterpreterFrame_LASTI(frame));
        if (offset == nullptr) {
            pop_to(frame, level, 0);
            return -1;
        }
        *sp++ = offset;
    }
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    PyException_SetTraceback(value, tb != nullptr ? tb : Py_None);
    Py_XDECREF(tb);
    Py_XDECREF(type);
    *sp = value;
    return 0;
}

// PUSH_EXC_INFO: [exc] -> [previous handled exception or None, exc].
void pyj_rt_push_exc_info(PyThreadState *ts, PyObject **sp)
{
    PyObject *value = sp[-1];
    _PyErr_StackItem *info = ts->exc_info;
    sp[-1] = info->exc_value != nullptr ? info->exc_value : Py_NewRef(Py_None);
    sp[0] = Py_NewRef(value);
    info->exc_value = value;
}

// POP_EXCEPT: restore the handled exception saved by PUSH_EXC_INFO.
void pyj_rt_pop_except(PyThreadState *ts, PyObject **sp)
{
    _PyErr_StackItem *info = ts->exc_info;
    PyObject *old = info->exc_value;
    PyObject *saved = sp[-1];
    if (layout::kNoHandledExceptionIsNull && saved == Py_None) {
        Py_DECREF(saved);
        saved = nullptr;
    }
    info->exc_value = saved;
    Py_XDECREF(old);
}

// CHECK_EXC_MATCH: [exc, type] -> [exc, bool]; -1 (type released) on error.
int pyj_rt_check_exc_match(PyThreadState *ts, PyObject **sp)
{
    PyObject *right = sp[-1];
    if (check_except_type_valid(right) < 0) {
        Py_DECREF(right);
        return -1;
    }
    int res = PyErr_GivenExceptionMatches(sp[-2], right);
    Py_DECREF(right);
    sp[-1] = Py_NewRef(res ? Py_True : Py_False);
    return 0;
}

// CHECK_EG_MATCH: [exc, type] -> [rest, match] or [exc, None]; -1 with the
// type released (depth - 1) on error.
int pyj_rt_check_eg_match(PyThreadState *ts, PyObject **sp)
{
    PyObject *type = sp[-1];
    if (check_except_star_type_valid(type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    PyObject *exc = sp[-2];
    PyObject *match = nullptr, *rest = nullptr;
    int res = exception_group_match(exc, type, &match, &rest);
    Py_DECREF(type);
    if (res < 0) return -1;
    if (Py_IsNone(match)) {
        sp[-1] = match;
        Py_XDECREF(rest);
    } else {
        sp[-2] = rest;
        sp[-1] = match;
        PyErr_SetExcInfo(nullptr, Py_NewRef(match), nullptr);
        Py_DECREF(exc);
    }
    return 0;
}

// RERAISE: pops the exception and makes it current again, restoring
// prev_instr from the saved lasti (oparg > 0). Returns 0 to re-raise without a
// new traceback entry, -1 for an ordinary error (lasti not an int).
int pyj_rt_reraise(_PyInterpreterFrame *frame, PyObject **sp, int oparg)
{
    if (oparg) {
        PyObject *lasti = sp[-(oparg + 1)];
        if (!PyLong_Check(lasti)) {
            PyErr_SetString(PyExc_SystemError, "lasti is not an int");
            return -1;
        }
        layout::set_frame_unit(frame, static_cast<int>(PyLong_AsLong(lasti)));
    }
    PyObject *value = sp[-1];
    PyObject *type = Py_NewRef(PyExceptionInstance_Class(value));
    PyErr_Restore(type, value, PyException_GetTraceback(value));
    return 0;
}

// RAISE_VARARGS: consumes oparg values. Returns 1 for a bare `raise` that
// re-raised the handled exception (no new traceback entry), 0 otherwise; an
// exception is set either way.
int pyj_rt_raise(PyThreadState *ts, PyObject **sp, int oparg)
{
    PyObject *exc = nullptr, *cause = nullptr;
    if (oparg == 2) cause = sp[-1];
    if (oparg >= 1) exc = sp[-oparg];
    if (oparg > 2) {
        PyErr_SetString(PyExc_SystemError, "bad RAISE_VARARGS oparg");
        return 0;
    }
    if (exc == nullptr) {
        PyObject *value = PyErr_GetHandledException();
        if (value == nullptr || Py_IsNone(value)) {
            Py_XDECREF(value);
            PyErr_SetString(PyExc_RuntimeError, "No active exception to reraise");
            return 0;
        }
        PyObject *type = Py_NewRef(PyExceptionInstance_Class(value));
        PyErr_Restore(type, value, PyException_GetTraceback(value));
        return 1;
    }
    PyObject *type = nullptr, *value = nullptr;
    if (PyExceptionClass_Check(exc)) {
        type = exc;
        value = PyObject_CallNoArgs(exc);
        if (value == nullptr) goto raise_error;
        if (!PyExceptionInstance_Check(value)) {
            PyErr_Format(PyExc_TypeError, "calling %R should have returned an instance of BaseException, not %R",
                         type, Py_TYPE(value));
            goto raise_error;
        }
    } else if (PyExceptionInstance_Check(exc)) {
        value = exc;
        type = Py_NewRef(PyExceptionInstance_Class(exc));
    } else {
        Py_DECREF(exc);
        PyErr_SetString(PyExc_TypeError, "exceptions must derive from BaseException");
        goto raise_error;
    }
    if (cause != nullptr) {
        PyObject *fixed;
        if (PyExceptionClass_Check(cause)) {
            fixed = PyObject_CallNoArgs(cause);
            if (fixed == nullptr) goto raise_error;
#if PY_VERSION_HEX >= 0x030C0000
            // 3.12+: a cause class must make an exception instance (3.11 took any result).
            if (!PyExceptionInstance_Check(fixed)) {
                PyErr_Format(PyExc_TypeError, "calling %R should have returned an instance of BaseException, not %R",
                             cause, Py_TYPE(fixed));
                Py_DECREF(fixed);
                goto raise_error;
            }
#endif
            Py_DECREF(cause);
        } else if (PyExceptionInstance_Check(cause)) {
            fixed = cause;
        } else if (Py_IsNone(cause)) {
            Py_DECREF(cause);
            fixed = nullptr;
        } else {
            PyErr_SetString(PyExc_TypeError, "exception causes must derive from BaseException");
            goto raise_error;
        }
        PyException_SetCause(value, fixed);
    }
    PyErr_SetObject(type, value);
    Py_DECREF(value);
    Py_DECREF(type);
    return 0;
raise_error:
    Py_XDECREF(value);
    Py_XDECREF(type);
    Py_XDECREF(cause);
    return 0;
}

// WITH_EXCEPT_START: [exit, lasti, prev_exc, exc] -> calls exit(type, exc, tb).
PyObject *pyj_rt_with_except_start(PyObject **sp)
{
    PyObject *value = sp[-1];
    PyObject *type = PyExceptionInstance_Class(value);
    PyObject *tb = PyException_GetTraceback(value);
    Py_XDECREF(tb);   // borrowed for the call, as ceval does
    PyObject *exit_func = sp[-4];
    PyObject *args[4] = {nullptr, type, value, tb != nullptr ? tb : Py_None};
    return PyObject_Vectorcall(exit_func, args + 1, 3 | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
}

// BEFORE_WITH / BEFORE_ASYNC_WITH: [mgr] -> [__(a)exit__, __(a)enter__()];
// -1 on error with the depth unchanged (mgr or the exit method in the slot).
int enter_context(PyObject **sp, bool async)
{
    static PyObject *names[2][2];   // [async][enter, exit]; immortal once made
    PyObject *&enter_name = names[async][0];
    PyObject *&exit_name = names[async][1];
    if (enter_name == nullptr) enter_name = PyUnicode_InternFromString(async ? "__aenter__" : "__enter__");
    if (exit_name == nullptr) exit_name = PyUnicode_InternFromString(async ? "__aexit__" : "__exit__");
    if (enter_name == nullptr || exit_name == nullptr) return -1;
    const char *protocol = async ? "asynchronous context manager protocol" : "context manager protocol";
    PyObject *mgr = sp[-1];
    PyObject *enter = _PyObject_LookupSpecial(mgr, enter_name);
    if (enter == nullptr) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "'%.200s' object does not support the %s", Py_TYPE(mgr)->tp_name,
                         protocol);
        }
        return -1;
    }
    PyObject *exit = _PyObject_LookupSpecial(mgr, exit_name);
    if (exit == nullptr) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "'%.200s' object does not support the %s (missed %U method)",
                         Py_TYPE(mgr)->tp_name, protocol, exit_name);
        }
        Py_DECREF(enter);
        return -1;
    }
    sp[-1] = exit;
    Py_DECREF(mgr);
    PyObject *res = PyObject_CallNoArgs(enter);
    Py_DECREF(enter);
    if (res == nullptr) return -1;
    sp[0] = res;
    return 0;
}

int pyj_rt_before_with(PyThreadState *ts, PyObject **sp) { return enter_context(sp, false); }

}  // namespace pyjion::rt

namespace pyjion::rt {

namespace {

bool is_group(PyObject *exc) { return PyObject_TypeCheck(exc, (PyTypeObject *)PyExc_BaseExceptionGroup); }

// Adds id() of every leaf exception of `exc` to the set `ids`.
int collect_leaf_ids(PyObject *exc, PyObject *ids)
{
    if (Py_IsNone(exc)) return 0;
    if (!is_group(exc)) {
        PyObject *id = PyLong_FromVoidPtr(exc);
        if (id == nullptr) return -1;
        int res = PySet_Add(ids, id);
        Py_DECREF(id);
        return res;
    }
    PyObject *excs = PyObject_GetAttrString(exc, "exceptions");
    if (excs == nullptr) return -1;
    int res = 0;
    if (Py_EnterRecursiveCall(" in collect_exception_group_leaf_ids")) {
        res = -1;
    } else {
        for (Py_ssize_t i = 0; res == 0 && i < PyTuple_GET_SIZE(excs); i++) {
            res = collect_leaf_ids(PyTuple_GET_ITEM(excs, i), ids);
        }
        Py_LeaveRecursiveCall();
    }
    Py_DECREF(excs);
    return res;
}

// split() only takes a Python function as predicate; this makes one that
// keeps a leaf whose id() is in `ids` (groups never match as a whole, so the
// projection keeps the original nesting).
PyObject *make_leaf_predicate(PyObject *ids)
{
    static PyObject *factory = nullptr;
    if (factory == nullptr) {
        PyObject *globals = PyDict_New();
        if (globals == nullptr) return nullptr;
        if (PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) < 0) {
            Py_DECREF(globals);
            return nullptr;
        }
        factory = PyRun_String("lambda ids: lambda e: not isinstance(e, BaseExceptionGroup) and id(e) in ids",
                               Py_eval_input, globals, globals);
        Py_DECREF(globals);
        if (factory == nullptr) return nullptr;
    }
    return PyObject_CallOneArg(factory, ids);
}

// The part of group `eg` made of the leaves found in the groups of `keep`.
PyObject *group_projection(PyObject *eg, PyObject *keep)
{
    PyObject *ids = PySet_New(nullptr);
    if (ids == nullptr) return nullptr;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(keep); i++) {
        if (collect_leaf_ids(PyList_GET_ITEM(keep, i), ids) < 0) {
            Py_DECREF(ids);
            return nullptr;
        }
    }
    PyObject *predicate = make_leaf_predicate(ids);
    Py_DECREF(ids);
    if (predicate == nullptr) return nullptr;
    PyObject *pair = PyObject_CallMethod(eg, "split", "(O)", predicate);
    Py_DECREF(predicate);
    if (pair == nullptr) return nullptr;
    PyObject *match = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
    Py_DECREF(pair);
    return match;
}

bool same_metadata(PyObject *a, PyObject *b)
{
    auto *x = reinterpret_cast<PyBaseExceptionObject *>(a);
    auto *y = reinterpret_cast<PyBaseExceptionObject *>(b);
    return x->notes == y->notes && x->traceback == y->traceback && x->cause == y->cause && x->context == y->context;
}

}  // namespace

// PREP_RERAISE_STAR: from the exception a try/except* caught (`orig`) and the
// list of what its clauses raised or re-raised, the exception to raise at the
// end: re-raised parts keep orig's nesting, newly raised ones become siblings
// in a new group (a lone one is raised as it is); None if nothing is left.
// Steals neither argument.
PyObject *pyj_rt_prep_reraise_star(PyObject *orig, PyObject *excs)
{
    Py_ssize_t n = PyList_GET_SIZE(excs);
    if (n == 0) return Py_NewRef(Py_None);
    if (!is_group(orig)) return Py_NewRef(PyList_GET_ITEM(excs, 0));   // a wrapped naked exception
    PyObject *raised = PyList_New(0);
    PyObject *reraised = PyList_New(0);
    PyObject *result = nullptr;
    PyObject *reraised_eg = nullptr;
    if (raised == nullptr || reraised == nullptr) goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *e = PyList_GET_ITEM(excs, i);
        if (Py_IsNone(e)) continue;
        if (PyList_Append(same_metadata(e, orig) ? reraised : raised, e) < 0) goto done;
    }
    reraised_eg = group_projection(orig, reraised);
    if (reraised_eg == nullptr) goto done;
    if (PyList_GET_SIZE(raised) == 0) {
        result = reraised_eg;
        reraised_eg = nullptr;
    } else {
        if (!Py_IsNone(reraised_eg) && PyList_Append(raised, reraised_eg) < 0) goto done;
        // Since 3.11.4 a single exception is raised as it is, not wrapped.
        if (PyList_GET_SIZE(raised) > 1) {
            result = PyObject_CallFunction(PyExc_BaseExceptionGroup, "(sO)", "", raised);
        } else {
            result = Py_NewRef(PyList_GET_ITEM(raised, 0));
        }
    }
done:
    Py_XDECREF(reraised_eg);
    Py_XDECREF(raised);
    Py_XDECREF(reraised);
    return result;
}

}  // namespace pyjion::rt

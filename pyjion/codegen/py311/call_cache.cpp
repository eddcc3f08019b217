// The cached forms of a C call (see call_cache.h). Each repeats one kind of
// call on a callable whose identity the machine code has checked; the
// argument-dependent conditions (a method descriptor's self type, a list for
// list.append) are checked here, and a call that fails them is made the
// generic way, as the interpreter's DEOPT_IF would.
#include "runtime/call_cache.h"

#include "cpython/frame_layout.h"
#include "cpython/interp_state.h"
#include "runtime/profiled_call.h"

namespace pyjion::callcache {

namespace {

// Releases the call's references: the arguments and the callable in args[-1].
inline PyObject *release(PyObject **args, Py_ssize_t total, PyObject *res)
{
    for (Py_ssize_t i = 0; i < total; i++) Py_DECREF(args[i]);
    Py_DECREF(args[-1]);
    return res;
}

// A specialised form's result: the interpreter makes these calls in PRECALL
// (and skips the CALL), so an exception from one names the PRECALL.
inline PyObject *specialised(const CallCache *c, _PyInterpreterFrame *frame, PyObject *res)
{
    if (res == nullptr) frame->prev_instr = c->precall_instr;
    return res;
}

// `call()` inside the recursion level the interpreter counts for a C call.
template <typename Call>
inline PyObject *counted(PyThreadState *ts, Call call)
{
    if (pyj_enter_recursive_call(ts, " while calling a Python object")) return nullptr;
    PyObject *res = call();
    ts->recursion_remaining++;
    return res;
}

// A METH_O/METH_NOARGS/METH_VARARGS function's call (arg NULL for NOARGS, the
// argument tuple for VARARGS), inside that recursion level.
inline PyObject *counted_call(const CallCache *c, PyThreadState *ts, PyObject *self, PyObject *arg)
{
    return counted(ts, [&] { return reinterpret_cast<PyCFunction>(c->cfunc)(self, arg); });
}

// The unspecialised call (the site's CALL makes it). args[-1] is a stack
// slot the call owns, so the callee may use it (PY_VECTORCALL_ARGUMENTS_OFFSET).
PyObject *generic(const CallCache *c, PyObject **args, PyThreadState *, _PyInterpreterFrame *)
{
    PyObject *res = PyObject_Vectorcall(args[-1], args, (size_t)c->total | PY_VECTORCALL_ARGUMENTS_OFFSET, nullptr);
    return release(args, c->total, res);
}

// ---- builtin functions (PyCFunction) ----

PyObject *builtin_o(const CallCache *c, PyObject **args, PyThreadState *ts, _PyInterpreterFrame *frame)
{
    PyObject *res = counted_call(c, ts, static_cast<PyObject *>(c->self), args[0]);
    return release(args, 1, specialised(c, frame, res));
}

PyObject *builtin_fast(const CallCache *c, PyObject **args, PyThreadState *, _PyInterpreterFrame *frame)
{
    PyObject *res = reinterpret_cast<_PyCFunctionFast>(c->cfunc)(static_cast<PyObject *>(c->self), args, c->total);
    return release(args, c->total, specialised(c, frame, res));
}

PyObject *builtin_fast_kw(const CallCache *c, PyObject **args, PyThreadState *, _PyInterpreterFrame *frame)
{
    PyObject *res = reinterpret_cast<_PyCFunctionFastWithKeywords>(c->cfunc)(static_cast<PyObject *>(c->self),
                                                                              args, c->total, nullptr);
    return release(args, c->total, specialised(c, frame, res));
}

PyObject *builtin_len(const CallCache *c, PyObject **args, PyThreadState *, _PyInterpreterFrame *frame)
{
    Py_ssize_t n = PyObject_Length(args[0]);
    return release(args, 1, specialised(c, frame, n < 0 ? nullptr : PyLong_FromSsize_t(n)));
}

PyObject *builtin_isinstance(const CallCache *c, PyObject **args, PyThreadState *, _PyInterpreterFrame *frame)
{
    int r = PyObject_IsInstance(args[0], args[1]);
    return release(args, 2, specialised(c, frame, r < 0 ? nullptr : PyBool_FromLong(r)));
}

// ---- method descriptors: self must be exactly the descriptor's class ----

inline bool self_fits(const CallCache *c, PyObject **args)
{
    return Py_TYPE(args[0]) == static_cast<PyTypeObject *>(c->self);
}

PyObject *descr_o(const CallCache *c, PyObject **args, PyThreadState *ts, _PyInterpreterFrame *frame)
{
    if (!self_fits(c, args)) return generic(c, args, ts, frame);
    PyObject *res = counted_call(c, ts, args[0], args[1]);
    return release(args, 2, specialised(c, frame, res));
}

PyObject *descr_noargs(const CallCache *c, PyObject **args, PyThreadState *ts, _PyInterpreterFrame *frame)
{
    if (!self_fits(c, args)) return generic(c, args, ts, frame);
    PyObject *res = counted_call(c, ts, args[0], nullptr);
    return release(args, 1, specialised(c, frame, res));
}

PyObject *descr_fast(const CallCache *c, PyObject **args, PyThreadState *ts, _PyInterpreterFrame *frame)
{
    if (!self_fits(c, args)) return generic(c, args, ts, frame);
    PyObject *res = reinterpret_cast<_PyCFunctionFast>(c->cfunc)(args[0], args + 1, c->total - 1);
    return release(args, c->total, specialised(c, frame, res));
}

PyObject *descr_fast_kw(const CallCache *c, PyObject **args, PyThreadState *ts, _PyInterpreterFrame *frame)
{
    if (!self_fits(c, args)) return generic(c, args, ts, frame);
    PyObject *res =
        reinterpret_cast<_PyCFunctionFastWithKeywords>(c->cfunc)(args[0], args + 1, c->total - 1, nullptr);
    return release(args, c->total, specialised(c, frame, res));
}

// The positional arguments after self as the tuple a METH_VARARGS function takes.
inline PyObject *args_tuple(const CallCache *c, PyObject **args)
{
    Py_ssize_t n = c->total - 1;
    PyObject *tuple = PyTuple_New(n);
    if (tuple != nullptr) {
        for (Py_ssize_t i = 0; i < n; i++) PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i + 1]));
    }
    return tuple;
}

// A METH_VARARGS method (str.count, str.find, str.startswith, ...) or a
// METH_VARARGS|METH_KEYWORDS one called without keywords (str.format): what
// method_vectorcall_VARARGS(_KEYWORDS) does, without the vectorcall dispatch
// and the checks the cached callable already passed. 3.11 has no specialised
// form for these, so the result is checked and an error names the CALL, as
// the interpreter's unspecialised call does.
template <bool KEYWORDS>
PyObject *descr_varargs(const CallCache *c, PyObject **args, PyThreadState *ts, _PyInterpreterFrame *frame)
{
    if (!self_fits(c, args)) return generic(c, args, ts, frame);
    PyObject *tuple = args_tuple(c, args);
    PyObject *res = nullptr;
    if (tuple != nullptr) {
        if constexpr (KEYWORDS) {
            res = counted(ts, [&] {
                return reinterpret_cast<PyCFunctionWithKeywords>(c->cfunc)(args[0], tuple, nullptr);
            });
        } else {
            res = counted_call(c, ts, args[0], tuple);
        }
        Py_DECREF(tuple);
        res = _Py_CheckFunctionResult(ts, args[-1], res, nullptr);
    }
    return release(args, c->total, res);
}

// list.append on a list (or subclass): no recursion level, as
// PRECALL_NO_KW_LIST_APPEND.
PyObject *list_append(const CallCache *c, PyObject **args, PyThreadState *ts, _PyInterpreterFrame *frame)
{
    if (!PyList_Check(args[0])) return generic(c, args, ts, frame);
    PyObject *res = PyList_Append(args[0], args[1]) < 0 ? nullptr : Py_NewRef(Py_None);
    return release(args, 2, specialised(c, frame, res));
}

// ---- classes ----

PyObject *type_1(const CallCache *, PyObject **args, PyThreadState *, _PyInterpreterFrame *)
{
    return release(args, 1, Py_NewRef(reinterpret_cast<PyObject *>(Py_TYPE(args[0]))));
}

PyObject *str_1(const CallCache *c, PyObject **args, PyThreadState *, _PyInterpreterFrame *frame)
{
    return release(args, 1, specialised(c, frame, PyObject_Str(args[0])));
}

PyObject *tuple_1(const CallCache *c, PyObject **args, PyThreadState *, _PyInterpreterFrame *frame)
{
    return release(args, 1, specialised(c, frame, PySequence_Tuple(args[0])));
}

PyObject *class_vectorcall(const CallCache *c, PyObject **args, PyThreadState *, _PyInterpreterFrame *frame)
{
    PyObject *res = reinterpret_cast<vectorcallfunc>(c->cfunc)(args[-1], args, c->total, nullptr);
    return release(args, c->total, specialised(c, frame, res));
}

// A form filled while profiling: the profiler times the call of a C function
// that cProfile counts (the cache holds its handle) while it is still on.
PyObject *profiled(const CallCache *c, PyObject **args, PyThreadState *ts, _PyInterpreterFrame *frame)
{
    return prof::c_call_keyed(c->prof_key, [&] { return c->inner(c, args, ts, frame); });
}

// The form for `callable`, or nullptr when the cache must not hold it; sets
// cfunc and self. A callable it may hold but has no special form for is
// called the generic way (as the interpreter's unspecialised CALL would).
CachedCall select(PyObject *callable, bool is_meth, Py_ssize_t total, void **cfunc, void **self)
{
    PyTypeObject *type = Py_TYPE(callable);
    if (type == &PyCFunction_Type) {
        // Only a module's functions (or ones with no self): caching a bound
        // builtin method would keep its object alive.
        PyObject *m_self = PyCFunction_GET_SELF(callable);
        if (m_self != nullptr && !PyModule_CheckExact(m_self)) return nullptr;
        *cfunc = reinterpret_cast<void *>(PyCFunction_GET_FUNCTION(callable));
        *self = m_self;
        int flags = PyCFunction_GET_FLAGS(callable);
        if (total == 1 && callable == pyj_builtin_len()) return builtin_len;
        if (total == 2 && callable == pyj_builtin_isinstance()) return builtin_isinstance;
        if (flags == METH_O) return total == 1 ? builtin_o : generic;
        if (flags == METH_FASTCALL) return builtin_fast;
        if (flags == (METH_FASTCALL | METH_KEYWORDS)) return builtin_fast_kw;
        return generic;
    }
    if (type == &PyMethodDescr_Type) {
        if (total < 1) return generic;
        auto *descr = reinterpret_cast<PyMethodDescrObject *>(callable);
        PyMethodDef *meth = descr->d_method;
        *cfunc = reinterpret_cast<void *>(meth->ml_meth);
        *self = descr->d_common.d_type;
        if (callable == pyj_list_append_descr() && is_meth && total == 2) return list_append;
        if (meth->ml_flags == METH_O) return total == 2 ? descr_o : generic;
        if (meth->ml_flags == METH_NOARGS) return total == 1 ? descr_noargs : generic;
        if (meth->ml_flags == METH_VARARGS) return descr_varargs<false>;
        if (meth->ml_flags == (METH_VARARGS | METH_KEYWORDS)) return descr_varargs<true>;
        if (meth->ml_flags == METH_FASTCALL) return descr_fast;
        if (meth->ml_flags == (METH_FASTCALL | METH_KEYWORDS)) return descr_fast_kw;
        return generic;
    }
    if (PyType_Check(callable)) {
        // Static classes only: their slots never change and they live forever.
        auto *cls = reinterpret_cast<PyTypeObject *>(callable);
        if (cls->tp_flags & Py_TPFLAGS_HEAPTYPE) return nullptr;
        if (total == 1 && !is_meth) {
            if (cls == &PyType_Type) return type_1;
            if (cls == &PyUnicode_Type) return str_1;
            if (cls == &PyTuple_Type) return tuple_1;
        }
        if (cls->tp_vectorcall == nullptr) return generic;
        *cfunc = reinterpret_cast<void *>(cls->tp_vectorcall);
        return class_vectorcall;
    }
    return nullptr;
}

}  // namespace

bool fill(CallCache *cache, PyObject *callable, bool is_meth, Py_ssize_t total)
{
    if (callable == cache->rejected) return false;
    void *cfunc = nullptr, *self = nullptr;
    CachedCall form = select(callable, is_meth, total, &cfunc, &self);
    if (form == nullptr) {
        cache->rejected = callable;
        return false;
    }
    PyObject *old = cache->callable;
    cache->callable = Py_NewRef(callable);
    cache->call = form;
    cache->inner = form;
    cache->prof_key = prof::c_call_key(callable);
    if (cache->prof_key != nullptr) {
        cache->call = profiled;   // stays after profiling stops (then one check per call)
    }
    cache->cfunc = cfunc;
    cache->self = self;
    cache->total = static_cast<int32_t>(total);
    cache->is_meth = is_meth;
    Py_XDECREF(old);
    return true;
}

}  // namespace pyjion::callcache

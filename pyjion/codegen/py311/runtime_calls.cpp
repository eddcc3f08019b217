// The call helpers of CALL, CALL_FUNCTION_EX and MAKE_FUNCTION (see runtime_objects.h).
#include "runtime/runtime_objects.h"

#include "codegen_api.h"
#include "cpython/interp_state.h"
#include "runtime/arg_binding.h"
#include "runtime/call_cache.h"
#include "runtime/direct_call.h"
#include "runtime/profiled_call.h"
#include "runtime/runtime.h"

namespace pyjion::objrt {


// ---- calls ---------------------------------------------------------------------

// PRECALL on a bound method with no method slot: [NULL, bound] -> [func, self].
void precall_unpack_method(PyObject **base)
{
    PyObject *bound = base[1];
    PyObject *func = PyMethod_GET_FUNCTION(bound);
    PyObject *self = PyMethod_GET_SELF(bound);
    Py_INCREF(func);
    Py_INCREF(self);
    base[0] = func;
    base[1] = self;
    Py_DECREF(bound);
}

// The calls that the interpreter's specialised PRECALL forms (3.11 ceval.c:
// PRECALL_NO_KW_BUILTIN_FAST, PRECALL_BUILTIN_FAST_WITH_KEYWORDS,
// PRECALL_NO_KW_LEN, PRECALL_NO_KW_METHOD_DESCRIPTOR_FAST,
// PRECALL_METHOD_DESCRIPTOR_FAST_WITH_KEYWORDS) make straight to the C
// function, on the same conditions (Python/specialize.c and the DEOPT_IFs).
// PyObject_Vectorcall's builtin paths count one level of recursion depth for
// the call (cfunction_enter_call, method_enter_call); warm (quickened)
// interpreter code does not, and the depth that code below such a call sees
// (RecursionError, sys.setrecursionlimit's "limit is too low" check) must match
// it: contextlib's __enter__ resumes its generator through next(), a
// METH_FASTCALL builtin. Returns false if the call is none of these.
static inline bool call_c_direct(PyObject *callable, PyObject **args, Py_ssize_t total, Py_ssize_t nkw,
                                 PyObject *kwnames, PyObject **res)
{
    PyTypeObject *type = Py_TYPE(callable);
    if (type == &PyCFunction_Type) {
        PyCFunction cfunc = PyCFunction_GET_FUNCTION(callable);
        int flags = PyCFunction_GET_FLAGS(callable);
        if (cfunc == nullptr) return false;
        if (flags == METH_FASTCALL && nkw == 0) {
            *res = ((_PyCFunctionFast)(void (*)(void))cfunc)(PyCFunction_GET_SELF(callable), args, total);
            return true;
        }
        if (flags == (METH_FASTCALL | METH_KEYWORDS)) {
            *res = ((_PyCFunctionFastWithKeywords)(void (*)(void))cfunc)(PyCFunction_GET_SELF(callable), args,
                                                                         total - nkw, kwnames);
            return true;
        }
        if (total == 1 && nkw == 0 && callable == pyj_builtin_len()) {
            Py_ssize_t n = PyObject_Length(args[0]);
            *res = n < 0 ? nullptr : PyLong_FromSsize_t(n);
            return true;
        }
        return false;
    }
    if (type == &PyMethodDescr_Type && nkw == 0 && total >= 1) {
        PyMethodDescrObject *descr = (PyMethodDescrObject *)callable;
        PyMethodDef *meth = descr->d_method;
        if (Py_TYPE(args[0]) != descr->d_common.d_type) return false;
        if (meth->ml_flags == METH_FASTCALL) {
            *res = ((_PyCFunctionFast)(void (*)(void))meth->ml_meth)(args[0], args + 1, total - 1);
            return true;
        }
        if (meth->ml_flags == (METH_FASTCALL | METH_KEYWORDS)) {
            *res = ((_PyCFunctionFastWithKeywords)(void (*)(void))meth->ml_meth)(args[0], args + 1, total - 1,
                                                                                 nullptr);
            return true;
        }
    }
    return false;
}

// CALL: base points at [NULL or method, callable or self, args...] (oparg
// arguments after the callable slot). Consumes everything. A call to a plain
// Python function leaves prev_instr at the CALL's last inline cache entry
// (`py_call_instr`), as the interpreter does when it inlines such a call:
// f_lasti and the traceback entry of an exception coming out of it show that.
// `site`: the call's CallCache (calls without keyword names), filled here
// once the calling code is warm and the callable is one it can hold.
static inline PyObject *call_impl(PyObject **base, int oparg_warm, PyObject *kwnames, CallCache *site,
                                  _PyInterpreterFrame *frame, _Py_CODEUNIT *py_call_instr, PyThreadState *ts)
{
    // Bit 16: the calling code is warm (Compiler::kWarmupDelay), where the
    // interpreter would call C functions without counting a recursion level.
    int oparg = oparg_warm & 0xFFFF;
    bool warm = (oparg_warm >> 16) & 1;
    int is_meth = base[0] != nullptr;
    PyObject *callable = base[1 - is_meth];
    _Py_CODEUNIT *call_instr = frame->prev_instr;
    bool py_function = Py_TYPE(callable) == &PyFunction_Type;
    if (py_function) frame->prev_instr = py_call_instr;
    PyObject **args = base + 2 - is_meth;
    Py_ssize_t total = oparg + is_meth;
    Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
    auto path = direct::CallPath::kGeneric;
    if (py_function) {
        PyObject *res = direct::try_call(ts, callable, args, total - nkw, kwnames, &path);   // takes callable and args
        if (path == direct::CallPath::kCalled) return res;
    }
    if (kwnames == nullptr && Py_TYPE(callable) == &PyType_Type) {
        bool done;
        PyObject *res = direct::try_construct(ts, callable, args, total, &done);   // takes callable and args
        if (done) return res;
    }
    if (!py_function && warm && site != nullptr && callcache::fill(site, callable, is_meth, total)) {
        return callcache::call(site, args, ts, frame);
    }
    // args[-1] is a stack slot we own (the NULL or the callable itself), so the
    // callee may borrow it (PY_VECTORCALL_ARGUMENTS_OFFSET).
    PyObject *res;
    if (py_function) {
        res = PyObject_Vectorcall(callable, args, (size_t)(total - nkw) | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
    } else {
        res = prof::c_call(callable, args, total - nkw, [&] {
            PyObject *r;
            if (!warm || !call_c_direct(callable, args, total, nkw, kwnames, &r)) {
                r = PyObject_Vectorcall(callable, args, (size_t)(total - nkw) | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                        kwnames);
            }
            return r;
        });
    }
    if (res == nullptr && py_function && PyThreadState_Get()->curexc_traceback == nullptr) {
        // no traceback entry: the callee's frame never ran (its arguments did
        // not bind), which the interpreter reports at the CALL itself
        frame->prev_instr = call_instr;
        if (path == direct::CallPath::kUnbound) {
            direct::release_unbound_call(callable, args, total - nkw, kwnames);
            return nullptr;
        }
    }
    Py_DECREF(callable);
    for (Py_ssize_t i = 0; i < total; i++) Py_DECREF(args[i]);
    return res;
}

PyObject *call(PyObject **base, int oparg_warm, PyObject *kwnames, _PyInterpreterFrame *frame,
               _Py_CODEUNIT *py_call_instr, PyThreadState *ts)
{
    return call_impl(base, oparg_warm, kwnames, nullptr, frame, py_call_instr, ts);
}

// CALL without keyword names, through the site's cache.
PyObject *call_at_site(PyObject **base, int oparg_warm, CallCache *site, _PyInterpreterFrame *frame,
                       _Py_CODEUNIT *py_call_instr, PyThreadState *ts)
{
    return call_impl(base, oparg_warm, nullptr, site, frame, py_call_instr, ts);
}


// CALL_FUNCTION_EX: base points at [NULL, func, callargs, kwargs?]. Consumes all.
PyObject *call_function_ex(PyObject **base, int has_kwargs)
{
    PyObject *func = base[1];
    PyObject *callargs = base[2];
    PyObject *kwargs = has_kwargs ? base[3] : nullptr;
    PyObject *res = nullptr;
    if (kwargs != nullptr && !PyDict_CheckExact(kwargs)) {
        PyObject *d = PyDict_New();
        if (d == nullptr) goto done;
        if (_PyDict_MergeEx(d, kwargs, 2) < 0) {
            Py_DECREF(d);
            format_kwargs_error(func, kwargs);
            goto done;
        }
        Py_SETREF(kwargs, d);
    }
    if (!PyTuple_CheckExact(callargs)) {
        if (Py_TYPE(callargs)->tp_iter == nullptr && !PySequence_Check(callargs)) {
            PyErr_Clear();
            PyObject *fs = _PyObject_FunctionStr(func);
            if (fs != nullptr) {
                PyErr_Format(PyExc_TypeError, "%U argument after * must be an iterable, not %.200s", fs,
                             Py_TYPE(callargs)->tp_name);
                Py_DECREF(fs);
            }
            goto done;
        }
        PyObject *t = PySequence_Tuple(callargs);
        if (t == nullptr) goto done;
        Py_SETREF(callargs, t);
    }
    res = prof::c_call(func, &PyTuple_GET_ITEM(callargs, 0), PyTuple_GET_SIZE(callargs),
                       [&] { return PyObject_Call(func, callargs, kwargs); });
done:
    Py_DECREF(func);
    Py_DECREF(callargs);
    Py_XDECREF(kwargs);
    return res;
}

// MAKE_FUNCTION: base points at the optional parts (defaults, kwdefaults,
// annotations, closure: those oparg selects, bottom to top), then the code.
PyObject *make_function(_PyInterpreterFrame *frame, PyObject **base, int oparg)
{
    int n = 0;
    for (int bit = 0; bit < 4; bit++) n += (oparg >> bit) & 1;
    PyObject *code = base[n];
    PyFunctionObject *func = (PyFunctionObject *)PyFunction_New(code, frame->f_globals);
    Py_DECREF(code);
    if (func == nullptr) {
        for (int i = 0; i < n; i++) Py_DECREF(base[i]);
        return nullptr;
    }
    int i = n - 1;
    if (oparg & 0x08) func->func_closure = base[i--];
    if (oparg & 0x04) func->func_annotations = base[i--];
    if (oparg & 0x02) func->func_kwdefaults = base[i--];
    if (oparg & 0x01) func->func_defaults = base[i--];
    return (PyObject *)func;
}

}  // namespace pyjion::objrt

// CPython 3.13's opcode helpers (py313/runtime313.h), after Python/bytecodes.c.
#include "py313/runtime313.h"

#include "py313/attr_sites.h"
#include "py313/capi.h"
#include "py313/exact_call.h"
#include "cpython/interp_state.h"
#include "runtime/attr_cache.h"
#include "runtime/direct_call.h"
#include "runtime/profiled_call.h"

#include <cstring>

namespace pyjion::rt313 {

namespace {
const char kNameError[] = "name '%.200s' is not defined";
}  // namespace

PyObject *to_bool(PyObject *value)
{
    int truth = PyObject_IsTrue(value);
    Py_DECREF(value);
    if (truth < 0) return nullptr;
    return Py_NewRef(truth ? Py_True : Py_False);
}

PyObject *result_to_bool(PyObject *value) { return to_bool(value); }

PyObject *load_global(PyThreadState *ts, _PyInterpreterFrame *frame, PyObject *name)
{
    PyObject *res = nullptr;
    // PyMapping_GetOptionalItem takes a dict's own path for exact dicts.
    if (PyMapping_GetOptionalItem(frame->f_globals, name, &res) < 0) return nullptr;
    if (res != nullptr) return res;
    if (PyMapping_GetOptionalItem(frame->f_builtins, name, &res) < 0) return nullptr;
    if (res == nullptr) _PyEval_FormatExcCheckArg(ts, PyExc_NameError, kNameError, name);
    return res;
}

int load_attr(PyObject **sp, PyObject *name, int method)
{
    PyObject *owner = sp[-1];
    if (method) {
        PyObject *meth = nullptr;
        if (_PyObject_GetMethod(owner, name, &meth)) {
            sp[-1] = meth;   // [meth, self]: the owner's reference becomes self's
            sp[0] = owner;
            return 0;
        }
        Py_DECREF(owner);
        sp[-1] = meth;
        sp[0] = nullptr;
        return meth == nullptr ? -1 : 0;
    }
    PyObject *attr = PyObject_GetAttr(owner, name);
    Py_DECREF(owner);
    sp[-1] = attr;
    return attr == nullptr ? -1 : 0;
}

int load_attr_site(PyObject **sp, PyObject *name, int method, const _Py_CODEUNIT *site)
{
    if (pyj313_load_attr_site(sp, name, method, site)) return 0;
    rtn::count_load_miss();
    return load_attr(sp, name, method);
}

int store_attr_site(PyObject **sp, PyObject *name, const _Py_CODEUNIT *site)
{
    if (pyj313_store_attr_site(sp, site)) return 0;
    return store_attr(sp, name);
}

int store_attr(PyObject **sp, PyObject *name)
{
    PyObject *owner = sp[-1], *value = sp[-2];
    int err = PyObject_SetAttr(owner, name, value);
    Py_DECREF(value);
    Py_DECREF(owner);
    return err;
}

namespace {

// A builtin function, a method descriptor or a class with a vectorcall of
// its own called with positional arguments as the interpreter's specialised
// CALL forms call it (CALL_BUILTIN_O / _FAST, CALL_METHOD_DESCRIPTOR_O /
// _NOARGS / _FAST, CALL_BUILTIN_CLASS, with
// their guards: the exact calling convention, self of the descriptor's own
// type): its C function directly, the one-argument forms within the C
// recursion limit, without PyObject_Vectorcall's dispatch. False: not such
// a call (nothing done).
bool call_c_function(PyThreadState *ts, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                     PyObject **result)
{
    PyTypeObject *type = Py_TYPE(callable);
    PyMethodDef *def;
    PyObject *self;
    if (type == &PyCFunction_Type) {
        def = reinterpret_cast<PyCFunctionObject *>(callable)->m_ml;
        self = PyCFunction_GET_SELF(callable);
    } else if (type == &PyMethodDescr_Type && nargs >= 1) {
        auto *descr = reinterpret_cast<PyMethodDescrObject *>(callable);
        if (Py_TYPE(args[0]) != descr->d_common.d_type) return false;
        def = descr->d_method;
        self = args[0];
        args++;
        nargs--;
    } else if (type == &PyType_Type && PyType_HasFeature(reinterpret_cast<PyTypeObject *>(callable),
                                                          Py_TPFLAGS_IMMUTABLETYPE) &&
               reinterpret_cast<PyTypeObject *>(callable)->tp_vectorcall != nullptr) {
        // A builtin class with a constructor vectorcall of its own
        // (exceptions, int, list, ...), as CALL_BUILTIN_CLASS calls it (the
        // metaclass exactly type: no __call__ of another metaclass between).
        *result = reinterpret_cast<PyTypeObject *>(callable)->tp_vectorcall(callable, args,
                                                                            static_cast<size_t>(nargs), nullptr);
        return true;
    } else {
        return false;
    }
    PyCFunction meth = def->ml_meth;
    if (def->ml_flags == METH_FASTCALL) {
        *result = reinterpret_cast<PyCFunctionFast>(reinterpret_cast<void (*)(void)>(meth))(self, args, nargs);
        return true;
    }
    bool one = def->ml_flags == METH_O && nargs == 1;
    if (!one && !(def->ml_flags == METH_NOARGS && nargs == 0 && type == &PyMethodDescr_Type)) return false;
    if (pyj_enter_recursive_call(ts, " while calling a Python object")) {
        *result = nullptr;
        return true;
    }
    *result = meth(self, one ? args[0] : nullptr);
    pyj_leave_recursive_call(ts);
    return true;
}

}  // namespace

namespace {

// A bound method object at base[0] with no self in base[1]: its function
// there and its self in base[1] (new references; the method released), to
// be called with self first. Returns the function.
PyObject *unbind_method(PyObject **base)
{
    auto *bound = reinterpret_cast<PyMethodObject *>(base[0]);
    base[1] = Py_NewRef(bound->im_self);
    base[0] = Py_NewRef(bound->im_func);
    Py_DECREF(bound);
    return base[0];
}

// Every call rt313::call does not take on its fast path (a C frame of its
// own: the fast path needs none of its saved registers).
[[gnu::noinline]] PyObject *call_general(PyThreadState *ts, PyObject **base, int oparg, PyObject *kwnames)
{
    PyObject *callable = base[0];
    PyObject **args = base + 2;
    int total = oparg;
    if (base[1] != nullptr) {
        args--;
        total++;
    } else if (Py_TYPE(callable) == &PyMethod_Type) {
        args--;
        total++;
        callable = unbind_method(base);
    }
    Py_ssize_t positional = total - (kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0);
    vectorcallfunc vc = Py_TYPE(callable) == &PyFunction_Type
                            ? reinterpret_cast<PyFunctionObject *>(callable)->vectorcall
                            : nullptr;
    if (vc != nullptr && direct::plain_vectorcall(vc)) {
        // As the interpreter's CALL inlines it: the callee's frame takes the
        // function and the arguments from the stack. A function with
        // pyjion's vectorcall enters its machine code whether or not the hook
        // is installed; one with CPython's, only where the hook would.
        PyObject *res = direct::call_stealing(ts, callable, args, positional, kwnames, vc != direct::vectorcall,
                                              nullptr);
        Py_XDECREF(kwnames);
        return res;
    }
    PyObject *res;
    if (kwnames != nullptr || prof::on() || !call_c_function(ts, callable, args, positional, &res)) {
        res = prof::c_call(callable, args, positional, [&] {
            return PyObject_Vectorcall(callable, args,
                                       static_cast<size_t>(positional) | PY_VECTORCALL_ARGUMENTS_OFFSET, kwnames);
        });
    }
    Py_XDECREF(kwnames);
    Py_DECREF(callable);
    for (int i = 0; i < total; i++) Py_DECREF(args[i]);
    return res;
}

// A call of a Python function without keywords, in one C frame where it
// needs no binding but defaults: positional arguments for
// the positional parameters (the interpreter's CALL_PY_EXACT_ARGS,
// CALL_BOUND_METHOD_EXACT_ARGS, the default-filling part of
// CALL_PY_GENERAL), the frame pushed here and run by the callee's machine
// code where call_stealing would run it there (pyjion's vectorcall, or
// CPython's while the hook is the evaluator), else by the frame evaluator.
// It makes no call but the tail calls that end it (so it saves no registers).
[[gnu::noinline]] PyObject *call_python(PyThreadState *ts, PyObject **base, int oparg)
{
    auto *fn = reinterpret_cast<PyFunctionObject *>(base[0]);
    auto *code = reinterpret_cast<PyCodeObject *>(fn->func_code);
    vectorcallfunc vc = fn->vectorcall;
    bool ours = vc == direct::vectorcall;
    if ((ours || vc == direct::cpython_vectorcall) && !(code->co_flags & direct::kMakesGenerator)) {
        int with_self = base[1] != nullptr;
        _PyInterpreterFrame *frame =
            direct::push_positional_args(ts, fn, code, base + 2 - with_self, oparg + with_self, nullptr);
        if (frame != nullptr) {
            PyjionCodeView *rec = ours || direct::hook_evaluates(ts)
                                      ? direct::record_if_compiled_quick(ts, code)
                                      : nullptr;
            if (rec != nullptr) return direct::enter_compiled(rec, ts, frame);
            return direct::run_interpreted(ts, frame, code);
        }
    }
    return call_general(ts, base, oparg, nullptr);
}

// A bound method object called with no self in the stack's slot for it:
// its function called with self first, as call_general would do.
[[gnu::noinline]] PyObject *call_bound_method(PyThreadState *ts, PyObject **base, int oparg)
{
    if (Py_TYPE(unbind_method(base)) == &PyFunction_Type) return call_python(ts, base, oparg);
    return call_general(ts, base, oparg, nullptr);
}

}  // namespace

PyObject *call(PyThreadState *ts, PyObject **base, int oparg, PyObject *kwnames)
{
    // Tail calls only: Python functions and bound methods without keywords
    // to call_python, everything else (C functions first) to call_general.
    PyTypeObject *type = Py_TYPE(base[0]);
    if (kwnames == nullptr) {
        if (type == &PyFunction_Type) return call_python(ts, base, oparg);
        if (type == &PyMethod_Type && base[1] == nullptr) return call_bound_method(ts, base, oparg);
    }
    return call_general(ts, base, oparg, kwnames);
}

namespace {

// The C function of the builtin `name` (read once from the builtins module,
// and taken only if what is there is still that builtin: a C function of
// that name whose module is builtins; a program that had rebound it keeps
// the generic call). A callable is that builtin when it is a builtin
// function object running this C function, whoever holds it.
PyCFunction builtin_meth(const char *name)
{
    PyCFunction meth = nullptr;
    PyObject *module = PyImport_ImportModule("builtins");
    PyObject *fn = module != nullptr ? PyObject_GetAttrString(module, name) : nullptr;
    if (fn != nullptr && PyCFunction_CheckExact(fn) && PyCFunction_GET_SELF(fn) == module &&
        strcmp(reinterpret_cast<PyCFunctionObject *>(fn)->m_ml->ml_name, name) == 0) {
        meth = PyCFunction_GET_FUNCTION(fn);
    }
    Py_XDECREF(fn);
    Py_XDECREF(module);
    PyErr_Clear();
    return meth;
}

bool is_builtin(PyObject *callable, PyCFunction meth)
{
    return meth != nullptr && Py_TYPE(callable) == &PyCFunction_Type &&
           reinterpret_cast<PyCFunctionObject *>(callable)->m_ml->ml_meth == meth;
}

}  // namespace

PyObject *call_len(PyThreadState *ts, PyObject **base)
{
    static const PyCFunction len = builtin_meth("len");
    // (The profiler times C calls: they go the generic way while it runs.)
    if (base[1] != nullptr || prof::on() || !is_builtin(base[0], len)) return call(ts, base, 1, nullptr);
    PyObject *arg = base[2];
    Py_ssize_t n = PyObject_Length(arg);
    PyObject *res = n < 0 ? nullptr : PyLong_FromSsize_t(n);
    Py_DECREF(arg);
    Py_DECREF(base[0]);
    return res;
}

PyObject *call_isinstance(PyThreadState *ts, PyObject **base)
{
    static const PyCFunction isinstance = builtin_meth("isinstance");
    if (base[1] != nullptr || prof::on() || !is_builtin(base[0], isinstance)) return call(ts, base, 2, nullptr);
    PyObject *inst = base[2], *cls = base[3];
    int r = PyObject_IsInstance(inst, cls);
    Py_DECREF(inst);
    Py_DECREF(cls);
    Py_DECREF(base[0]);
    return r < 0 ? nullptr : Py_NewRef(r ? Py_True : Py_False);
}

namespace {

// The Python function `fn` called with `nargs` positional arguments (the
// references to both taken), as the interpreter pushes a frame for it: its
// machine code where it has pyjion's vectorcall, else where the hook would
// run it, else the interpreter (direct::call_stealing).
PyObject *call_python_function(PyThreadState *ts, PyObject *fn, PyObject *const *args, Py_ssize_t nargs)
{
    vectorcallfunc vc = reinterpret_cast<PyFunctionObject *>(fn)->vectorcall;
    return direct::call_stealing(ts, fn, args, nargs, nullptr, vc != direct::vectorcall, nullptr);
}

}  // namespace

int load_property(PyThreadState *ts, PyObject **sp, PyObject *fget)
{
    // (a property's fget cannot be replaced: while the type's version holds,
    // this is its getter)
    PyObject *owner = sp[-1];
    PyObject *res = call_python_function(ts, Py_NewRef(fget), &owner, 1);
    sp[-1] = res;
    return res == nullptr ? -1 : 0;
}

PyObject *call_alloc_init(PyThreadState *ts, PyObject **base, int oparg, uint32_t type_version)
{
    PyObject *callable = base[0];
    if (base[1] != nullptr || !PyType_Check(callable) ||
        reinterpret_cast<PyTypeObject *>(callable)->tp_version_tag != type_version) {
        return call(ts, base, oparg, nullptr);
    }
    auto *tp = reinterpret_cast<PyTypeObject *>(callable);
    PyObject *init = reinterpret_cast<PyHeapTypeObject *>(tp)->_spec_cache.init;
    if (init == nullptr || !PyFunction_Check(init) ||
        reinterpret_cast<PyCodeObject *>(reinterpret_cast<PyFunctionObject *>(init)->func_code)->co_argcount !=
            oparg + 1) {
        return call(ts, base, oparg, nullptr);
    }
    // object.__new__'s part (the site specialised only where that is the
    // class's __new__), then __init__ with the instance as self in the NULL's
    // slot: the frame takes the new references to self and the arguments.
    PyObject *self = tp->tp_alloc(tp, 0);
    if (self == nullptr) {
        for (int i = 0; i < oparg; i++) Py_DECREF(base[2 + i]);
        Py_DECREF(callable);
        return nullptr;
    }
    base[1] = Py_NewRef(self);
    PyObject *res = call_python_function(ts, Py_NewRef(init), base + 1, oparg + 1);
    Py_DECREF(callable);
    if (res == nullptr) {
        Py_DECREF(self);
        return nullptr;
    }
    if (res != Py_None) {
        PyErr_Format(PyExc_TypeError, "__init__() should return None, not '%.200s'", Py_TYPE(res)->tp_name);
        Py_DECREF(res);
        Py_DECREF(self);
        return nullptr;
    }
    Py_DECREF(res);
    return self;
}

PyObject *call_function_ex(PyObject **base, int has_kwargs)
{
    PyObject *func = base[0], *callargs = base[2];
    PyObject *kwargs = has_kwargs ? base[3] : nullptr;
    PyObject *result = nullptr;
    vectorcallfunc vc = nullptr;
    if (!PyTuple_CheckExact(callargs)) {
        if (Py_TYPE(callargs)->tp_iter == nullptr && !PySequence_Check(callargs)) {
            PyObject *funcstr = _PyObject_FunctionStr(func);
            if (funcstr != nullptr) {
                PyErr_Format(PyExc_TypeError, "%U argument after * must be an iterable, not %.200s", funcstr,
                             Py_TYPE(callargs)->tp_name);
                Py_DECREF(funcstr);
            }
            goto done;
        }
        PyObject *tuple = PySequence_Tuple(callargs);
        if (tuple == nullptr) goto done;
        Py_SETREF(base[2], tuple);
        callargs = tuple;
    }
    // (Read after the iteration above, which may run any code.)
    if (Py_TYPE(func) == &PyFunction_Type) vc = reinterpret_cast<PyFunctionObject *>(func)->vectorcall;
    if (vc != nullptr && direct::plain_vectorcall(vc) &&
        (kwargs == nullptr || (PyDict_Check(kwargs) && PyDict_GET_SIZE(kwargs) == 0))) {
        // As the interpreter inlines it (_PyEvalFramePushAndInit_Ex without
        // keywords): the frame takes the function and new references to the
        // tuple's items; the tuple goes once they are bound.
        Py_ssize_t nargs = PyTuple_GET_SIZE(callargs);
        for (Py_ssize_t i = 0; i < nargs; i++) Py_INCREF(PyTuple_GET_ITEM(callargs, i));
        Py_XDECREF(base[1]);
        Py_XDECREF(kwargs);
        return direct::call_stealing(PyThreadState_Get(), func, &PyTuple_GET_ITEM(callargs, 0), nargs, nullptr,
                                     vc != direct::vectorcall, callargs);
    }
    result = prof::c_call(func, &PyTuple_GET_ITEM(callargs, 0), PyTuple_GET_SIZE(callargs),
                          [&] { return PyObject_Call(func, callargs, kwargs); });
done:
    Py_DECREF(func);
    Py_XDECREF(base[1]);
    Py_DECREF(base[2]);
    Py_XDECREF(kwargs);
    return result;
}

PyObject *make_function(_PyInterpreterFrame *frame, PyObject *code)
{
    PyObject *func = PyFunction_New(code, frame->f_globals);
    Py_DECREF(code);
    if (func == nullptr) return nullptr;
    _PyFunction_SetVersion(reinterpret_cast<PyFunctionObject *>(func),
                           reinterpret_cast<PyCodeObject *>(code)->co_version);
    return func;
}

PyObject *intrinsic1(PyThreadState *ts, PyObject *value, int oparg)
{
    PyObject *res = _PyIntrinsics_UnaryFunctions[oparg].func(ts, value);
    Py_DECREF(value);
    return res;
}

PyObject *intrinsic2(PyThreadState *ts, PyObject *value2, PyObject *value1, int oparg)
{
    PyObject *res = _PyIntrinsics_BinaryFunctions[oparg].func(ts, value2, value1);
    Py_DECREF(value2);
    Py_DECREF(value1);
    return res;
}

PyObject *binary_slice(PyObject *container, PyObject *start, PyObject *stop)
{
    PyObject *slice = PySlice_New(start, stop, nullptr);
    Py_DECREF(start);
    Py_DECREF(stop);
    PyObject *res = slice != nullptr ? PyObject_GetItem(container, slice) : nullptr;
    Py_XDECREF(slice);
    Py_DECREF(container);
    return res;
}

int store_slice(PyObject **sp)
{
    PyObject *v = sp[-4], *container = sp[-3], *start = sp[-2], *stop = sp[-1];
    PyObject *slice = PySlice_New(start, stop, nullptr);
    Py_DECREF(start);
    Py_DECREF(stop);
    int err = slice != nullptr ? PyObject_SetItem(container, slice, v) : -1;
    Py_XDECREF(slice);
    Py_DECREF(v);
    Py_DECREF(container);
    return err < 0 ? -1 : 0;
}

PyObject *convert_value(PyObject *value, int oparg)
{
    PyObject *res = _PyEval_ConversionFuncs[oparg](value);
    Py_DECREF(value);
    return res;
}

PyObject *format_simple(PyObject *value)
{
    if (PyUnicode_CheckExact(value)) return value;   // format(str) is the string itself
    PyObject *res = PyObject_Format(value, nullptr);
    Py_DECREF(value);
    return res;
}

PyObject *format_with_spec(PyObject *value, PyObject *spec)
{
    PyObject *res = PyObject_Format(value, spec);
    Py_DECREF(value);
    Py_DECREF(spec);
    return res;
}

PyObject *load_from_dict_or_globals(PyThreadState *ts, _PyInterpreterFrame *frame, PyObject *dict, PyObject *name)
{
    PyObject *v = nullptr;
    if (PyMapping_GetOptionalItem(dict, name, &v) < 0) return nullptr;
    if (v == nullptr) {
        v = load_global(ts, frame, name);
        if (v == nullptr) return nullptr;
    }
    Py_DECREF(dict);
    return v;
}

PyObject *load_from_dict_or_deref(PyThreadState *ts, _PyInterpreterFrame *frame, PyObject *dict, int oparg)
{
    PyCodeObject *code = layout::frame_code(frame);
    PyObject *name = PyTuple_GET_ITEM(code->co_localsplusnames, oparg);
    PyObject *value = nullptr;
    if (PyMapping_GetOptionalItem(dict, name, &value) < 0) return nullptr;
    if (value == nullptr) {
        PyObject *cell = frame->localsplus[oparg];
        value = PyCell_Get(cell);   // a new reference, or NULL (empty: no exception)
        if (value == nullptr) {
            if (PyErr_Occurred()) return nullptr;
            _PyEval_FormatExcUnbound(ts, code, oparg);
            return nullptr;
        }
    }
    Py_DECREF(dict);
    return value;
}

PyObject *load_locals(_PyInterpreterFrame *frame)
{
    if (frame->f_locals == nullptr) {
        PyErr_SetString(PyExc_SystemError, "no locals found");
        return nullptr;
    }
    return Py_NewRef(frame->f_locals);
}

int exit_init_check(PyObject *value)
{
    if (value != Py_None) {
        PyErr_Format(PyExc_TypeError, "__init__() should return None, not '%.200s'", Py_TYPE(value)->tp_name);
        Py_DECREF(value);
        return -1;
    }
    Py_DECREF(value);
    return 0;
}

int load_super_attr(PyObject **sp, PyObject *name, int oparg)
{
    PyObject *global_super = sp[-3], *cls = sp[-2], *self = sp[-1];
    bool method = oparg & 1;
    PyObject *attr;
    if (global_super == reinterpret_cast<PyObject *>(&PySuper_Type) && PyType_Check(cls)) {
        // LOAD_SUPER_ATTR_ATTR / _METHOD: the lookup super(cls, self).name
        // makes, without making the super object; a method found is
        // returned unbound, with self to be its first argument.
        int method_found = 0;
        bool generic_getattr = Py_TYPE(self)->tp_getattro == PyObject_GenericGetAttr;
        attr = _PySuper_Lookup(reinterpret_cast<PyTypeObject *>(cls), self, name,
                               method && generic_getattr ? &method_found : nullptr);
        Py_DECREF(global_super);
        Py_DECREF(cls);
        if (method_found) {
            sp[-2] = self;   // the reference moves
        } else {
            Py_DECREF(self);
            if (method) sp[-2] = nullptr;
        }
    } else {
        PyObject *stack[] = {cls, self};
        // oparg & 2: super(cls, self) spelt out; else super() with both implied.
        PyObject *super = PyObject_Vectorcall(global_super, stack, oparg & 2, nullptr);
        Py_DECREF(global_super);
        Py_DECREF(cls);
        Py_DECREF(self);
        attr = super != nullptr ? PyObject_GetAttr(super, name) : nullptr;
        Py_XDECREF(super);
        if (method) sp[-2] = nullptr;
    }
    if (attr == nullptr) return -1;   // (self, if it was to be kept, is kept only with attr)
    sp[-3] = attr;
    return 0;
}

int send(PyThreadState *, PyObject **sp)
{
    PyObject *receiver = sp[-2], *value = sp[-1];
    PyObject *result = nullptr;
    PySendResult status = PyIter_Send(receiver, value, &result);
    if (status == PYGEN_ERROR) return -1;
    Py_DECREF(value);
    sp[-1] = result;
    return status == PYGEN_RETURN ? 1 : 0;
}

int cleanup_throw(PyObject **sp)
{
    PyObject *exc = sp[-1];
    if (PyErr_GivenExceptionMatches(exc, PyExc_StopIteration)) {
        PyObject *value = Py_NewRef(reinterpret_cast<PyStopIterationObject *>(exc)->value);
        Py_DECREF(sp[-3]);
        Py_DECREF(sp[-2]);
        Py_DECREF(exc);
        sp[-3] = Py_NewRef(Py_None);
        sp[-2] = value;
        return 0;
    }
    PyErr_SetRaisedException(Py_NewRef(exc));
    return 1;
}

}  // namespace pyjion::rt313

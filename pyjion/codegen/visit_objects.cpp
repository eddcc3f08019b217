// Visitors: Calls, containers, subscripts, unary operators, iteration, formatting and pattern matching.
//
// Most of these opcodes call a runtime helper (the `objrt` functions below).
// Unless a helper's comment says otherwise it CONSUMES the stack values it is
// given (one reference each, on success and on failure alike) and returns a new
// reference, or NULL with an exception set; the visitor then models the inputs
// as gone and takes the error exit at the depth that is left. The helpers are
// written from CPython 3.11's documented behaviour and its exported C API:
// ceval.c's own statics (unpack_iterable, match_class, match_keys,
// format_kwargs_error, ...) are not exported by libpython.
#include "compiler.h"

#include "../codegen_api.h"
#include "interp_state.h"
#include "opcodes.h"
#include "arg_binding.h"
#include "call_cache.h"
#include "direct_call.h"
#include "runtime.h"
#include "runtime_slots.h"
#include "specialize.h"

namespace pyjion {

using namespace asmjit;

namespace objrt {

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
    if (py_function || !warm || !call_c_direct(callable, args, total, nkw, kwnames, &res)) {
        res = PyObject_Vectorcall(callable, args, (size_t)(total - nkw) | PY_VECTORCALL_ARGUMENTS_OFFSET,
                                  kwnames);
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

// The TypeErrors CALL_FUNCTION_EX and DICT_MERGE raise about ** arguments.
void format_kwargs_error(PyObject *func, PyObject *kwargs)
{
    if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        // _PyDict_MergeEx looked for .keys() on something that is not a mapping
        PyErr_Clear();
        PyObject *fs = _PyObject_FunctionStr(func);
        if (fs != nullptr) {
            PyErr_Format(PyExc_TypeError, "%U argument after ** must be a mapping, not %.200s", fs,
                         Py_TYPE(kwargs)->tp_name);
            Py_DECREF(fs);
        }
        return;
    }
    if (!PyErr_ExceptionMatches(PyExc_KeyError)) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (value != nullptr && PyTuple_Check(value) && PyTuple_GET_SIZE(value) == 1) {
        PyObject *fs = _PyObject_FunctionStr(func);
        if (fs != nullptr) {
            PyErr_Format(PyExc_TypeError, "%U got multiple values for keyword argument '%S'", fs,
                         PyTuple_GET_ITEM(value, 0));
            Py_DECREF(fs);
        }
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
    } else {
        PyErr_Restore(type, value, tb);
    }
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
    res = PyObject_Call(func, callargs, kwargs);
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

// ---- building containers -------------------------------------------------------

PyObject *build_tuple(PyObject **items, int n)
{
    PyObject *t = PyTuple_New(n);
    if (t == nullptr) {
        for (int i = 0; i < n; i++) Py_DECREF(items[i]);
        return nullptr;
    }
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, items[i]);
    return t;
}

PyObject *build_list(PyObject **items, int n)
{
    PyObject *l = PyList_New(n);
    if (l == nullptr) {
        for (int i = 0; i < n; i++) Py_DECREF(items[i]);
        return nullptr;
    }
    for (int i = 0; i < n; i++) PyList_SET_ITEM(l, i, items[i]);
    return l;
}

PyObject *build_set(PyObject **items, int n)
{
    PyObject *s = PySet_New(nullptr);
    int err = s == nullptr ? -1 : 0;
    for (int i = 0; i < n; i++) {
        if (err == 0) err = PySet_Add(s, items[i]);
        Py_DECREF(items[i]);
    }
    if (err != 0) {
        Py_XDECREF(s);
        return nullptr;
    }
    return s;
}

// BUILD_MAP: items holds key0, value0, key1, value1, ...
PyObject *build_map(PyObject **items, int n)
{
    PyObject *d = _PyDict_NewPresized(n);
    if (d != nullptr) {
        for (int i = 0; i < n; i++) {
            if (PyDict_SetItem(d, items[2 * i], items[2 * i + 1]) < 0) {
                Py_CLEAR(d);
                break;
            }
        }
    }
    for (int i = 0; i < 2 * n; i++) Py_DECREF(items[i]);
    return d;
}

// BUILD_CONST_KEY_MAP: items holds n values and then the tuple of keys.
PyObject *build_const_key_map(PyObject **items, int n)
{
    PyObject *keys = items[n];
    PyObject *d = nullptr;
    if (!PyTuple_CheckExact(keys) || PyTuple_GET_SIZE(keys) != n) {
        PyErr_SetString(PyExc_SystemError, "bad BUILD_CONST_KEY_MAP keys argument");
    } else {
        d = _PyDict_NewPresized(n);
        if (d != nullptr) {
            for (int i = 0; i < n; i++) {
                if (PyDict_SetItem(d, PyTuple_GET_ITEM(keys, i), items[i]) < 0) {
                    Py_CLEAR(d);
                    break;
                }
            }
        }
    }
    for (int i = 0; i <= n; i++) Py_DECREF(items[i]);
    return d;
}

PyObject *build_string(PyObject **items, int n)
{
    static PyObject *empty = PyUnicode_New(0, 0);   // kept for the life of the process
    PyObject *s = empty != nullptr ? _PyUnicode_JoinArray(empty, items, n) : nullptr;
    for (int i = 0; i < n; i++) Py_DECREF(items[i]);
    return s;
}

// BUILD_SLICE: step is NULL for the two-argument form.
PyObject *build_slice(PyObject *start, PyObject *stop, PyObject *step)
{
    PyObject *s = PySlice_New(start, stop, step);
    Py_DECREF(start);
    Py_DECREF(stop);
    Py_XDECREF(step);
    return s;
}

// The *_APPEND/ADD/EXTEND/UPDATE/MERGE helpers consume only the value(s) popped
// and return 0, or -1 with an exception set.
int list_append(PyObject *list, PyObject *v)
{
    int err = PyList_Append(list, v);
    Py_DECREF(v);
    return err;
}

int set_add(PyObject *set, PyObject *v)
{
    int err = PySet_Add(set, v);
    Py_DECREF(v);
    return err;
}

int map_add(PyObject *map, PyObject *key, PyObject *value)
{
    int err = PyDict_SetItem(map, key, value);
    Py_DECREF(key);
    Py_DECREF(value);
    return err;
}

int list_extend(PyObject *list, PyObject *iterable)
{
    PyObject *none = _PyList_Extend((PyListObject *)list, iterable);
    if (none == nullptr) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) && Py_TYPE(iterable)->tp_iter == nullptr &&
            !PySequence_Check(iterable)) {
            PyErr_Clear();
            PyErr_Format(PyExc_TypeError, "Value after * must be an iterable, not %.200s",
                         Py_TYPE(iterable)->tp_name);
        }
        Py_DECREF(iterable);
        return -1;
    }
    Py_DECREF(none);
    Py_DECREF(iterable);
    return 0;
}

int set_update(PyObject *set, PyObject *iterable)
{
    int err = _PySet_Update(set, iterable);
    Py_DECREF(iterable);
    return err < 0 ? -1 : 0;
}

int dict_update(PyObject *dict, PyObject *update)
{
    int err = PyDict_Update(dict, update);
    if (err < 0 && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Format(PyExc_TypeError, "'%.200s' object is not a mapping", Py_TYPE(update)->tp_name);
    }
    Py_DECREF(update);
    return err < 0 ? -1 : 0;
}

int dict_merge(PyObject *dict, PyObject *update, PyObject *func)
{
    int err = _PyDict_MergeEx(dict, update, 2);
    if (err < 0) format_kwargs_error(func, update);
    Py_DECREF(update);
    return err < 0 ? -1 : 0;
}

PyObject *list_to_tuple(PyObject *list)
{
    PyObject *t = PyList_AsTuple(list);
    Py_DECREF(list);
    return t;
}

// ---- unpacking -------------------------------------------------------------------

// UNPACK_SEQUENCE (after == -1) and UNPACK_EX: writes before [+ 1 + after]
// values downwards from top[-1] (the first value ends up on top of the stack).
// Consumes seq; returns 0, or -1 with an exception set and nothing written.
int unpack(PyObject *seq, int before, int after, PyObject **top)
{
    if (after < 0 && (PyTuple_CheckExact(seq) || PyList_CheckExact(seq)) && Py_SIZE(seq) == before) {
        PyObject **items = PyTuple_CheckExact(seq) ? &PyTuple_GET_ITEM(seq, 0) : ((PyListObject *)seq)->ob_item;
        for (int i = 0; i < before; i++) {
            Py_INCREF(items[i]);
            top[-1 - i] = items[i];
        }
        Py_DECREF(seq);
        return 0;
    }
    int written = 0;
    PyObject *rest = nullptr;
    PyObject *it = PyObject_GetIter(seq);
    if (it == nullptr) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) && Py_TYPE(seq)->tp_iter == nullptr &&
            !PySequence_Check(seq)) {
            PyErr_Format(PyExc_TypeError, "cannot unpack non-iterable %.200s object", Py_TYPE(seq)->tp_name);
        }
        Py_DECREF(seq);
        return -1;
    }
    for (; written < before; written++) {
        PyObject *v = PyIter_Next(it);
        if (v == nullptr) {
            if (!PyErr_Occurred()) {
                if (after < 0) {
                    PyErr_Format(PyExc_ValueError, "not enough values to unpack (expected %d, got %d)", before,
                                 written);
                } else {
                    PyErr_Format(PyExc_ValueError, "not enough values to unpack (expected at least %d, got %d)",
                                 before + after, written);
                }
            }
            goto fail;
        }
        top[-1 - written] = v;
    }
    if (after < 0) {
        PyObject *extra = PyIter_Next(it);
        if (extra == nullptr) {
            if (PyErr_Occurred()) goto fail;
            Py_DECREF(it);
            Py_DECREF(seq);
            return 0;
        }
        Py_DECREF(extra);
        PyErr_Format(PyExc_ValueError, "too many values to unpack (expected %d)", before);
        goto fail;
    }
    rest = PySequence_List(it);
    if (rest == nullptr) goto fail;
    {
        Py_ssize_t nrest = PyList_GET_SIZE(rest);
        if (nrest < after) {
            PyErr_Format(PyExc_ValueError, "not enough values to unpack (expected at least %d, got %zd)",
                         before + after, (Py_ssize_t)before + nrest);
            Py_DECREF(rest);
            goto fail;
        }
        top[-1 - written] = rest;
        written++;
        for (int j = 0; j < after; j++) {
            // the last `after` items move from the list to the stack (reference and all)
            top[-1 - written] = PyList_GET_ITEM(rest, nrest - after + j);
            written++;
        }
        Py_SET_SIZE(rest, nrest - after);
    }
    Py_DECREF(it);
    Py_DECREF(seq);
    return 0;
fail:
    for (int i = 0; i < written; i++) Py_DECREF(top[-1 - i]);
    Py_DECREF(it);
    Py_DECREF(seq);
    return -1;
}

// STORE_SUBSCR and DELETE_SUBSCR: consume their operands; 0 or -1.
// STORE_SUBSCR's generic path; an exact dict as STORE_SUBSCR_DICT.
int store_subscr(PyObject *container, PyObject *sub, PyObject *v)
{
    int err = PyDict_CheckExact(container) ? PyDict_SetItem(container, sub, v) : PyObject_SetItem(container, sub, v);
    Py_DECREF(v);
    Py_DECREF(container);
    Py_DECREF(sub);
    return err < 0 ? -1 : 0;
}

int delete_subscr(PyObject *container, PyObject *sub)
{
    int err = PyObject_DelItem(container, sub);
    Py_DECREF(container);
    Py_DECREF(sub);
    return err < 0 ? -1 : 0;
}

// ---- unary operators, iteration, formatting ----------------------------------------

template <PyObject *(*F)(PyObject *)>
PyObject *consume1(PyObject *v)
{
    PyObject *r = F(v);
    Py_DECREF(v);
    return r;
}

PyObject *unary_not(PyObject *v)
{
    int t = PyObject_IsTrue(v);
    Py_DECREF(v);
    if (t < 0) return nullptr;
    PyObject *r = t ? Py_False : Py_True;
    Py_INCREF(r);
    return r;
}

PyObject *contains_op(PyObject *left, PyObject *right, int invert)
{
    int res = PySequence_Contains(right, left);
    Py_DECREF(left);
    Py_DECREF(right);
    if (res < 0) return nullptr;
    PyObject *b = (res ^ invert) ? Py_True : Py_False;
    Py_INCREF(b);
    return b;
}

// FOR_ITER after tp_iternext returned NULL: 0 if the iterator is simply
// exhausted (a StopIteration is cleared), -1 if it raised something else.
int for_iter_ended()
{
    if (PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_StopIteration)) return -1;
        PyErr_Clear();
    }
    return 0;
}

PyObject *format_value(PyObject *value, PyObject *spec, int conversion)
{
    PyObject *(*conv)(PyObject *) = nullptr;
    switch (conversion) {
    case 0: break;
    case 1: conv = PyObject_Str; break;
    case 2: conv = PyObject_Repr; break;
    case 3: conv = PyObject_ASCII; break;
    default:
        PyErr_Format(PyExc_SystemError, "unexpected conversion flag %d", conversion);
        Py_DECREF(value);
        Py_XDECREF(spec);
        return nullptr;
    }
    if (conv != nullptr) {
        PyObject *converted = conv(value);
        Py_DECREF(value);
        if (converted == nullptr) {
            Py_XDECREF(spec);
            return nullptr;
        }
        value = converted;
    }
    if (spec == nullptr && PyUnicode_CheckExact(value)) return value;
    PyObject *res = PyObject_Format(value, spec);
    Py_DECREF(value);
    Py_XDECREF(spec);
    return res;
}

// GET_LEN: does not consume.
PyObject *get_len(PyObject *obj)
{
    Py_ssize_t n = PyObject_Length(obj);
    if (n < 0) return nullptr;
    return PyLong_FromSsize_t(n);
}

// ---- pattern matching -------------------------------------------------------------

// MATCH_KEYS: does not consume. A tuple of the values of `keys` in `map`,
// None if one is missing, NULL on error.
PyObject *match_keys(PyObject *map, PyObject *keys)
{
    Py_ssize_t nkeys = PyTuple_GET_SIZE(keys);
    if (nkeys == 0) return PyTuple_New(0);
    static PyObject *get_name = PyUnicode_InternFromString("get");
    if (get_name == nullptr) return nullptr;
    PyObject *get = nullptr, *seen = nullptr, *dummy = nullptr, *values = nullptr;
    // map.get(key, dummy): atomic, and no __missing__ side effects
    int unbound = _PyObject_GetMethod(map, get_name, &get);
    if (get == nullptr) goto fail;
    seen = PySet_New(nullptr);
    if (seen == nullptr) goto fail;
    dummy = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (dummy == nullptr) goto fail;
    values = PyTuple_New(nkeys);
    if (values == nullptr) goto fail;
    for (Py_ssize_t i = 0; i < nkeys; i++) {
        PyObject *key = PyTuple_GET_ITEM(keys, i);
        if (PySet_Contains(seen, key) || PySet_Add(seen, key)) {
            if (!PyErr_Occurred()) PyErr_Format(PyExc_ValueError, "mapping pattern checks duplicate key (%R)", key);
            goto fail;
        }
        PyObject *args[3] = {map, key, dummy};
        PyObject *v = unbound ? PyObject_Vectorcall(get, args, 3, nullptr)
                              : PyObject_Vectorcall(get, args + 1, 2, nullptr);
        if (v == nullptr) goto fail;
        if (v == dummy) {
            Py_DECREF(v);
            Py_DECREF(values);
            Py_INCREF(Py_None);
            values = Py_None;
            break;
        }
        PyTuple_SET_ITEM(values, i, v);
    }
    Py_DECREF(get);
    Py_DECREF(seen);
    Py_DECREF(dummy);
    return values;
fail:
    Py_XDECREF(get);
    Py_XDECREF(seen);
    Py_XDECREF(dummy);
    Py_XDECREF(values);
    return nullptr;
}

// One attribute of a class pattern: a new reference, or NULL (with an
// exception only for errors other than a missing attribute).
static PyObject *match_class_attr(PyObject *subject, PyObject *type, PyObject *name, PyObject *seen)
{
    if (PySet_Contains(seen, name) || PySet_Add(seen, name)) {
        if (!PyErr_Occurred()) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple sub-patterns for attribute %R",
                         ((PyTypeObject *)type)->tp_name, name);
        }
        return nullptr;
    }
    PyObject *attr = PyObject_GetAttr(subject, name);
    if (attr == nullptr && PyErr_ExceptionMatches(PyExc_AttributeError)) PyErr_Clear();
    return attr;
}

// A tuple of the sub-pattern attributes, NULL without exception when the
// subject does not match, NULL with exception on error.
static PyObject *match_class_impl(PyObject *subject, PyObject *type, Py_ssize_t nargs, PyObject *kwnames)
{
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "called match pattern must be a type");
        return nullptr;
    }
    int inst = PyObject_IsInstance(subject, type);
    if (inst <= 0) return nullptr;
    PyObject *seen = PySet_New(nullptr);
    if (seen == nullptr) return nullptr;
    PyObject *attrs = PyList_New(0);
    if (attrs == nullptr) {
        Py_DECREF(seen);
        return nullptr;
    }
    PyObject *match_args = nullptr;
    if (nargs) {
        bool match_self = false;
        match_args = PyObject_GetAttrString(type, "__match_args__");
        if (match_args != nullptr) {
            if (!PyTuple_CheckExact(match_args)) {
                PyErr_Format(PyExc_TypeError, "%s.__match_args__ must be a tuple (got %s)",
                             ((PyTypeObject *)type)->tp_name, Py_TYPE(match_args)->tp_name);
                goto fail;
            }
        } else if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
            PyErr_Clear();
            // the "match self" flag counts only when __match_args__ is absent
            match_args = PyTuple_New(0);
            if (match_args == nullptr) goto fail;
            match_self = PyType_HasFeature((PyTypeObject *)type, _Py_TPFLAGS_MATCH_SELF);
        } else {
            goto fail;
        }
        Py_ssize_t allowed = match_self ? 1 : PyTuple_GET_SIZE(match_args);
        if (allowed < nargs) {
            PyErr_Format(PyExc_TypeError, "%s() accepts %zd positional sub-pattern%s (%zd given)",
                         ((PyTypeObject *)type)->tp_name, allowed, allowed == 1 ? "" : "s", nargs);
            goto fail;
        }
        if (match_self) {
            if (PyList_Append(attrs, subject) < 0) goto fail;
        } else {
            for (Py_ssize_t i = 0; i < nargs; i++) {
                PyObject *name = PyTuple_GET_ITEM(match_args, i);
                if (!PyUnicode_CheckExact(name)) {
                    PyErr_Format(PyExc_TypeError, "__match_args__ elements must be strings (got %s)",
                                 Py_TYPE(name)->tp_name);
                    goto fail;
                }
                PyObject *attr = match_class_attr(subject, type, name, seen);
                if (attr == nullptr) goto fail;
                int err = PyList_Append(attrs, attr);
                Py_DECREF(attr);
                if (err < 0) goto fail;
            }
        }
        Py_CLEAR(match_args);
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
        PyObject *attr = match_class_attr(subject, type, PyTuple_GET_ITEM(kwnames, i), seen);
        if (attr == nullptr) goto fail;
        int err = PyList_Append(attrs, attr);
        Py_DECREF(attr);
        if (err < 0) goto fail;
    }
    Py_SETREF(attrs, PyList_AsTuple(attrs));
    Py_DECREF(seen);
    return attrs;
fail:
    Py_XDECREF(match_args);
    Py_DECREF(seen);
    Py_DECREF(attrs);
    return nullptr;
}

// MATCH_CLASS: consumes subject, type and names; the attribute tuple, None for
// no match, or NULL on error.
PyObject *match_class(PyObject *subject, PyObject *type, PyObject *names, int nargs)
{
    PyObject *attrs = match_class_impl(subject, type, nargs, names);
    if (attrs == nullptr && !PyErr_Occurred()) {
        Py_INCREF(Py_None);
        attrs = Py_None;
    }
    Py_DECREF(names);
    Py_DECREF(type);
    Py_DECREF(subject);
    return attrs;
}

}  // namespace objrt

#define CALL(fn) PYJ_CALL(*this, fn)

namespace {

// CPython 3.11's list iterator (Objects/listobject.c, not in any header).
struct ListIterLayout {
    PyObject_HEAD
    Py_ssize_t it_index;
    PyListObject *it_seq;   // NULL once exhausted
};

// CPython 3.11's range iterator (Objects/rangeobject.c, not in any header):
// the next value is start + index * step while index < len.
struct RangeIterLayout {
    PyObject_HEAD
    long index;
    long start;
    long step;
    long len;
};

// rcx = the index `obj` when it is an exact int in [0, 2**30) (the list and
// tuple fast paths of the subscripts), else a jump to `fail`. Clobbers rax.
void small_index(Compiler &c, const x86::Gp &obj, const Label &fail)
{
    guard_type(c, obj, &PyLong_Type, fail);
    load_small_int(c, obj, x86::rcx, fail);
    c.as().test(x86::rcx, x86::rcx);
    c.as().js(fail);
}

// Loads the address of value-stack slot `slot` (0 = bottom) into `reg`.
void slot_address(Compiler &c, const x86::Gp &reg, int slot) { c.as().lea(reg, c.em().stack(slot)); }

// After a helper that consumed `consumed` values and returned a new reference
// (or NULL) in rax: model the inputs gone, take the error exit on NULL, push.
void push_result(Compiler &c, int consumed)
{
    c.drop(consumed);
    c.jump_if_error_zero(x86::rax, c.depth());
    c.push(x86::rax);
}

// After a helper that consumed `consumed` values and returned an int status
// in eax: model the inputs gone, take the error exit when negative.
void check_status(Compiler &c, int consumed)
{
    c.drop(consumed);
    c.jump_if_error_negative(x86::eax, c.depth());
}

}  // namespace

// ---- calls ---------------------------------------------------------------------

void Compiler::visit_PUSH_NULL(const Instr &)
{
    em_.as().xor_(x86::eax, x86::eax);
    push(x86::rax);
}

// [NULL, bound method, args] -> [function, self, args], as the interpreter's
// PRECALL does; the call itself happens in CALL. PRECALL's stack effect is
// -oparg (the arguments are counted as consumed here), CALL's is -1.
void Compiler::visit_PRECALL(const Instr &ins)
{
    auto &a = em_.as();
    int base = depth_ - ins.oparg - 2;
    int unit = ins.index;
    Label done = a.newLabel();
    Label unpack = em_.cold([this, base, unit, done](Emitter &e) {
        e.set_prev_instr(unit);
        e.as().lea(x86::rdi, e.stack(base));
        CALL(objrt::precall_unpack_method);
        e.as().jmp(done);
    });
    a.cmp(em_.stack(base), 0);
    a.jne(done);
    a.mov(x86::rax, em_.stack(base + 1));
    em_.load_address(x86::rcx, &PyMethod_Type);
    a.cmp(x86::qword_ptr(x86::rax, offsetof(PyObject, ob_type)), x86::rcx);
    a.je(unpack);
    a.bind(done);
    drop(ins.oparg);
}

// KW_NAMES only names a constant; CALL finds it (see kw_names_for).
void Compiler::visit_KW_NAMES(const Instr &ins)
{
    if (ins.oparg < 0 || ins.oparg >= PyTuple_GET_SIZE(code_->co_consts) ||
        !PyTuple_CheckExact(PyTuple_GET_ITEM(code_->co_consts, ins.oparg))) {
        unsupported(ins);
    }
}

// At a CALL without keyword names, [NULL, callable, args...] or [descriptor,
// self, args...] from slot `base`: when the callable is the one `site` holds
// (for the same slot arrangement), the cached call, with its result (or NULL)
// in rax when the code falls through; anything else goes to `miss`.
// `method_likely`: the arrangement the slot's producer suggests (see
// method_slot_likely); the other one is checked out of line.
static void emit_cached_c_call(Compiler &c, int base, CallCache *site, const Label &miss, bool method_likely)
{
    auto &a = c.as();
    auto &em = c.em();
    Label other = a.newLabel(), go = a.newLabel();
    // rax = the callable found; rsi = the arguments if it and the slot
    // arrangement are the cached ones.
    auto match = [&](bool in_method_slot) {
        if (!in_method_slot) a.mov(x86::rax, em.stack(base + 1));
        a.cmp(x86::rax, x86::qword_ptr(x86::r11, offsetof(CallCache, callable)));
        a.jne(miss);
        a.cmp(x86::dword_ptr(x86::r11, offsetof(CallCache, is_meth)), 0);
        if (in_method_slot) a.je(miss); else a.jne(miss);
        a.lea(x86::rsi, em.stack(base + (in_method_slot ? 1 : 2)));
    };
    em.load_address(x86::r11, site);
    a.mov(x86::rax, em.stack(base));
    a.test(x86::rax, x86::rax);
    if (method_likely) a.jz(other); else a.jnz(other);
    match(method_likely);
    em.out_of_line([&] {
        a.bind(other);
        match(!method_likely);
        a.jmp(go);
    });
    a.bind(go);
    a.mov(x86::rdi, x86::r11);
    a.mov(x86::rdx, Emitter::tstate);
    a.lea(x86::rcx, Emitter::frame_address());
    a.call(x86::qword_ptr(x86::r11, offsetof(CallCache, call)));
}

// The code names an attribute `append` (co_names): only then can a CALL find
// list.append's descriptor in its method slot, which only LOAD_METHOD puts
// there (so the append path is not emitted at the other one-argument calls).
static bool names_append(PyCodeObject *code)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(code->co_names); i++) {
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(code->co_names, i), "append") == 0) return true;
    }
    return false;
}

// Whether the slot below a CALL's callable (slot `base`) most likely holds a
// method rather than NULL: by the instruction that pushed it, found by going
// back through the straight-line code before the call (LOAD_METHOD: likely a
// method; LOAD_GLOBAL's or PUSH_NULL's NULL, or not found: likely NULL). Only
// the code layout depends on it: both arrangements are tested at run time.
bool Compiler::method_slot_likely(int base) const
{
    const auto &instrs = bytecode_.instrs();
    for (int j = bytecode_.instr_at(cur_->start) - 1; j >= 0; j--) {
        const Instr &prev = instrs[j];
        if (prev.depth < 0) return false;
        // LOAD_METHOD replaces the object in slot `base` with [method or NULL, self]
        if (prev.opcode == LOAD_METHOD && prev.depth == base + 1) return true;
        if (prev.depth <= base) return false;   // LOAD_GLOBAL's NULL, PUSH_NULL, ...
        if (bytecode_.is_jump_target(prev.start)) return false;
    }
    return false;
}

void Compiler::visit_CALL(const Instr &ins)
{
    auto &a = em_.as();
    // The keyword names of this call: a KW_NAMES before its PRECALL (the
    // compiler emits KW_NAMES, PRECALL, CALL back to back).
    PyObject *kwnames = nullptr;
    int precall = ins.index;
    int k = bytecode_.instr_at(ins.start);
    for (int j = k - 1; j >= 0; j--) {
        int op = bytecode_.instrs()[j].opcode;
        if (op == PRECALL && precall == ins.index) precall = bytecode_.instrs()[j].index;
        if (op == PRECALL || op == NOP) continue;
        if (op == KW_NAMES) kwnames = PyTuple_GET_ITEM(code_->co_consts, bytecode_.instrs()[j].oparg);
        break;
    }
    if (kwnames != nullptr && PyTuple_GET_SIZE(kwnames) > ins.oparg) unsupported(ins);
    if (ins.oparg > 0xFFFF) unsupported(ins);   // objrt::call takes it in 16 bits
    // After PRECALL the model holds [.., NULL/method, callable/self]; the
    // arguments are still in the slots above.
    int base = depth_ - 2;
    int cache_unit = ins.next - 1;   // the last inline cache entry
    em_.set_prev_instr(ins.index);
    Label generic = a.newLabel(), called = a.newLabel();
    CallCache *site = nullptr;
    if (kwnames == nullptr) {
        site = new_site_data<CallCache>();
        site->precall_instr = reinterpret_cast<_Py_CODEUNIT *>(code_->co_code_adaptive) + precall;
        if (ins.oparg == 1 && names_append(code_)) {
            // [list.append, list, item] in warm code, with room in the list:
            // the append itself (PRECALL_NO_KW_LIST_APPEND, _PyList_AppendTakeRef),
            // out of line so that other calls' code stays compact.
            Label not_append = a.newLabel();
            uint64_t *warmup = warmup_;
            Label append = em_.cold([base, warmup, not_append, called](Emitter &e) {
                auto &a = e.as();
                e.load_address(x86::rcx, warmup);
                a.cmp(x86::qword_ptr(x86::rcx), kWarmupDelay);
                a.jb(not_append);
                a.mov(x86::rdi, e.stack(base + 1));
                e.load_address(x86::rax, &PyList_Type);
                a.cmp(x86::qword_ptr(x86::rdi, layout::kObjectType), x86::rax);
                a.jne(not_append);
                a.mov(x86::rcx, x86::qword_ptr(x86::rdi, layout::kVarSize));
                a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyListObject, allocated)));
                a.jge(not_append);
                a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(PyListObject, ob_item)));
                a.mov(x86::rax, e.stack(base + 2));   // the list takes the item's reference
                a.mov(x86::qword_ptr(x86::rdx, x86::rcx, 3), x86::rax);
                a.inc(x86::rcx);
                a.mov(x86::qword_ptr(x86::rdi, layout::kVarSize), x86::rcx);
                e.decref(x86::rdi);
                a.mov(x86::rdi, e.stack(base));
                e.decref_no_dealloc(x86::rdi);   // the descriptor: its class keeps it
                e.load_address(x86::rax, Py_None);
                e.incref(x86::rax);
                a.jmp(called);
            });
            em_.load_address(x86::rax, pyj_list_append_descr());
            a.cmp(em_.stack(base), x86::rax);
            a.je(append);
            a.bind(not_append);
        }
        // The direct-call sequence is long: out of line, so that C calls'
        // code stays compact.
        int nargs = ins.oparg;
        Label direct = em_.cold([this, base, nargs, cache_unit, generic, called](Emitter &) {
            emit_direct_call(*this, base, nargs, cache_unit, generic, called);
        });
        emit_cached_c_call(*this, base, site, direct, method_slot_likely(base));
    }
    auto generic_call = [&] {
        a.bind(generic);
        emit_load_warm(x86::esi);
        a.shl(x86::esi, 16);
        a.or_(x86::esi, ins.oparg);
        slot_address(*this, x86::rdi, base);
        // rdx: the keyword names (kept alive by co_consts), or the site's cache
        em_.load_address(x86::rdx, kwnames != nullptr ? static_cast<const void *>(kwnames) : site);
        a.lea(x86::rcx, Emitter::frame_address());
        a.lea(x86::r8, x86::ptr(Emitter::first_instr, cache_unit * 2));
        a.mov(x86::r9, Emitter::tstate);
        if (kwnames != nullptr) {
            CALL(objrt::call);
        } else {
            CALL(objrt::call_at_site);
        }
    };
    if (kwnames == nullptr) {
        // Warm sites mostly hit the cache; the generic call is out of line.
        em_.out_of_line([&] {
            generic_call();
            a.jmp(called);
        });
    } else {
        generic_call();
    }
    a.bind(called);
    drop(2);
    // Error: the traceback entry names the unit prev_instr was left at (the
    // CALL, its last cache entry after a Python call, or the PRECALL after a
    // specialised C call); PRECALL and CALL share their handler.
    a.test(x86::rax, x86::rax);
    a.jz(error_exit_at(ins.index, depth_, Raise::Error, ins.index, false));
    push(x86::rax);
    eval_breaker_check();
}

void Compiler::visit_CALL_FUNCTION_EX(const Instr &ins)
{
    int has_kwargs = ins.oparg & 1;
    int n = 3 + has_kwargs;
    em_.set_prev_instr(ins.index);
    slot_address(*this, x86::rdi, depth_ - n);
    em_.as().mov(x86::esi, has_kwargs);
    CALL(objrt::call_function_ex);
    push_result(*this, n);
    eval_breaker_check();
}

void Compiler::visit_MAKE_FUNCTION(const Instr &ins)
{
    if (ins.oparg & ~0x0f) unsupported(ins);
    int n = 1;
    for (int bit = 0; bit < 4; bit++) n += (ins.oparg >> bit) & 1;
    em_.set_prev_instr(ins.index);
    em_.as().lea(x86::rdi, Emitter::frame_address());
    slot_address(*this, x86::rsi, depth_ - n);
    em_.as().mov(x86::edx, ins.oparg);
    CALL(objrt::make_function);
    push_result(*this, n);
}

// ---- building containers -------------------------------------------------------

namespace {
template <typename Fn>
void build_from_slots(Compiler &c, int n_slots, int count, Fn fn, const char *name)
{
    c.set_prev_instr();
    slot_address(c, x86::rdi, c.depth() - n_slots);
    c.as().mov(x86::esi, count);
    c.em().call(reinterpret_cast<const void *>(fn), name);
    push_result(c, n_slots);
}
}  // namespace

#define BUILD(fn, n_slots, count) build_from_slots(*this, n_slots, count, &objrt::fn, "objrt::" #fn)

void Compiler::visit_BUILD_TUPLE(const Instr &ins) { BUILD(build_tuple, ins.oparg, ins.oparg); }
void Compiler::visit_BUILD_LIST(const Instr &ins) { BUILD(build_list, ins.oparg, ins.oparg); }
void Compiler::visit_BUILD_SET(const Instr &ins) { BUILD(build_set, ins.oparg, ins.oparg); }
void Compiler::visit_BUILD_MAP(const Instr &ins) { BUILD(build_map, 2 * ins.oparg, ins.oparg); }
void Compiler::visit_BUILD_CONST_KEY_MAP(const Instr &ins) { BUILD(build_const_key_map, ins.oparg + 1, ins.oparg); }
void Compiler::visit_BUILD_STRING(const Instr &ins) { BUILD(build_string, ins.oparg, ins.oparg); }

#undef BUILD

void Compiler::visit_BUILD_SLICE(const Instr &ins)
{
    auto &a = em_.as();
    if (ins.oparg != 2 && ins.oparg != 3) unsupported(ins);
    em_.set_prev_instr(ins.index);
    int base = depth_ - ins.oparg;
    a.mov(x86::rdi, em_.stack(base));
    a.mov(x86::rsi, em_.stack(base + 1));
    if (ins.oparg == 3) {
        a.mov(x86::rdx, em_.stack(base + 2));
    } else {
        a.xor_(x86::edx, x86::edx);
    }
    CALL(objrt::build_slice);
    push_result(*this, ins.oparg);
}

// LIST_APPEND, SET_ADD: pop a value, add it to the container oparg below.
void Compiler::visit_LIST_APPEND(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, em_.stack(depth_ - 1 - ins.oparg));
    em_.as().mov(x86::rsi, top(0));
    CALL(objrt::list_append);
    check_status(*this, 1);
}

void Compiler::visit_SET_ADD(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, em_.stack(depth_ - 1 - ins.oparg));
    em_.as().mov(x86::rsi, top(0));
    CALL(objrt::set_add);
    check_status(*this, 1);
}

void Compiler::visit_MAP_ADD(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, em_.stack(depth_ - 2 - ins.oparg));
    em_.as().mov(x86::rsi, top(1));
    em_.as().mov(x86::rdx, top(0));
    CALL(objrt::map_add);
    check_status(*this, 2);
}

void Compiler::visit_LIST_EXTEND(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, em_.stack(depth_ - 1 - ins.oparg));
    em_.as().mov(x86::rsi, top(0));
    CALL(objrt::list_extend);
    check_status(*this, 1);
}

void Compiler::visit_SET_UPDATE(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, em_.stack(depth_ - 1 - ins.oparg));
    em_.as().mov(x86::rsi, top(0));
    CALL(objrt::set_update);
    check_status(*this, 1);
}

void Compiler::visit_DICT_UPDATE(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, em_.stack(depth_ - 1 - ins.oparg));
    em_.as().mov(x86::rsi, top(0));
    CALL(objrt::dict_update);
    check_status(*this, 1);
}

// DICT_MERGE: like DICT_UPDATE, but duplicate keys are an error naming the
// function being called (two slots below the dict).
void Compiler::visit_DICT_MERGE(const Instr &ins)
{
    int dict_slot = depth_ - 1 - ins.oparg;
    if (dict_slot - 2 < 0) unsupported(ins);
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, em_.stack(dict_slot));
    em_.as().mov(x86::rsi, top(0));
    em_.as().mov(x86::rdx, em_.stack(dict_slot - 2));
    CALL(objrt::dict_merge);
    check_status(*this, 1);
}

void Compiler::visit_LIST_TO_TUPLE(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, top(0));
    CALL(objrt::list_to_tuple);
    push_result(*this, 1);
}

// ---- unpacking -------------------------------------------------------------------

void Compiler::visit_UNPACK_SEQUENCE(const Instr &ins)
{
    auto &a = em_.as();
    int n = ins.oparg;
    em_.set_prev_instr(ins.index);
    Label slow = a.newLabel(), done = a.newLabel();
    if (n <= 8) {
        // An exact tuple or list of the right length: its items, last one
        // deepest, as ceval's UNPACK_SEQUENCE_TUPLE/LIST do.
        Label is_list = a.newLabel(), have_items = a.newLabel();
        a.mov(x86::rdi, top(0));
        a.mov(x86::rax, x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)));
        a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyVarObject, ob_size)), n);
        a.jne(slow);
        em_.load_address(x86::rcx, &PyTuple_Type);
        a.cmp(x86::rax, x86::rcx);
        a.jne(is_list);
        a.lea(x86::rsi, x86::ptr(x86::rdi, offsetof(PyTupleObject, ob_item)));
        a.jmp(have_items);
        a.bind(is_list);
        em_.load_address(x86::rcx, &PyList_Type);
        a.cmp(x86::rax, x86::rcx);
        a.jne(slow);
        a.mov(x86::rsi, x86::qword_ptr(x86::rdi, offsetof(PyListObject, ob_item)));
        a.bind(have_items);
        for (int i = 0; i < n; i++) {
            a.mov(x86::rax, x86::qword_ptr(x86::rsi, (n - 1 - i) * 8));
            em_.incref(x86::rax);
            a.mov(em_.stack(depth_ - 1 + i), x86::rax);
        }
        em_.decref(x86::rdi);
        a.jmp(done);
    }
    a.bind(slow);
    a.mov(x86::rdi, top(0));
    a.mov(x86::esi, n);
    a.mov(x86::edx, -1);
    slot_address(*this, x86::rcx, depth_ - 1 + n);
    CALL(objrt::unpack);
    check_status(*this, 1);
    grow(n);
    a.bind(done);
}

void Compiler::visit_UNPACK_EX(const Instr &ins)
{
    auto &a = em_.as();
    int before = ins.oparg & 0xff, after = ins.oparg >> 8;
    int total = before + 1 + after;
    em_.set_prev_instr(ins.index);
    a.mov(x86::rdi, top(0));
    a.mov(x86::esi, before);
    a.mov(x86::edx, after);
    slot_address(*this, x86::rcx, depth_ - 1 + total);
    CALL(objrt::unpack);
    check_status(*this, 1);
    grow(total);
}

// ---- subscripts --------------------------------------------------------------------

// BINARY_SUBSCR. Fast path (what the interpreter's BINARY_SUBSCR_LIST_INT /
// _TUPLE_INT specialisations do): an exact list or tuple indexed by an exact
// int in range [0, 2**30) that is below the length, inline only for the
// containers the site has seen (subscr_paths). Everything else, including
// negative indexes, goes to the generic slot helper.
void Compiler::visit_BINARY_SUBSCR(const Instr &ins)
{
    auto &a = em_.as();
    SubscrPaths paths = subscr_paths(*this);
    if (!paths.list && !paths.tuple) {
        slot_call(2, reinterpret_cast<const void *>(&slots::get_item), "slots::get_item");
        return;
    }
    Label slow = a.newLabel(), got = a.newLabel(), done = a.newLabel();
    Label not_list = paths.tuple ? a.newLabel() : slow;
    int depth = depth_;
    a.mov(x86::rdi, top(1));   // container
    a.mov(x86::rsi, top(0));   // index
    small_index(*this, x86::rsi, slow);
    if (paths.list) {
        em_.load_address(x86::rax, &PyList_Type);
        a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rax);
        a.jne(not_list);
        a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyVarObject, ob_size)));
        a.jae(slow);
        a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(PyListObject, ob_item)));
        a.mov(x86::rax, x86::qword_ptr(x86::rdx, x86::rcx, 3));
        if (paths.tuple) a.jmp(got);
    }
    if (paths.tuple) {
        a.bind(not_list);
        em_.load_address(x86::rax, &PyTuple_Type);
        a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rax);
        a.jne(slow);
        a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyVarObject, ob_size)));
        a.jae(slow);
        a.mov(x86::rax, x86::qword_ptr(x86::rdi, x86::rcx, 3, offsetof(PyTupleObject, ob_item)));
    }
    a.bind(got);
    em_.incref(x86::rax);
    a.mov(x86::r14, x86::rax);
    a.mov(x86::r15, x86::rsi);
    em_.set_prev_instr(ins.index);   // the container may die here
    em_.decref(x86::rdi);
    em_.decref(x86::r15);
    drop(2);
    push(x86::r14);

    em_.out_of_line([&] {   // dicts, slices, other containers
        a.bind(slow);
        depth_ = depth;
        slot_call(2, reinterpret_cast<const void *>(&slots::get_item), "slots::get_item");
        a.jmp(done);
    });
    a.bind(done);
}

// STORE_SUBSCR: container[sub] = v with [v, container, sub] on the stack.
void Compiler::visit_STORE_SUBSCR(const Instr &ins)
{
    // TOS = index, TOS1 = container, TOS2 = value.
    auto &a = em_.as();
    Label slow = a.newLabel(), done = a.newLabel();
    em_.set_prev_instr(ins.index);
    // list[i] = v with a one-digit non-negative int in range (ceval's
    // STORE_SUBSCR_LIST_INT): the list takes the value's reference.
    a.mov(x86::rdi, top(1));
    a.mov(x86::rsi, top(0));
    em_.load_address(x86::rax, &PyList_Type);
    a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rax);
    a.jne(slow);
    small_index(*this, x86::rsi, slow);
    a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(PyVarObject, ob_size)));
    a.jae(slow);
    a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(PyListObject, ob_item)));
    a.lea(x86::rdx, x86::ptr(x86::rdx, x86::rcx, 3));
    a.mov(x86::rax, top(2));
    a.mov(x86::r14, x86::qword_ptr(x86::rdx));   // the old item
    a.mov(x86::qword_ptr(x86::rdx), x86::rax);
    // Release the old item, the index, then the list, as ceval does (the
    // list pointer stays readable in its stack slot meanwhile).
    a.mov(x86::r15, x86::rsi);
    em_.decref(x86::r14);
    em_.decref(x86::r15);
    a.mov(x86::rdi, top(1));
    em_.decref(x86::rdi);

    em_.out_of_line([&] {   // dicts and every other container
        a.bind(slow);
        a.mov(x86::rdi, top(1));
        a.mov(x86::rsi, top(0));
        a.mov(x86::rdx, top(2));
        CALL(objrt::store_subscr);
        check_status(*this, 3);
        a.jmp(done);
    });
    a.bind(done);
}

void Compiler::visit_DELETE_SUBSCR(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, top(1));
    em_.as().mov(x86::rsi, top(0));
    CALL(objrt::delete_subscr);
    check_status(*this, 2);
}

// ---- unary operators ---------------------------------------------------------------

namespace {
void unary(Compiler &c, const void *fn, const char *name)
{
    c.set_prev_instr();
    c.as().mov(x86::rdi, c.top(0));
    c.em().call(fn, name);
    push_result(c, 1);
}
}  // namespace

#define UNARY(fn) unary(*this, reinterpret_cast<const void *>(&fn), #fn)
void Compiler::visit_UNARY_POSITIVE(const Instr &) { UNARY(objrt::consume1<PyNumber_Positive>); }
void Compiler::visit_UNARY_NEGATIVE(const Instr &) { UNARY(objrt::consume1<PyNumber_Negative>); }
void Compiler::visit_UNARY_INVERT(const Instr &) { UNARY(objrt::consume1<PyNumber_Invert>); }
void Compiler::visit_UNARY_NOT(const Instr &) { UNARY(objrt::unary_not); }
void Compiler::visit_GET_ITER(const Instr &) { UNARY(objrt::consume1<PyObject_GetIter>); }
#undef UNARY

// ---- iteration ---------------------------------------------------------------------

// FOR_ITER: [iter] -> [iter, next], or (exhausted) [] and a jump past the loop.
// tp_iternext is called directly through the iterator's type.
void Compiler::visit_FOR_ITER(const Instr &ins)
{
    auto &a = em_.as();
    int depth = depth_;
    int unit = ins.index;
    depth_ = depth - 1;
    Label exit_loop = label_for(ins.target);
    depth_ = depth;
    Label ended = em_.cold([this, depth, unit, exit_loop](Emitter &e) {
        auto &a = e.as();
        CALL(objrt::for_iter_ended);
        a.test(x86::eax, x86::eax);
        a.js(error_exit_at(unit, depth));
        a.mov(x86::rdi, e.stack(depth - 1));
        e.decref(x86::rdi);
        a.jmp(exit_loop);
    });
    Label generic = a.newLabel(), got = a.newLabel(), not_list = a.newLabel(), not_range = a.newLabel();
    em_.set_prev_instr(ins.index);
    a.mov(x86::rdi, top(0));
    // Fast path: a list iterator with an item left (listiter_next without the call).
    em_.load_address(x86::rcx, &PyListIter_Type);
    a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rcx);
    a.jne(not_list);
    a.mov(x86::rdx, x86::qword_ptr(x86::rdi, offsetof(ListIterLayout, it_seq)));
    a.test(x86::rdx, x86::rdx);
    a.jz(generic);
    a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(ListIterLayout, it_index)));
    a.cmp(x86::rcx, x86::qword_ptr(x86::rdx, offsetof(PyVarObject, ob_size)));
    a.jge(generic);
    a.mov(x86::rax, x86::qword_ptr(x86::rdx, offsetof(PyListObject, ob_item)));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, x86::rcx, 3));
    a.inc(x86::rcx);
    a.mov(x86::qword_ptr(x86::rdi, offsetof(ListIterLayout, it_index)), x86::rcx);
    em_.incref(x86::rax);
    a.jmp(got);
    // A range iterator with a value left (rangeiter_next without the call;
    // the interpreter's FOR_ITER_RANGE).
    a.bind(not_list);
    em_.load_address(x86::rcx, &PyRangeIter_Type);
    a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rcx);
    a.jne(not_range);
    a.mov(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, index)));
    a.cmp(x86::rcx, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, len)));
    a.jge(generic);   // exhausted: the generic call ends the loop
    a.mov(x86::rax, x86::rcx);
    a.imul(x86::rax, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, step)));
    a.add(x86::rax, x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, start)));
    a.inc(x86::rcx);
    a.mov(x86::qword_ptr(x86::rdi, offsetof(RangeIterLayout, index)), x86::rcx);
    a.mov(x86::rdi, x86::rax);
    Label not_small = a.newLabel();
    box_small_int(*this, x86::rdi, not_small, Label());   // falls through to `got`
    em_.out_of_line([&] {
        a.bind(not_small);
        CALL(PyLong_FromLong);
        a.test(x86::rax, x86::rax);
        a.jz(error_exit(depth));   // out of memory: the iterator stays for the unwinder
        a.jmp(got);
        // A generator: resumed without the hook when its code is compiled.
        a.bind(not_range);
        em_.load_address(x86::rcx, &PyGen_Type);
        a.cmp(x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)), x86::rcx);
        a.jne(generic);
        a.mov(x86::rsi, Emitter::tstate);
        CALL(direct::gen_next);
        a.test(x86::rax, x86::rax);
        a.jz(ended);
        a.jmp(got);
        a.bind(generic);
        a.mov(x86::rdi, top(0));
        a.mov(x86::rax, x86::qword_ptr(x86::rdi, offsetof(PyObject, ob_type)));
        a.call(x86::qword_ptr(x86::rax, offsetof(PyTypeObject, tp_iternext)));
        a.test(x86::rax, x86::rax);
        a.jz(ended);
        a.jmp(got);
    });
    a.bind(got);
    push(x86::rax);
}

// ---- identity, membership, stack shuffles -------------------------------------------

void Compiler::visit_IS_OP(const Instr &ins)
{
    auto &a = em_.as();
    a.mov(x86::r14, top(1));
    a.mov(x86::r15, top(0));
    em_.load_address(x86::rax, ins.oparg ? Py_False : Py_True);
    em_.load_address(x86::rcx, ins.oparg ? Py_True : Py_False);
    a.cmp(x86::r14, x86::r15);
    a.cmovne(x86::rax, x86::rcx);
    em_.incref(x86::rax);
    drop(2);
    push(x86::rax);   // over the left operand's slot; both operands are in r14/r15
    em_.set_prev_instr(ins.index);
    em_.decref(x86::r14);
    em_.decref(x86::r15);
}

void Compiler::visit_CONTAINS_OP(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, top(1));
    em_.as().mov(x86::rsi, top(0));
    em_.as().mov(x86::edx, ins.oparg ? 1 : 0);
    CALL(objrt::contains_op);
    push_result(*this, 2);
}

void Compiler::visit_COPY(const Instr &ins)
{
    if (ins.oparg < 1 || ins.oparg > depth_) unsupported(ins);
    em_.as().mov(x86::rax, em_.stack(depth_ - ins.oparg));
    em_.incref(x86::rax);
    push(x86::rax);
}

void Compiler::visit_SWAP(const Instr &ins)
{
    auto &a = em_.as();
    if (ins.oparg < 2 || ins.oparg > depth_) unsupported(ins);
    a.mov(x86::rax, top(0));
    a.mov(x86::rcx, em_.stack(depth_ - ins.oparg));
    a.mov(top(0), x86::rcx);
    a.mov(em_.stack(depth_ - ins.oparg), x86::rax);
}

// ---- formatting and lengths -----------------------------------------------------------

void Compiler::visit_FORMAT_VALUE(const Instr &ins)
{
    auto &a = em_.as();
    bool have_spec = (ins.oparg & 0x04) != 0;
    em_.set_prev_instr(ins.index);
    if (have_spec) {
        a.mov(x86::rdi, top(1));
        a.mov(x86::rsi, top(0));
    } else {
        a.mov(x86::rdi, top(0));
        a.xor_(x86::esi, x86::esi);
    }
    a.mov(x86::edx, ins.oparg & 0x03);
    CALL(objrt::format_value);
    push_result(*this, have_spec ? 2 : 1);
}

void Compiler::visit_GET_LEN(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, top(0));
    CALL(objrt::get_len);
    push_result(*this, 0);
}

// ---- pattern matching -------------------------------------------------------------

namespace {
void match_flag(Compiler &c, unsigned long flag)
{
    auto &a = c.as();
    a.mov(x86::rax, c.top(0));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, offsetof(PyObject, ob_type)));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, offsetof(PyTypeObject, tp_flags)));
    c.em().load_address(x86::rcx, Py_True);
    c.em().load_address(x86::rdx, Py_False);
    a.test(x86::rax, flag);
    a.cmovz(x86::rcx, x86::rdx);
    c.em().incref(x86::rcx);
    c.push(x86::rcx);
}
}  // namespace

void Compiler::visit_MATCH_MAPPING(const Instr &) { match_flag(*this, Py_TPFLAGS_MAPPING); }
void Compiler::visit_MATCH_SEQUENCE(const Instr &) { match_flag(*this, Py_TPFLAGS_SEQUENCE); }

void Compiler::visit_MATCH_KEYS(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, top(1));
    em_.as().mov(x86::rsi, top(0));
    CALL(objrt::match_keys);
    push_result(*this, 0);
}

void Compiler::visit_MATCH_CLASS(const Instr &ins)
{
    em_.set_prev_instr(ins.index);
    em_.as().mov(x86::rdi, top(2));
    em_.as().mov(x86::rsi, top(1));
    em_.as().mov(x86::rdx, top(0));
    em_.as().mov(x86::ecx, ins.oparg);
    CALL(objrt::match_class);
    push_result(*this, 3);
}

}  // namespace pyjion

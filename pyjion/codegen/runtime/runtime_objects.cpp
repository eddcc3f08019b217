// The object helpers of the container, unpacking, subscript, unary, iteration,
// formatting and pattern-matching opcodes (see runtime_objects.h).
#include "runtime/runtime_objects.h"

#include "codegen_api.h"
#include "cpython/interp_state.h"
#include "runtime/arg_binding.h"
#include "runtime/direct_call.h"
#include "runtime/runtime.h"
#include "runtime/cpython_api.h"

namespace pyjion::objrt {

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
#if PY_VERSION_HEX >= 0x030C0000
    // 3.12+: _PyDict_MergeEx raises a KeyError instance; the key is its one argument.
    PyObject *exc = PyErr_GetRaisedException();
    PyObject *args = exc != nullptr ? ((PyBaseExceptionObject *)exc)->args : nullptr;
    if (args != nullptr && PyTuple_Check(args) && PyTuple_GET_SIZE(args) == 1) {
        PyObject *fs = _PyObject_FunctionStr(func);
        if (fs != nullptr) {
            PyErr_Format(PyExc_TypeError, "%U got multiple values for keyword argument '%S'", fs,
                         PyTuple_GET_ITEM(args, 0));
            Py_DECREF(fs);
        }
        Py_XDECREF(exc);
    } else {
        PyErr_SetRaisedException(exc);
    }
#else
    // 3.11: the KeyError's value is still the unnormalised 1-tuple of the key.
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
#endif
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

}  // namespace pyjion::objrt

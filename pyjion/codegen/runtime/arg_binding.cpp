// Argument binding for direct calls (see arg_binding.h), after 3.11's
// initialize_locals.
#include "runtime/arg_binding.h"

#include "internal/pycore_dict.h"   // the keys kind: str keys only

#include <vector>

namespace pyjion::direct {

namespace {

// The parameter a keyword argument names: its index among the parameters
// that may be passed by name (after the positional-only ones), or -1. Raw
// pointers first (names are interned), then equality, as ceval does; both
// are exact str, so comparing runs no Python code.
Py_ssize_t keyword_slot(PyCodeObject *code, PyObject *name)
{
    PyObject *const *names = &PyTuple_GET_ITEM(code->co_localsplusnames, 0);
    Py_ssize_t total = code->co_argcount + code->co_kwonlyargcount;
    for (Py_ssize_t j = code->co_posonlyargcount; j < total; j++) {
        if (names[j] == name) return j;
    }
    for (Py_ssize_t j = code->co_posonlyargcount; j < total; j++) {
        if (PyUnicode_CheckExact(names[j]) && _PyUnicode_Equal(names[j], name)) return j;
    }
    return -1;
}

// The __kwdefaults__ value of keyword-only parameter `index` (borrowed), or
// NULL. Only from a dict with nothing but exact str keys, where a lookup
// cannot run an __eq__ method or fail.
PyObject *kwdefault(PyFunctionObject *func, PyCodeObject *code, Py_ssize_t index)
{
    PyObject *kwdefaults = func->func_kwdefaults;
    if (kwdefaults == nullptr || !PyDict_CheckExact(kwdefaults) ||
        reinterpret_cast<PyDictObject *>(kwdefaults)->ma_keys->dk_kind == DICT_KEYS_GENERAL) {
        return nullptr;
    }
    return PyDict_GetItemWithError(kwdefaults, PyTuple_GET_ITEM(code->co_localsplusnames, index));
}

// On a failure of complete_binding: releases the argument references not yet
// in the frame (surplus positional ones unless packed into *args, and the
// keyword arguments for **kwargs from keyword `first_kw` on).
void release_unplaced(PyCodeObject *code, PyObject *const *args, Py_ssize_t nargs, bool surplus_packed,
                      PyObject *kwnames, Py_ssize_t first_kw)
{
    if (!surplus_packed) {
        for (Py_ssize_t i = code->co_argcount; i < nargs; i++) Py_DECREF(args[i]);
    }
    Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = first_kw; i < nkw; i++) {
        if (keyword_slot(code, PyTuple_GET_ITEM(kwnames, i)) < 0) Py_DECREF(args[nargs + i]);
    }
}

}  // namespace

Py_ssize_t place_arguments(PyObject **locals, PyFunctionObject *func, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    auto *code = reinterpret_cast<PyCodeObject *>(func->func_code);
    Py_ssize_t argcount = code->co_argcount;
    if (nargs > argcount && !(code->co_flags & CO_VARARGS)) return -1;   // too many positional arguments
    Py_ssize_t n = nargs < argcount ? nargs : argcount;
    for (Py_ssize_t i = 0; i < n; i++) locals[i] = args[i];

    Py_ssize_t to_kwargs = 0;
    Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        if (!PyUnicode_CheckExact(name)) return -1;
        Py_ssize_t j = keyword_slot(code, name);
        if (j < 0) {
            // an unknown name (or a positional-only one) needs **kwargs
            if (!(code->co_flags & CO_VARKEYWORDS)) return -1;
            to_kwargs++;
        } else if (locals[j] != nullptr) {
            return -1;   // multiple values for one parameter
        } else {
            locals[j] = args[nargs + i];
        }
    }

    // Every parameter left empty needs a default.
    if (nargs < argcount) {
        Py_ssize_t ndefaults = func->func_defaults != nullptr ? PyTuple_GET_SIZE(func->func_defaults) : 0;
        for (Py_ssize_t i = nargs; i < argcount - ndefaults; i++) {
            if (locals[i] == nullptr) return -1;
        }
    }
    Py_ssize_t total = argcount + code->co_kwonlyargcount;
    for (Py_ssize_t i = argcount; i < total; i++) {
        if (locals[i] == nullptr && kwdefault(func, code, i) == nullptr) return -1;
    }
    return to_kwargs;
}

bool complete_binding(PyObject **locals, PyFunctionObject *func, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames, Py_ssize_t to_kwargs)
{
    auto *code = reinterpret_cast<PyCodeObject *>(func->func_code);
    int flags = code->co_flags;
    Py_ssize_t argcount = code->co_argcount;
    Py_ssize_t total = argcount + code->co_kwonlyargcount;

    // Defaults first: place_arguments checked them, and the allocations below
    // may run a collection, whose finalizers could change __defaults__.
    if (nargs < argcount) {
        Py_ssize_t first = argcount - (func->func_defaults != nullptr ? PyTuple_GET_SIZE(func->func_defaults) : 0);
        for (Py_ssize_t i = nargs; i < argcount; i++) {
            if (locals[i] == nullptr) locals[i] = Py_NewRef(PyTuple_GET_ITEM(func->func_defaults, i - first));
        }
    }
    for (Py_ssize_t i = argcount; i < total; i++) {
        if (locals[i] == nullptr) locals[i] = Py_NewRef(kwdefault(func, code, i));
    }
    if (!(flags & (CO_VARARGS | CO_VARKEYWORDS))) return true;

    PyObject *kwdict = nullptr;
    if (flags & CO_VARKEYWORDS) {
        kwdict = PyDict_New();
        if (kwdict == nullptr) {
            release_unplaced(code, args, nargs, false, kwnames, 0);
            return false;
        }
        locals[total + ((flags & CO_VARARGS) ? 1 : 0)] = kwdict;
    }
    if (flags & CO_VARARGS) {
        Py_ssize_t n = nargs < argcount ? nargs : argcount;
        PyObject *rest = PyTuple_New(nargs - n);   // () when there is no surplus
        if (rest == nullptr) {
            release_unplaced(code, args, nargs, false, kwnames, 0);
            return false;
        }
        for (Py_ssize_t i = n; i < nargs; i++) PyTuple_SET_ITEM(rest, i - n, args[i]);
        locals[total] = rest;
    }
    if (to_kwargs > 0) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kwnames); i++) {
            PyObject *name = PyTuple_GET_ITEM(kwnames, i);
            if (keyword_slot(code, name) >= 0) continue;
            if (PyDict_SetItem(kwdict, name, args[nargs + i]) < 0) {
                release_unplaced(code, args, nargs, true, kwnames, i);
                return false;
            }
            Py_DECREF(args[nargs + i]);   // the dict holds it now
        }
    }
    return true;
}

void release_unbound_call(PyObject *callable, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    auto *code = reinterpret_cast<PyCodeObject *>(reinterpret_cast<PyFunctionObject *>(callable)->func_code);
    Py_ssize_t argcount = code->co_argcount;
    Py_ssize_t n = nargs < argcount ? nargs : argcount;
    bool varargs = code->co_flags & CO_VARARGS, varkw = code->co_flags & CO_VARKEYWORDS;
    // Where initialize_locals would have put each reference before it failed.
    std::vector<PyObject *> dropped;   // released while binding, in order
    std::vector<PyObject *> params(argcount + code->co_kwonlyargcount, nullptr);
    std::vector<PyObject *> kwargs;    // the **kwargs dict's values
    for (Py_ssize_t i = 0; i < n; i++) params[i] = args[i];
    if (!varargs) dropped.insert(dropped.end(), args + n, args + nargs);
    Py_ssize_t nkw = kwnames != nullptr ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t i = 0; i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i);
        Py_ssize_t j = PyUnicode_CheckExact(name) ? keyword_slot(code, name) : -2;
        if (j == -1 && varkw) {
            kwargs.push_back(args[nargs + i]);
        } else if (j < 0 || params[j] != nullptr) {
            // the failing keyword: it and all after it are dropped
            dropped.insert(dropped.end(), args + nargs + i, args + nargs + nkw);
            break;
        } else {
            params[j] = args[nargs + i];
        }
    }
    for (PyObject *obj : dropped) Py_DECREF(obj);
    for (PyObject *obj : params) Py_XDECREF(obj);
    if (varargs) {
        for (Py_ssize_t i = nargs - 1; i >= n; i--) Py_DECREF(args[i]);   // tupledealloc's order
    }
    for (PyObject *obj : kwargs) Py_DECREF(obj);
    Py_DECREF(callable);
}

}  // namespace pyjion::direct

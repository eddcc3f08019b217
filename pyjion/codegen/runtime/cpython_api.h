// The CPython functions the runtime calls that the running version exports
// but declares only in internal headers C++ cannot include (3.13's: see
// py313/capi.h; 3.11's are declared where they are used), and the few whose
// names changed between versions, under one name each.
#pragma once

#include <Python.h>

#if PY_VERSION_HEX >= 0x030D0000
#include "py313/capi.h"
// _PyObject_LookupAttr became public as PyObject_GetOptionalAttr (3.13).
inline int pyj_lookup_attr(PyObject *obj, PyObject *name, PyObject **result)
{
    return PyObject_GetOptionalAttr(obj, name, result);
}
inline int pyj_long_as_int(PyObject *obj) { return PyLong_AsInt(obj); }
// _PyUnicode_EQ is no longer exported; _PyUnicode_Equal is (PyAPI).
inline int pyj_unicode_eq(PyObject *a, PyObject *b) { return _PyUnicode_Equal(a, b); }
// _PyModuleSpec_IsInitializing is no longer exported: the same test.
inline int pyj_spec_is_initializing(PyObject *spec)
{
    if (spec != nullptr) {
        PyObject *value = PyObject_GetAttrString(spec, "_initializing");
        if (value != nullptr) {
            int initializing = PyObject_IsTrue(value);
            Py_DECREF(value);
            if (initializing >= 0) return initializing;
        }
    }
    PyErr_Clear();
    return 0;
}
#else
inline int pyj_lookup_attr(PyObject *obj, PyObject *name, PyObject **result)
{
    return _PyObject_LookupAttr(obj, name, result);
}
inline int pyj_long_as_int(PyObject *obj) { return _PyLong_AsInt(obj); }
inline int pyj_unicode_eq(PyObject *a, PyObject *b) { return _PyUnicode_EQ(a, b); }
inline int pyj_spec_is_initializing(PyObject *spec) { return _PyModuleSpec_IsInitializing(spec); }
#endif

/* Reading a code object's extra slot (the hook's record) without the call and
 * checks of _PyCode_GetExtra: used on every call by the hook and by direct
 * calls from machine code. CPython 3.11 keeps the layout private to
 * Objects/codeobject.c. */
#ifndef PYJION_CODE_EXTRA_H
#define PYJION_CODE_EXTRA_H

#include <Python.h>

typedef struct {
    Py_ssize_t ce_size;
    void *ce_extras[1];
} PyjCodeExtraLayout;

/* `index` was returned by _PyEval_RequestCodeExtraIndex. */
static inline void *pyj_code_extra(PyCodeObject *co, Py_ssize_t index)
{
    PyjCodeExtraLayout *extra = (PyjCodeExtraLayout *)co->co_extra;
    if (extra == NULL || index >= extra->ce_size) {
        return NULL;
    }
    return extra->ce_extras[index];
}

/* Stores `value` in the empty extra slot `index` of a code object. Unlike
 * _PyCode_SetExtra, a new or grown co_extra gets index + 1 slots, not one per
 * registered index: code_dealloc calls every registered free function for
 * every slot below ce_size, empty or not, so sizing to all indexes would make
 * CPython call other tools' free functions (registered after pyjion, e.g. a
 * ctypes callback) with NULL for code objects only pyjion touched, at
 * interpreter exit too. Same allocator and layout as _PyCode_SetExtra, so
 * _PyCode_SetExtra/GetExtra and code_dealloc work on the result unchanged. */
static inline int pyj_code_set_extra(PyCodeObject *co, Py_ssize_t index, void *value)
{
    PyjCodeExtraLayout *extra = (PyjCodeExtraLayout *)co->co_extra;
    if (extra != NULL && index < extra->ce_size) {
        if (extra->ce_extras[index] != NULL) {
            return _PyCode_SetExtra((PyObject *)co, index, value);   /* frees the old value */
        }
        extra->ce_extras[index] = value;
        return 0;
    }
    Py_ssize_t old = extra == NULL ? 0 : extra->ce_size;
    extra = (PyjCodeExtraLayout *)PyMem_Realloc(extra, sizeof(PyjCodeExtraLayout) + index * sizeof(void *));
    if (extra == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = old; i < index; i++) {
        extra->ce_extras[i] = NULL;
    }
    extra->ce_extras[index] = value;
    extra->ce_size = index + 1;
    co->co_extra = extra;
    return 0;
}

#endif

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

#endif

// Attribute loads and stores that follow the interpreter's specialisation of
// the same site (py313/attr_sites.c). `site` is the instruction in the code's
// co_code_adaptive; its inline cache follows it. On the value stack as
// rt313::load_attr / store_attr take it. Returns 1 when the site's form
// applied and did the whole operation (it cannot fail), 0 when its guards
// do not hold (nothing touched): then the generic operation runs.
#pragma once

#include <Python.h>

#ifdef __cplusplus
extern "C" {
#endif

int pyj313_load_attr_site(PyObject **sp, PyObject *name, int method, const _Py_CODEUNIT *site);
int pyj313_store_attr_site(PyObject **sp, const _Py_CODEUNIT *site);

#ifdef __cplusplus
}
#endif

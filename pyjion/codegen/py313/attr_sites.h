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

/* The forms of LOAD_ATTR and STORE_ATTR machine code runs inline (py313/visit_calls.cpp),
 * with what their guards and action need, read off the site at compile
 * time: the owner's type version (a type's version changes with the type,
 * so a baked one is a sound guard), then per form the byte offset of the
 * attribute in the owner (INSTANCE_VALUE, SLOT, the stores), the descriptor the site
 * found on the class (the METHOD forms: alive while the type's version
 * holds) and the class's shared keys version (METHOD_WITH_VALUES). */
enum {
    PYJ313_ATTR_NONE = 0,
    PYJ313_ATTR_INSTANCE_VALUE,
    PYJ313_ATTR_SLOT,
    PYJ313_ATTR_METHOD_NO_DICT,
    PYJ313_ATTR_METHOD_WITH_VALUES,
    PYJ313_ATTR_STORE_INSTANCE_VALUE,   /* STORE_ATTR: an existing inline value replaced */
    PYJ313_ATTR_STORE_SLOT,
    PYJ313_ATTR_PROPERTY,               /* descr: the getter, a Python function */
    PYJ313_ATTR_NONDESCRIPTOR_NO_DICT,  /* descr: the class attribute */
    PYJ313_ATTR_NONDESCRIPTOR_WITH_VALUES,
    PYJ313_ATTR_CLASS,                  /* type_version: the owner's own (a class); descr */
    PYJ313_ATTR_MODULE,                 /* type_version: the module dict's keys version;
                                         * attr_offset: the value's, from the keys' index table */
};
typedef struct {
    int form;                 /* PYJ313_ATTR_* */
    uint32_t type_version;
    int32_t attr_offset;      /* INSTANCE_VALUE, SLOT */
    PyObject *descr;          /* METHOD_* (borrowed) */
    uint32_t keys_version;    /* METHOD_WITH_VALUES */
} Pyj313AttrSite;
void pyj313_attr_site_facts(const _Py_CODEUNIT *site, Pyj313AttrSite *out);

/* Layout the inline forms read: the byte offset of an object's inline
 * values' `valid` flag (objects with inline values, 3.13), of a heap type's
 * shared keys pointer, and of a keys object's version. */
int32_t pyj313_inline_values_valid_offset(void);
int32_t pyj313_cached_keys_offset(void);
int32_t pyj313_keys_version_offset(void);
/* The byte offset (negative) of an object's managed __dict__ pointer. */
int32_t pyj313_managed_dict_offset(void);

/* A module's dict (PyModuleObject.md_dict) and a keys object's
 * dk_log2_index_bytes. */
int32_t pyj313_module_dict_offset(void);
int32_t pyj313_keys_log2_index_bytes_offset(void);

/* The class version a CALL site specialised as CALL_ALLOC_AND_ENTER_INIT
 * holds (0: the site is not in that form). */
uint32_t pyj313_alloc_init_version(const _Py_CODEUNIT *site);
int pyj313_store_attr_site(PyObject **sp, const _Py_CODEUNIT *site);

#ifdef __cplusplus
}
#endif

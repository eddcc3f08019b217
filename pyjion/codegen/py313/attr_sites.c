/* Attribute loads and stores of machine code that follow what CPython 3.13's
 * interpreter learnt at the same site (py313/attr_sites.h). Each case is the
 * guards and the action of one specialised form of Python/bytecodes.c,
 * reading that form's inline cache in co_code_adaptive: the interpreter
 * chose the form and filled the cache while the code warmed up, and keeps
 * both right (a type's version changes with the type, a dict's keys version
 * with its keys). Compiled as C: the internal headers (inline values, the
 * cache readers) use C11 atomics, which C++ cannot include. */
#include <Python.h>
#define Py_BUILD_CORE 1
#include "internal/pycore_code.h"
#include "internal/pycore_dict.h"
#include "internal/pycore_moduleobject.h"
#include "internal/pycore_object.h"
#include "opcode_ids.h"

#include "py313/attr_sites.h"

/* The cache units after the instruction, as the interpreter's macros read
 * them: the counter is unit 0 (never read here). */
static inline uint32_t cache_u32(const _Py_CODEUNIT *site, int unit) { return read_u32((uint16_t *)&site[1 + unit].cache); }
static inline uint16_t cache_u16(const _Py_CODEUNIT *site, int unit) { return read_u16((uint16_t *)&site[1 + unit].cache); }
static inline PyObject *cache_obj(const _Py_CODEUNIT *site, int unit) { return read_obj((uint16_t *)&site[1 + unit].cache); }

/* _GUARD_TYPE_VERSION: the owner's type is still the one the cache was made for. */
static inline int type_version_ok(PyObject *owner, const _Py_CODEUNIT *site)
{
    return Py_TYPE(owner)->tp_version_tag == cache_u32(site, 1);
}

/* _GUARD_DORV_VALUES_INST_ATTR_FROM_DICT + _GUARD_KEYS_VERSION: the
 * instance keeps its attributes inline and none shadows the class's. */
static inline int values_and_keys_ok(PyObject *owner, const _Py_CODEUNIT *site)
{
    if (!_PyObject_InlineValues(owner)->valid) return 0;
    PyHeapTypeObject *cls = (PyHeapTypeObject *)Py_TYPE(owner);
    return cls->ht_cached_keys->dk_version == cache_u32(site, 3);
}

/* The attribute read from a dict's unicode entry `index`, or NULL. */
static inline PyObject *entry_value(PyDictObject *dict, Py_ssize_t index, PyObject *name)
{
    if (index >= dict->ma_keys->dk_nentries) return NULL;
    if (DK_IS_UNICODE(dict->ma_keys)) {
        PyDictUnicodeEntry *ep = DK_UNICODE_ENTRIES(dict->ma_keys) + index;
        return ep->me_key == name ? ep->me_value : NULL;
    }
    PyDictKeyEntry *ep = DK_ENTRIES(dict->ma_keys) + index;
    return ep->me_key == name ? ep->me_value : NULL;
}

int pyj313_load_attr_site(PyObject **sp, PyObject *name, int method, const _Py_CODEUNIT *site)
{
    PyObject *owner = sp[-1];
    PyObject *attr = NULL;
    int self_too = 0;   /* [meth, self] rather than [attr] / [attr, NULL] */
    switch (site->op.code) {
    case LOAD_ATTR_INSTANCE_VALUE:
        if (!type_version_ok(owner, site) || !_PyObject_InlineValues(owner)->valid) return 0;
        attr = _PyObject_InlineValues(owner)->values[cache_u16(site, 3)];
        break;
    case LOAD_ATTR_MODULE: {
        if (!PyModule_CheckExact(owner)) return 0;
        PyDictObject *dict = (PyDictObject *)((PyModuleObject *)owner)->md_dict;
        if (dict->ma_keys->dk_version != cache_u32(site, 1)) return 0;
        uint16_t index = cache_u16(site, 3);
        if (index >= dict->ma_keys->dk_nentries || !DK_IS_UNICODE(dict->ma_keys)) return 0;
        attr = DK_UNICODE_ENTRIES(dict->ma_keys)[index].me_value;
        break;
    }
    case LOAD_ATTR_WITH_HINT: {
        if (!type_version_ok(owner, site)) return 0;
        PyDictObject *dict = _PyObject_GetManagedDict(owner);
        if (dict == NULL) return 0;
        attr = entry_value(dict, cache_u16(site, 3), name);
        break;
    }
    case LOAD_ATTR_SLOT:
        if (!type_version_ok(owner, site)) return 0;
        attr = *(PyObject **)((char *)owner + cache_u16(site, 3));
        break;
    case LOAD_ATTR_CLASS:
        if (!PyType_Check(owner) || ((PyTypeObject *)owner)->tp_version_tag != cache_u32(site, 1)) return 0;
        attr = cache_obj(site, 5);
        break;
    case LOAD_ATTR_METHOD_WITH_VALUES:
        if (!method || !type_version_ok(owner, site) || !values_and_keys_ok(owner, site)) return 0;
        attr = cache_obj(site, 5);
        self_too = 1;
        break;
    case LOAD_ATTR_METHOD_NO_DICT:
        if (!method || !type_version_ok(owner, site)) return 0;
        attr = cache_obj(site, 5);
        self_too = 1;
        break;
    case LOAD_ATTR_METHOD_LAZY_DICT: {
        if (!method || !type_version_ok(owner, site)) return 0;
        PyObject *dict = *(PyObject **)((char *)owner + MANAGED_DICT_OFFSET + cache_u16(site, 3));
        if (dict != NULL) return 0;   /* the instance has a __dict__ now: it may shadow the method */
        attr = cache_obj(site, 5);
        self_too = 1;
        break;
    }
    case LOAD_ATTR_NONDESCRIPTOR_WITH_VALUES:
        if (method || !type_version_ok(owner, site) || !values_and_keys_ok(owner, site)) return 0;
        attr = cache_obj(site, 5);
        break;
    case LOAD_ATTR_NONDESCRIPTOR_NO_DICT:
        if (method || !type_version_ok(owner, site)) return 0;
        attr = cache_obj(site, 5);
        break;
    default:
        return 0;   /* not specialised, or a form that pushes a frame (property, __getattribute__) */
    }
    if (attr == NULL) return 0;
    Py_INCREF(attr);
    if (self_too) {
        sp[-1] = attr;   /* the owner's reference becomes self's */
        sp[0] = owner;
        return 1;
    }
    Py_DECREF(owner);
    sp[-1] = attr;
    if (method) sp[0] = NULL;
    return 1;
}

void pyj313_attr_site_facts(const _Py_CODEUNIT *site, Pyj313AttrSite *out)
{
    memset(out, 0, sizeof(*out));
    uint32_t version = cache_u32(site, 1);
    if (version == 0) return;
    switch (site->op.code) {
    case LOAD_ATTR_INSTANCE_VALUE:
        out->form = PYJ313_ATTR_INSTANCE_VALUE;
        out->attr_offset = (int32_t)(sizeof(PyObject) + offsetof(PyDictValues, values) +
                                     sizeof(PyObject *) * cache_u16(site, 3));
        break;
    case LOAD_ATTR_SLOT:
        out->form = PYJ313_ATTR_SLOT;
        out->attr_offset = cache_u16(site, 3);
        break;
    case STORE_ATTR_INSTANCE_VALUE:
        out->form = PYJ313_ATTR_STORE_INSTANCE_VALUE;
        out->attr_offset = (int32_t)(sizeof(PyObject) + offsetof(PyDictValues, values) +
                                     sizeof(PyObject *) * cache_u16(site, 3));
        break;
    case STORE_ATTR_SLOT:
        out->form = PYJ313_ATTR_STORE_SLOT;
        out->attr_offset = cache_u16(site, 3);
        break;
    case LOAD_ATTR_PROPERTY:
        out->form = PYJ313_ATTR_PROPERTY;
        out->descr = cache_obj(site, 5);
        if (out->descr == NULL || !PyFunction_Check(out->descr)) out->form = PYJ313_ATTR_NONE;
        break;
    case LOAD_ATTR_NONDESCRIPTOR_NO_DICT:
        out->form = PYJ313_ATTR_NONDESCRIPTOR_NO_DICT;
        out->descr = cache_obj(site, 5);
        break;
    case LOAD_ATTR_NONDESCRIPTOR_WITH_VALUES:
        out->form = PYJ313_ATTR_NONDESCRIPTOR_WITH_VALUES;
        out->descr = cache_obj(site, 5);
        out->keys_version = cache_u32(site, 3);
        break;
    case LOAD_ATTR_CLASS:
        out->form = PYJ313_ATTR_CLASS;
        out->descr = cache_obj(site, 5);
        break;
    case LOAD_ATTR_MODULE:
        out->form = PYJ313_ATTR_MODULE;
        out->attr_offset = (int32_t)(offsetof(PyDictKeysObject, dk_indices) +
                                     sizeof(PyDictUnicodeEntry) * cache_u16(site, 3) +
                                     offsetof(PyDictUnicodeEntry, me_value));
        break;
    case LOAD_ATTR_METHOD_NO_DICT:
        out->form = PYJ313_ATTR_METHOD_NO_DICT;
        out->descr = cache_obj(site, 5);
        break;
    case LOAD_ATTR_METHOD_WITH_VALUES:
        out->form = PYJ313_ATTR_METHOD_WITH_VALUES;
        out->descr = cache_obj(site, 5);
        out->keys_version = cache_u32(site, 3);
        break;
    default:
        return;
    }
    if ((out->form == PYJ313_ATTR_METHOD_NO_DICT || out->form == PYJ313_ATTR_METHOD_WITH_VALUES ||
         out->form == PYJ313_ATTR_NONDESCRIPTOR_NO_DICT || out->form == PYJ313_ATTR_NONDESCRIPTOR_WITH_VALUES ||
         out->form == PYJ313_ATTR_CLASS) &&
        out->descr == NULL) {
        out->form = PYJ313_ATTR_NONE;
        return;
    }
    out->type_version = version;
}

int32_t pyj313_inline_values_valid_offset(void) { return (int32_t)(sizeof(PyObject) + offsetof(PyDictValues, valid)); }
int32_t pyj313_cached_keys_offset(void) { return (int32_t)offsetof(PyHeapTypeObject, ht_cached_keys); }
int32_t pyj313_keys_version_offset(void) { return (int32_t)offsetof(PyDictKeysObject, dk_version); }
int32_t pyj313_managed_dict_offset(void) { return (int32_t)MANAGED_DICT_OFFSET; }

int32_t pyj313_module_dict_offset(void) { return (int32_t)offsetof(PyModuleObject, md_dict); }
int32_t pyj313_keys_log2_index_bytes_offset(void) { return (int32_t)offsetof(PyDictKeysObject, dk_log2_index_bytes); }

uint32_t pyj313_alloc_init_version(const _Py_CODEUNIT *site)
{
    return site->op.code == CALL_ALLOC_AND_ENTER_INIT ? cache_u32(site, 1) : 0;
}

int pyj313_store_attr_site(PyObject **sp, const _Py_CODEUNIT *site)
{
    PyObject *owner = sp[-1], *value = sp[-2];
    switch (site->op.code) {
    case STORE_ATTR_INSTANCE_VALUE: {
        if (!type_version_ok(owner, site) || _PyObject_GetManagedDict(owner) != NULL) return 0;
        PyDictValues *values = _PyObject_InlineValues(owner);
        if (!values->valid) return 0;
        uint16_t index = cache_u16(site, 3);
        PyObject *old = values->values[index];
        values->values[index] = value;
        if (old == NULL) {
            _PyDictValues_AddToInsertionOrder(values, index);
        } else {
            Py_DECREF(old);
        }
        Py_DECREF(owner);
        return 1;
    }
    case STORE_ATTR_SLOT: {
        if (!type_version_ok(owner, site)) return 0;
        PyObject **addr = (PyObject **)((char *)owner + cache_u16(site, 3));
        PyObject *old = *addr;
        *addr = value;
        Py_XDECREF(old);
        Py_DECREF(owner);
        return 1;
    }
    default:
        return 0;
    }
}

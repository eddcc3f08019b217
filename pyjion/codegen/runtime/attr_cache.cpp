// The attribute caches' runtime (see attr_cache.h). The fill functions only
// read: they run after the generic operation, on the state it left, and cache
// only when (a) the case is one whose guards pin the answer (AttrKind) and (b)
// the value the inline path would produce now is the very object the generic
// operation produced, a cross-check against any case the analysis misjudges.
#include "runtime/attr_cache.h"
#include "runtime/cpython_api.h"

#include <structmember.h>              // PyMemberDef, T_OBJECT_EX
#include "internal/pycore_dict.h"      // PyDictKeysObject, DK_UNICODE_ENTRIES
#include "internal/pycore_moduleobject.h"   // PyModuleObject

namespace pyjion::rtn {

namespace {

PyDictValues *managed_values(PyObject *obj)
{
    return *reinterpret_cast<PyDictValues **>(reinterpret_cast<char *>(obj) + layout::kManagedValuesOffset);
}

PyObject *managed_dict(PyObject *obj)
{
    return *reinterpret_cast<PyObject **>(reinterpret_cast<char *>(obj) + layout::kManagedDictOffset);
}

PyDictKeysObject *shared_keys(PyTypeObject *tp) { return reinterpret_cast<PyHeapTypeObject *>(tp)->ht_cached_keys; }

// Index of `name` in a type's shared keys, or -1. Entries are compared as the
// dict does (identity, then hash and string equality), so "absent" is exact.
Py_ssize_t shared_keys_index(PyDictKeysObject *keys, PyObject *name)
{
    if (keys == nullptr || !DK_IS_UNICODE(keys)) return -1;
    Py_hash_t hash = reinterpret_cast<PyASCIIObject *>(name)->hash;
    PyDictUnicodeEntry *entries = DK_UNICODE_ENTRIES(keys);
    for (Py_ssize_t i = 0; i < keys->dk_nentries; i++) {
        PyObject *k = entries[i].me_key;
        if (k == name) return i;
        if (k != nullptr && PyUnicode_CheckExact(k) && PyObject_Hash(k) == hash && pyj_unicode_eq(k, name)) {
            return i;   // (an exact str's hash cannot fail; it is cached in the object)
        }
    }
    return -1;
}

// The type's tag if it is valid (nonzero), else 0: then nothing is cached.
uint32_t valid_version(PyTypeObject *tp)
{
    if (!(tp->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)) return 0;
    return tp->tp_version_tag;
}

// A class attribute whose behaviour cannot change without modifying a class in
// the owner's MRO: its own type is immutable, so it cannot gain __get__ or
// __set__ later (a mutable descriptor type could, invisibly to our tags).
bool stable_descriptor(PyObject *descr) { return PyType_HasFeature(Py_TYPE(descr), Py_TPFLAGS_IMMUTABLETYPE); }

// A __slots__ member we can read/write directly: T_OBJECT_EX (unset is NULL
// and raises), no audit hook, and the descriptor applies to this owner (a
// member copied into an unrelated class raises TypeError instead).
PyMemberDescrObject *plain_slot(PyObject *owner, PyObject *descr, bool store)
{
    if (descr == nullptr || Py_TYPE(descr) != &PyMemberDescr_Type) return nullptr;
    auto *md = reinterpret_cast<PyMemberDescrObject *>(descr);
    PyMemberDef *def = md->d_member;
    if (def->type != T_OBJECT_EX || (def->flags & (store ? (READONLY | PY_AUDIT_READ) : PY_AUDIT_READ)) != 0) {
        return nullptr;
    }
    if (!PyObject_TypeCheck(owner, md->d_common.d_type)) return nullptr;
    return md;
}

// object.__class__'s descriptor when `name` is "__class__" (else NULL): a type
// whose lookup of the name finds this very descriptor reads Py_TYPE(owner).
PyObject *object_class_descr(PyObject *name)
{
    static PyObject *dunder_class = PyUnicode_InternFromString("__class__");
    if (dunder_class == nullptr || !pyj_unicode_eq(name, dunder_class)) return nullptr;
    return _PyType_Lookup(&PyBaseObject_Type, dunder_class);
}

// A metaclass whose __getattribute__ is type's own (its getattro may still be
// the slot that adds a __getattr__ hook).
bool type_getattribute(PyTypeObject *meta)
{
    static PyObject *getattribute = PyUnicode_InternFromString("__getattribute__");
    if (getattribute == nullptr) return false;
    PyObject *mine = _PyType_Lookup(meta, getattribute);
    return mine != nullptr && mine == _PyType_Lookup(&PyType_Type, getattribute);
}

bool no_instance_dict(PyTypeObject *tp) { return !(tp->tp_flags & Py_TPFLAGS_MANAGED_DICT) && tp->tp_dictoffset == 0; }

// The entry a new fill for (tp, guard) goes to.
AttrEntry *entry_for(AttrCache *site, PyTypeObject *tp, AttrKind kind, void *guard)
{
    bool per_owner = kind == kAttrClass || kind == kAttrModule;   // many owners share one type
    for (AttrEntry &e : site->entries) {
        if (e.type == tp && (!per_owner || e.guard == guard)) return &e;
    }
    for (AttrEntry &e : site->entries) {
        if (e.kind == kAttrEmpty) return &e;
    }
    return &site->entries[site->next_victim++ % kAttrWays];
}

void fill(AttrCache *site, PyTypeObject *tp, uint32_t version, AttrKind kind, int64_t index, void *guard,
          uint64_t guard_version, PyObject *value)
{
    AttrEntry *c = entry_for(site, tp, kind, guard);
    // Replacing another owner's live entry: more owners pass here than there
    // are ways (a megamorphic site); fill_done backs off as for a failure.
    bool same_owner = c->type == tp && (c->guard == guard || (kind != kAttrClass && kind != kAttrModule));
    site->evicted = c->kind != kAttrEmpty && !same_owner;
    site->fills++;
    c->type = tp;
    c->version = version;
    c->kind = kind;
    c->index = index;
    c->guard = guard;
    c->guard_version = guard_version;
    c->value = value;
}

// A module attribute: only types.ModuleType itself (a subclass may define
// descriptors or __getattr__) and a name the module type does not define (its
// __dict__, __class__, __annotations__ ... are data descriptors that win over
// the module dict). Then module_getattro returns the dict's entry.
void fill_module(AttrCache *c, PyObject *owner, PyObject *name, PyObject *result)
{
    PyObject *dict = reinterpret_cast<PyModuleObject *>(owner)->md_dict;
    // (A str-keyed dict, so the lookup below runs no Python code.)
    if (dict == nullptr || !PyDict_CheckExact(dict) || !DK_IS_UNICODE(reinterpret_cast<PyDictObject *>(dict)->ma_keys) ||
        _PyType_Lookup(&PyModule_Type, name) != nullptr) {
        return;
    }
    uint32_t version = valid_version(&PyModule_Type);
    if (version == 0 || PyDict_GetItemWithError(dict, name) != result) {
        PyErr_Clear();
        return;
    }
    fill(c, &PyModule_Type, version, kAttrModule, 0, dict,
         reinterpret_cast<PyDictObject *>(dict)->ma_version_tag, result);
}

// An attribute of a class read from the class: type_getattro first consults the
// metaclass, so the metaclass must use type's getattro and not define the name
// as a data descriptor; then the class attribute is returned as is when it has
// no __get__, and a function's __get__ with no instance returns the function.
// The metaclass's tag (the entry's version) and the class's tag pin both.
// A metaclass that only adds __getattr__ (enum's EnumType) keeps type's
// __getattribute__: its slot then returns what type_getattro finds, and calls
// __getattr__ only when that fails, which a cached hit never does.
void fill_class(AttrCache *c, PyObject *owner, PyObject *name, PyObject *result)
{
    PyTypeObject *meta = Py_TYPE(owner);
    auto *cls = reinterpret_cast<PyTypeObject *>(owner);
    if (meta->tp_getattro != PyType_Type.tp_getattro && !type_getattribute(meta)) return;
    // A metaclass attribute wins only if it is a data descriptor (type.__name__,
    // __doc__, __dict__ ...); a non-data one (type.__init__, mro) is shadowed
    // by the class's own attribute.
    PyObject *meta_attr = _PyType_Lookup(meta, name);
    if (meta_attr != nullptr && (!stable_descriptor(meta_attr) || Py_TYPE(meta_attr)->tp_descr_set != nullptr)) return;
    PyObject *attr = _PyType_Lookup(cls, name);
    if (attr == nullptr || attr != result) return;
    if (Py_TYPE(attr)->tp_descr_get != nullptr && Py_TYPE(attr) != &PyFunction_Type) return;
    // An attribute whose own class could gain a __get__ unseen by the tags is
    // cached only when that class is the owner (an enum's members): the owner's
    // tag covers it, and the entry checks the value's type still is the owner
    // (kAttrClass with index 1), against a __class__ assignment.
    int64_t own_member = 0;
    if (!stable_descriptor(attr)) {
        if (Py_TYPE(attr) != cls) return;
        own_member = 1;
    }
    uint32_t meta_version = valid_version(meta), cls_version = valid_version(cls);
    if (meta_version == 0 || cls_version == 0) return;
    fill(c, meta, meta_version, kAttrClass, own_member, owner, cls_version, attr);
}

// An instance attribute found in a materialised dict: where the inline path
// will look for it (see kAttrInstanceDict).
void fill_instance_dict(AttrCache *c, PyTypeObject *tp, uint32_t version, PyObject *owner, PyObject *name,
                        PyObject *result)
{
    PyObject *dict = managed_dict(owner);
    if (dict == nullptr || !PyDict_CheckExact(dict)) return;
    auto *mp = reinterpret_cast<PyDictObject *>(dict);
    PyDictKeysObject *keys = mp->ma_keys;
    if (mp->ma_values != nullptr || keys->dk_kind != DICT_KEYS_UNICODE) return;
    PyDictUnicodeEntry *entries = DK_UNICODE_ENTRIES(keys);
    Py_ssize_t n = keys->dk_nentries < 64 ? keys->dk_nentries : 64;   // bounded search; else not cached
    for (Py_ssize_t i = 0; i < n; i++) {
        if (entries[i].me_key == name) {
            if (entries[i].me_value == result) fill(c, tp, version, kAttrInstanceDict, i, nullptr, 0, name);
            return;
        }
    }
}

// An attribute of an instance whose type uses the generic getattr.
// `method` is true when _PyObject_GetMethod returned `result` as an unbound
// method (LOAD_METHOD), false when `result` is the attribute itself.
void fill_instance(AttrCache *c, PyObject *owner, PyObject *name, PyObject *result, bool method)
{
    PyTypeObject *tp = Py_TYPE(owner);
    if (tp->tp_getattro != PyObject_GenericGetAttr) return;
    PyObject *descr = _PyType_Lookup(tp, name);
    if (descr != nullptr && !stable_descriptor(descr)) return;
    uint32_t version = valid_version(tp);
    if (version == 0) return;
    bool data_descr = descr != nullptr && Py_TYPE(descr)->tp_descr_set != nullptr;

    if (method) {
        // The instance must not be able to shadow the method.
        if (descr != result || !PyType_HasFeature(Py_TYPE(descr), Py_TPFLAGS_METHOD_DESCRIPTOR)) return;
        if (no_instance_dict(tp)) {
            fill(c, tp, version, kAttrMethodNoDict, 0, nullptr, 0, descr);
        }
        else if ((tp->tp_flags & Py_TPFLAGS_MANAGED_DICT) && managed_values(owner) != nullptr) {
            PyDictKeysObject *keys = shared_keys(tp);
            if (keys != nullptr && shared_keys_index(keys, name) < 0) {
                fill(c, tp, version, kAttrMethodValues, 0, keys, static_cast<uint64_t>(keys->dk_nentries), descr);
            }
        }
        else if (tp->tp_flags & Py_TPFLAGS_MANAGED_DICT) {
            // A str-keyed dict: looking the name up runs no Python code.
            PyObject *dict = managed_dict(owner);
            if (dict != nullptr && PyDict_CheckExact(dict) &&
                DK_IS_UNICODE(reinterpret_cast<PyDictObject *>(dict)->ma_keys) &&
                PyDict_GetItemWithError(dict, name) == nullptr && !PyErr_Occurred()) {
                fill(c, tp, version, kAttrMethodDict, 0, nullptr, reinterpret_cast<PyDictObject *>(dict)->ma_version_tag,
                     descr);
            }
        }
        return;
    }

    if (data_descr) {
        // A data descriptor wins over the instance dict: only slots are cached,
        // and object's own __class__ (a getset that returns Py_TYPE(owner)),
        // read as the slot at ob_type's offset, as 3.11's LOAD_ATTR_SLOT does.
        if (descr == object_class_descr(name)) {
            if (result == reinterpret_cast<PyObject *>(tp)) {
                fill(c, tp, version, kAttrSlot, offsetof(PyObject, ob_type), nullptr, 0, nullptr);
            }
            return;
        }
        PyMemberDescrObject *md = plain_slot(owner, descr, false);
        if (md == nullptr) return;
        Py_ssize_t offset = md->d_member->offset;
        if (*reinterpret_cast<PyObject **>(reinterpret_cast<char *>(owner) + offset) != result) return;
        fill(c, tp, version, kAttrSlot, offset, nullptr, 0, nullptr);
        return;
    }

    // No data descriptor: the instance's own attribute comes first, then the
    // class attribute (cached only when it has no __get__ at all).
    bool plain_class_attr = descr != nullptr && Py_TYPE(descr)->tp_descr_get == nullptr;
    if (no_instance_dict(tp)) {
        if (plain_class_attr && descr == result) fill(c, tp, version, kAttrTypeNoDict, 0, nullptr, 0, descr);
        return;
    }
    if (!(tp->tp_flags & Py_TPFLAGS_MANAGED_DICT)) return;
    PyDictValues *values = managed_values(owner);
    if (values == nullptr) {
        fill_instance_dict(c, tp, version, owner, name, result);
        return;
    }
    PyDictKeysObject *keys = shared_keys(tp);
    if (keys == nullptr) return;
    Py_ssize_t ix = shared_keys_index(keys, name);
    if (ix >= 0) {
        if (values->values[ix] == result) fill(c, tp, version, kAttrInstanceValue, ix, nullptr, 0, nullptr);
    }
    else if (plain_class_attr && descr == result) {
        fill(c, tp, version, kAttrTypeValues, 0, keys, static_cast<uint64_t>(keys->dk_nentries), descr);
    }
}

void fill_load(AttrCache *c, PyObject *owner, PyObject *name, PyObject *result, bool method)
{
    if (!PyUnicode_CheckExact(name) || reinterpret_cast<PyASCIIObject *>(name)->hash == -1) return;
    if (Py_TYPE(owner) == &PyModule_Type) {
        if (!method) fill_module(c, owner, name, result);
    }
    else if (PyType_Check(owner)) {
        if (!method) fill_class(c, owner, name, result);
    }
    else {
        fill_instance(c, owner, name, result, method);
    }
}

// After a successful generic store: the value went into the values array or a
// slot, and the inline path would do the same next time.
void fill_store(AttrCache *c, PyObject *owner, PyObject *name, PyObject *value)
{
    PyTypeObject *tp = Py_TYPE(owner);
    if (!PyUnicode_CheckExact(name) || reinterpret_cast<PyASCIIObject *>(name)->hash == -1) return;
    if (tp->tp_setattro != PyObject_GenericSetAttr) return;
    PyObject *descr = _PyType_Lookup(tp, name);
    if (descr != nullptr && !stable_descriptor(descr)) return;
    uint32_t version = valid_version(tp);
    if (version == 0) return;
    if (descr != nullptr && Py_TYPE(descr)->tp_descr_set != nullptr) {
        PyMemberDescrObject *md = plain_slot(owner, descr, true);
        if (md == nullptr) return;
        Py_ssize_t offset = md->d_member->offset;
        if (*reinterpret_cast<PyObject **>(reinterpret_cast<char *>(owner) + offset) != value) return;
        fill(c, tp, version, kAttrSlot, offset, nullptr, 0, nullptr);
        return;
    }
    // No data descriptor: the generic store writes the instance's values.
    if (!(tp->tp_flags & Py_TPFLAGS_MANAGED_DICT)) return;
    PyDictValues *values = managed_values(owner);
    Py_ssize_t ix = values != nullptr ? shared_keys_index(shared_keys(tp), name) : -1;
    if (ix >= 0 && values->values[ix] == value) fill(c, tp, version, kAttrInstanceValue, ix, nullptr, 0, nullptr);
}

// The owner cannot shadow the entry's class attribute: it has managed-dict
// values and the shared keys `guard` have not grown since the fill.
bool no_shadow_values(const AttrEntry &e, PyObject *owner)
{
    return managed_values(owner) != nullptr &&
           static_cast<uint64_t>(static_cast<PyDictKeysObject *>(e.guard)->dk_nentries) == e.guard_version;
}

// One entry's answer under its kind's guards (the type guard has held). For
// the kinds visit_names.cpp also checks inline (instance values, slots, the
// two no-dict/values method kinds) these are the same checks; for the others
// this is the only implementation.
AttrProbe probe_entry(const AttrEntry &e, PyObject *owner, bool method)
{
    constexpr AttrProbe none{nullptr, 0};
    switch (e.kind) {
    case kAttrInstanceValue: {
        PyDictValues *values = managed_values(owner);
        return values != nullptr ? AttrProbe{values->values[e.index], 0} : none;
    }
    case kAttrInstanceDict: {
        auto *dict = reinterpret_cast<PyDictObject *>(managed_dict(owner));
        if (dict == nullptr || dict->ma_values != nullptr) return none;
        PyDictKeysObject *keys = dict->ma_keys;
        if (keys->dk_kind != DICT_KEYS_UNICODE || static_cast<uint64_t>(e.index) >= static_cast<uint64_t>(keys->dk_nentries)) {
            return none;
        }
        PyDictUnicodeEntry &entry = DK_UNICODE_ENTRIES(keys)[e.index];
        return entry.me_key == e.value ? AttrProbe{entry.me_value, 0} : none;
    }
    case kAttrSlot:
        return AttrProbe{*reinterpret_cast<PyObject **>(reinterpret_cast<char *>(owner) + e.index), 0};
    case kAttrModule: {
        PyObject *dict = reinterpret_cast<PyModuleObject *>(owner)->md_dict;
        bool same = dict == e.guard && reinterpret_cast<PyDictObject *>(dict)->ma_version_tag == e.guard_version;
        return same ? AttrProbe{e.value, 0} : none;
    }
    case kAttrClass: {
        bool same = owner == e.guard &&
                    static_cast<uint64_t>(reinterpret_cast<PyTypeObject *>(owner)->tp_version_tag) == e.guard_version &&
                    (e.index == 0 || reinterpret_cast<PyObject *>(Py_TYPE(e.value)) == owner);
        return same ? AttrProbe{e.value, 0} : none;
    }
    case kAttrTypeValues:
        return no_shadow_values(e, owner) ? AttrProbe{e.value, 0} : none;
    case kAttrTypeNoDict:
        return AttrProbe{e.value, 0};
    case kAttrMethodValues:
        return method && no_shadow_values(e, owner) ? AttrProbe{e.value, 1} : none;
    case kAttrMethodNoDict:
        return method ? AttrProbe{e.value, 1} : none;
    case kAttrMethodDict: {
        auto *dict = reinterpret_cast<PyDictObject *>(managed_dict(owner));
        return method && dict != nullptr && dict->ma_version_tag == e.guard_version ? AttrProbe{e.value, 1} : none;
    }
    default:
        return none;
    }
}

uint64_t g_load_misses = 0;   // GIL held
uint64_t g_fill_attempts = 0;

// Whether this miss tries to fill the cache (see AttrCache::skip_fills).
bool fill_wanted(AttrCache *c)
{
    if (c->skip_fills == 0) {
        g_fill_attempts++;
        return true;
    }
    c->skip_fills--;
    return false;
}

// After a fill attempt: `before` is c->fills before it.
void fill_done(AttrCache *c, uint32_t before)
{
    if (c->fills != before && !c->evicted) {
        c->failed_fills = 0;
        return;
    }
    if (c->failed_fills < 6) c->failed_fills++;
    c->skip_fills = static_cast<uint16_t>((1u << c->failed_fills) - 1);
}

// fill(): one of the fill functions above, unless this site backs off.
template <class Fill>
void fill_backing_off(AttrCache *c, Fill fill)
{
    if (!fill_wanted(c)) return;
    uint32_t before = c->fills;
    c->evicted = false;
    fill();
    fill_done(c, before);
}

}  // namespace

uint64_t load_misses() { return g_load_misses; }
void count_load_miss() { g_load_misses++; }
uint64_t fill_attempts() { return g_fill_attempts; }

AttrProbe pyj_attr_probe(const AttrCache *cache, PyObject *owner, int method)
{
    PyTypeObject *tp = Py_TYPE(owner);
    for (const AttrEntry &e : cache->entries) {
        if (e.type != tp || tp->tp_version_tag != e.version) continue;
        AttrProbe hit = probe_entry(e, owner, method != 0);
        if (hit.value != nullptr) return hit;
    }
    return AttrProbe{nullptr, 0};
}

int pyj_load_attr_miss(PyObject **slot, PyObject *name, AttrCache *cache)
{
    PyObject *owner = slot[0];
    g_load_misses++;
    PyObject *res = PyObject_GetAttr(owner, name);
    if (res == nullptr) return -1;
    fill_backing_off(cache, [&] { fill_load(cache, owner, name, res, false); });
    slot[0] = res;
    Py_DECREF(owner);
    return 0;
}

int pyj_load_method_miss(PyObject **slot, PyObject *name, AttrCache *cache)
{
    PyObject *owner = slot[0];
    g_load_misses++;
    PyObject *meth = nullptr;
    int found = _PyObject_GetMethod(owner, name, &meth);
    if (meth == nullptr) return -1;
    fill_backing_off(cache, [&] { fill_load(cache, owner, name, meth, found != 0); });
    if (found) {
        slot[0] = meth;   // [meth, owner]: the owner's reference moves up
        slot[1] = owner;
    }
    else {
        slot[0] = nullptr;
        slot[1] = meth;
        Py_DECREF(owner);
    }
    return 0;
}

int pyj_store_attr_miss(PyObject *owner, PyObject *name, PyObject *value, AttrCache *cache)
{
    int err = PyObject_SetAttr(owner, name, value);
    if (err == 0) fill_backing_off(cache, [&] { fill_store(cache, owner, name, value); });
    Py_DECREF(value);
    Py_DECREF(owner);
    return err != 0 ? -1 : 0;
}

}  // namespace pyjion::rtn

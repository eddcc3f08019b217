// Per-site data the machine code reads and the runtime fills: inline caches.
// Each lives as long as the compiled code (CompiledCode owns them), at a fixed
// address baked into the instructions.
#pragma once

#include <Python.h>
#include <cstdint>

#include "cpython/object_layout.h"   // _Py_CODEUNIT

struct _PyInterpreterFrame;

namespace pyjion {

// LOAD_GLOBAL: the value found for one name while the globals and builtins
// dicts had these version tags. A dict's ma_version_tag changes on every
// mutation and is unique across dicts, so equal tags mean the lookup would
// give the same (borrowed, dict-owned) value. The globals are known by their
// tag alone (f_globals is always a dict); the builtins, which may be another
// mapping, by identity first. An empty cache's builtins (NULL) match no frame.
struct GlobalCache {
    uint64_t globals_version = 0;
    PyObject *builtins = nullptr;
    uint64_t builtins_version = 0;
    PyObject *value = nullptr;
};

// LOAD_ATTR, LOAD_METHOD and STORE_ATTR: how one owner type answers for one
// name (codegen/runtime/attr_cache.cpp fills it, the visitors in visit_names.cpp read
// it). Every kind is guarded first by Py_TYPE(owner) == type and
// type->tp_version_tag == version: a type's tag is never 0 once valid, is never
// reused, and is reset whenever the type or a base class is modified (attribute
// set/deleted, __bases__ changed), so equal tags mean _PyType_Lookup on the type
// still gives the same descriptors. Each kind then adds the guards below.
enum AttrKind : uint32_t {
    kAttrEmpty = 0,
    // A managed-dict instance whose values array holds the attribute at
    // `index` (non-NULL at run time; NULL when the values are gone: dict
    // materialised, __class__ assigned). The class has no data descriptor of
    // that name. LOAD: the value; STORE: replace it.
    kAttrInstanceValue,
    // A managed-dict instance whose materialised dict (a combined, str-keyed
    // table) has, at entry `index` of its keys, the key `value` (the site's
    // name, compared by identity) with a non-NULL value. A dict holds a key
    // once, so that entry is the attribute, whatever happened to the dict.
    kAttrInstanceDict,
    // A __slots__ member (T_OBJECT_EX) at byte offset `index`; LOAD misses on
    // NULL (unset: AttributeError from the generic path).
    kAttrSlot,
    // A module (exactly types.ModuleType) whose dict `guard` still has
    // ma_version_tag `guard_version`: `value` is the dict's entry.
    kAttrModule,
    // A class `guard` (its metaclass uses type's __getattribute__) with
    // tp_version_tag `guard_version`: `value` is the class attribute, a
    // function or a plain object that has no __get__ (its type is immutable,
    // or, with `index` 1, the class itself, which the value must still be an
    // instance of: an enum's member).
    kAttrClass,
    // A class attribute `value` with no __get__ (plain object) read through an
    // instance that cannot shadow it: managed-dict values whose shared keys
    // `guard` (append-only) still have `guard_version` entries and did not
    // contain the name ...
    kAttrTypeValues,
    // ... or an instance with no __dict__ at all.
    kAttrTypeNoDict,
    // LOAD_METHOD: `value` is a plain method (its type has
    // Py_TPFLAGS_METHOD_DESCRIPTOR) to call with the owner as self, under the
    // same two no-shadowing guards.
    kAttrMethodValues,
    kAttrMethodNoDict,
    // ... or a managed-dict instance whose materialised dict (exact, str keys
    // only) did not contain the name and still has ma_version_tag
    // `guard_version` (unique across dicts and changed by every mutation).
    kAttrMethodDict,
};

struct AttrEntry {
    PyTypeObject *type = nullptr;   // borrowed; only compared
    uint32_t version = 0;
    uint32_t kind = kAttrEmpty;
    int64_t index = 0;
    void *guard = nullptr;
    uint64_t guard_version = 0;
    PyObject *value = nullptr;      // borrowed: owned by a dict the guards keep unchanged
};

// A site's cache: a few entries (polymorphic sites, e.g. a method of a base
// class called on several subclasses), tried in order: the first entry's
// common kinds by the machine code, the rest by rtn::pyj_attr_probe (LOAD) or
// a cold loop in machine code (STORE).
// The miss helper replaces the entry of the same type (and, for classes and
// modules, the same owner), else an empty one, else one in turn.
constexpr int kAttrWays = 4;
struct AttrCache {
    AttrEntry entries[kAttrWays];
    uint32_t next_victim = 0;
    // Misses whose fill found nothing to cache (a property, __getattr__, a
    // general dict ...) or had to evict another owner's entry (more owners
    // than ways) back off, as CPython's adaptive counters do: after the n-th
    // such fill in a row, the next 2**n - 1 misses (at most 63) go straight
    // to the generic operation. (attr_cache.cpp; only the miss helpers read
    // these.)
    uint32_t fills = 0;
    uint16_t failed_fills = 0;
    uint16_t skip_fills = 0;
    bool evicted = false;   // the last fill replaced another owner's entry
};

// CALL (no keyword names) of a C callable: the callable the site last called,
// once the calling code was warm, and the function that repeats that call the
// way 3.11's specialised CALL forms make it (codegen/runtime/call_cache.cpp). The
// machine code compares the callable in the call's stack slots with
// `callable` and, when equal, calls `call` instead of the generic helper.
struct CallCache;
using CachedCall = PyObject *(*)(const CallCache *cache, PyObject **args, PyThreadState *ts,
                                 _PyInterpreterFrame *frame);
struct CallCache {
    PyObject *callable = nullptr;   // a strong reference: identity stays meaningful
    CachedCall call = nullptr;
    CachedCall inner = nullptr;     // the form `call` times while profiling (callcache::fill)
    void *prof_key = nullptr;       // the profiler's handle of `callable` (PyjionHookState.c_call_key)
    void *cfunc = nullptr;          // the C function to call
    void *self = nullptr;           // a builtin's m_self, or a method descriptor's class
    int32_t total = 0;              // arguments, self included
    int32_t is_meth = 0;            // the callable sits in the method slot (LOAD_METHOD)
    _Py_CODEUNIT *precall_instr = nullptr;   // the site's PRECALL (set by the compiler)
    // The last callable found not to be cacheable (borrowed, only compared: a
    // new object at the same address costs one more look, nothing else).
    const PyObject *rejected = nullptr;
    CallCache() = default;
    CallCache(const CallCache &) = delete;
    CallCache &operator=(const CallCache &) = delete;
    ~CallCache() { Py_XDECREF(callable); }
};

struct SiteData {
    virtual ~SiteData() = default;
};

template <class T>
struct SiteDataOf : SiteData {
    T data;
};

}  // namespace pyjion

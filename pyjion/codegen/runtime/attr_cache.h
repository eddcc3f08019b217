// The attribute caches' runtime: the miss paths of LOAD_ATTR, LOAD_METHOD and
// STORE_ATTR (visit_names.cpp). Each one does the generic operation with
// exactly CPython's semantics, then, if it succeeded and the case is one an
// AttrCache can prove, (re)fills the site's cache so the next execution takes
// the inline path. See AttrKind in inline_cache.h for the cases and guards.
#pragma once

#include "cpython/frame_layout.h"
#include "runtime/inline_cache.h"

namespace pyjion::rtn {

// LOAD_ATTR: slot[0] is the owner; replaced by the attribute (the owner's
// reference released). 0, or -1 with an exception set and the owner left in
// place for the unwinder.
int pyj_load_attr_miss(PyObject **slot, PyObject *name, AttrCache *cache);

// LOAD_METHOD: slot[0] is the owner; on success slot[0], slot[1] become
// [method, owner] or [NULL, attribute]. 0, or -1 as above.
int pyj_load_method_miss(PyObject **slot, PyObject *name, AttrCache *cache);

// STORE_ATTR (steals owner and value): 0, or -1 with an exception set.
int pyj_store_attr_miss(PyObject *owner, PyObject *name, PyObject *value, AttrCache *cache);

// What a LOAD_ATTR or LOAD_METHOD site's cache answers for `owner`: the
// machine code checks the first entry's common kinds inline and asks this for
// the rest (every entry, every kind), so the other guards need not be
// emitted at every site. `value` (borrowed) is NULL when no entry holds:
// then the miss helper runs. `is_method`: a plain method to call with the
// owner as self (LOAD_METHOD's kinds; never for a LOAD_ATTR site).
struct AttrProbe {
    PyObject *value;
    intptr_t is_method;
};
AttrProbe pyj_attr_probe(const AttrCache *cache, PyObject *owner, int method);

// LOAD_ATTR / LOAD_METHOD misses (generic lookups) so far in this process:
// what a test reads to see that warm sites hit their caches.
uint64_t load_misses();
// Counts one (a site that follows the interpreter's form, py313/attr_sites.h,
// and took the generic path).
void count_load_miss();
// Fills the miss helpers attempted (loads and stores; backed-off misses skip it).
uint64_t fill_attempts();

}  // namespace pyjion::rtn

// Layout facts of CPython 3.11 the inline paths read (pycore_object.h cannot be
// included from C++): a managed-dict object keeps its PyDictValues* 4 words and
// its materialised dict 3 words before the object header.
namespace pyjion::layout {
constexpr int32_t kManagedValuesOffset = -4 * static_cast<int32_t>(sizeof(PyObject *));
constexpr int32_t kManagedDictOffset = -3 * static_cast<int32_t>(sizeof(PyObject *));
}  // namespace pyjion::layout

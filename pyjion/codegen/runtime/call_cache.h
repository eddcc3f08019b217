// CALL sites that call C functions: filling a site's CallCache
// (inline_cache.h) and the functions that repeat a cached call. They make the
// calls 3.11's specialised CALL forms make (Python/specialize.c,
// specialize_c_call, specialize_method_descriptor, specialize_class_call), on
// the same conditions, with the same recursion-depth accounting: a METH_O or
// METH_NOARGS call counts one level (CALL_NO_KW_BUILTIN_O,
// CALL_NO_KW_METHOD_DESCRIPTOR_O/_NOARGS), the others none.
#pragma once

#include "runtime/inline_cache.h"

namespace pyjion::callcache {

// A warm CALL without keyword names is about to call `callable` (not a Python
// function) with `total` arguments, self included; `is_meth`: the callable is
// in the method slot. If one of the cached forms applies, points `cache` at it
// (releasing what it held) and returns true; else leaves it and returns false.
bool fill(CallCache *cache, PyObject *callable, bool is_meth, Py_ssize_t total);

// Makes the call through a filled cache: `args` are the call's arguments
// (self first), args[-1] the stack slot holding the callable. Consumes the
// callable's and the arguments' references; returns a new reference, or NULL
// with an exception set and, if one of the specialised forms failed,
// frame->prev_instr at the site's PRECALL (where the interpreter makes them).
inline PyObject *call(const CallCache *cache, PyObject **args, PyThreadState *ts, _PyInterpreterFrame *frame)
{
    return cache->call(cache, args, ts, frame);
}

}  // namespace pyjion::callcache

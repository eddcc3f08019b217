// C function calls made by machine code while the profiler runs: the hook
// (PyjionHookState.c_call_begin/call_end, the hook's profiler.h) times those
// cProfile would count, so that they get their own profile entries and a
// Python function they call back has them as caller. The check costs only
// the generic call paths and the call caches filled while profiling
// (callcache::fill); code compiled while profiling counts its inline
// list.append with PyjionHookState.c_call_count (py311/visit_calls.cpp).
#pragma once

#include "codegen_api.h"
#include "runtime/direct_call.h"

namespace pyjion::prof {

inline bool on() { return direct::hook_state.profiling != 0; }

// The profiler's handle of a C callable (PyjionHookState.c_call_key), if
// it runs and counts its calls; nullptr otherwise.
inline void *c_call_key(PyObject *callable)
{
    const PyjionHookState &hook = direct::hook_state;
    return hook.profiling && hook.c_call_key != nullptr ? hook.c_call_key(callable) : nullptr;
}

// call() (which makes the call of `callable` with `args`, nargs positional),
// timed by the profiler if it is on and counts such a call.
template <typename Call>
inline PyObject *c_call(PyObject *callable, PyObject *const *args, Py_ssize_t nargs, Call call)
{
    const PyjionHookState &hook = direct::hook_state;
    PyjionProfCall ctx;
    if (!hook.profiling || hook.c_call_begin == nullptr || !hook.c_call_begin(&ctx, callable, args, nargs)) {
        return call();
    }
    PyObject *res = call();
    hook.call_end(&ctx);
    return res;
}

// call(), timed while the profiler is on as a call of the C function whose
// entry `key` is (PyjionHookState.c_call_key, which a call cache asks once).
template <typename Call>
inline PyObject *c_call_keyed(void *key, Call call)
{
    const PyjionHookState &hook = direct::hook_state;
    if (!hook.profiling) return call();
    PyjionProfCall ctx;
    hook.c_call_begin_key(&ctx, key);
    PyObject *res = call();
    hook.call_end(&ctx);
    return res;
}

}  // namespace pyjion::prof

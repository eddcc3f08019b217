// Compiled code entered from the runtime's C++ paths while the profiler runs
// (direct_call.h enter_compiled): direct calls that missed the stub, and the
// resumes of generators.
#include "runtime/direct_call.h"

namespace pyjion::direct {

PyObject *enter_profiled(PyjionCodeView *rec, PyThreadState *ts, _PyInterpreterFrame *frame)
{
    PyjionProfCall ctx;
    if (!hook_state.call_begin(&ctx, ts, frame, rec)) return rec->entry(ts, frame, 0);
    PyObject *result = rec->entry(ts, frame, 0);
    hook_state.call_end(&ctx);
    return result;
}

}  // namespace pyjion::direct

// Declarations of the runtime helpers listed in runtime.def.
#pragma once

#include "cpython/frame_layout.h"
#include "model/frame_state.h"

namespace pyjion::rt {

#define RUNTIME(name, ret, params) ret name params;
#include "runtime/runtime.def"
#undef RUNTIME

// What is wrong with a frame slot holding `value` where the model says
// `kind` (co_consts from `code`), or nullptr if nothing: the debug check's
// test of one slot.
const char *debug_slot_problem(PyObject *value, model::SlotKind kind, PyCodeObject *code);

// Shared by BEFORE_WITH and BEFORE_ASYNC_WITH (runtime_exceptions.cpp).
int enter_context(PyObject **sp, bool async);

}  // namespace pyjion::rt

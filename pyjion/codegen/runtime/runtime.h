// Declarations of the runtime helpers listed in runtime.def.
#pragma once

#include "cpython/frame_layout.h"

namespace pyjion::rt {

#define RUNTIME(name, ret, params) ret name params;
#include "runtime/runtime.def"
#undef RUNTIME

// Shared by BEFORE_WITH and BEFORE_ASYNC_WITH (runtime_exceptions.cpp).
int enter_context(PyObject **sp, bool async);

}  // namespace pyjion::rt

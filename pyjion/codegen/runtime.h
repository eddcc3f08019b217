// Declarations of the runtime helpers listed in runtime.def.
#pragma once

#include "frame_layout.h"

namespace pyjion::rt {

#define RUNTIME(name, ret, params) ret name params;
#include "runtime.def"
#undef RUNTIME

}  // namespace pyjion::rt

#include "code_alloc.h"

#include "code_heap.h"

namespace pyjion {

CompiledCode::~CompiledCode()
{
    if (entry_ != nullptr) code_heap::release(entry_);
}

}  // namespace pyjion

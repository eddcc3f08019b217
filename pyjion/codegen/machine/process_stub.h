// Machine code that every compiled function shares for the life of the
// process (the inline-cache site stubs, the tracing check's stub): assembled
// once by `emit` on an assembler of its own, placed in the code heap and
// named in the perf map. nullptr if it could not be placed (the callers then
// emit their code inline).
#pragma once

#include <asmjit/x86.h>

#include "machine/code_heap.h"
#include "machine/perf_map.h"

namespace pyjion {

template <class Emit>
const void *make_process_stub(const char *name, Emit emit)
{
    asmjit::CodeHolder holder;
    holder.init(asmjit::Environment::host());
    asmjit::x86::Assembler a(&holder);
    emit(a);
    void *entry = nullptr;
    size_t size = 0;
    if (code_heap::place(holder, &entry, &size) != asmjit::kErrorOk) return nullptr;
    perf_map::record_lasting(entry, size, name);
    return entry;
}

}  // namespace pyjion

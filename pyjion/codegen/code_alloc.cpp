#include "code_alloc.h"

namespace pyjion {

asmjit::JitRuntime &jit_runtime()
{
    // Never destroyed: machine code may outlive module teardown at exit.
    static auto *rt = new asmjit::JitRuntime();
    return *rt;
}

asmjit::Error place_code(asmjit::CodeHolder &holder, void **entry, size_t *size)
{
    using namespace asmjit;
    *entry = nullptr;
    ASMJIT_PROPAGATE(holder.flatten());
    ASMJIT_PROPAGATE(holder.resolveUnresolvedLinks());
    // The size before relocation counts an address-table slot for every
    // called function; calls that end up within rel32 reach do not use
    // theirs. The slack stays allocated: shrinking the allocation (as
    // JitRuntime::add does) made this AsmJit's pool grow without bound
    // when code is compiled and released repeatedly.
    size_t reserved = holder.codeSize();
    if (reserved == 0) return DebugUtils::errored(kErrorNoCodeGenerated);
    JitAllocator &allocator = *jit_runtime().allocator();
    void *rx = nullptr, *rw = nullptr;
    ASMJIT_PROPAGATE(allocator.alloc(&rx, &rw, reserved));
    Error err = holder.relocateToBase(reinterpret_cast<uint64_t>(rx));
    if (err == kErrorOk) {
        VirtMem::ProtectJitReadWriteScope writable(rx, reserved);
        err = holder.copyFlattenedData(rw, reserved, CopySectionFlags::kPadSectionBuffer | CopySectionFlags::kPadTargetBuffer);
    }
    if (err != kErrorOk) {
        allocator.release(rx);
        return err;
    }
    *entry = rx;
    *size = holder.codeSize();
    return kErrorOk;
}

CompiledCode::~CompiledCode()
{
    if (entry_ != nullptr) jit_runtime().release(entry_);
}

}  // namespace pyjion

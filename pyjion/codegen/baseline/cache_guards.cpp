// The inline caches' guards as machine code (see cache_guards.h).
#include "baseline/cache_guards.h"

#include "runtime/attr_cache.h"
#include "cpython/frame_layout.h"

namespace pyjion::guards {

using namespace asmjit;

void no_shadow_values(x86::Assembler &a, const Label &fail)
{
    a.cmp(x86::qword_ptr(x86::rdi, layout::kManagedValuesOffset), 0);
    a.je(fail);
    a.mov(x86::rax, x86::qword_ptr(x86::rcx, kEntryGuard));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, kKeysNentries));
    a.cmp(x86::rax, x86::qword_ptr(x86::rcx, kEntryGuardVersion));
    a.jne(fail);
}

void instance_value(x86::Assembler &a, const Label &fail)
{
    a.mov(x86::rax, x86::qword_ptr(x86::rdi, layout::kManagedValuesOffset));
    a.test(x86::rax, x86::rax);
    a.jz(fail);
    a.mov(x86::rdx, x86::qword_ptr(x86::rcx, kEntryIndex));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, x86::rdx, 3));
    a.test(x86::rax, x86::rax);
    a.jz(fail);
}

void slot_value(x86::Assembler &a, const Label &fail)
{
    a.mov(x86::rdx, x86::qword_ptr(x86::rcx, kEntryIndex));
    a.mov(x86::rax, x86::qword_ptr(x86::rdi, x86::rdx));
    a.test(x86::rax, x86::rax);
    a.jz(fail);
}

void global_value(x86::Assembler &a, const Label &fail)
{
    a.mov(x86::rax, Emitter::frame_q(layout::kFrameGlobals));
    a.mov(x86::rdx, x86::qword_ptr(x86::rax, kDictVersion));
    a.cmp(x86::rdx, x86::qword_ptr(x86::rcx, offsetof(GlobalCache, globals_version)));
    a.jne(fail);
    a.mov(x86::rax, Emitter::frame_q(layout::kFrameBuiltins));
    a.cmp(x86::rax, x86::qword_ptr(x86::rcx, offsetof(GlobalCache, builtins)));
    a.jne(fail);
    a.mov(x86::rdx, x86::qword_ptr(x86::rax, kDictVersion));
    a.cmp(x86::rdx, x86::qword_ptr(x86::rcx, offsetof(GlobalCache, builtins_version)));
    a.jne(fail);
    a.mov(x86::rax, x86::qword_ptr(x86::rcx, offsetof(GlobalCache, value)));
}

}  // namespace pyjion::guards

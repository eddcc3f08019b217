// The shared site stubs (see site_stubs.h). Each attribute stub walks the
// site's entries in order, as rtn::pyj_attr_probe does: an entry applies when the owner's type
// is the entry's and still has its version tag; then the entry's kind adds its
// own guards (inline_cache.h says why they suffice). The first entry whose
// guards all hold answers; a kind the stub does not check (an attribute in a
// materialised dict) sends the site to the probe, which checks them all.
#include "baseline/site_stubs.h"

#include "runtime/attr_cache.h"
#include "baseline/cache_guards.h"
#include "machine/emitter.h"
#include "runtime/inline_cache.h"
#include "machine/process_stub.h"

#include "internal/pycore_moduleobject.h"   // PyModuleObject

#include <cstddef>

namespace pyjion::site_stubs {

namespace {

using namespace asmjit;
using namespace guards;   // the entry offsets and the kinds' guards (cache_guards.h)

constexpr int32_t kModuleDict = offsetof(PyModuleObject, md_dict);
constexpr int32_t kEntries = offsetof(AttrCache, entries);

// Registers inside the stubs: rsi = the owner's slot, rdi = the owner,
// r8 = its type, r10d = the type's version tag, rcx = the entry, r9 = one past
// the last entry; rax, rdx scratch. A kind's check leaves the value it found
// (borrowed) in rax and jumps to its outcome, or goes on at `next`.
struct Walk {
    Label next;       // the following entry
    Label other;      // a kind this stub does not check: kMiss
    Label attribute;  // rax = the attribute itself
    Label method;     // rax = a method to call with the owner as self
};

// One kind: cmp kind / jne <the following kind> / its guards / jmp outcome.
template <class Check>
void kind(x86::Assembler &a, AttrKind k, Check check)
{
    Label following = a.newLabel();
    a.cmp(x86::eax, static_cast<uint32_t>(k));
    a.jne(following);
    check();
    a.bind(following);
}

// The kinds whose answer is the attribute itself (both stubs check them).
void attribute_kinds(x86::Assembler &a, const Walk &w)
{
    kind(a, kAttrInstanceValue, [&] {
        instance_value(a, w.next);
        a.jmp(w.attribute);
    });
    kind(a, kAttrSlot, [&] {
        slot_value(a, w.next);
        a.jmp(w.attribute);
    });
    kind(a, kAttrModule, [&] {
        a.mov(x86::rax, x86::qword_ptr(x86::rdi, kModuleDict));
        a.cmp(x86::rax, x86::qword_ptr(x86::rcx, kEntryGuard));
        a.jne(w.next);
        a.mov(x86::rax, x86::qword_ptr(x86::rax, kDictVersion));
        a.cmp(x86::rax, x86::qword_ptr(x86::rcx, kEntryGuardVersion));
        a.jne(w.next);
        a.mov(x86::rax, x86::qword_ptr(x86::rcx, kEntryValue));
        a.jmp(w.attribute);
    });
    kind(a, kAttrClass, [&] {
        a.cmp(x86::rdi, x86::qword_ptr(x86::rcx, kEntryGuard));
        a.jne(w.next);
        a.mov(x86::eax, x86::dword_ptr(x86::rdi, kTypeVersion));   // (zero-extended)
        a.cmp(x86::rax, x86::qword_ptr(x86::rcx, kEntryGuardVersion));
        a.jne(w.next);
        a.mov(x86::rax, x86::qword_ptr(x86::rcx, kEntryValue));
        a.cmp(x86::qword_ptr(x86::rcx, kEntryIndex), 0);   // a member of the class itself:
        a.je(w.attribute);
        a.cmp(x86::qword_ptr(x86::rax, layout::kObjectType), x86::rdi);   // ... still its instance
        a.jne(w.next);
        a.jmp(w.attribute);
    });
    kind(a, kAttrTypeValues, [&] {
        no_shadow_values(a, w.next);
        a.mov(x86::rax, x86::qword_ptr(x86::rcx, kEntryValue));
        a.jmp(w.attribute);
    });
    kind(a, kAttrTypeNoDict, [&] {
        a.mov(x86::rax, x86::qword_ptr(x86::rcx, kEntryValue));
        a.jmp(w.attribute);
    });
}

// LOAD_METHOD's kinds whose answer is a method.
void method_kinds(x86::Assembler &a, const Walk &w)
{
    kind(a, kAttrMethodNoDict, [&] {
        a.mov(x86::rax, x86::qword_ptr(x86::rcx, kEntryValue));
        a.jmp(w.method);
    });
    kind(a, kAttrMethodValues, [&] {
        no_shadow_values(a, w.next);
        a.mov(x86::rax, x86::qword_ptr(x86::rcx, kEntryValue));
        a.jmp(w.method);
    });
    kind(a, kAttrMethodDict, [&] {
        a.mov(x86::rax, x86::qword_ptr(x86::rdi, layout::kManagedDictOffset));
        a.test(x86::rax, x86::rax);
        a.jz(w.next);
        a.mov(x86::rax, x86::qword_ptr(x86::rax, kDictVersion));
        a.cmp(x86::rax, x86::qword_ptr(x86::rcx, kEntryGuardVersion));
        a.jne(w.next);
        a.mov(x86::rax, x86::qword_ptr(x86::rcx, kEntryValue));
        a.jmp(w.method);
    });
}

// The loop over the entries; `kinds` emits the kind checks (eax = the kind).
template <class Kinds>
void walk_entries(x86::Assembler &a, const Walk &w, Kinds kinds)
{
    Label loop = a.newLabel();
    a.mov(x86::rdi, x86::qword_ptr(x86::rsi));
    a.mov(x86::r8, x86::qword_ptr(x86::rdi, layout::kObjectType));
    a.mov(x86::r10d, x86::dword_ptr(x86::r8, kTypeVersion));
    a.lea(x86::rcx, x86::ptr(x86::rdx, kEntries));
    a.lea(x86::r9, x86::ptr(x86::rdx, kEntries + kAttrWays * static_cast<int32_t>(sizeof(AttrEntry))));
    a.bind(loop);
    a.cmp(x86::r8, x86::qword_ptr(x86::rcx, kEntryType));
    a.jne(w.next);
    a.cmp(x86::r10d, x86::dword_ptr(x86::rcx, kEntryVersion));
    a.jne(w.next);
    a.mov(x86::eax, x86::dword_ptr(x86::rcx, kEntryKind));
    kinds();
    a.bind(w.other);
    a.mov(x86::eax, kMiss);
    a.ret();
    a.bind(w.next);
    a.add(x86::rcx, static_cast<int32_t>(sizeof(AttrEntry)));
    a.cmp(x86::rcx, x86::r9);
    a.jb(loop);
    a.mov(x86::eax, kMiss);
    a.ret();
}

// rax = the attribute (borrowed): it goes to `slot` as a new reference and
// the owner's reference is released (kOwnerDies if it was the last).
void emit_attribute_outcome(x86::Assembler &a, const Label &at, const x86::Mem &slot, bool clear_first_slot)
{
    Label dies = a.newLabel();
    a.bind(at);
    Emitter::incref_at(a, x86::rax);
    if (clear_first_slot) a.mov(x86::qword_ptr(x86::rsi), 0);
    a.mov(slot, x86::rax);
    Emitter::decref_at(a, x86::rdi);
    a.jz(dies);
    a.xor_(x86::eax, x86::eax);
    a.ret();
    a.bind(dies);
    a.mov(x86::eax, kOwnerDies);
    a.ret();
}

void emit_load_attr(x86::Assembler &a)
{
    Walk w{a.newLabel(), a.newLabel(), a.newLabel(), Label()};
    walk_entries(a, w, [&] { attribute_kinds(a, w); });
    emit_attribute_outcome(a, w.attribute, x86::qword_ptr(x86::rsi), false);
}

void emit_load_method(x86::Assembler &a)
{
    Walk w{a.newLabel(), a.newLabel(), a.newLabel(), a.newLabel()};
    walk_entries(a, w, [&] {
        method_kinds(a, w);
        attribute_kinds(a, w);
    });
    // [method, owner]: the owner's reference moves up one slot.
    a.bind(w.method);
    Emitter::incref_at(a, x86::rax);
    a.mov(x86::qword_ptr(x86::rsi), x86::rax);
    a.mov(x86::qword_ptr(x86::rsi, 8), x86::rdi);
    a.xor_(x86::eax, x86::eax);
    a.ret();
    // [NULL, attribute]
    emit_attribute_outcome(a, w.attribute, x86::qword_ptr(x86::rsi, 8), true);
}

// LOAD_GLOBAL's guards (rcx = the cache): the value as a new reference, or 0.
void emit_load_global(x86::Assembler &a)
{
    Label miss = a.newLabel();
    global_value(a, miss);
    Emitter::incref_at(a, x86::rax);
    a.ret();
    a.bind(miss);
    a.xor_(x86::eax, x86::eax);
    a.ret();
}

}  // namespace

const void *load_attr()
{
    static const void *stub = make_process_stub("pyjion::load_attr_stub", emit_load_attr);
    return stub;
}

const void *load_method()
{
    static const void *stub = make_process_stub("pyjion::load_method_stub", emit_load_method);
    return stub;
}

const void *load_global()
{
    static const void *stub = make_process_stub("pyjion::load_global_stub", emit_load_global);
    return stub;
}

}  // namespace pyjion::site_stubs

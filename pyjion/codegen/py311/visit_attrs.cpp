// CPython 3.11's LOAD_GLOBAL (a NULL below the value), LOAD_ATTR, LOAD_METHOD
// and STORE_ATTR with their inline caches (3.11's object layouts).
#include "baseline/compiler.h"

#include "codegen_api.h"
#include "cpython/interp_state.h"
#include "front/opcodes.h"
#include "runtime/runtime.h"
#include "runtime/runtime_slots.h"
#include "baseline/specialize.h"
#include "baseline/visit_util.h"
#include "runtime/runtime_names.h"
#include "runtime/attr_cache.h"
#include "baseline/cache_guards.h"
#include "baseline/site_stubs.h"

#include "internal/pycore_dict.h"          // PyDictKeysObject

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <vector>

namespace pyjion {

using namespace asmjit;
using visit::name_at;

// 3.11: oparg >> 1 indexes co_names; oparg & 1 pushes a NULL below the value
// (for a CALL that follows).
void Compiler::visit_LOAD_GLOBAL(const Instr &ins)
{
    load_global_value(ins);
    if (ins.oparg & 1) {
        as().mov(em().stack(depth()), imm(0));
        grow(1);
    }
    push(x86::rax);
}

// ---- attributes: inline caches ------------------------------------------------
//
// LOAD_ATTR, LOAD_METHOD and STORE_ATTR check the site's AttrCache
// (inline_cache.h: the kinds and why their guards suffice). Each visitor lists
// the kinds it emits in a KindTable: per kind, the path that adds the kind's
// own guards and does the operation, and where a hit continues. The first
// entry's type guard and the op's most common kinds are inline.
// Past them, LOAD_ATTR and LOAD_METHOD ask rtn::pyj_attr_probe (C: every
// entry, every kind), STORE_ATTR, whose table is short, goes on in machine
// code (emit_attr_lookup: a cold loop over the other entries); past the
// last entry, the miss helper of attr_cache.cpp does the generic operation
// and refills an entry. Registers on these paths: rdi = owner,
// rcx = the entry, edx = its kind, rax = the value found (borrowed).

namespace {

using namespace guards;   // the entry offsets and the kinds' guards (cache_guards.h)

constexpr int32_t kObType = offsetof(PyObject, ob_type);

// ---- what one kind does --------------------------------------------------------
//
// A kind's path runs after the entry's type guard (rdi = owner, rcx = the
// entry); a failed guard of its own jumps to `fail` (the next entry).

using KindPath = std::function<void(x86::Assembler &a, const Label &fail)>;

struct KindCase {
    AttrKind kind;
    KindPath path;   // empty when the type guard is all the kind needs
    Label hit;       // where the code continues after the path
};

using KindTable = std::vector<KindCase>;

// Py_TYPE(owner) is the entry's type and still has the entry's version tag;
// then edx = the entry's kind.
void emit_type_guard(x86::Assembler &a, const Label &fail)
{
    a.mov(x86::rax, x86::qword_ptr(x86::rdi, kObType));
    a.cmp(x86::rax, x86::qword_ptr(x86::rcx, kEntryType));
    a.jne(fail);
    a.mov(x86::edx, x86::dword_ptr(x86::rax, kTypeVersion));
    a.cmp(x86::edx, x86::dword_ptr(x86::rcx, kEntryVersion));
    a.jne(fail);
    a.mov(x86::edx, x86::dword_ptr(x86::rcx, kEntryKind));
}

// ---- one lookup over the table ----------------------------------------------------

// For each case in order: cmp edx, kind / jne <following case> / path /
// jmp hit; a case without a path is one je hit. A kind matching none of
// them jumps to `otherwise`. The last case leaves out its jmp when its hit is
// `falls_into` (which the caller binds right after).
void emit_kind_ladder(x86::Assembler &a, const KindTable &cases, const Label &fail,
                      const Label &otherwise, const Label &falls_into)
{
    for (size_t i = 0; i < cases.size(); i++) {
        const KindCase &c = cases[i];
        bool last = i + 1 == cases.size();
        a.cmp(x86::edx, static_cast<uint32_t>(c.kind));
        if (!last && !c.path) {
            a.je(c.hit);
            continue;
        }
        Label following = last ? otherwise : a.newLabel();
        a.jne(following);
        if (c.path) c.path(a, fail);
        if (!last || c.hit.id() != falls_into.id()) a.jmp(c.hit);
        if (!last) a.bind(following);
    }
}

// The cases of `table` for `kinds`, in that order.
KindTable select_kinds(const KindTable &table, std::initializer_list<AttrKind> kinds)
{
    KindTable out;
    for (AttrKind k : kinds) {
        for (const KindCase &c : table) {
            if (c.kind == k) out.push_back(c);
        }
    }
    return out;
}

// Binds `next`: rcx moves to the following entry and, if there is one whose
// type guard holds, continues at `dispatch`; after the last entry, `miss`.
void emit_next_entry(Emitter &em, AttrCache *cache, const Label &next, const Label &dispatch, const Label &miss)
{
    em.cold([=](Emitter &e) {
        auto &a = e.as();
        a.bind(next);
        a.add(x86::rcx, static_cast<int32_t>(sizeof(AttrEntry)));
        e.load_address(x86::rax, &cache->entries[kAttrWays]);
        a.cmp(x86::rcx, x86::rax);
        a.jae(miss);
        emit_type_guard(a, next);
        a.jmp(dispatch);
    });
}

// A site's whole lookup. Inline: rdi = owner, the first entry's type guard and
// the `inline_kinds` of `table` (the op's common ones, in that order); the last
// of them may fall through to `falls_into`. Out of line: the other kinds of the
// first entry and every kind of the following entries, then `miss`.
void emit_attr_lookup(Emitter &em, AttrCache *cache, const x86::Mem &owner, KindTable table,
                      std::initializer_list<AttrKind> inline_kinds, const Label &miss, const Label &falls_into)
{
    auto &a = em.as();
    Label next = a.newLabel(), dispatch = a.newLabel();
    KindTable hot = select_kinds(table, inline_kinds);
    emit_next_entry(em, cache, next, dispatch, miss);
    em.cold([=, table = std::move(table)](Emitter &e) {
        e.as().bind(dispatch);
        emit_kind_ladder(e.as(), table, next, next, Label());
    });
    a.mov(x86::rdi, owner);
    em.load_address(x86::rcx, &cache->entries[0]);
    emit_type_guard(a, next);
    emit_kind_ladder(a, hot, next, dispatch, falls_into);
}

// The first entry's type guard and the `cases` (the op's common kinds, in
// that order), inline (rdi = owner; the last case may fall through to
// `falls_into`); anything else jumps to `probe`, where the caller asks
// rtn::pyj_attr_probe for the other kinds and entries. (A site then costs one
// C call on those paths instead of a copy of every kind's guards: LOAD_ATTR
// and LOAD_METHOD, which answer many kinds.)
void emit_first_entry(Emitter &em, AttrCache *cache, const x86::Mem &owner, const KindTable &cases,
                      const Label &probe, const Label &falls_into)
{
    auto &a = em.as();
    a.mov(x86::rdi, owner);
    em.load_address(x86::rcx, &cache->entries[0]);
    emit_type_guard(a, probe);
    emit_kind_ladder(a, cases, probe, probe, falls_into);
}

// rax, rdx = rtn::pyj_attr_probe(cache, owner, method): the value (borrowed)
// or NULL, and whether it is a method; then rdi = owner again.
void emit_probe_call(Emitter &em, AttrCache *cache, const x86::Mem &owner, bool method)
{
    em.call<&rtn::pyj_attr_probe>(cache, owner, method ? 1 : 0);
    em.as().mov(x86::rdi, owner);
}

// A site of a long function: the shared stub (site_stubs.h) with rsi = the owner's
// slot and rdx = the cache; any status but kHit goes to `slow`.
void emit_stub_call(Emitter &em, const void *stub, const char *name, AttrCache *cache, const x86::Mem &owner_slot,
                    const Label &slow)
{
    auto &a = em.as();
    a.lea(x86::rsi, owner_slot);
    em.load_address(x86::rdx, cache);
    em.call(stub, name);
    a.test(x86::eax, x86::eax);
    a.jnz(slow);
}

// _Py_Dealloc(rdi) with prev_instr set first (a __del__ may look), then `done`.
void emit_dealloc_then(Emitter &em, int unit, const Label &done)
{
    em.set_prev_instr(unit);
    em.call<&_Py_Dealloc>(x86::rdi);
    em.as().jmp(done);
}

// Py_DECREF(rdi) with the deallocation out of line, continuing at `done`.
void emit_decref_to(Emitter &em, int unit, const Label &done)
{
    Label dealloc = em.cold([unit, done](Emitter &e) { emit_dealloc_then(e, unit, done); });
    em.as().dec(x86::qword_ptr(x86::rdi));
    em.as().jz(dealloc);
}

}  // namespace

// [owner] -> [attr]
void Compiler::visit_LOAD_ATTR(const Instr &ins)
{
    auto &a = as();
    PyObject *name = name_at(code(), ins.oparg, ins);
    AttrCache *cache = new_site_data<AttrCache>();
    int d = depth(), unit = ins.index;
    Label err = error_exit(d);   // the owner stays on the stack for the unwinder
    Label done = a.newLabel(), hit = a.newLabel();
    Label miss = em().cold([=](Emitter &e) {
        e.set_prev_instr(unit);
        e.call<&rtn::pyj_load_attr_miss>(Lea(e.stack(d - 1)), name, cache);
        e.as().test(x86::eax, x86::eax);
        e.as().js(err);
        e.as().jmp(done);
    });
    if (const void *stub = !compact_site() ? nullptr : site_stubs::load_attr()) {
        // A long function: the shared stub; what it leaves (kinds it does not
        // check, misses, the owner's last reference) out of line.
        Label slow = em().cold([=](Emitter &e) {
            auto &a = e.as();
            Label dies = a.newLabel();
            a.cmp(x86::eax, site_stubs::kOwnerDies);
            a.je(dies);
            emit_probe_call(e, cache, e.stack(d - 1), false);
            a.test(x86::rax, x86::rax);
            a.jz(miss);
            e.incref(x86::rax);
            a.mov(e.stack(d - 1), x86::rax);
            a.dec(x86::qword_ptr(x86::rdi));
            a.jnz(done);
            a.bind(dies);   // rdi = the owner
            emit_dealloc_then(e, unit, done);
        });
        emit_stub_call(em(), stub, "site_stubs::load_attr", cache, top(0), slow);
        a.bind(done);
        return;
    }
    Label probe = em().cold([=](Emitter &e) {
        emit_probe_call(e, cache, e.stack(d - 1), false);
        e.as().test(x86::rax, x86::rax);
        e.as().jz(miss);
        e.as().jmp(hit);
    });
    // Inline: managed-dict values, then __slots__.
    KindTable inline_cases = {{kAttrInstanceValue, instance_value, hit}, {kAttrSlot, slot_value, hit}};
    emit_first_entry(em(), cache, top(0), inline_cases, probe, hit);
    a.bind(hit);
    em().incref(x86::rax);
    a.mov(top(0), x86::rax);
    emit_decref_to(em(), unit, done);
    a.bind(done);
}

// [owner] -> [meth, owner] for a plain method (an unbound function to call
// with owner as self), else [NULL, attr]; the same answers as
// _PyObject_GetMethod.
void Compiler::visit_LOAD_METHOD(const Instr &ins)
{
    auto &a = as();
    PyObject *name = name_at(code(), ins.oparg, ins);
    AttrCache *cache = new_site_data<AttrCache>();
    int d = depth(), unit = ins.index;   // the owner is in slot d - 1
    Label err = error_exit(d);
    Label done = a.newLabel(), method_value = a.newLabel();
    Label miss = em().cold([=](Emitter &e) {
        e.set_prev_instr(unit);
        e.call<&rtn::pyj_load_method_miss>(Lea(e.stack(d - 1)), name, cache);
        e.as().test(x86::eax, x86::eax);
        e.as().js(err);
        e.as().jmp(done);
    });
    // [NULL, attr]: the owner's reference is released.
    Label attr_hit = em().cold([=](Emitter &e) {
        auto &a = e.as();
        e.incref(x86::rax);
        a.mov(e.stack(d), x86::rax);
        a.mov(e.stack(d - 1), imm(0));
        emit_decref_to(e, unit, done);
        a.jmp(done);
    });
    if (const void *stub = !compact_site() ? nullptr : site_stubs::load_method()) {
        // A long function: the shared stub, as for LOAD_ATTR.
        Label slow = em().cold([=](Emitter &e) {
            auto &a = e.as();
            Label dies = a.newLabel();
            a.cmp(x86::eax, site_stubs::kOwnerDies);
            a.je(dies);
            emit_probe_call(e, cache, e.stack(d - 1), true);
            a.test(x86::rax, x86::rax);
            a.jz(miss);
            a.test(x86::edx, x86::edx);
            a.jz(attr_hit);
            e.incref(x86::rax);   // [method, owner]
            a.mov(e.stack(d - 1), x86::rax);
            a.mov(e.stack(d), x86::rdi);
            a.jmp(done);
            a.bind(dies);   // [NULL, attribute] made; rdi = the owner
            emit_dealloc_then(e, unit, done);
        });
        emit_stub_call(em(), stub, "site_stubs::load_method", cache, em().stack(d - 1), slow);
        a.bind(done);
        grow(1);
        return;
    }
    Label method_found = a.newLabel();   // rax = the method
    Label probe = em().cold([=](Emitter &e) {
        auto &a = e.as();
        emit_probe_call(e, cache, e.stack(d - 1), true);
        a.test(x86::rax, x86::rax);
        a.jz(miss);
        a.test(x86::edx, x86::edx);
        a.jnz(method_found);
        a.jmp(attr_hit);
    });
    // Inline: builtin types and __slots__ classes, then managed-dict values.
    KindTable inline_cases = {{kAttrMethodNoDict, nullptr, method_value},
                              {kAttrMethodValues, no_shadow_values, method_value}};
    emit_first_entry(em(), cache, em().stack(d - 1), inline_cases, probe, method_value);
    a.bind(method_value);
    a.mov(x86::rax, x86::qword_ptr(x86::rcx, kEntryValue));
    a.bind(method_found);
    // [meth, owner]: the owner's reference moves up one slot.
    em().incref(x86::rax);
    a.mov(em().stack(d - 1), x86::rax);
    a.mov(em().stack(d), x86::rdi);
    a.bind(done);
    grow(1);
}

// TOS = owner, TOS1 = value; both references are consumed.
void Compiler::visit_STORE_ATTR(const Instr &ins)
{
    auto &a = as();
    PyObject *name = name_at(code(), ins.oparg, ins);
    AttrCache *cache = new_site_data<AttrCache>();
    int d = depth(), unit = ins.index;
    x86::Mem owner = em().stack(d - 1), value = em().stack(d - 2);
    Label err = error_exit(d - 2);
    Label done = a.newLabel(), release_owner = a.newLabel();
    Label miss = em().cold([=](Emitter &e) {
        e.set_prev_instr(unit);
        e.call<&rtn::pyj_store_attr_miss>(owner, name, value, cache);
        e.as().test(x86::eax, x86::eax);
        e.as().js(err);
        e.as().jmp(done);
    });
    // The old value (r8, non-NULL) is released after the store, as CPython does.
    Label dealloc_old = em().cold([=](Emitter &e) {
        e.set_prev_instr(unit);
        e.call<&_Py_Dealloc>(x86::r8);
        e.as().jmp(release_owner);
    });
    // First value for this index in this instance: append the index to the
    // values' insertion order (_PyDictValues_AddToInsertionOrder: the byte at
    // values[-2] counts the entries, the order grows downwards before it).
    // rax = values, rdx = index.
    Label first = em().cold([=](Emitter &e) {
        auto &a = e.as();
        a.movzx(x86::r9d, x86::byte_ptr(x86::rax, -2));
        a.add(x86::r9d, 1);
        a.mov(x86::byte_ptr(x86::rax, -2), x86::r9b);
        a.neg(x86::r9);
        a.mov(x86::byte_ptr(x86::rax, x86::r9, 0, -2), x86::dl);
        a.jmp(release_owner);
    });
    // values->values[index] = value, or the next entry if the values are gone.
    auto store_value = [=](x86::Assembler &a, const Label &fail) {
        a.mov(x86::rax, x86::qword_ptr(x86::rdi, layout::kManagedValuesOffset));
        a.test(x86::rax, x86::rax);
        a.jz(fail);
        a.mov(x86::rdx, x86::qword_ptr(x86::rcx, kEntryIndex));
        a.mov(x86::rsi, value);
        a.mov(x86::r8, x86::qword_ptr(x86::rax, x86::rdx, 3));
        a.mov(x86::qword_ptr(x86::rax, x86::rdx, 3), x86::rsi);
        a.test(x86::r8, x86::r8);
        a.jz(first);
        a.dec(x86::qword_ptr(x86::r8));
        a.jz(dealloc_old);
    };
    // A slot: *(owner + index) = value, releasing the old value if any.
    auto store_slot = [=](x86::Assembler &a, const Label &) {
        a.mov(x86::rdx, x86::qword_ptr(x86::rcx, kEntryIndex));
        a.mov(x86::rsi, value);
        a.mov(x86::r8, x86::qword_ptr(x86::rdi, x86::rdx));
        a.mov(x86::qword_ptr(x86::rdi, x86::rdx), x86::rsi);
        a.test(x86::r8, x86::r8);
        a.jz(release_owner);
        a.dec(x86::qword_ptr(x86::r8));
        a.jz(dealloc_old);
    };
    KindTable kinds = {
        {kAttrInstanceValue, store_value, release_owner},
        {kAttrSlot, store_slot, release_owner},
    };
    emit_attr_lookup(em(), cache, owner, std::move(kinds), {kAttrInstanceValue, kAttrSlot}, miss, release_owner);
    a.bind(release_owner);
    a.mov(x86::rdi, owner);
    emit_decref_to(em(), unit, done);
    a.bind(done);
    drop(2);
}


}  // namespace pyjion

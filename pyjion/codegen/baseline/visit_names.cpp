// Visitors: Names, attributes, globals, imports, cells and closures.
//
// Most of these call a helper of runtime_names.cpp, which follows ceval.c's
// semantics for the opcode; the cell opcodes (LOAD_DEREF, STORE_DEREF, ...),
// COPY_FREE_VARS and DELETE_FAST are inline. Names from co_names are baked
// into the code as immediates: the code object, which owns the machine code,
// keeps them alive.
#include "baseline/compiler.h"

#include "codegen_api.h"
#include "front/opcodes.h"
#include "runtime/runtime.h"
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

namespace {

constexpr int32_t kCellRef = offsetof(PyCellObject, ob_ref);
constexpr int32_t kFuncClosure = offsetof(PyFunctionObject, func_closure);
constexpr int32_t kTupleItems = offsetof(PyTupleObject, ob_item);

[[noreturn]] void bad_oparg(const Instr &ins, const char *what)
{
    throw CompileError{PYJION_RESULT_COMPILER_ERROR, std::string(opcode_name(ins.opcode)) + " at offset " +
                                                         std::to_string(ins.offset()) + ": " + what +
                                                         " index out of range"};
}

// co_names[index], checked at compile time.
PyObject *name_at(PyCodeObject *code, int index, const Instr &ins)
{
    if (index < 0 || index >= PyTuple_GET_SIZE(code->co_names)) bad_oparg(ins, "co_names");
    return PyTuple_GET_ITEM(code->co_names, index);
}

int local_index(PyCodeObject *code, const Instr &ins)
{
    if (ins.oparg < 0 || ins.oparg >= code->co_nlocalsplus) bad_oparg(ins, "localsplus");
    return ins.oparg;
}

}  // namespace

// ---- globals and names -------------------------------------------------------

// 3.11: oparg >> 1 indexes co_names; oparg & 1 pushes a NULL below the value
// (for a CALL that follows).
void Compiler::visit_LOAD_GLOBAL(const Instr &ins)
{
    auto &a = as();
    PyObject *name = name_at(code(), ins.oparg >> 1, ins);
    GlobalCache *cache = new_site_data<GlobalCache>();
    Label miss = a.newLabel(), have = a.newLabel();
    em().load_address(x86::rcx, cache);
    if (const void *stub = !compact_site() ? nullptr : site_stubs::load_global()) {
        // A long function: the same guards in the shared stub (site_stubs.h).
        em().call(stub, "site_stubs::load_global");
        a.test(x86::rax, x86::rax);
        a.jz(miss);
    } else {
        guards::global_value(a, miss);
        em().incref(x86::rax);
    }
    em().out_of_line([&] {   // the miss: a lookup and a refill, rare once warm
        a.bind(miss);
        set_prev_instr();
        em().call<&rtn::pyj_load_global_cached>(Lea(Emitter::frame_address()), name, x86::rcx);
        jump_if_error_zero(x86::rax, depth());
        a.jmp(have);
    });
    a.bind(have);
    if (ins.oparg & 1) {
        a.mov(em().stack(depth()), imm(0));
        grow(1);
    }
    push(x86::rax);
}

void Compiler::visit_LOAD_NAME(const Instr &ins)
{
    PyObject *name = name_at(code(), ins.oparg, ins);
    set_prev_instr();
    em().call<&rtn::pyj_load_name>(Lea(Emitter::frame_address()), name);
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

namespace {
// STORE_/DELETE_ NAME and GLOBAL: Fn(frame, name[, value]) -> 0 or -1; a
// stored value's reference goes to the helper.
template <auto Fn>
void name_status_op(Compiler &c, const Instr &ins)
{
    PyObject *name = name_at(c.code(), ins.oparg, ins);
    c.set_prev_instr();
    if constexpr (CallSignature<decltype(Fn)>::arity == 3) {
        c.em().call<Fn>(Lea(Emitter::frame_address()), name, c.top(0));
        c.drop(1);
    } else {
        c.em().call<Fn>(Lea(Emitter::frame_address()), name);
    }
    c.jump_if_error_negative(x86::eax, c.depth());
}
}  // namespace

void Compiler::visit_STORE_NAME(const Instr &ins) { name_status_op<&rtn::pyj_store_name>(*this, ins); }
void Compiler::visit_DELETE_NAME(const Instr &ins) { name_status_op<&rtn::pyj_delete_name>(*this, ins); }
void Compiler::visit_STORE_GLOBAL(const Instr &ins) { name_status_op<&rtn::pyj_store_global>(*this, ins); }
void Compiler::visit_DELETE_GLOBAL(const Instr &ins) { name_status_op<&rtn::pyj_delete_global>(*this, ins); }

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

void Compiler::visit_DELETE_ATTR(const Instr &ins)
{
    PyObject *name = name_at(code(), ins.oparg, ins);
    pop_to(x86::rdi);   // the helper releases the owner
    set_prev_instr();
    em().call<&rtn::pyj_delete_attr>(x86::rdi, name);
    jump_if_error_negative(x86::eax, depth());
}

// ---- imports -------------------------------------------------------------------

void Compiler::visit_IMPORT_NAME(const Instr &ins)
{
    PyObject *name = name_at(code(), ins.oparg, ins);
    // TOS = fromlist, TOS1 = level; the helper releases both.
    set_prev_instr();
    em().call<&rtn::pyj_import_name>(Emitter::tstate, Lea(Emitter::frame_address()), name, top(0), top(1));
    drop(2);
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

void Compiler::visit_IMPORT_FROM(const Instr &ins)
{
    PyObject *name = name_at(code(), ins.oparg, ins);
    set_prev_instr();
    em().call<&rtn::pyj_import_from>(top(0), name);   // the module stays on the stack
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

void Compiler::visit_IMPORT_STAR(const Instr &)
{
    pop_to(x86::rsi);   // the helper releases the module
    set_prev_instr();
    em().call<&rtn::pyj_import_star>(Lea(Emitter::frame_address()), x86::rsi);
    jump_if_error_negative(x86::eax, depth());
}

// ---- class bodies, assertions, the REPL --------------------------------------------

void Compiler::visit_LOAD_BUILD_CLASS(const Instr &)
{
    set_prev_instr();
    em().call<&rtn::pyj_load_build_class>(Lea(Emitter::frame_address()));
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

void Compiler::visit_SETUP_ANNOTATIONS(const Instr &)
{
    set_prev_instr();
    em().call<&rtn::pyj_setup_annotations>(Lea(Emitter::frame_address()));
    jump_if_error_negative(x86::eax, depth());
}

void Compiler::visit_LOAD_ASSERTION_ERROR(const Instr &)
{
    auto &a = as();
    em().load_address(x86::rax, &PyExc_AssertionError);
    a.mov(x86::rax, x86::qword_ptr(x86::rax));
    em().incref(x86::rax);
    push(x86::rax);
}

void Compiler::visit_PRINT_EXPR(const Instr &)
{
    pop_to(x86::rsi);   // the helper releases the value
    set_prev_instr();
    em().call<&rtn::pyj_print_expr>(Emitter::tstate, x86::rsi);
    jump_if_error_negative(x86::eax, depth());
}

// ---- cells and closures ------------------------------------------------------------

// Runs before RESUME: copies the function's closure cells into the last
// oparg localsplus slots. Cannot fail.
void Compiler::visit_COPY_FREE_VARS(const Instr &ins)
{
    auto &a = as();
    PyCodeObject *co = code();
    int offset = co->co_nlocals + co->co_nplaincellvars;
    if (ins.oparg != co->co_nfreevars || offset + ins.oparg != co->co_nlocalsplus) bad_oparg(ins, "free variable");
    if (ins.oparg == 0) return;
    a.mov(x86::rax, Emitter::frame_q(layout::kFrameFunc));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, kFuncClosure));
    for (int i = 0; i < ins.oparg; i++) {
        a.mov(x86::rcx, x86::qword_ptr(x86::rax, kTupleItems + 8 * i));
        em().incref(x86::rcx);
        a.mov(em().local(offset + i), x86::rcx);
    }
}

// Runs before RESUME: the local (NULL, or an argument that is also a cell
// variable) becomes a new cell holding it. prev_instr is below
// _co_firsttraceable here, so a failure leaves no traceback entry for this
// frame, as in the interpreter.
void Compiler::visit_MAKE_CELL(const Instr &ins)
{
    int index = local_index(code(), ins);
    set_prev_instr();
    em().call<&rtn::pyj_make_cell>(Lea(Emitter::frame_address()), index);
    jump_if_error_negative(x86::eax, depth());
}

// The same as LOAD_FAST in 3.11: the cell object itself, for MAKE_FUNCTION's closure tuple.
void Compiler::visit_LOAD_CLOSURE(const Instr &ins)
{
    local_index(code(), ins);
    visit_LOAD_FAST(ins);
}

namespace {
// LOAD_DEREF/DELETE_DEREF of an empty cell: the NameError/UnboundLocalError
// ceval raises, out of line.
Label unbound_deref_exit(Compiler &c, const Instr &ins, int index)
{
    int depth = c.depth();
    int unit = ins.index;
    return c.em().cold([&c, index, depth, unit](Emitter &e) {
        e.set_prev_instr(unit);
        e.call<&rtn::pyj_unbound_deref>(Lea(Emitter::frame_address()), index);
        e.as().jmp(c.error_exit_at(unit, depth));
    });
}
}  // namespace

void Compiler::visit_LOAD_DEREF(const Instr &ins)
{
    auto &a = as();
    int index = local_index(code(), ins);
    Label unbound = unbound_deref_exit(*this, ins, index);
    a.mov(x86::rax, em().local(index));
    a.mov(x86::rax, x86::qword_ptr(x86::rax, kCellRef));
    a.test(x86::rax, x86::rax);
    a.jz(unbound);
    em().incref(x86::rax);
    push(x86::rax);
}

void Compiler::visit_STORE_DEREF(const Instr &ins)
{
    auto &a = as();
    int index = local_index(code(), ins);
    pop_to(x86::rax);
    a.mov(x86::rcx, em().local(index));
    a.mov(x86::rdi, x86::qword_ptr(x86::rcx, kCellRef));
    a.mov(x86::qword_ptr(x86::rcx, kCellRef), x86::rax);
    set_prev_instr();   // the old value's __del__ may look at this frame
    em().xdecref(x86::rdi);
}

void Compiler::visit_DELETE_DEREF(const Instr &ins)
{
    auto &a = as();
    int index = local_index(code(), ins);
    Label unbound = unbound_deref_exit(*this, ins, index);
    a.mov(x86::rcx, em().local(index));
    a.mov(x86::rdi, x86::qword_ptr(x86::rcx, kCellRef));
    a.test(x86::rdi, x86::rdi);
    a.jz(unbound);
    a.mov(x86::qword_ptr(x86::rcx, kCellRef), imm(0));
    set_prev_instr();
    em().decref(x86::rdi);
}

void Compiler::visit_LOAD_CLASSDEREF(const Instr &ins)
{
    int index = local_index(code(), ins);
    set_prev_instr();
    em().call<&rtn::pyj_load_classderef>(Lea(Emitter::frame_address()), index);
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

void Compiler::visit_DELETE_FAST(const Instr &ins)
{
    auto &a = as();
    int index = local_index(code(), ins);
    int depth = this->depth();
    int unit = ins.index;
    Label unbound = em().cold([this, index, depth, unit](Emitter &e) {
        e.set_prev_instr(unit);
        e.call<&rt::pyj_rt_unbound_local>(Lea(Emitter::frame_address()), index);
        e.as().jmp(error_exit_at(unit, depth));
    });
    a.mov(x86::rdi, em().local(index));
    a.test(x86::rdi, x86::rdi);
    a.jz(unbound);
    a.mov(em().local(index), imm(0));
    set_prev_instr();   // the old value's __del__ may look at this frame
    em().decref(x86::rdi);
}

}  // namespace pyjion

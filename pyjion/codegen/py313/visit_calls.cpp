// CPython 3.13's calls, globals and attributes: CALL's stack is [callable,
// self_or_null, args] (CALL_KW adds the keyword names on top), LOAD_GLOBAL
// pushes its NULL above the value, LOAD_ATTR's low operand bit asks for a
// method. LOAD_GLOBAL keeps 3.11's global cache; attribute loads and stores
// follow the interpreter's own specialisation of their site
// (py313/attr_sites.h); calls go through their runtime helper
// (py313/runtime313.h), since 3.11's call caches (py311/visit_calls.cpp)
// assume 3.11's object layouts and stack shapes.
#include "baseline/compiler.h"
#include "front/site_profile.h"

#include "front/opcodes.h"
#include "runtime/helpers.h"
#include "baseline/visit_util.h"
#include "baseline/cache_guards.h"
#include "baseline/site_stubs.h"
#include "runtime/runtime_names.h"
#include "py313/attr_sites.h"
#include "py313/capi.h"

#include <cstddef>

namespace pyjion {

using namespace asmjit;
using visit::name_at;
using visit::push_result;

// 3.13: the global, then the NULL oparg & 1 asks for above it. (The cache
// is 3.11's: 3.13 still gives every dict a new ma_version_tag on each change.)
void Compiler::visit_LOAD_GLOBAL(const Instr &ins)
{
    load_global_value(ins);
    push(x86::rax);
    if (ins.oparg & 1) {   // NULL above the value: CALL's self_or_null
        as().xor_(x86::eax, x86::eax);
        push(x86::rax);
    }
}

namespace {

// The instruction in co_code_adaptive, whose specialised form and inline
// cache the attribute helpers follow (py313/attr_sites.h).
const _Py_CODEUNIT *site_of(PyCodeObject *code, const Instr &ins)
{
    return reinterpret_cast<const _Py_CODEUNIT *>(code->co_code_adaptive) + ins.index;
}

// The guards the inline attribute forms share. rdi = the owner (the top of
// the stack), rax = its type.
void load_owner_and_type(Compiler &c)
{
    c.as().mov(x86::rdi, c.top(0));
    c.as().mov(x86::rax, x86::qword_ptr(x86::rdi, layout::kObjectType));
}

// The type in `type` still has the version the site held when compiling.
void guard_type_version(Compiler &c, const x86::Gp &type, uint32_t version, const Label &fails)
{
    c.as().cmp(x86::dword_ptr(type, offsetof(PyTypeObject, tp_version_tag)), static_cast<int32_t>(version));
    c.as().jne(fails);
}

// The owner's inline values are valid (no __dict__ took them over).
void guard_inline_values(Compiler &c, const Label &fails)
{
    c.as().cmp(x86::byte_ptr(x86::rdi, pyj313_inline_values_valid_offset()), 0);
    c.as().je(fails);
}

}  // namespace

// LOAD_ATTR: the site's specialised form inline where it is one of the
// common ones (an instance's inline value or slot, a method or another
// class attribute found on the type, an attribute of a class or of a
// module, a property's getter), its guards and constants taken from the
// site when compiling (py313/attr_sites.h); a failed guard, and every other
// form, go to the helper that follows the site as it is then.
void Compiler::visit_LOAD_ATTR(const Instr &ins)
{
    PyObject *name = name_at(code(), ins.oparg >> 1, ins);
    int method = ins.oparg & 1;
    Pyj313AttrSite site;
    pyj313_attr_site_facts(site_of(code(), ins), &site);
    const int form = site.form;
    bool is_method_form = form == PYJ313_ATTR_METHOD_NO_DICT || form == PYJ313_ATTR_METHOD_WITH_VALUES;
    bool plain_only = form == PYJ313_ATTR_PROPERTY || form == PYJ313_ATTR_NONDESCRIPTOR_NO_DICT ||
                      form == PYJ313_ATTR_NONDESCRIPTOR_WITH_VALUES;
    bool loads = form != PYJ313_ATTR_NONE && form != PYJ313_ATTR_STORE_INSTANCE_VALUE && form != PYJ313_ATTR_STORE_SLOT;
    auto generic = [&] {
        set_prev_instr();
        em().call<&rt313::load_attr_site>(Lea(em().stack(depth())), name, method, site_of(code(), ins));
        drop(1);   // the owner's slot now holds the attribute (and the next one self or NULL)
        jump_if_error_negative(x86::eax, depth());
        grow(1 + method);
    };
    if (!loads || (is_method_form && !method) || (plain_only && method)) {
        generic();
        return;
    }
    auto &a = as();
    Label slow = a.newLabel(), done = a.newLabel();
    int depth = this->depth();
    load_owner_and_type(*this);
    // The guards: rax is the owner's type after them.
    if (form == PYJ313_ATTR_MODULE) {
        em().load_address(x86::rcx, &PyModule_Type);
        a.cmp(x86::rax, x86::rcx);
        a.jne(slow);
        a.mov(x86::rdx, x86::qword_ptr(x86::rdi, pyj313_module_dict_offset()));
        a.mov(x86::rdx, x86::qword_ptr(x86::rdx, offsetof(PyDictObject, ma_keys)));
        a.cmp(x86::dword_ptr(x86::rdx, pyj313_keys_version_offset()), static_cast<int32_t>(site.type_version));
        a.jne(slow);
    } else if (form == PYJ313_ATTR_CLASS) {
        a.test(x86::dword_ptr(x86::rax, offsetof(PyTypeObject, tp_flags)), static_cast<int32_t>(Py_TPFLAGS_TYPE_SUBCLASS));
        a.jz(slow);
        guard_type_version(*this, x86::rdi, site.type_version, slow);   // the class's own
    } else {
        guard_type_version(*this, x86::rax, site.type_version, slow);
    }
    if (form == PYJ313_ATTR_INSTANCE_VALUE || form == PYJ313_ATTR_METHOD_WITH_VALUES ||
        form == PYJ313_ATTR_NONDESCRIPTOR_WITH_VALUES) {
        guard_inline_values(*this, slow);
    }
    if (form == PYJ313_ATTR_METHOD_WITH_VALUES || form == PYJ313_ATTR_NONDESCRIPTOR_WITH_VALUES) {
        a.mov(x86::rdx, x86::qword_ptr(x86::rax, pyj313_cached_keys_offset()));
        a.cmp(x86::dword_ptr(x86::rdx, pyj313_keys_version_offset()), static_cast<int32_t>(site.keys_version));
        a.jne(slow);
    }
    // The action.
    if (form == PYJ313_ATTR_PROPERTY) {
        // the getter called with the owner, as a Python call
        set_prev_instr();
        em().call<&rt313::load_property>(Emitter::tstate, Lea(em().stack(depth)), site.descr);
        drop(1);
        jump_if_error_negative(x86::eax, this->depth());
        grow(1);
    } else if (is_method_form) {
        // [descr, owner]: the owner's reference becomes self's
        em().load_address(x86::rax, site.descr);
        em().incref(x86::rax);
        a.mov(top(0), x86::rax);
        push(x86::rdi);
    } else {
        if (form == PYJ313_ATTR_INSTANCE_VALUE || form == PYJ313_ATTR_SLOT) {
            a.mov(x86::rax, x86::qword_ptr(x86::rdi, site.attr_offset));
        } else if (form == PYJ313_ATTR_MODULE) {
            // the keys' unicode entries follow their index table of
            // 1 << dk_log2_index_bytes bytes (DK_UNICODE_ENTRIES)
            a.movzx(x86::ecx, x86::byte_ptr(x86::rdx, pyj313_keys_log2_index_bytes_offset()));
            a.mov(x86::eax, 1);
            a.shl(x86::rax, x86::cl);
            a.add(x86::rax, x86::rdx);
            a.mov(x86::rax, x86::qword_ptr(x86::rax, site.attr_offset));
        } else {
            em().load_address(x86::rax, site.descr);   // found on the type (or the class itself)
        }
        a.test(x86::rax, x86::rax);
        a.jz(slow);
        em().incref(x86::rax);
        a.mov(top(0), x86::rax);   // the attribute in the owner's place, then the owner released
        set_prev_instr();          // (its __del__ may run)
        em().decref(x86::rdi);
        if (method) {
            a.xor_(x86::eax, x86::eax);
            push(x86::rax);
        }
    }
    em().out_of_line([&] {
        a.bind(slow);
        depth_ = depth;
        generic();
        a.jmp(done);
    });
    a.bind(done);
}

// STORE_ATTR: [value, owner]. The site's specialised form inline where it
// replaces an instance's existing inline value (the instance has no
// __dict__ of its own) or a slot, under the type version the site held when
// compiling; a new inline value (its insertion order), a failed guard and
// the other forms go to the helper that follows the site as it is then.
void Compiler::visit_STORE_ATTR(const Instr &ins)
{
    PyObject *name = name_at(code(), ins.oparg, ins);
    Pyj313AttrSite site;
    pyj313_attr_site_facts(site_of(code(), ins), &site);
    auto generic = [&] {
        set_prev_instr();
        em().call<&rt313::store_attr_site>(Lea(em().stack(depth())), name, site_of(code(), ins));
        drop(2);
        jump_if_error_negative(x86::eax, depth());
    };
    if (site.form != PYJ313_ATTR_STORE_INSTANCE_VALUE && site.form != PYJ313_ATTR_STORE_SLOT) {
        generic();
        return;
    }
    auto &a = as();
    Label slow = a.newLabel(), done = a.newLabel();
    int depth = this->depth();
    load_owner_and_type(*this);
    guard_type_version(*this, x86::rax, site.type_version, slow);
    if (site.form == PYJ313_ATTR_STORE_INSTANCE_VALUE) {
        a.cmp(x86::qword_ptr(x86::rdi, pyj313_managed_dict_offset()), 0);
        a.jne(slow);
        guard_inline_values(*this, slow);
    }
    a.mov(x86::r14, x86::qword_ptr(x86::rdi, site.attr_offset));   // the old value
    if (site.form == PYJ313_ATTR_STORE_INSTANCE_VALUE) {
        a.test(x86::r14, x86::r14);
        a.jz(slow);
    }
    a.mov(x86::rsi, top(1));   // the attribute takes the stack's reference to the value
    a.mov(x86::qword_ptr(x86::rdi, site.attr_offset), x86::rsi);
    a.mov(x86::r15, x86::rdi);
    set_prev_instr();          // the old value's and the owner's __del__ may run
    Label no_old = a.newLabel();
    a.test(x86::r14, x86::r14);
    a.jz(no_old);
    em().decref(x86::r14);
    a.bind(no_old);
    em().decref(x86::r15);
    drop(2);
    em().out_of_line([&] {
        a.bind(slow);
        depth_ = depth;
        generic();
        a.jmp(done);
    });
    a.bind(done);
}

// [global super, class, self] -> [attr] or, for a method, [attr, self or NULL].
void Compiler::visit_LOAD_SUPER_ATTR(const Instr &ins)
{
    PyObject *name = name_at(code(), ins.oparg >> 2, ins);
    set_prev_instr();
    em().call<&rt313::load_super_attr>(Lea(em().stack(depth())), name, ins.oparg);
    drop(3);   // the global super's slot now holds the attribute (and the next one self or NULL)
    jump_if_error_negative(x86::eax, depth());
    grow(1 + (ins.oparg & 1));
}

void Compiler::visit_CALL(const Instr &ins)
{
    int base = depth() - ins.oparg - 2;
    if (base < 0) unsupported(ins);
    set_prev_instr();
    int form = site_profile(code(), ins).quickened;
    if (uint32_t version = pyj313_alloc_init_version(site_of(code(), ins))) {
        // a class with a Python __init__ (CALL_ALLOC_AND_ENTER_INIT)
        em().call<&rt313::call_alloc_init>(Emitter::tstate, Lea(em().stack(base)), ins.oparg, version);
    } else if (form == CALL_LEN && ins.oparg == 1) {
        em().call<&rt313::call_len>(Emitter::tstate, Lea(em().stack(base)));
    } else if (form == CALL_ISINSTANCE && ins.oparg == 2) {
        em().call<&rt313::call_isinstance>(Emitter::tstate, Lea(em().stack(base)));
    } else {
        em().call<&rt313::call>(Emitter::tstate, Lea(em().stack(base)), ins.oparg, nullptr);
    }
    push_result(*this, ins.oparg + 2);
    eval_breaker_check();
}

void Compiler::visit_CALL_KW(const Instr &ins)
{
    int base = depth() - ins.oparg - 3;
    if (base < 0) unsupported(ins);
    set_prev_instr();
    em().call<&rt313::call>(Emitter::tstate, Lea(em().stack(base)), ins.oparg, top(0));
    push_result(*this, ins.oparg + 3);
    eval_breaker_check();
}

void Compiler::visit_CALL_FUNCTION_EX(const Instr &ins)
{
    int has_kwargs = ins.oparg & 1;
    int n = 3 + has_kwargs;
    set_prev_instr();
    em().call<&rt313::call_function_ex>(Lea(em().stack(depth() - n)), has_kwargs);
    push_result(*this, n);
    eval_breaker_check();
}

// 3.13's MAKE_FUNCTION takes the code object only; SET_FUNCTION_ATTRIBUTE
// then stores each of defaults, keyword defaults, annotations and the closure.
void Compiler::visit_MAKE_FUNCTION(const Instr &ins)
{
    if (ins.oparg != 0) unsupported(ins);
    set_prev_instr();
    em().call<&rt313::make_function>(Lea(Emitter::frame_address()), top(0));
    push_result(*this, 1);
}

// [attr, func] -> [func]: the new function's field (still NULL) takes attr's reference.
void Compiler::visit_SET_FUNCTION_ATTRIBUTE(const Instr &ins)
{
    int32_t field;
    switch (ins.oparg) {
    case 0x01: field = offsetof(PyFunctionObject, func_defaults); break;
    case 0x02: field = offsetof(PyFunctionObject, func_kwdefaults); break;
    case 0x04: field = offsetof(PyFunctionObject, func_annotations); break;
    case 0x08: field = offsetof(PyFunctionObject, func_closure); break;
    default: unsupported(ins);
    }
    auto &a = as();
    pop_to(x86::rax);   // the function
    pop_to(x86::rcx);   // the attribute
    a.mov(x86::qword_ptr(x86::rax, field), x86::rcx);
    push(x86::rax);
}

void Compiler::visit_CALL_INTRINSIC_1(const Instr &ins)
{
    if (ins.oparg < 1 || ins.oparg > py313::kMaxIntrinsic1) unsupported(ins);
    set_prev_instr();
    em().call<&rt313::intrinsic1>(Emitter::tstate, top(0), ins.oparg);
    push_result(*this, 1);
}

void Compiler::visit_CALL_INTRINSIC_2(const Instr &ins)
{
    if (ins.oparg < 1 || ins.oparg > py313::kMaxIntrinsic2) unsupported(ins);
    set_prev_instr();
    em().call<&rt313::intrinsic2>(Emitter::tstate, top(1), top(0), ins.oparg);
    push_result(*this, 2);
}

// After a class's __init__ (the interpreter's own call of it).
void Compiler::visit_EXIT_INIT_CHECK(const Instr &)
{
    set_prev_instr();
    em().call<&rt313::exit_init_check>(top(0));
    drop(1);
    jump_if_error_negative(x86::eax, depth());
}

}  // namespace pyjion

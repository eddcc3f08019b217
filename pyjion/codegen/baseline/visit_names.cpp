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
#include "baseline/visit_util.h"

#include "internal/pycore_dict.h"          // PyDictKeysObject

#include <cstddef>
#include <functional>
#include <initializer_list>
#include <vector>

namespace pyjion {

// rax = a new reference to the global LOAD_GLOBAL names (co_names[oparg >> 1],
// in both versions), through the site's GlobalCache (inline_cache.h): the
// guards inline, or in the shared stub in a long function; a miss looks it
// up and refills the cache. Where the version puts the NULL that oparg & 1
// asks for is the version's visitor's business.
void Compiler::load_global_value(const Instr &ins)
{
    auto &a = as();
    PyObject *name = visit::name_at(code(), ins.oparg >> 1, ins);
    GlobalCache *cache = new_site_data<GlobalCache>();
    asmjit::Label miss = a.newLabel(), have = a.newLabel();
    em().load_address(x86::rcx, cache);
    if (const void *stub = !compact_site() ? nullptr : site_stubs::load_global()) {
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
}

using namespace asmjit;
using visit::name_at;
using visit::local_index;
using visit::bad_oparg;

namespace {
constexpr int32_t kCellRef = offsetof(PyCellObject, ob_ref);
constexpr int32_t kFuncClosure = offsetof(PyFunctionObject, func_closure);
constexpr int32_t kTupleItems = offsetof(PyTupleObject, ob_item);
}  // namespace


// ---- globals and names -------------------------------------------------------


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


// ---- cells and closures ------------------------------------------------------------

// Runs before RESUME: copies the function's closure cells into the last
// oparg localsplus slots. Cannot fail.
void Compiler::visit_COPY_FREE_VARS(const Instr &ins)
{
    auto &a = as();
    PyCodeObject *co = code();
    int offset = co->co_nlocalsplus - ins.oparg;   // the free variables come last
    if (ins.oparg != co->co_nfreevars) bad_oparg(ins, "free variable");
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

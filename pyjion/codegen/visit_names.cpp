// Visitors: Names, attributes, globals, imports, cells and closures.
//
// Most of these call a helper of runtime_names.cpp, which follows ceval.c's
// semantics for the opcode; the cell opcodes (LOAD_DEREF, STORE_DEREF, ...),
// COPY_FREE_VARS and DELETE_FAST are inline. Names from co_names are baked
// into the code as immediates: the code object, which owns the machine code,
// keeps them alive.
#include "compiler.h"

#include "../codegen_api.h"
#include "opcodes.h"
#include "runtime.h"
#include "runtime_names.h"

#include <cstddef>

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
    // Hit: same globals and builtins dicts, both unchanged since the fill.
    em().load_address(x86::rcx, cache);
    a.mov(x86::rax, x86::qword_ptr(Emitter::frame, layout::kFrameGlobals));
    a.cmp(x86::rax, x86::qword_ptr(x86::rcx, offsetof(GlobalCache, globals)));
    a.jne(miss);
    a.mov(x86::rdx, x86::qword_ptr(x86::rax, offsetof(PyDictObject, ma_version_tag)));
    a.cmp(x86::rdx, x86::qword_ptr(x86::rcx, offsetof(GlobalCache, globals_version)));
    a.jne(miss);
    a.mov(x86::rax, x86::qword_ptr(Emitter::frame, layout::kFrameBuiltins));
    a.cmp(x86::rax, x86::qword_ptr(x86::rcx, offsetof(GlobalCache, builtins)));
    a.jne(miss);
    a.mov(x86::rdx, x86::qword_ptr(x86::rax, offsetof(PyDictObject, ma_version_tag)));
    a.cmp(x86::rdx, x86::qword_ptr(x86::rcx, offsetof(GlobalCache, builtins_version)));
    a.jne(miss);
    a.mov(x86::rax, x86::qword_ptr(x86::rcx, offsetof(GlobalCache, value)));
    em().incref(x86::rax);
    a.jmp(have);
    a.bind(miss);
    set_prev_instr();
    a.mov(x86::rdi, Emitter::frame);
    em().load_address(x86::rsi, name);
    a.mov(x86::rdx, x86::rcx);
    PYJ_CALL(*this, rtn::pyj_load_global_cached);
    jump_if_error_zero(x86::rax, depth());
    a.bind(have);
    if (ins.oparg & 1) {
        a.mov(em().stack(depth()), imm(0));
        grow(1);
    }
    push(x86::rax);
}

void Compiler::visit_LOAD_NAME(const Instr &ins)
{
    auto &a = as();
    PyObject *name = name_at(code(), ins.oparg, ins);
    set_prev_instr();
    a.mov(x86::rdi, Emitter::frame);
    em().load_address(x86::rsi, name);
    PYJ_CALL(*this, rtn::pyj_load_name);
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

namespace {
// STORE_/DELETE_ NAME and GLOBAL: fn(frame, name[, value]) -> 0 or -1; a
// stored value's reference goes to the helper.
void name_status_op(Compiler &c, const Instr &ins, bool takes_value, const void *fn, const char *fn_name)
{
    PyObject *name = name_at(c.code(), ins.oparg, ins);
    if (takes_value) c.pop_to(x86::rdx);
    c.set_prev_instr();
    c.as().mov(x86::rdi, Emitter::frame);
    c.em().load_address(x86::rsi, name);
    c.em().call(fn, fn_name);
    c.jump_if_error_negative(x86::eax, c.depth());
}
}  // namespace

void Compiler::visit_STORE_NAME(const Instr &ins)
{
    name_status_op(*this, ins, true, reinterpret_cast<const void *>(&rtn::pyj_store_name), "rtn::pyj_store_name");
}

void Compiler::visit_DELETE_NAME(const Instr &ins)
{
    name_status_op(*this, ins, false, reinterpret_cast<const void *>(&rtn::pyj_delete_name), "rtn::pyj_delete_name");
}

void Compiler::visit_STORE_GLOBAL(const Instr &ins)
{
    name_status_op(*this, ins, true, reinterpret_cast<const void *>(&rtn::pyj_store_global), "rtn::pyj_store_global");
}

void Compiler::visit_DELETE_GLOBAL(const Instr &ins)
{
    name_status_op(*this, ins, false, reinterpret_cast<const void *>(&rtn::pyj_delete_global), "rtn::pyj_delete_global");
}

// ---- attributes ----------------------------------------------------------------

void Compiler::visit_LOAD_ATTR(const Instr &ins)
{
    auto &a = as();
    PyObject *name = name_at(code(), ins.oparg, ins);
    set_prev_instr();
    a.mov(x86::rdi, top(0));
    em().load_address(x86::rsi, name);
    PYJ_CALL(*this, PyObject_GetAttr);
    jump_if_error_zero(x86::rax, depth());   // the owner stays on the stack for the unwinder
    a.mov(x86::rdi, top(0));
    a.mov(top(0), x86::rax);
    em().decref(x86::rdi);
}

void Compiler::visit_STORE_ATTR(const Instr &ins)
{
    auto &a = as();
    PyObject *name = name_at(code(), ins.oparg, ins);
    // TOS = owner, TOS1 = value; the helper releases both.
    set_prev_instr();
    a.mov(x86::rdi, top(0));
    em().load_address(x86::rsi, name);
    a.mov(x86::rdx, top(1));
    drop(2);
    PYJ_CALL(*this, rtn::pyj_store_attr);
    jump_if_error_negative(x86::eax, depth());
}

void Compiler::visit_DELETE_ATTR(const Instr &ins)
{
    PyObject *name = name_at(code(), ins.oparg, ins);
    pop_to(x86::rdi);   // the helper releases the owner
    set_prev_instr();
    em().load_address(x86::rsi, name);
    PYJ_CALL(*this, rtn::pyj_delete_attr);
    jump_if_error_negative(x86::eax, depth());
}

// [obj] -> [meth, obj] when _PyObject_GetMethod finds a plain method (an
// unbound function to call with obj as self), else [NULL, attr].
void Compiler::visit_LOAD_METHOD(const Instr &ins)
{
    auto &a = as();
    PyObject *name = name_at(code(), ins.oparg, ins);
    int d = depth();   // obj is in slot d - 1; _PyObject_GetMethod writes slot d
    Label not_method = a.newLabel(), done = a.newLabel();
    a.mov(em().stack(d), imm(0));
    set_prev_instr();
    a.mov(x86::rdi, em().stack(d - 1));
    em().load_address(x86::rsi, name);
    a.lea(x86::rdx, em().stack(d));
    PYJ_CALL(*this, _PyObject_GetMethod);
    a.mov(x86::rcx, em().stack(d));
    a.test(x86::rcx, x86::rcx);
    a.jz(error_exit(d));   // obj stays on the stack for the unwinder
    a.test(x86::eax, x86::eax);
    a.jz(not_method);
    // meth | self
    a.mov(x86::rdx, em().stack(d - 1));
    a.mov(em().stack(d - 1), x86::rcx);
    a.mov(em().stack(d), x86::rdx);
    a.jmp(done);
    // NULL | attr
    a.bind(not_method);
    a.mov(x86::rdi, em().stack(d - 1));
    a.mov(em().stack(d - 1), imm(0));
    em().decref(x86::rdi);
    a.bind(done);
    grow(1);
}

// ---- imports -------------------------------------------------------------------

void Compiler::visit_IMPORT_NAME(const Instr &ins)
{
    auto &a = as();
    PyObject *name = name_at(code(), ins.oparg, ins);
    // TOS = fromlist, TOS1 = level; the helper releases both.
    set_prev_instr();
    a.mov(x86::rdi, Emitter::tstate);
    a.mov(x86::rsi, Emitter::frame);
    em().load_address(x86::rdx, name);
    a.mov(x86::rcx, top(0));
    a.mov(x86::r8, top(1));
    drop(2);
    PYJ_CALL(*this, rtn::pyj_import_name);
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

void Compiler::visit_IMPORT_FROM(const Instr &ins)
{
    auto &a = as();
    PyObject *name = name_at(code(), ins.oparg, ins);
    set_prev_instr();
    a.mov(x86::rdi, top(0));   // the module stays on the stack
    em().load_address(x86::rsi, name);
    PYJ_CALL(*this, rtn::pyj_import_from);
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

void Compiler::visit_IMPORT_STAR(const Instr &)
{
    auto &a = as();
    pop_to(x86::rsi);   // the helper releases the module
    set_prev_instr();
    a.mov(x86::rdi, Emitter::frame);
    PYJ_CALL(*this, rtn::pyj_import_star);
    jump_if_error_negative(x86::eax, depth());
}

// ---- class bodies, assertions, the REPL --------------------------------------------

void Compiler::visit_LOAD_BUILD_CLASS(const Instr &)
{
    auto &a = as();
    set_prev_instr();
    a.mov(x86::rdi, Emitter::frame);
    PYJ_CALL(*this, rtn::pyj_load_build_class);
    jump_if_error_zero(x86::rax, depth());
    push(x86::rax);
}

void Compiler::visit_SETUP_ANNOTATIONS(const Instr &)
{
    auto &a = as();
    set_prev_instr();
    a.mov(x86::rdi, Emitter::frame);
    PYJ_CALL(*this, rtn::pyj_setup_annotations);
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
    auto &a = as();
    pop_to(x86::rsi);   // the helper releases the value
    set_prev_instr();
    a.mov(x86::rdi, Emitter::tstate);
    PYJ_CALL(*this, rtn::pyj_print_expr);
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
    a.mov(x86::rax, x86::qword_ptr(Emitter::frame, layout::kFrameFunc));
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
    auto &a = as();
    int index = local_index(code(), ins);
    set_prev_instr();
    a.mov(x86::rdi, Emitter::frame);
    a.mov(x86::esi, index);
    PYJ_CALL(*this, rtn::pyj_make_cell);
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
        e.as().mov(x86::rdi, Emitter::frame);
        e.as().mov(x86::esi, index);
        PYJ_CALL(c, rtn::pyj_unbound_deref);
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
    auto &a = as();
    int index = local_index(code(), ins);
    set_prev_instr();
    a.mov(x86::rdi, Emitter::frame);
    a.mov(x86::esi, index);
    PYJ_CALL(*this, rtn::pyj_load_classderef);
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
        e.as().mov(x86::rdi, Emitter::frame);
        e.as().mov(x86::esi, index);
        PYJ_CALL(*this, rt::pyj_rt_unbound_local);
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

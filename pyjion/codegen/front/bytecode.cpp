#include "front/bytecode.h"

#include "codegen_api.h"
#include "front/opcodes.h"

#include <algorithm>

namespace pyjion {

namespace {

struct OpcodeInfo {
    const char *name;
    int caches;
    JumpKind jump;
};

const OpcodeInfo *opcode_table()
{
    static OpcodeInfo table[256];
    static bool ready = false;
    if (!ready) {
#define OPCODE(name, num, caches, jump) table[num] = OpcodeInfo{#name, caches, jump};
#include "front/opcodes.def"
#undef OPCODE
        ready = true;
    }
    return table;
}

}  // namespace

const char *opcode_name(int opcode)
{
    const char *name = opcode_table()[opcode & 0xff].name;
    return name ? name : "<unknown>";
}

int opcode_caches(int opcode) { return opcode_table()[opcode & 0xff].caches; }

JumpKind opcode_jump_kind(int opcode) { return opcode_table()[opcode & 0xff].jump; }

int stack_effect(int opcode, int oparg, bool jump)
{
#if PY_VERSION_HEX < 0x030D0000
    // 3.11's compiler counts 0 for it, though the frame resumes with a value
    // (the first send's None) for the POP_TOP after it; 3.13 counts the 1.
    if (opcode == RETURN_GENERATOR) return 1;
#endif
    return PyCompile_OpcodeStackEffectWithJump(opcode, oparg, jump ? 1 : 0);
}

Bytecode::Bytecode(PyCodeObject *code) : exceptions_(code)
{
    decode(code);
    compute_depths(code);
    find_line_starts(code);
}

// From code.co_lines(): (start, end, line) byte ranges, line None where an
// instruction has none (-1 here: no line event is ever due there). (The
// hook compiles with no exception pending: it puts a pending one aside.)
void Bytecode::find_line_starts(PyCodeObject *code)
{
    std::vector<int> line(at_.size(), -1);
    PyObject *ranges = PyObject_CallMethod(reinterpret_cast<PyObject *>(code), "co_lines", nullptr);
    PyObject *it = ranges != nullptr ? PyObject_GetIter(ranges) : nullptr;
    Py_XDECREF(ranges);
    if (it == nullptr) {
        PyErr_Clear();
        throw CompileError{PYJION_RESULT_COMPILER_ERROR, "could not read the line table"};
    }
    while (PyObject *item = PyIter_Next(it)) {
        long start = PyLong_AsLong(PyTuple_GET_ITEM(item, 0)) / 2, end = PyLong_AsLong(PyTuple_GET_ITEM(item, 1)) / 2;
        PyObject *l = PyTuple_GET_ITEM(item, 2);
        int number = l == Py_None ? -1 : static_cast<int>(PyLong_AsLong(l));
        for (long u = std::max(0L, start); u < end && u < static_cast<long>(line.size()); u++) line[u] = number;
        Py_DECREF(item);
    }
    Py_DECREF(it);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        throw CompileError{PYJION_RESULT_COMPILER_ERROR, "could not read the line table"};
    }
    line_starts_.assign(at_.size(), false);
    int previous = -2;
    for (const Instr &ins : instrs_) {
        int here = line[ins.index];
        if (here != -1 && here != previous) line_starts_[ins.index] = true;
        previous = here;
    }
}

void Bytecode::decode(PyCodeObject *code)
{
    PyObject *bytes = PyCode_GetCode(code);
    if (bytes == nullptr) {
        PyErr_Clear();
        throw CompileError{PYJION_RESULT_COMPILER_ERROR, "could not read the bytecode"};
    }
    const auto *units = reinterpret_cast<const uint8_t *>(PyBytes_AS_STRING(bytes));
    // PyCode_GetCode reads an opcode CPython does not know as CACHE (0, its
    // deoptimisation table's default); the code itself keeps the byte, and the
    // interpreter raises SystemError("unknown opcode") there (test_code).
    const auto *real = reinterpret_cast<const uint8_t *>(code->co_code_adaptive);
    int n = (int)(PyBytes_GET_SIZE(bytes) / 2);
    at_.assign(n, -1);
    int i = 0;
    while (i < n) {
        Instr ins{};
        ins.start = i;
        int oparg = 0;
        int op = units[2 * i];
        while (op == EXTENDED_ARG && i + 1 < n) {
            oparg = (oparg | units[2 * i + 1]) << 8;
            i++;
            op = units[2 * i];
        }
        if (op == 0 && real[2 * i] != 0) {
            Py_DECREF(bytes);
            throw CompileError{PYJION_RESULT_UNSUPPORTED_OPCODE,
                               "unknown opcode " + std::to_string(real[2 * i]) + " at offset " + std::to_string(2 * i)};
        }
        ins.index = i;
        ins.opcode = op;
        ins.oparg = oparg | units[2 * i + 1];
        ins.next = i + 1 + opcode_caches(op);
        ins.target = -1;
        ins.depth = -1;
        switch (opcode_jump_kind(op)) {
        case REL_FORWARD: ins.target = ins.next + ins.oparg; break;
        case REL_BACKWARD: ins.target = ins.next - ins.oparg; break;
        case NO_JUMP: break;
        }
        at_[ins.start] = (int)instrs_.size();
        instrs_.push_back(ins);
        i = ins.next;
    }
    Py_DECREF(bytes);
    targets_.assign(n, false);
    for (const Instr &ins : instrs_) {
        if (ins.target >= 0 && ins.target < n) targets_[ins.target] = true;
        if (ins.target >= 0 && instr_at(ins.target) < 0) {
            throw CompileError{PYJION_RESULT_COMPILER_ERROR,
                               "jump to the middle of an instruction at offset " + std::to_string(ins.offset())};
        }
    }
}

bool ends_block(int op)
{
    switch (op) {
    case RETURN_VALUE: case RAISE_VARARGS: case RERAISE:
    case JUMP_FORWARD: case JUMP_BACKWARD: case JUMP_BACKWARD_NO_INTERRUPT:
#if PY_VERSION_HEX >= 0x030D0000
    case RETURN_CONST:
#endif
        return true;
    default:
        return false;
    }
}

// Stack depth before every reachable instruction, from CPython's own stack
// effects (PyCompile_OpcodeStackEffectWithJump), by a walk over the jumps.
void Bytecode::compute_depths(PyCodeObject *code)
{
    std::vector<int> work;
    auto reach = [&](int unit, int depth) {
        int k = instr_at(unit);
        if (k < 0) return;
        Instr &ins = instrs_[k];
        if (ins.depth == -1) {
            ins.depth = depth;
            work.push_back(k);
        } else if (ins.depth != depth) {
            throw CompileError{PYJION_RESULT_STACK_EFFECT_FAULT,
                               "inconsistent stack depth at offset " + std::to_string(ins.offset())};
        }
    };
    if (!instrs_.empty()) reach(0, 0);
    // Handlers are reached when any instruction they cover is; the exception
    // arrives on top of the unwound stack (and the raising offset, if lasti).
    std::vector<bool> handler_done(exceptions_.entries().size(), false);
    for (;;) {
    while (!work.empty()) {
        const Instr ins = instrs_[work.back()];
        work.pop_back();
        int fall = stack_effect(ins.opcode, ins.oparg, false);
        if (ins.target >= 0) {
            int jump = stack_effect(ins.opcode, ins.oparg, true);
            reach(ins.target, ins.depth + jump);
        }
        int after = ins.depth + fall;
        if (after > max_depth_) max_depth_ = after;
        if (!ends_block(ins.opcode) && ins.next < (int)at_.size()) {
            reach(ins.next, after);
        }
    }
    bool more = false;
    const auto &entries = exceptions_.entries();
    for (size_t h = 0; h < entries.size(); h++) {
        if (handler_done[h]) continue;
        const ExceptionEntry &e = entries[h];
        for (const Instr &ins : instrs_) {
            if (ins.index >= e.start && ins.index < e.end && ins.depth >= 0) {
                handler_done[h] = true;
                if (instr_at(e.handler) < 0) {
                    throw CompileError{PYJION_RESULT_COMPILER_ERROR, "exception handler inside an instruction"};
                }
                reach(e.handler, e.level + (e.lasti ? 1 : 0) + 1);
                targets_[e.handler] = true;
                more = true;
                break;
            }
        }
    }
    if (!more) break;
    }
    if (max_depth_ > code->co_stacksize) {
        throw CompileError{PYJION_RESULT_STACK_EFFECT_FAULT, "modelled stack deeper than co_stacksize"};
    }
}

}  // namespace pyjion

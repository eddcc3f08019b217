// Decoding of CPython bytecode (3.11, 3.13) into instructions, and the stack depth at
// each of them. Works on PyCode_GetCode() (the unspecialised bytecode with its
// CACHE entries), never on co_code_adaptive, which the interpreter rewrites.
#pragma once

#include <Python.h>
#include <string>
#include <vector>

#include "front/exception_table.h"

namespace pyjion {

enum JumpKind { NO_JUMP, REL_FORWARD, REL_BACKWARD };

struct Instr {
    int start;     // code-unit index of the first EXTENDED_ARG prefix (what jumps land on)
    int index;     // code-unit index of the opcode itself (what prev_instr points at)
    int opcode;
    int oparg;
    int next;      // code-unit index of the next instruction (after inline caches)
    int target;    // code-unit index a jump goes to, or -1
    int depth;     // value-stack depth before the instruction; -1 if unreachable
    int offset() const { return index * 2; }   // byte offset, as dis shows it
};

const char *opcode_name(int opcode);
// CPython's stack effect, except that RETURN_GENERATOR counts the value that
// resuming the generator pushes (CPython's compiler adds that prefix after it
// computes depths).
int stack_effect(int opcode, int oparg, bool jump);
int opcode_caches(int opcode);
// Execution never goes on to the next instruction (return, raise, jump).
bool ends_block(int opcode);
JumpKind opcode_jump_kind(int opcode);

class Bytecode {
public:
    // Raises CompileError on malformed bytecode.
    explicit Bytecode(PyCodeObject *code);

    const std::vector<Instr> &instrs() const { return instrs_; }
    // Instruction number starting at code unit `unit`, or -1.
    int instr_at(int unit) const { return unit >= 0 && unit < (int)at_.size() ? at_[unit] : -1; }
    int max_depth() const { return max_depth_; }
    const ExceptionTable &exceptions() const { return exceptions_; }
    // Some jump (or exception handler) lands on code unit `unit`.
    bool is_jump_target(int unit) const { return unit >= 0 && unit < (int)targets_.size() && targets_[unit]; }
    // The instruction at code unit `unit` has another line number than the
    // instruction before it (code.co_lines()), or is the first.
    bool starts_line(int unit) const { return unit >= 0 && unit < (int)line_starts_.size() && line_starts_[unit]; }

private:
    void decode(PyCodeObject *code);
    void compute_depths(PyCodeObject *code);
    void find_line_starts(PyCodeObject *code);

    ExceptionTable exceptions_;
    std::vector<Instr> instrs_;
    std::vector<int> at_;
    std::vector<bool> targets_;
    std::vector<bool> line_starts_;
    int max_depth_ = 0;
};

// A compile that cannot go on: the code runs in the interpreter and
// pyjion.info(f).reason shows `what`.
struct CompileError {
    int result;          // PYJION_RESULT_*
    std::string what;
};

}  // namespace pyjion

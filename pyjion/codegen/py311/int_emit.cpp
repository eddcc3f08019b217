// CPython 3.11's ints for cpython/int_emit.h: ob_size is the digit count
// times the sign.
#include "cpython/int_emit.h"

namespace pyjion::int_emit {

void load_one_digit(x86::Assembler &a, const x86::Gp &obj, const x86::Gp &value, const asmjit::Label &fail)
{
    a.mov(value, x86::qword_ptr(obj, layout::kLongSize));
    a.lea(x86::rax, x86::ptr(value, 1));
    a.cmp(x86::rax, 2);
    a.ja(fail);                                       // ob_size not in {-1, 0, 1}
    a.mov(x86::eax, x86::dword_ptr(obj, layout::kLongDigit0));
    a.imul(value, x86::rax);                          // 0 for zero whatever the digit holds
}

void check_two_digits(x86::Assembler &a, const x86::Gp &obj, const asmjit::Label &fail)
{
    a.mov(x86::rcx, x86::qword_ptr(obj, layout::kLongSize));
    a.lea(x86::rax, x86::ptr(x86::rcx, 2));
    a.cmp(x86::rax, 4);
    a.ja(fail);
}

void store_one_digit(x86::Assembler &a, const x86::Gp &box, const x86::Gp &value)
{
    a.mov(x86::dword_ptr(box, layout::kLongDigit0), x86::eax);   // |value|
    a.mov(x86::edx, 1);
    a.mov(x86::r8, -1);
    a.test(value, value);
    a.cmovs(x86::rdx, x86::r8);
    a.mov(x86::qword_ptr(box, layout::kLongSize), x86::rdx);      // the sign
}

}  // namespace pyjion::int_emit

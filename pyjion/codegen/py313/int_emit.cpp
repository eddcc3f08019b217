// CPython 3.13's ints for cpython/int_emit.h: lv_tag = digits << 3 | sign
// (0 positive, 1 zero, 2 negative).
#include "cpython/int_emit.h"

namespace pyjion::int_emit {

void load_one_digit(x86::Assembler &a, const x86::Gp &obj, const x86::Gp &value, const asmjit::Label &fail)
{
    a.mov(value, x86::qword_ptr(obj, layout::kLongTag));
    a.cmp(value, 2 << layout::kLongNonSizeBits);
    a.jae(fail);                                      // more than one digit
    a.and_(value, layout::kLongSignMask);
    a.neg(value);
    a.inc(value);                                     // the sign: 1, 0 or -1
    a.mov(x86::eax, x86::dword_ptr(obj, layout::kLongDigit0));
    a.imul(value, x86::rax);
}

void check_two_digits(x86::Assembler &a, const x86::Gp &obj, const asmjit::Label &fail)
{
    a.cmp(x86::qword_ptr(obj, layout::kLongTag), 3 << layout::kLongNonSizeBits);
    a.jae(fail);
}

void store_one_digit(x86::Assembler &a, const x86::Gp &box, const x86::Gp &value)
{
    // A value stored here is never 0 (zero is a cached small int).
    a.mov(x86::dword_ptr(box, layout::kLongDigit0), x86::eax);   // |value|
    a.mov(x86::edx, 1 << layout::kLongNonSizeBits);
    a.mov(x86::r8d, (1 << layout::kLongNonSizeBits) | 2);
    a.test(value, value);
    a.cmovs(x86::rdx, x86::r8);
    a.mov(x86::qword_ptr(box, layout::kLongTag), x86::rdx);       // one digit, the sign
}

}  // namespace pyjion::int_emit

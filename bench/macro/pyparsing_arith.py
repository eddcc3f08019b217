"""A grammar built with pyparsing: arithmetic expressions with operator
precedence, function calls and variables, parsed and evaluated. Result: the
sum of the values and the number of tokens."""
import math

import pyparsing as pp

VARS = {"x": 3.0, "y": -2.5, "pi": math.pi}
FUNCS = {"sin": math.sin, "max": max, "abs": abs}


def make_grammar():
    number = pp.pyparsing_common.number
    ident = pp.Word(pp.alphas, pp.alphanums + "_")
    expr = pp.Forward()
    call = pp.Group(ident + pp.Suppress("(") + pp.Optional(pp.DelimitedList(expr)) + pp.Suppress(")"))
    operand = call | number | ident
    expr <<= pp.infix_notation(operand, [
        (pp.one_of("+ -"), 1, pp.OpAssoc.RIGHT),
        ("^", 2, pp.OpAssoc.RIGHT),
        (pp.one_of("* /"), 2, pp.OpAssoc.LEFT),
        (pp.one_of("+ -"), 2, pp.OpAssoc.LEFT),
    ])
    return expr


def evaluate(node):
    if isinstance(node, (int, float)):
        return node
    if isinstance(node, str):
        return VARS[node]
    if len(node) == 2 and isinstance(node[0], str) and node[0] in "+-":
        value = evaluate(node[1])
        return -value if node[0] == "-" else value
    if isinstance(node[0], str) and node[0] in FUNCS and (len(node) == 1 or not isinstance(node[1], str) or node[1] not in "+-*/^"):
        return FUNCS[node[0]](*[evaluate(a) for a in node[1:]])
    value = evaluate(node[0])
    for i in range(1, len(node), 2):
        op, rhs = node[i], evaluate(node[i + 1])
        if op == "+":
            value += rhs
        elif op == "-":
            value -= rhs
        elif op == "*":
            value *= rhs
        elif op == "/":
            value /= rhs
        else:
            value = value ** rhs
    return value


def make_expressions(n):
    out = []
    for i in range(n):
        out.append("%d + x * (y - %d.5) / (1 + abs(y)) - sin(pi / %d) ^ 2 + max(x, %d, y * 2)"
                   % (i, i % 7, i % 5 + 1, i % 13))
    return out


def run():
    grammar = make_grammar()
    total, tokens = 0.0, 0
    for text in make_expressions(180):
        result = grammar.parse_string(text, parse_all=True)
        tokens += len(result.as_list()[0])
        total += evaluate(result[0])
    return round(total, 6), tokens


if __name__ == "__main__":
    print(run())

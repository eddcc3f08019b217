/* The profiler's call tree: time and calls per call path. A node is one
 * path from a thread's root: its code object, its parent, its children.
 * It is also where the flat profile comes from: a call on a path the tree
 * holds (an exact call, profiler.h) is counted only in its node, and the
 * per-function and per-caller figures cProfile keeps are sums over the
 * nodes (_eval.pyx function_stats), each node knowing at its making
 * whether its code, or its caller->callee pair, is already on its path
 * (cProfile's recursion rule: such calls add no total time).
 *
 * Bounded: paths deeper than max_depth and paths that find the tree full
 * (max_nodes; threads' roots are made regardless) are folded: such a call
 * and every call below it are charged to the deepest recorded ancestor's
 * node (folded_calls, folded_own) and counted in `folded`, and kept in the
 * flat profile the old way (profiler.h). Each thread has its own root (its
 * own clock line). Nodes are addressed by index: the array grows; what
 * calls seldom touch is in a side array of the same indices.
 *
 * Called with the GIL held; plain C, used by the hook (_eval.pyx). */
#ifndef PYJION_CALL_TREE_H
#define PYJION_CALL_TREE_H

#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "cstack_guard.h"   /* PYJ_TLS */

#define PYJ_TREE_NONE UINT32_MAX

/* What every call reads and writes: one cache line (the array is aligned). */
typedef struct {
    PyObject *code;           /* strong reference; NULL for a thread's root */
    uint32_t parent, first_child, next_sibling;
    /* The child of this node called last, and (as a child) the sibling that
     * was called after this one the last time: a loop's body calls its
     * callees in the same order each time round. */
    uint32_t last_child, next_hint;
    uint32_t depth;
    uint32_t flags;           /* PYJ_TREE_RECURSIVE, PYJ_TREE_EDGE_RECURSIVE */
    /* Exact calls. A path is on a thread's stack at most once (each of its
     * nodes is one level deeper), so every exact call's total is its own. */
    uint64_t calls, total_ticks, own_ticks;
} __attribute__((aligned(64))) PyjTreeNode;

_Static_assert(sizeof(PyjTreeNode) == 64, "a node is one cache line (machine code shifts by 6)");

/* The rest of a node (same index), which calls seldom touch. */
typedef struct {
    uint64_t folded_calls, folded_own_ticks;         /* calls folded into this node */
    unsigned long thread;     /* the thread of a root node */
} PyjTreeNodeCold;

/* PyjTreeNode.flags, fixed when the node is made: an ancestor has the same
 * code; an ancestor has the same code under a parent of the same code (the
 * caller->callee pair is already on the path). */
enum { PYJ_TREE_RECURSIVE = 1, PYJ_TREE_EDGE_RECURSIVE = 2 };

typedef struct {
    PyjTreeNode *nodes;
    PyjTreeNodeCold *cold;
    uint32_t n, cap;
    uint32_t max_nodes, max_depth;
    uint64_t folded;          /* calls charged to an ancestor (tree full or too deep) */
    uint64_t generation;      /* the stats generation the nodes belong to */
} PyjTree;

static PyjTree pyj_tree = {NULL, NULL, 0, 0, 200000, 256, 0, 0};

/* The calling thread's root node in the current generation. */
static PYJ_TLS uint32_t pyj_tree_thread_root = PYJ_TREE_NONE;
static PYJ_TLS uint64_t pyj_tree_thread_generation;

/* (out of line: a new path is rare, and the profiler's hot path stays short) */
static __attribute__((noinline)) uint32_t pyj_tree_add(uint32_t parent, PyObject *code, unsigned long thread)
{
    PyjTree *t = &pyj_tree;
    if (t->n >= t->max_nodes && code != NULL) return PYJ_TREE_NONE;   /* a thread's root is always made */
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 1024;
        PyjTreeNode *grown = (PyjTreeNode *)aligned_alloc(_Alignof(PyjTreeNode), cap * sizeof(PyjTreeNode));
        PyjTreeNodeCold *cold = (PyjTreeNodeCold *)PyMem_RawRealloc(t->cold, cap * sizeof(PyjTreeNodeCold));
        if (cold != NULL) t->cold = cold;
        if (grown == NULL || cold == NULL) {
            free(grown);
            return PYJ_TREE_NONE;
        }
        if (t->n) memcpy(grown, t->nodes, t->n * sizeof(PyjTreeNode));
        free(t->nodes);
        t->nodes = grown;
        t->cap = cap;
    }
    uint32_t i = t->n++;
    PyjTreeNode *node = &t->nodes[i];
    memset(node, 0, sizeof(*node));
    memset(&t->cold[i], 0, sizeof(PyjTreeNodeCold));
    Py_XINCREF(code);
    node->code = code;
    t->cold[i].thread = thread;
    node->parent = parent;
    node->first_child = node->next_sibling = node->last_child = node->next_hint = PYJ_TREE_NONE;
    if (parent != PYJ_TREE_NONE) {
        PyjTreeNode *p = &t->nodes[parent];
        node->depth = p->depth + 1;
        node->next_sibling = p->first_child;
        p->first_child = i;
        PyObject *caller = p->code;
        for (uint32_t a = parent; a != PYJ_TREE_NONE; a = t->nodes[a].parent) {
            PyjTreeNode *an = &t->nodes[a];
            if (an->code != code) continue;
            node->flags |= PYJ_TREE_RECURSIVE;
            if (caller != NULL && an->parent != PYJ_TREE_NONE && t->nodes[an->parent].code == caller) {
                node->flags |= PYJ_TREE_EDGE_RECURSIVE;
                break;
            }
        }
    }
    return i;
}

static __attribute__((noinline)) uint32_t pyj_tree_new_root(uint64_t generation)
{
    pyj_tree.generation = generation;
    pyj_tree_thread_root = pyj_tree_add(PYJ_TREE_NONE, NULL, PyThread_get_thread_ident());
    pyj_tree_thread_generation = generation;
    return pyj_tree_thread_root;
}

static inline uint32_t pyj_tree_root(uint64_t generation)
{
    if (pyj_tree_thread_root == PYJ_TREE_NONE || pyj_tree_thread_generation != generation) {
        return pyj_tree_new_root(generation);
    }
    return pyj_tree_thread_root;
}

/* The node for a call of `code` under `parent` if it is the one the
 * sequence hint expects (the child called after the last one called, or the
 * newest child) or the last one called again (len(a) + len(b): a hint
 * cannot hold both "again" and what comes after), else PYJ_TREE_NONE: the
 * profiler's hot path (profiler.h). */
static inline uint32_t pyj_tree_child(uint32_t parent, PyObject *code)
{
    PyjTreeNode *nodes = pyj_tree.nodes;
    PyjTreeNode *p = &nodes[parent];
    uint32_t last = p->last_child;
    uint32_t c = last != PYJ_TREE_NONE ? nodes[last].next_hint : p->first_child;
    if (__builtin_expect(c != PYJ_TREE_NONE && nodes[c].code == code, 1)) {
        p->last_child = c;
        return c;
    }
    if (last != PYJ_TREE_NONE && nodes[last].code == code) return last;
    return PYJ_TREE_NONE;
}

/* The node for a call of `code` under `parent` (a node, the thread's root
 * at the top), made if new; PYJ_TREE_NONE where the path cannot grow (too
 * deep, the tree full). Learns the sequence: the child called before it
 * expects this one next time. */
static inline uint32_t pyj_tree_enter(uint32_t parent, PyObject *code)
{
    PyjTree *t = &pyj_tree;
    uint32_t found = PYJ_TREE_NONE;
    for (uint32_t c = t->nodes[parent].first_child; c != PYJ_TREE_NONE; c = t->nodes[c].next_sibling) {
        if (t->nodes[c].code == code) {
            found = c;
            break;
        }
    }
    if (found == PYJ_TREE_NONE) {
        if (t->nodes[parent].depth >= t->max_depth) return PYJ_TREE_NONE;
        found = pyj_tree_add(parent, code, 0);   /* (may move t->nodes) */
        if (found == PYJ_TREE_NONE) return PYJ_TREE_NONE;
    }
    PyjTreeNode *p = &t->nodes[parent];
    if (p->last_child != PYJ_TREE_NONE) t->nodes[p->last_child].next_hint = found;
    p->last_child = found;
    return found;
}

/* Forgets every node (reset_stats); calls still running from before keep
 * their old indices but never touch the tree again (their generation). */
static inline void pyj_tree_clear(void)
{
    PyjTree *t = &pyj_tree;
    for (uint32_t i = 0; i < t->n; i++) Py_XDECREF(t->nodes[i].code);
    free(t->nodes);
    PyMem_RawFree(t->cold);
    t->nodes = NULL;
    t->cold = NULL;
    t->n = t->cap = 0;
    t->folded = 0;
}

#endif

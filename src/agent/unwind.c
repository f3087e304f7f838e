/* unwind: the agent's local unwinder, x86_64. Debian's glibc and most distribution binaries have no frame
 * pointers, so the stack is walked with the call-frame information the compiler leaves for exceptions
 * (.eh_frame): the module of a pc and its .eh_frame_hdr come from _dl_find_object (glibc 2.35: lock-free and
 * async-signal-safe, made for unwinders), the FDE by binary search in the header's table, and its CFA program
 * is interpreted up to the pc (DW_CFA_* including remember/restore and the small DWARF expressions of PLT
 * entries and of the signal trampoline).
 *
 * Memory: frames are read only within [sp, top of this thread's stack), where the top is known without asking
 * anyone: __libc_stack_end for the main thread's stack, the thread descriptor (pthread_self, which glibc puts at
 * the top of a thread's stack block) for the others. Elsewhere (a coroutine's or an alternate stack) the stack is
 * first copied with process_vm_readv, which fails on an unmapped page instead of faulting, into one of a few
 * scratch buffers. Nothing here allocates, locks or calls anything that does.
 *
 * Heap samples (which hold the heap lock) use a cache of the rows found, by pc and module: most frames are
 * "CFA = rsp or rbp + n, each callee-saved register the same or at CFA + k", which the cache keeps, so a stack seen
 * before costs a lookup per frame. The signal handler does not use it (it may interrupt a writer). */
#include <dlfcn.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <ucontext.h>
#include <unistd.h>

#include "agent.h"

extern void *__libc_stack_end;

#define SCRATCH_BYTES (64 * 1024)
#define RA 16
#define SP 7

struct mem {
    uintptr_t lo, hi;
    const unsigned char *base;
};

static int rd(const struct mem *m, uintptr_t a, uintptr_t *v)
{
    if (m->hi - m->lo < 8 || a < m->lo || a > m->hi - 8) return -1;
    memcpy(v, m->base + (a - m->lo), sizeof *v);
    return 0;
}

/* ---- reading .eh_frame (module memory, mapped while the module is loaded) ---- */

static int uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t x = 0;
    for (int shift = 0; *p < end && shift < 64; shift += 7) {
        uint8_t b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}

static int sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
    uint64_t x = 0;
    int shift = 0;
    uint8_t b = 0x80;
    while (*p < end && shift < 64 && (b & 0x80)) {
        b = *(*p)++;
        x |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    }
    if (b & 0x80) return -1;
    if (shift < 64 && (b & 0x40)) x |= ~0ull << shift;
    *v = (int64_t)x;
    return 0;
}

#define FIXED(type)                                                                                                  \
    do {                                                                                                             \
        type t_;                                                                                                     \
        if (end - *p < (ptrdiff_t)sizeof t_) return -1;                                                              \
        memcpy(&t_, *p, sizeof t_);                                                                                  \
        *p += sizeof t_;                                                                                             \
        v = (uint64_t)(int64_t)t_;                                                                                   \
    } while (0)

/* A DW_EH_PE-encoded pointer. datarel: the base of datarel encodings (.eh_frame_hdr). */
static int read_enc(const uint8_t **p, const uint8_t *end, uint8_t enc, uintptr_t datarel, uintptr_t *out)
{
    if (enc == 0xff) return -1;
    uintptr_t at = (uintptr_t)*p;
    uint64_t v;
    switch (enc & 0x0f) {
    case 0x00: FIXED(uint64_t); break;
    case 0x01: if (uleb(p, end, &v) < 0) return -1; break;
    case 0x02: FIXED(uint16_t); v &= 0xffff; break;
    case 0x03: FIXED(uint32_t); v &= 0xffffffffu; break;
    case 0x04: FIXED(uint64_t); break;
    case 0x09: { int64_t s; if (sleb(p, end, &s) < 0) return -1; v = (uint64_t)s; break; }
    case 0x0a: FIXED(int16_t); break;
    case 0x0b: FIXED(int32_t); break;
    case 0x0c: FIXED(int64_t); break;
    default: return -1;
    }
    switch (enc & 0x70) {
    case 0x00: break;
    case 0x10: v += at; break;
    case 0x30: v += datarel; break;
    default: return -1;
    }
    if (enc & 0x80) return -1; /* indirect: only personality routines, which are skipped */
    *out = (uintptr_t)v;
    return 0;
}

struct cie {
    uint64_t code_align;
    int64_t data_align;
    unsigned ra;
    uint8_t fde_enc;
    int has_z, signal;
    const uint8_t *insns, *end;
};

static int parse_cie(const uint8_t *c, struct cie *out)
{
    uint32_t len;
    memcpy(&len, c, 4);
    if (len == 0 || len == 0xffffffffu || len > (1u << 24)) return -1;
    const uint8_t *end = c + 4 + len, *p = c + 8;
    uint32_t id;
    memcpy(&id, c + 4, 4);
    if (id != 0) return -1;
    uint8_t version = *p++;
    if (version != 1 && version != 3 && version != 4) return -1;
    const char *aug = (const char *)p;
    while (p < end && *p) p++;
    if (p >= end) return -1;
    p++;
    if (version == 4) p += 2; /* address and segment sizes */
    memset(out, 0, sizeof *out);
    out->fde_enc = 0; /* absptr unless 'R' */
    uint64_t ra;
    if (uleb(&p, end, &out->code_align) < 0 || sleb(&p, end, &out->data_align) < 0) return -1;
    if (version == 1) ra = *p++;
    else if (uleb(&p, end, &ra) < 0) return -1;
    out->ra = (unsigned)ra;
    const uint8_t *aug_end = NULL;
    if (aug[0] == 'z') {
        uint64_t alen;
        if (uleb(&p, end, &alen) < 0 || alen > (uint64_t)(end - p)) return -1;
        out->has_z = 1;
        aug_end = p + alen;
    } else if (aug[0]) {
        return -1; /* pre-'z' augmentations ("eh"): not produced by current toolchains */
    }
    for (const char *a = aug + (aug[0] == 'z'); *a; a++) {
        if (*a == 'R') out->fde_enc = *p++;
        else if (*a == 'L') p++;
        else if (*a == 'S') out->signal = 1;
        else if (*a == 'B' || *a == 'G') continue;
        else if (*a == 'P') {
            uint8_t enc = *p++;
            uintptr_t ignored;
            if (read_enc(&p, aug_end, enc & 0x7f, 0, &ignored) < 0) return -1;
        } else break; /* unknown: the 'z' length lets us skip the rest */
    }
    if (aug_end) p = aug_end;
    out->insns = p;
    out->end = end;
    return 0;
}

/* The FDE covering pc: its instructions, start and CIE. */
struct fde {
    struct cie cie;
    uintptr_t start;
    const uint8_t *insns, *end;
};

static int find_fde(uintptr_t pc, const struct dl_find_object *o, struct fde *f)
{
    const uint8_t *hdr = o->dlfo_eh_frame, *p = hdr + 4;
    uintptr_t h = (uintptr_t)hdr, eh_frame, count;
    if (hdr[0] != 1 || hdr[3] != 0x3b) return -1; /* table: datarel sdata4 pairs, what every linker writes */
    if (read_enc(&p, hdr + 24, hdr[1], h, &eh_frame) < 0 || read_enc(&p, hdr + 24, hdr[2], h, &count) < 0)
        return -1;
    if (count == 0 || count > (1u << 26)) return -1;
    const int32_t *tab = (const int32_t *)p;
    uintptr_t lo = 0, hi = count;
    while (hi - lo > 1) {
        uintptr_t mid = lo + (hi - lo) / 2;
        if (h + (intptr_t)tab[2 * mid] <= pc) lo = mid;
        else hi = mid;
    }
    if (h + (intptr_t)tab[2 * lo] > pc) return -1;
    const uint8_t *fde = (const uint8_t *)(h + (intptr_t)tab[2 * lo + 1]);
    uint32_t len;
    int32_t cie_off;
    memcpy(&len, fde, 4);
    memcpy(&cie_off, fde + 4, 4);
    if (len == 0 || len == 0xffffffffu || len > (1u << 24) || cie_off <= 0) return -1;
    if (parse_cie(fde + 4 - cie_off, &f->cie) < 0) return -1;
    const uint8_t *end = fde + 4 + len;
    p = fde + 8;
    uintptr_t range;
    if (read_enc(&p, end, f->cie.fde_enc, h, &f->start) < 0 ||
        read_enc(&p, end, f->cie.fde_enc & 0x0f, h, &range) < 0)
        return -1;
    if (pc < f->start || pc - f->start >= range) return -1;
    if (f->cie.has_z) {
        uint64_t alen;
        if (uleb(&p, end, &alen) < 0 || alen > (uint64_t)(end - p)) return -1;
        p += alen;
    }
    f->insns = p;
    f->end = end;
    return 0;
}

/* ---- the CFA program ---- */

enum { R_SAME, R_UNDEF, R_OFF, R_VALOFF, R_REG, R_EXPR, R_VALEXPR };

struct rule {
    uint8_t kind, reg;
    int64_t off;
    const uint8_t *expr;
    uint64_t len;
};

struct row {
    int cfa_is_expr;
    unsigned cfa_reg;
    int64_t cfa_off;
    const uint8_t *cfa_expr;
    uint64_t cfa_len;
    struct rule r[UNW_NREGS];
};

static void set_rule(struct row *row, uint64_t reg, uint8_t kind, int64_t off, const uint8_t *expr, uint64_t len)
{
    if (reg >= UNW_NREGS) return; /* vector registers: not needed to find frames */
    row->r[reg] = (struct rule){kind, (uint8_t)off, off, expr, len};
}

/* The handlers of both interpreters (CFA programs, DWARF expressions) are inlined into their loop, which gets one
 * jump table and keeps the state in registers: as fast as one big function. */
#define INLINE static inline __attribute__((always_inline))

/* The interpreter of a CFA program: where it reads, the location reached, the row it builds, the CIE's row (what
 * DW_CFA_restore returns to; NULL while running the CIE itself) and the rows DW_CFA_remember_state keeps. */
struct cfa_vm {
    const uint8_t *p, *end;
    const struct cie *c;
    uintptr_t loc, target;
    struct row *row;
    const struct row *init;
    struct row *saved; /* 8 */
    int nsaved;
};

/* What an instruction tells the loop: go on, done (the location passed the target: the row is complete), or bad. */
enum { CFA_GO, CFA_DONE, CFA_BAD = -1 };

/* Operands at the reading position: unsigned, signed LEB128. Through a copy of the position, so that the state
 * never has its address taken and stays in registers. */
INLINE int cfa_u(struct cfa_vm *vm, uint64_t *u)
{
    const uint8_t *p = vm->p;
    int rc = uleb(&p, vm->end, u);
    vm->p = p;
    return rc;
}

INLINE int cfa_s(struct cfa_vm *vm, int64_t *s)
{
    const uint8_t *p = vm->p;
    int rc = sleb(&p, vm->end, s);
    vm->p = p;
    return rc;
}

/* The location moves to loc. */
INLINE int cfa_move(struct cfa_vm *vm, uintptr_t loc)
{
    vm->loc = loc;
    return loc > vm->target ? CFA_DONE : CFA_GO;
}

/* DW_CFA_set_loc: an address in the FDE's encoding. */
INLINE int cfa_set_loc(struct cfa_vm *vm)
{
    const uint8_t *p = vm->p;
    uintptr_t v;
    if (read_enc(&p, vm->end, vm->c->fde_enc, 0, &v) < 0) return CFA_BAD;
    vm->p = p;
    return cfa_move(vm, v);
}

/* DW_CFA_advance_loc1/2/4: a factored delta of n bytes. */
INLINE int cfa_advance(struct cfa_vm *vm, size_t n)
{
    if ((size_t)(vm->end - vm->p) < n) return CFA_BAD;
    uint32_t d = 0;
    memcpy(&d, vm->p, n); /* little endian */
    vm->p += n;
    return cfa_move(vm, vm->loc + d * vm->c->code_align);
}

/* A register's rule back to the CIE's (DW_CFA_restore, restore_extended). */
INLINE void cfa_restore(struct cfa_vm *vm, uint64_t reg)
{
    if (reg < UNW_NREGS) vm->row->r[reg] = vm->init ? vm->init->r[reg] : (struct rule){0};
}

/* The rule of register reg (the opcode's low bits or an operand): at CFA + an unsigned factored offset, negated
 * for GNU_negative_offset_extended (DW_CFA_offset, offset_extended, val_offset). */
INLINE int cfa_offset_u(struct cfa_vm *vm, uint64_t reg, uint8_t kind, int negate)
{
    uint64_t u;
    if (cfa_u(vm, &u) < 0) return CFA_BAD;
    set_rule(vm->row, reg, kind, (negate ? -(int64_t)u : (int64_t)u) * vm->c->data_align, NULL, 0);
    return CFA_GO;
}

/* DW_CFA_offset_extended, val_offset, GNU_negative_offset_extended: the register, then the offset. */
INLINE int cfa_reg_offset_u(struct cfa_vm *vm, uint8_t kind, int negate)
{
    uint64_t reg;
    return cfa_u(vm, &reg) < 0 ? CFA_BAD : cfa_offset_u(vm, reg, kind, negate);
}

/* DW_CFA_offset_extended_sf, val_offset_sf: the register, then a signed factored offset. */
INLINE int cfa_reg_offset_s(struct cfa_vm *vm, uint8_t kind)
{
    uint64_t reg;
    int64_t s;
    if (cfa_u(vm, &reg) < 0 || cfa_s(vm, &s) < 0) return CFA_BAD;
    set_rule(vm->row, reg, kind, s * vm->c->data_align, NULL, 0);
    return CFA_GO;
}

/* DW_CFA_undefined, same_value: a rule without operands. */
INLINE int cfa_reg_kind(struct cfa_vm *vm, uint8_t kind)
{
    uint64_t reg;
    if (cfa_u(vm, &reg) < 0) return CFA_BAD;
    set_rule(vm->row, reg, kind, 0, NULL, 0);
    return CFA_GO;
}

/* DW_CFA_register: in another register (undefined if that is one not tracked). */
INLINE int cfa_reg_register(struct cfa_vm *vm)
{
    uint64_t reg, u;
    if (cfa_u(vm, &reg) < 0 || cfa_u(vm, &u) < 0) return CFA_BAD;
    if (u >= UNW_NREGS) set_rule(vm->row, reg, R_UNDEF, 0, NULL, 0);
    else set_rule(vm->row, reg, R_REG, (int64_t)u, NULL, 0);
    return CFA_GO;
}

/* DW_CFA_expression, val_expression: an expression (its length, its bytes), evaluated when unwinding. */
INLINE int cfa_reg_expr(struct cfa_vm *vm, uint8_t kind)
{
    uint64_t reg, len;
    if (cfa_u(vm, &reg) < 0 || cfa_u(vm, &len) < 0 || len > (uint64_t)(vm->end - vm->p)) return CFA_BAD;
    set_rule(vm->row, reg, kind, 0, vm->p, len);
    vm->p += len;
    return CFA_GO;
}

/* DW_CFA_restore_extended. */
INLINE int cfa_reg_restore(struct cfa_vm *vm)
{
    uint64_t reg;
    if (cfa_u(vm, &reg) < 0) return CFA_BAD;
    cfa_restore(vm, reg);
    return CFA_GO;
}

/* DW_CFA_def_cfa_offset, def_cfa_offset_sf: the offset (unsigned, or signed and factored), the register kept. */
INLINE int cfa_def_offset(struct cfa_vm *vm, int sf)
{
    uint64_t u;
    int64_t s;
    if (!sf) {
        if (cfa_u(vm, &u) < 0) return CFA_BAD;
        vm->row->cfa_off = (int64_t)u;
    } else {
        if (cfa_s(vm, &s) < 0) return CFA_BAD;
        vm->row->cfa_off = s * vm->c->data_align;
    }
    return CFA_GO;
}

/* DW_CFA_def_cfa_register: the register, the offset kept. */
INLINE int cfa_def_register(struct cfa_vm *vm)
{
    uint64_t reg;
    if (cfa_u(vm, &reg) < 0) return CFA_BAD;
    vm->row->cfa_reg = (unsigned)reg;
    vm->row->cfa_is_expr = 0;
    return CFA_GO;
}

/* DW_CFA_def_cfa, def_cfa_sf: CFA = register + offset. */
INLINE int cfa_def(struct cfa_vm *vm, int sf)
{
    uint64_t reg;
    if (cfa_u(vm, &reg) < 0 || cfa_def_offset(vm, sf) < 0) return CFA_BAD;
    vm->row->cfa_reg = (unsigned)reg;
    vm->row->cfa_is_expr = 0;
    return CFA_GO;
}

/* DW_CFA_def_cfa_expression. */
INLINE int cfa_def_expr(struct cfa_vm *vm)
{
    uint64_t len;
    if (cfa_u(vm, &len) < 0 || len > (uint64_t)(vm->end - vm->p)) return CFA_BAD;
    vm->row->cfa_is_expr = 1;
    vm->row->cfa_expr = vm->p;
    vm->row->cfa_len = len;
    vm->p += len;
    return CFA_GO;
}

/* DW_CFA_remember_state: a copy of the whole row (8 deep; compilers nest one or two). */
INLINE int cfa_remember(struct cfa_vm *vm)
{
    if (vm->nsaved == 8) return CFA_BAD;
    vm->saved[vm->nsaved++] = *vm->row;
    return CFA_GO;
}

/* DW_CFA_restore_state. */
INLINE int cfa_restore_state(struct cfa_vm *vm)
{
    if (vm->nsaved == 0) return CFA_BAD;
    *vm->row = vm->saved[--vm->nsaved];
    return CFA_GO;
}

/* DW_CFA_GNU_args_size: skipped. */
INLINE int cfa_skip_u(struct cfa_vm *vm)
{
    uint64_t u;
    return cfa_u(vm, &u) < 0 ? CFA_BAD : CFA_GO;
}

/* One instruction: the three with an operand in the opcode's low 6 bits, else a handler per opcode. */
INLINE int cfa_insn(struct cfa_vm *vm)
{
    uint8_t op = *vm->p++, low = op & 0x3f;
    if ((op & 0xc0) == 0x40) return cfa_move(vm, vm->loc + low * vm->c->code_align); /* DW_CFA_advance_loc */
    if ((op & 0xc0) == 0x80) return cfa_offset_u(vm, low, R_OFF, 0);                  /* DW_CFA_offset */
    if ((op & 0xc0) == 0xc0) {                                                         /* DW_CFA_restore */
        cfa_restore(vm, low);
        return CFA_GO;
    }
    switch (op) {
    case 0x00: return CFA_GO;                          /* nop */
    case 0x01: return cfa_set_loc(vm);                 /* set_loc */
    case 0x02: return cfa_advance(vm, 1);              /* advance_loc1 */
    case 0x03: return cfa_advance(vm, 2);              /* advance_loc2 */
    case 0x04: return cfa_advance(vm, 4);              /* advance_loc4 */
    case 0x05: return cfa_reg_offset_u(vm, R_OFF, 0);  /* offset_extended */
    case 0x06: return cfa_reg_restore(vm);             /* restore_extended */
    case 0x07: return cfa_reg_kind(vm, R_UNDEF);       /* undefined */
    case 0x08: return cfa_reg_kind(vm, R_SAME);        /* same_value */
    case 0x09: return cfa_reg_register(vm);            /* register */
    case 0x0a: return cfa_remember(vm);                /* remember_state */
    case 0x0b: return cfa_restore_state(vm);           /* restore_state */
    case 0x0c: return cfa_def(vm, 0);                  /* def_cfa */
    case 0x0d: return cfa_def_register(vm);            /* def_cfa_register */
    case 0x0e: return cfa_def_offset(vm, 0);           /* def_cfa_offset */
    case 0x0f: return cfa_def_expr(vm);                /* def_cfa_expression */
    case 0x10: return cfa_reg_expr(vm, R_EXPR);        /* expression */
    case 0x11: return cfa_reg_offset_s(vm, R_OFF);     /* offset_extended_sf */
    case 0x12: return cfa_def(vm, 1);                  /* def_cfa_sf */
    case 0x13: return cfa_def_offset(vm, 1);           /* def_cfa_offset_sf */
    case 0x14: return cfa_reg_offset_u(vm, R_VALOFF, 0); /* val_offset */
    case 0x15: return cfa_reg_offset_s(vm, R_VALOFF);  /* val_offset_sf */
    case 0x16: return cfa_reg_expr(vm, R_VALEXPR);     /* val_expression */
    case 0x2e: return cfa_skip_u(vm);                  /* GNU_args_size */
    case 0x2f: return cfa_reg_offset_u(vm, R_OFF, 1);  /* GNU_negative_offset_extended */
    }
    return CFA_BAD;
}

/* Runs instructions [p, end) from location loc until it passes target; init: the CIE's row (for restore). */
static int execute(const uint8_t *p, const uint8_t *end, const struct cie *c, uintptr_t loc, uintptr_t target,
                   struct row *row, const struct row *init)
{
    struct row saved[8];
    struct cfa_vm vm = {.p = p, .end = end, .c = c, .loc = loc, .target = target, .row = row, .init = init,
                        .saved = saved, .nsaved = 0};
    while (vm.p < vm.end) {
        int rc = cfa_insn(&vm);
        if (rc != CFA_GO) return rc == CFA_DONE ? 0 : -1;
    }
    return 0;
}

/* ---- DWARF expressions (what .eh_frame uses: PLT entries, the signal trampoline) ---- */

/* The evaluator: the expression, its stack, and the registers and memory it may read. */
struct dw_vm {
    const uint8_t *p, *start, *end;
    uintptr_t *st; /* 16 */
    int n;
    const struct unw_regs *regs;
    const struct mem *m;
};

/* Operands at the reading position (through a copy: see cfa_u). */
INLINE int dw_u(struct dw_vm *v, uint64_t *u)
{
    const uint8_t *p = v->p;
    int rc = uleb(&p, v->end, u);
    v->p = p;
    return rc;
}

INLINE int dw_s(struct dw_vm *v, int64_t *s)
{
    const uint8_t *p = v->p;
    int rc = sleb(&p, v->end, s);
    v->p = p;
    return rc;
}

INLINE int dw_push(struct dw_vm *v, uintptr_t x)
{
    if (v->n == 16) return -1;
    v->st[v->n++] = x;
    return 0;
}

/* DW_OP_const1u..const8s: an operand of n bytes, little endian, sign-extended if is_signed. */
INLINE int dw_const_fixed(struct dw_vm *v, unsigned n, int is_signed)
{
    uint64_t x = 0;
    unsigned shift = 64 - 8 * n;
    if ((size_t)(v->end - v->p) < n) return -1;
    memcpy(&x, v->p, n);
    v->p += n;
    if (is_signed) x = (uint64_t)((int64_t)(x << shift) >> shift);
    return dw_push(v, x);
}

/* DW_OP_constu, consts. */
INLINE int dw_const_leb(struct dw_vm *v, int is_signed)
{
    uint64_t u;
    int64_t s;
    if (!is_signed) return dw_u(v, &u) < 0 ? -1 : dw_push(v, u);
    return dw_s(v, &s) < 0 ? -1 : dw_push(v, (uintptr_t)s);
}

/* DW_OP_breg0..31 (reg from the opcode), bregx (from an operand): a register plus a signed offset. */
INLINE int dw_breg(struct dw_vm *v, uint64_t reg, int reg_operand)
{
    int64_t s;
    if (reg_operand && dw_u(v, &reg) < 0) return -1;
    if (dw_s(v, &s) < 0 || reg >= UNW_NREGS || !(v->regs->valid & (1u << reg))) return -1;
    return dw_push(v, v->regs->r[reg] + (uintptr_t)s);
}

/* DW_OP_dup (k 0), over (1), pick: the entry k below the top pushed. */
INLINE int dw_pick(struct dw_vm *v, unsigned k)
{
    if (v->n < (int)k + 1) return -1;
    return dw_push(v, v->st[v->n - 1 - (int)k]);
}

INLINE int dw_pick_operand(struct dw_vm *v)
{
    return v->p == v->end ? -1 : dw_pick(v, *v->p++);
}

/* DW_OP_drop, swap, rot. */
INLINE int dw_drop(struct dw_vm *v)
{
    if (v->n < 1) return -1;
    v->n--;
    return 0;
}

INLINE int dw_swap(struct dw_vm *v)
{
    uintptr_t *st = v->st + v->n, a;
    if (v->n < 2) return -1;
    a = st[-1], st[-1] = st[-2], st[-2] = a;
    return 0;
}

INLINE int dw_rot(struct dw_vm *v)
{
    uintptr_t *st = v->st + v->n, a;
    if (v->n < 3) return -1;
    a = st[-1], st[-1] = st[-2], st[-2] = st[-3], st[-3] = a;
    return 0;
}

/* DW_OP_deref: the top, an address on the stack, replaced by the word there. */
INLINE int dw_deref(struct dw_vm *v)
{
    uintptr_t a;
    if (v->n < 1 || rd(v->m, v->st[v->n - 1], &a) < 0) return -1;
    v->st[v->n - 1] = a;
    return 0;
}

/* DW_OP_abs, neg, not, plus_uconst: the top replaced. */
INLINE int dw_unary(struct dw_vm *v, uint8_t op)
{
    if (v->n < 1) return -1;
    uintptr_t *top = &v->st[v->n - 1];
    uint64_t u;
    switch (op) {
    case 0x19: if ((intptr_t)*top < 0) *top = -*top; return 0;
    case 0x1f: *top = -*top; return 0;
    case 0x20: *top = ~*top; return 0;
    case 0x23: if (dw_u(v, &u) < 0) return -1; *top += u; return 0;
    }
    return -1;
}

/* DW_OP_and, div, minus, mod, mul, or, plus, shl, shr, shra, xor and the comparisons: the top two, a below b,
 * replaced by a op b. */
INLINE int dw_binary(struct dw_vm *v, uint8_t op)
{
    if (v->n < 2) return -1;
    uintptr_t b = v->st[--v->n], a = v->st[v->n - 1];
    switch (op) {
    case 0x1a: a &= b; break;
    case 0x1b: /* INT64_MIN / -1 traps (SIGFPE) in the host program: it is the negation, wrapped */
        if (!b) return -1;
        a = (intptr_t)b == -1 ? (uintptr_t)0 - a : (uintptr_t)((intptr_t)a / (intptr_t)b);
        break;
    case 0x1c: a -= b; break;
    case 0x1d: if (!b) return -1; a %= b; break;
    case 0x1e: a *= b; break;
    case 0x21: a |= b; break;
    case 0x22: a += b; break;
    case 0x24: a = b < 64 ? a << b : 0; break;
    case 0x25: a = b < 64 ? a >> b : 0; break;
    case 0x26: a = b < 64 ? (uintptr_t)((intptr_t)a >> b) : 0; break;
    case 0x27: a ^= b; break;
    case 0x29: a = a == b; break;
    case 0x2a: a = (intptr_t)a >= (intptr_t)b; break;
    case 0x2b: a = (intptr_t)a > (intptr_t)b; break;
    case 0x2c: a = (intptr_t)a <= (intptr_t)b; break;
    case 0x2d: a = (intptr_t)a < (intptr_t)b; break;
    case 0x2e: a = a != b; break;
    }
    v->st[v->n - 1] = a;
    return 0;
}

/* DW_OP_skip, bra (only if the popped top is not 0): a signed 2-byte jump that must stay within the expression. */
INLINE int dw_branch(struct dw_vm *v, int conditional)
{
    int16_t d;
    if (v->end - v->p < 2) return -1;
    memcpy(&d, v->p, 2);
    v->p += 2;
    if (conditional) {
        if (v->n < 1) return -1;
        if (v->st[--v->n] == 0) return 0;
    }
    if (d < 0 ? (v->p - v->start) < -d : (v->end - v->p) < d) return -1;
    v->p += d;
    return 0;
}

/* One operation: literals and registers by range, else a handler per opcode (the arithmetic ones by family). */
INLINE int dw_op(struct dw_vm *v)
{
    uint8_t op = *v->p++;
    if (op >= 0x30 && op <= 0x4f) return dw_push(v, (uintptr_t)(op - 0x30)); /* DW_OP_lit0..31 */
    if (op >= 0x70 && op <= 0x8f) return dw_breg(v, op - 0x70, 0);           /* DW_OP_breg0..31 */
    switch (op) {
    case 0x06: return dw_deref(v);             /* deref */
    case 0x08: return dw_const_fixed(v, 1, 0); /* const1u */
    case 0x09: return dw_const_fixed(v, 1, 1); /* const1s */
    case 0x0a: return dw_const_fixed(v, 2, 0); /* const2u */
    case 0x0b: return dw_const_fixed(v, 2, 1); /* const2s */
    case 0x0c: return dw_const_fixed(v, 4, 0); /* const4u */
    case 0x0d: return dw_const_fixed(v, 4, 1); /* const4s */
    case 0x0e: return dw_const_fixed(v, 8, 0); /* const8u */
    case 0x0f: return dw_const_fixed(v, 8, 1); /* const8s */
    case 0x10: return dw_const_leb(v, 0);      /* constu */
    case 0x11: return dw_const_leb(v, 1);      /* consts */
    case 0x12: return dw_pick(v, 0);           /* dup */
    case 0x13: return dw_drop(v);              /* drop */
    case 0x14: return dw_pick(v, 1);           /* over */
    case 0x15: return dw_pick_operand(v);      /* pick */
    case 0x16: return dw_swap(v);              /* swap */
    case 0x17: return dw_rot(v);               /* rot */
    case 0x19: case 0x1f: case 0x20: case 0x23: return dw_unary(v, op);
    case 0x1a: case 0x1b: case 0x1c: case 0x1d: case 0x1e: case 0x21: case 0x22: case 0x24: case 0x25: case 0x26:
    case 0x27: case 0x29: case 0x2a: case 0x2b: case 0x2c: case 0x2d: case 0x2e:
        return dw_binary(v, op);
    case 0x28: return dw_branch(v, 1);         /* bra */
    case 0x2f: return dw_branch(v, 0);         /* skip */
    case 0x92: return dw_breg(v, 0, 1);        /* bregx */
    case 0x96: return 0;                       /* nop */
    }
    return -1;
}

/* Evaluates an expression of len bytes at p (at most 64 operations); push_cfa: for register rules, which start
 * with the CFA on the stack. The result is the top of the stack. */
static int eval(const uint8_t *p, uint64_t len, const struct unw_regs *regs, const struct mem *m, int push_cfa,
                uintptr_t cfa, uintptr_t *out)
{
    uintptr_t st[16];
    struct dw_vm v = {.p = p, .start = p, .end = p + len, .st = st, .n = 0, .regs = regs, .m = m};
    if (push_cfa) st[v.n++] = cfa;
    for (int steps = 0; v.p < v.end;)
        if (++steps > 64 || dw_op(&v) < 0) return -1;
    if (v.n < 1) return -1;
    *out = st[v.n - 1];
    return 0;
}

/* ---- the cache of simple rows ---- */

#define SAVED 6
static const uint8_t saved_regs[SAVED] = {6, 3, 12, 13, 14, 15}; /* rbp, rbx, r12-r15: callee-saved */
#define OFF_SAME 0x7fff
#define OFF_UNDEF 0x7ffe

struct unw_cache_entry {
    uintptr_t pc;      /* the lookup pc (a return address - 1, or exact) */
    const void *map;   /* its module's link map: a module unloaded and another loaded there is another key */
    int32_t cfa_off;
    uint8_t cfa_reg;
    uint8_t pad;
    int16_t ra_off;
    int16_t off[SAVED];
    uint8_t outermost; /* the return address is undefined here: the stack ends (_start, a thread's start) */
};

#define CACHE_ENTRIES 4096

static struct unw_cache_entry *cache_slot(uintptr_t pc)
{
    struct unw_cache_entry *c = agent_g.unwind_cache;
    return c ? &c[(pc * 0x9E3779B97F4A7C15ull) >> (64 - 12)] : NULL;
}

int unwind_cache_init(void)
{
    if (!agent_g.unwind_cache) agent_g.unwind_cache = agent_map(CACHE_ENTRIES * sizeof(struct unw_cache_entry));
    return agent_g.unwind_cache ? 0 : -1;
}

static int fits16(int64_t v) { return v > -0x7ff0 && v < 0x7ff0; }

/* Whether a row is one the cache can hold, and the entry if so. */
static int cache_row(const struct row *row, const struct cie *c, struct unw_cache_entry *e)
{
    if (c->signal || row->cfa_is_expr || (row->cfa_reg != 6 && row->cfa_reg != SP) || c->ra != RA ||
        row->r[RA].kind != R_OFF || !fits16(row->r[RA].off) || row->cfa_off > INT32_MAX || row->cfa_off < INT32_MIN)
        return 0;
    for (unsigned i = 0; i < UNW_NREGS; i++) {
        int k = -1;
        for (int j = 0; j < SAVED; j++)
            if (saved_regs[j] == i) k = j;
        if (i == RA) continue;
        if (k < 0) {
            if (row->r[i].kind != R_SAME) return 0; /* caller-saved registers with rules: not simple */
            continue;
        }
        const struct rule *ru = &row->r[i];
        if (ru->kind == R_SAME) e->off[k] = OFF_SAME;
        else if (ru->kind == R_UNDEF) e->off[k] = OFF_UNDEF;
        else if (ru->kind == R_OFF && fits16(ru->off)) e->off[k] = (int16_t)ru->off;
        else return 0;
    }
    e->cfa_reg = (uint8_t)row->cfa_reg;
    e->cfa_off = (int32_t)row->cfa_off;
    e->ra_off = (int16_t)row->r[RA].off;
    return 1;
}

static int cache_apply(const struct unw_cache_entry *e, struct unw_regs *r, const struct mem *m, int *exact)
{
    if (e->outermost) return 0;
    if (!(r->valid & (1u << e->cfa_reg))) return -1;
    uintptr_t cfa = r->r[e->cfa_reg] + (uintptr_t)(intptr_t)e->cfa_off, ra;
    if (rd(m, cfa + (uintptr_t)(intptr_t)e->ra_off, &ra) < 0 || cfa <= r->r[SP]) return -1;
    for (int k = 0; k < SAVED; k++) {
        unsigned reg = saved_regs[k];
        if (e->off[k] == OFF_SAME) continue;
        uintptr_t v;
        if (e->off[k] != OFF_UNDEF && rd(m, cfa + (uintptr_t)(intptr_t)e->off[k], &v) == 0) {
            r->r[reg] = v;
            r->valid |= 1u << reg;
        } else {
            r->valid &= ~(1u << reg);
        }
    }
    r->r[SP] = cfa;
    r->r[RA] = ra;
    r->valid |= (1u << SP) | (1u << RA);
    *exact = 0;
    return 1;
}

/* One frame up. Returns 1, 0 at the outermost frame (return address undefined), -1 when it cannot go on. */
static int step(struct unw_regs *r, const struct mem *m, int *exact, int use_cache)
{
    uintptr_t pc = r->r[RA], lookup = *exact ? pc : pc - 1;
    struct dl_find_object o;
    if (_dl_find_object((void *)lookup, &o) != 0 || !o.dlfo_eh_frame) return -1;
    struct unw_cache_entry *ce = use_cache ? cache_slot(lookup) : NULL;
    if (ce && ce->pc == lookup && ce->map == o.dlfo_link_map) return cache_apply(ce, r, m, exact);
    struct fde f;
    if (find_fde(lookup, &o, &f) < 0) return -1;
    struct row init, row;
    memset(&init, 0, sizeof init);
    if (execute(f.cie.insns, f.cie.end, &f.cie, 0, ~(uintptr_t)0, &init, NULL) < 0) return -1;
    row = init;
    if (execute(f.insns, f.end, &f.cie, f.start, lookup, &row, &init) < 0) return -1;
    if (f.cie.ra >= UNW_NREGS || row.r[f.cie.ra].kind == R_UNDEF) {
        if (ce) *ce = (struct unw_cache_entry){.pc = lookup, .map = o.dlfo_link_map, .outermost = 1};
        return 0;
    }

    uintptr_t cfa;
    if (row.cfa_is_expr) {
        if (eval(row.cfa_expr, row.cfa_len, r, m, 0, 0, &cfa) < 0) return -1;
    } else {
        if (row.cfa_reg >= UNW_NREGS || !(r->valid & (1u << row.cfa_reg))) return -1;
        cfa = r->r[row.cfa_reg] + (uintptr_t)row.cfa_off;
    }
    struct unw_regs nr = *r;
    nr.r[SP] = cfa; /* the CFA is the caller's rsp, unless a rule says otherwise */
    nr.valid |= 1u << SP;
    for (unsigned i = 0; i < UNW_NREGS; i++) {
        const struct rule *ru = &row.r[i];
        uintptr_t v = 0, addr;
        int ok = 1;
        switch (ru->kind) {
        case R_SAME: continue;
        case R_UNDEF: ok = 0; break;
        case R_OFF: ok = rd(m, cfa + (uintptr_t)ru->off, &v) == 0; break;
        case R_VALOFF: v = cfa + (uintptr_t)ru->off; break;
        case R_REG: ok = (r->valid >> ru->reg) & 1; v = r->r[ru->reg]; break;
        case R_EXPR: ok = eval(ru->expr, ru->len, r, m, 1, cfa, &addr) == 0 && rd(m, addr, &v) == 0; break;
        case R_VALEXPR: ok = eval(ru->expr, ru->len, r, m, 1, cfa, &v) == 0; break;
        }
        if (ok) {
            nr.r[i] = v;
            nr.valid |= 1u << i;
        } else {
            nr.valid &= ~(1u << i);
        }
    }
    if (f.cie.ra != RA) {
        nr.r[RA] = nr.r[f.cie.ra];
        nr.valid = (nr.valid & ~(1u << RA)) | (((nr.valid >> f.cie.ra) & 1) << RA);
    }
    if (!(nr.valid & (1u << RA))) return -1;
    /* Frames go up the stack; only a signal frame may jump elsewhere (the interrupted context's stack). */
    if (!f.cie.signal && nr.r[SP] <= r->r[SP]) return -1;
    struct unw_cache_entry e = {0}; /* outermost and padding: 0 */
    if (ce && cache_row(&row, &f.cie, &e)) {
        e.pc = lookup;
        e.map = o.dlfo_link_map;
        *ce = e;
    }
    *exact = f.cie.signal;
    *r = nr;
    return 1;
}

int unwind_regs(struct unw_regs *regs, uintptr_t lo, uintptr_t hi, const unsigned char *base, uintptr_t *pcs,
                int max, int use_cache)
{
    struct mem m = {lo, hi, base};
    int n = 0, exact = 1;
    while (n < max && (regs->valid & (1u << RA))) {
        uintptr_t pc = regs->r[RA];
        if (pc < 4096) break;
        pcs[n++] = pc;
        if (step(regs, &m, &exact, use_cache) <= 0) break;
    }
    return n;
}

/* ---- where the stack is ---- */

/* The top of the stack sp is on, when it is a stack we know: the main thread's, or a glibc thread's. 0 if not. */
static uintptr_t stack_top(uintptr_t sp)
{
    uintptr_t top = (uintptr_t)__libc_stack_end;
    if (top && sp < top && top - sp < (64u << 20)) return top;
    uintptr_t self = (uintptr_t)pthread_self();
    if (sp < self && self - sp < (16u << 20)) return self;
    return 0;
}

static int scratch_claim(void)
{
    if (!agent_g.scratch) return -1;
    for (int i = 0; i < (int)(sizeof agent_g.scratch_busy / sizeof agent_g.scratch_busy[0]); i++)
        if (!__atomic_exchange_n(&agent_g.scratch_busy[i], 1, __ATOMIC_ACQUIRE)) return i;
    return -1;
}

static void scratch_release(int i)
{
    __atomic_store_n(&agent_g.scratch_busy[i], 0, __ATOMIC_RELEASE);
}

/* Copies up to SCRATCH_BYTES of stack from sp, one page per remote iovec (a transfer stops at the first unmapped
 * one, never faults). Returns the bytes copied. */
static size_t copy_stack(uintptr_t sp, unsigned char *buf)
{
    struct iovec local = {buf, SCRATCH_BYTES}, remote[SCRATCH_BYTES / 4096 + 1];
    int n = 0;
    uintptr_t a = sp, end = sp + SCRATCH_BYTES;
    while (a < end && n < (int)(sizeof remote / sizeof remote[0])) {
        uintptr_t next = (a + 4096) & ~(uintptr_t)4095;
        if (next > end) next = end;
        remote[n++] = (struct iovec){(void *)a, next - a};
        a = next;
    }
    long r = syscall(SYS_process_vm_readv, (long)getpid(), &local, 1L, remote, (long)n, 0L);
    return r > 0 ? (size_t)r : 0;
}

static int unwind_from(struct unw_regs *r, uintptr_t *pcs, int max, int skip_self, int use_cache)
{
    uintptr_t sp = r->r[SP], top = stack_top(sp);
    uintptr_t tmp[AGENT_MAX_FRAMES + 8];
    int want = max + (skip_self ? 8 : 0), n;
    if (want > (int)(sizeof tmp / sizeof tmp[0])) want = (int)(sizeof tmp / sizeof tmp[0]);
    if (top) {
        n = unwind_regs(r, sp, top, (const unsigned char *)sp, tmp, want, use_cache);
    } else {
        int s = scratch_claim();
        if (s < 0) return 0;
        unsigned char *buf = agent_g.scratch + (size_t)s * SCRATCH_BYTES;
        size_t got = copy_stack(sp, buf);
        n = unwind_regs(r, sp, sp + got, buf, tmp, want, use_cache);
        scratch_release(s);
    }
    int i = 0, out = 0;
    if (skip_self)
        while (i < n && tmp[i] >= agent_g.self_lo && tmp[i] < agent_g.self_hi) i++;
    while (i < n && out < max) pcs[out++] = tmp[i++];
    return out;
}

__attribute__((noinline)) int unwind_here(uintptr_t *pcs, int max, int use_cache)
{
    struct unw_regs r;
    memset(&r, 0, sizeof r);
    /* rip, rsp and the callee-saved registers at one point of this function, which its CFI describes */
    __asm__ volatile("leaq 0(%%rip), %%rax\n\t"
                     "movq %%rax, %0\n\t"
                     "movq %%rsp, %1\n\t"
                     "movq %%rbp, %2\n\t"
                     "movq %%rbx, %3\n\t"
                     "movq %%r12, %4\n\t"
                     "movq %%r13, %5\n\t"
                     "movq %%r14, %6\n\t"
                     "movq %%r15, %7\n\t"
                     : "=m"(r.r[RA]), "=m"(r.r[SP]), "=m"(r.r[6]), "=m"(r.r[3]), "=m"(r.r[12]), "=m"(r.r[13]),
                       "=m"(r.r[14]), "=m"(r.r[15])
                     :
                     : "rax");
    r.valid = (1u << RA) | (1u << SP) | (1u << 6) | (1u << 3) | (1u << 12) | (1u << 13) | (1u << 14) | (1u << 15);
    return unwind_from(&r, pcs, max, 1, use_cache);
}

int unwind_context(const void *ucontext, uintptr_t *pcs, int max)
{
    const ucontext_t *uc = ucontext;
    const greg_t *g = uc->uc_mcontext.gregs;
    static const int map[UNW_NREGS] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
                                       REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
                                       REG_RIP};
    struct unw_regs r;
    for (int i = 0; i < UNW_NREGS; i++) r.r[i] = (uintptr_t)g[map[i]];
    r.valid = (1u << UNW_NREGS) - 1;
    return unwind_from(&r, pcs, max, 0, 0);
}

int unwind_scratch_init(void)
{
    if (agent_g.scratch) return 0;
    size_t n = sizeof agent_g.scratch_busy / sizeof agent_g.scratch_busy[0];
    agent_g.scratch = agent_map(n * SCRATCH_BYTES);
    return agent_g.scratch ? 0 : -1;
}

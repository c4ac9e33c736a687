/* The solver's native core: the same search as the pure-Python reference
 * (service/solver/search.py `_search`, with each variant's steps from gilbert.py,
 * shamrocks.py, gate.py and caprice.py), step for step: the same steps in the same
 * order, the same seeded shaking (CPython's Mersenne Twister, seeded as random.Random),
 * the same positions counted, so that at a budget of positions both give
 * the same answer. tests/solver/test_native.py holds them to it.
 *
 * Pure: no I/O. The only call out is to the budget's clock (a Python callable), every
 * CHECK_CLOCK_EVERY positions as the reference does.
 *
 * A position is one struct for every variant: the foundations' counts, the piles'
 * lengths and their cards one after the other (pile 0 first). Piles by variant:
 *   gilbert   0..6 tableau (face-down cards first, `down` of them), 7 the talon
 *             (waste bottom to top, then the stock in the order it deals; `w` in the waste)
 *   shamrocks 0..17 fans
 *   gate      0..7 bars, 8 and 9 the pillars (reserve/0, reserve/1), 10 the talon (as Gilbert's)
 *   caprice   0..11 tableau, 12 the stock (its top last)
 * The transposition table keeps 128-bit fingerprints of the reference's keys (piles the
 * reference's key sorts are hashed as a multiset).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>

#define MAXPILES 20
#define MAXCARDS 104
#define CHECK_CLOCK_EVERY 64
/* Gilbert's draw: CARDS_PER_DRAW of service/engine/variants/gilbert.py, which C cannot
   import; tests/solver/test_native.py checks that the core answers as the reference. */
#define GILBERT_CARDS_PER_DRAW 3

enum { GILBERT, SHAMROCKS, GATE, CAPRICE };

/* priorities (rules.py) */
#define TO_FOUNDATION 0
#define REVEALS 10
#define FROM_WASTE 20
#define TABLEAU 30
#define FROM_FOUNDATION 50
#define DRAWS 60
#define SETTLED 70
#define CAPRICE_DEAL ((REVEALS + TABLEAU) / 2)

typedef struct {
    uint8_t found[8];
    uint8_t len[MAXPILES];
    uint8_t down[8];
    uint8_t w;
    uint8_t ncards;
    uint8_t pad[2];
    uint8_t cards[MAXCARDS + 8];  /* 8 more: a hash reads 8 bytes at a time (masked) */
} State;

#define HEAD (offsetof(State, cards))

/* kinds of steps */
enum {
    K_T2T,      /* pile a, top b cards, to pile c */
    K_T2F,      /* pile a top to foundation c */
    K_F2T,      /* foundation a top to pile c */
    K_F2F,      /* foundation a top to foundation c */
    K_TAL2F,    /* talon card a-1 (1-based a) after b draws, to foundation c (gilbert, gate waste) */
    K_TAL2T,    /* talon card a-1 after b draws, to pile c */
    K_STOCK2T,  /* gate: the stock's top (talon[0], no waste) to bar c */
    K_DRAW,     /* gate: one card to the waste; caprice: the deal */
    K_DOWN2,    /* gate: foundation a top to bar c, then from b (bar 0..7, pillar 8..9,
                   waste 10, foundation 11 + g) to bar d (Gate._down_for_use) */
    K_DOWN3,    /* gate: foundation a top to bar c, foundation b top to bar d, then
                   foundation b's next card onto bar c */
    K_ACROSS2,  /* gate, full rules: bar a top to bar c, then from b (bar 0..7, pillar 8..9,
                   waste 10, foundation 11 + g) to bar d, or to foundation d - 20
                   (Gate._across_for_use) */
    K_SH2,      /* shamrocks: fan a's top onto fan b, then from c to d (a fan, or 18 + f
                   for foundation f) (Shamrocks._combined) */
    K_SH3,      /* shamrocks: fan a's top onto fan b, fan c's top onto fan d & 31, then
                   fan a's top onto fan c (onto fan d & 31 if d & 32) */
};

typedef struct {
    int16_t prio;
    int8_t gain;
    uint8_t kind;
    uint8_t a, b, c, d;
} Step;

typedef struct {
    int variant;
    int hasty, pruning, runs_move;
    int cut_dead;   /* leave out the positions dead() proves lost (native.py _cut_dead) */
    int guide;      /* what best-first scores by: rules.GUIDES's index (Rules.guide) */
    int npiles;     /* piles in the position */
    int total;      /* cards to win */
    int nfound;
} Rules;

/* ---- cards ------------------------------------------------------------------------ */
static uint8_t RANK_T[52], SUIT_T[52], RED_T[52];  /* filled at import */
#define RANK(c) (RANK_T[(c)])
#define SUIT(c) (SUIT_T[(c)])
#define RED(c) (RED_T[(c)])
#define SRED(s) ((s) == 1 || (s) == 2)
#define CARD(s, r) ((s) * 13 + (r) - 1)

static inline int alt_on(int c, int t) { /* c in ALT_DOWN[t] */
    return RANK(c) + 1 == RANK(t) && RED(c) != RED(t);
}
static inline int adj_any(int c, int t) { /* c in ADJ_ANY[t] */
    int d = RANK(c) - RANK(t);
    return d == 1 || d == -1;
}

/* Sets of cards as bit masks (the dead-position tests, Gate's steps). */
#define ALL52 ((1ULL << 52) - 1)
#define SUIT13 0x1FFFULL
/* A card is bit suit * 13 + rank - 1: a suit's cards are 13 bits, bit rank - 1. */
static inline uint64_t ranks_of(uint64_t m) {  /* the ranks present, bit rank - 1 */
    return (m | m >> 13 | m >> 26 | m >> 39) & SUIT13;
}
static inline uint64_t cards_of(uint64_t ranks) { /* every card of these ranks */
    return ranks | ranks << 13 | ranks << 26 | ranks << 39;
}
static inline uint64_t next_to(uint64_t ranks) { /* the ranks one away from these */
    return (ranks << 1 | ranks >> 1) & SUIT13;
}
/* The cards that may be built on a card of m: one rank lower, the other colour (clubs and
 * spades, suits 0 and 3, are black). */
static inline uint64_t built_on(uint64_t m) {
    uint64_t black = (m | m >> 39) & SUIT13, red = (m >> 13 | m >> 26) & SUIT13;
    return (red >> 1) | (red >> 1) << 39 | (black >> 1) << 13 | (black >> 1) << 26;
}

/* ---- piles ------------------------------------------------------------------------ */
static inline int pstart(const State *s, int i) {
    int o = 0;
    for (int k = 0; k < i; k++) o += s->len[k];
    return o;
}
static inline int ptop(const State *s, int i) { return s->cards[pstart(s, i) + s->len[i] - 1]; }

static void cut(State *s, int pos, int k) {
    int n = s->ncards;
    memmove(s->cards + pos, s->cards + pos + k, n - pos - k);
    memset(s->cards + n - k, 0, k);
    s->ncards = n - k;
}
static void ins(State *s, int pos, const uint8_t *src, int k) {
    int n = s->ncards;
    memmove(s->cards + pos + k, s->cards + pos, n - pos);
    memcpy(s->cards + pos, src, k);
    s->ncards = n + k;
}
static void pop_to(State *s, int i, int k, uint8_t *out) {
    int st = pstart(s, i) + s->len[i] - k;
    if (out) memcpy(out, s->cards + st, k);
    cut(s, st, k);
    s->len[i] -= k;
}
static void push(State *s, int j, const uint8_t *src, int k) {
    ins(s, pstart(s, j) + s->len[j], src, k);
    s->len[j] += k;
}
static void move_top(State *s, int i, int k, int j) {
    uint8_t tmp[MAXCARDS];
    pop_to(s, i, k, tmp);
    push(s, j, tmp, k);
}

static int sum_found(const State *s) {
    int t = 0;
    for (int f = 0; f < 8; f++) t += s->found[f];
    return t;
}

/* The top card of foundation f holding n (gilbert, caprice: 4..7 descend from the King). */
static inline int ftop(int f, int n) { return f < 4 ? CARD(f, n) : CARD(f - 4, 14 - n); }

/* accepts (foundations.py): the foundations of eight that take c, in order */
static inline int accepts(const State *s, int c, int *out) {
    int k = 0, su = SUIT(c), r = RANK(c);
    if (s->found[su] == r - 1) out[k++] = su;
    if (s->found[4 + su] == 13 - r) out[k++] = 4 + su;
    return k;
}

/* ---- hashing ---------------------------------------------------------------------- */
static inline uint64_t fmix(uint64_t x) {
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return x;
}
typedef struct { uint64_t a, b; } H128;

/* A pile's 64-bit hash, then added into both halves of the fingerprint through two
 * different finalizers: the piles of a multiset in any order give the same sum. */
static inline uint64_t pile64(uint64_t seed, const uint8_t *p, int n) {
    uint64_t h = (seed + 1) * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)n << 56);
    for (;;) {
        uint64_t w;
        memcpy(&w, p, 8);  /* within the State: its cards have 8 bytes to spare */
        if (n < 8) {
            if (n) {
                w &= ~0ULL >> (64 - 8 * n);
                h = (h ^ w) * 0x94d049bb133111ebULL;
                h ^= h >> 29;
            }
            return h;
        }
        h = (h ^ w) * 0xbf58476d1ce4e5b9ULL;
        h ^= h >> 31;
        p += 8; n -= 8;
    }
}
static inline void hadd(H128 *h, uint64_t seed, const uint8_t *p, int n) {
    uint64_t x = pile64(seed, p, n);
    h->a += (x ^ (x >> 32)) * 0xff51afd7ed558ccdULL;
    h->b += (x ^ (x >> 29) ^ (x << 23)) * 0xD6E8FEB86659FD93ULL;
}

/* The reference's key, as a fingerprint: the piles the key sorts each hashed alone with
 * the same seed (a multiset: their sum does not depend on their order), the rest in one
 * or two runs of bytes. */
static H128 key_of(const Rules *R, const State *s) {
    H128 h = {0, 0};
    uint8_t head[16];
    int o = 0;
    switch (R->variant) {
    case GILBERT: {
        for (int i = 0; i < 7; i++) {  /* sorted (pile, down) pairs */
            hadd(&h, 1 + 64 * (uint64_t)s->down[i], s->cards + o, s->len[i]);
            o += s->len[i];
        }
        int n = s->len[7], w = s->w;
        if (w % GILBERT_CARDS_PER_DRAW == 0 || w == n) w = 0;
        memcpy(head, s->found, 8);
        head[8] = (uint8_t)w;
        head[9] = (uint8_t)n;
        hadd(&h, 1000, head, 10);
        hadd(&h, 2000, s->cards + o, n);
        break;
    }
    case SHAMROCKS:
        for (int i = 0; i < 18; i++) {
            hadd(&h, 1, s->cards + o, s->len[i]);
            o += s->len[i];
        }
        hadd(&h, 1000, s->found, 4);
        break;
    case GATE: {
        for (int i = 0; i < 8; i++) {
            hadd(&h, 1, s->cards + o, s->len[i]);
            o += s->len[i];
        }
        memcpy(head, s->found, 4);
        head[4] = s->len[8]; head[5] = s->len[9]; head[6] = s->len[10]; head[7] = s->w;
        hadd(&h, 1000, head, 8);
        hadd(&h, 2000, s->cards + o, s->ncards - o);  /* the pillars then the talon */
        break;
    }
    case CAPRICE: {
        int stock = s->len[12];
        if (stock) {  /* the piles in order, and how many cards the stock holds */
            memcpy(head, s->found, 8);
            hadd(&h, 1000, head, 8);
            hadd(&h, 2000, s->len, 13);
            hadd(&h, 2001, s->cards, s->ncards - stock);
            break;
        }
        for (int i = 0; i < 12; i++) {
            hadd(&h, 1, s->cards + o, s->len[i]);
            o += s->len[i];
        }
        hadd(&h, 1000, s->found, 8);
        break;
    }
    }
    h.b |= 1;  /* never the empty slot */
    return h;
}

/* The exact position (the reference's shortcut compares positions, not keys). */
static H128 exact_of(const State *s) {
    H128 h = {0, 0};
    hadd(&h, 7, (const uint8_t *)s, (int)(HEAD + s->ncards));
    h.b |= 1;
    return h;
}

typedef struct {
    H128 *slots;
    size_t cap, used;
} Table;

static int table_init(Table *t, size_t cap) {
    t->cap = cap; t->used = 0;
    t->slots = calloc(cap, sizeof(H128));
    return t->slots != NULL;
}
static void table_free(Table *t) { free(t->slots); t->slots = NULL; }

/* Fetch the cache line where h's probe starts into the cache (a hint; the table may grow
 * before the probe, which then misses as it would have). */
static inline void table_prefetch(const Table *t, H128 h) {
    __builtin_prefetch(&t->slots[h.a & (t->cap - 1)], 1);
}

/* Insert h: 1 if new, 0 if there, -1 out of memory. */
static int table_add(Table *t, H128 h) {
    if ((t->used + 1) * 10 > t->cap * 7) {
        size_t ncap = t->cap * 2;
        H128 *ns = calloc(ncap, sizeof(H128));
        if (!ns) return -1;
        for (size_t i = 0; i < t->cap; i++) {
            H128 e = t->slots[i];
            if (!e.b) continue;
            size_t j = e.a & (ncap - 1);
            while (ns[j].b) j = (j + 1) & (ncap - 1);
            ns[j] = e;
        }
        free(t->slots);
        t->slots = ns; t->cap = ncap;
    }
    size_t j = h.a & (t->cap - 1);
    while (t->slots[j].b) {
        if (t->slots[j].a == h.a && t->slots[j].b == h.b) return 0;
        j = (j + 1) & (t->cap - 1);
    }
    t->slots[j] = h;
    t->used++;
    return 1;
}

/* ---- CPython's Mersenne Twister (random.Random), state in and out -------------------- */
typedef struct { uint32_t mt[624]; int index; } MT;

static uint32_t mt_next(MT *m) {
    static const uint32_t mag01[2] = {0x0U, 0x9908b0dfU};
    uint32_t y;
    if (m->index >= 624) {
        int kk;
        for (kk = 0; kk < 624 - 397; kk++) {
            y = (m->mt[kk] & 0x80000000U) | (m->mt[kk + 1] & 0x7fffffffU);
            m->mt[kk] = m->mt[kk + 397] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        for (; kk < 623; kk++) {
            y = (m->mt[kk] & 0x80000000U) | (m->mt[kk + 1] & 0x7fffffffU);
            m->mt[kk] = m->mt[kk + (397 - 624)] ^ (y >> 1) ^ mag01[y & 0x1U];
        }
        y = (m->mt[623] & 0x80000000U) | (m->mt[0] & 0x7fffffffU);
        m->mt[623] = m->mt[396] ^ (y >> 1) ^ mag01[y & 0x1U];
        m->index = 0;
    }
    y = m->mt[m->index++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    y ^= (y >> 18);
    return y;
}
static double mt_random(MT *m) {
    uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}
static void mt_seed(MT *m, uint32_t seed) {  /* random.Random(seed) for 0 <= seed < 2**32 */
    uint32_t *mt = m->mt;
    mt[0] = 19650218U;
    for (int i = 1; i < 624; i++) mt[i] = 1812433253U * (mt[i - 1] ^ (mt[i - 1] >> 30)) + (uint32_t)i;
    int i = 1, j = 0;
    for (int k = 624; k; k--) {  /* init_by_array with the key [seed] */
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + seed + (uint32_t)j;
        i++; j++;
        if (i >= 624) { mt[0] = mt[623]; i = 1; }
        if (j >= 1) j = 0;
    }
    for (int k = 623; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= 624) { mt[0] = mt[623]; i = 1; }
    }
    mt[0] = 0x80000000U;
    m->index = 624;
}

/* The generator as a Python object: the restarts' one generator, kept in the core. */
typedef struct {
    PyObject_HEAD
    MT mt;
} RandomObject;

static PyObject *random_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    unsigned long seed;
    (void)kw;
    if (!PyArg_ParseTuple(args, "k", &seed)) return NULL;
    if (seed > 0xffffffffUL) return PyErr_Format(PyExc_ValueError, "a seed below 2**32");
    RandomObject *self = (RandomObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    mt_seed(&self->mt, (uint32_t)seed);
    return (PyObject *)self;
}

static PyObject *random_random(PyObject *self, PyObject *unused) {
    (void)unused;
    return PyFloat_FromDouble(mt_random(&((RandomObject *)self)->mt));
}

static PyMethodDef random_methods[] = {
    {"random", random_random, METH_NOARGS, "The next float in [0, 1), as random.Random's."},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject RandomType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "service.solver._core.Random",
    .tp_basicsize = sizeof(RandomObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Random(seed): CPython's Mersenne Twister seeded as random.Random(seed), for "
              "the search's shaken restarts.",
    .tp_new = random_new,
    .tp_methods = random_methods,
};

/* ---- steps ------------------------------------------------------------------------ */
typedef struct {
    Step *v;
    size_t n, cap;
} Steps;

static int steps_reserve(Steps *st, size_t extra) {
    if (st->n + extra <= st->cap) return 1;
    size_t ncap = st->cap ? st->cap * 2 : 1024;
    while (ncap < st->n + extra) ncap *= 2;
    Step *nv = realloc(st->v, ncap * sizeof(Step));
    if (!nv) return 0;
    st->v = nv; st->cap = ncap;
    return 1;
}
/* More steps than any position lists (the most: Gilbert, under 450 = 8 foundations x 9
 * places + 7 piles x (13 run lengths x 2 bases + 2 foundations + 6 spaces) + 9 waste
 * cards x 10 places; Caprice under 400, Gate under 550 with its moves across paired,
 * Shamrocks under 200 moves, and its combined steps at most SH_COMBINED_MAX,
 * shamrocks.py's COMBINED_MAX). */
#define MAXSTEPS 4096

static inline void add(Step *out, int *n, int prio, int gain, int kind, int a, int b, int c) {
    Step s; s.prio = (int16_t)prio; s.gain = (int8_t)gain; s.kind = (uint8_t)kind;
    s.a = (uint8_t)a; s.b = (uint8_t)b; s.c = (uint8_t)c; s.d = 0;
    out[(*n)++] = s;
}

/* Stable insertion sorts. */
static void sort_gain_prio(Step *v, int n) {  /* (-gain, prio) */
    for (int i = 1; i < n; i++) {
        Step x = v[i];
        int j = i - 1;
        while (j >= 0 && (v[j].gain < x.gain || (v[j].gain == x.gain && v[j].prio > x.prio))) {
            v[j + 1] = v[j]; j--;
        }
        v[j + 1] = x;
    }
}
static void sort_prio(Step *v, int n) {
    for (int i = 1; i < n; i++) {
        Step x = v[i];
        int j = i - 1;
        while (j >= 0 && v[j].prio > x.prio) { v[j + 1] = v[j]; j--; }
        v[j + 1] = x;
    }
}

/* --- Gilbert --- */
static int needs_no_base(const uint8_t *found, int c) {
    int r = RANK(c);
    if (r <= 2) return 1;
    int red = RED(c);
    for (int s = 0; s < 4; s++) {
        int low = found[s] + found[4 + s] == 13 ? 13 : found[s];
        if (SRED(s) != red) { if (low < r - 1) return 0; }
        else if (low < r - 2) return 0;
    }
    return 1;
}

static int alt_run(const State *s, int st, int n, int lowest) {
    /* how many cards from the top of cards[st + lowest .. st + n) run down in alternating colours */
    int k = 1;
    while (n - k - 1 >= lowest) {
        int below = s->cards[st + n - k - 1], above = s->cards[st + n - k];
        if (RANK(below) != RANK(above) + 1 || RED(below) == RED(above)) break;
        k++;
    }
    return k;
}

static int gilbert_steps(const Rules *R, const State *s, Step *out) {
    int n = 0, off[8], tops[7], fs[2];
    off[0] = 0;
    for (int i = 0; i < 7; i++) {
        off[i + 1] = off[i] + s->len[i];
        tops[i] = s->len[i] ? s->cards[off[i] + s->len[i] - 1] : -1;
    }
    /* safe: a tableau top no card still in play could be built on */
    for (int i = 0; i < 7; i++) {
        if (tops[i] < 0) continue;
        int c = tops[i];
        if (accepts(s, c, fs) && needs_no_base(s->found, c)) {
            add(out, &n, TO_FOUNDATION, 0, K_T2F, i, 1, fs[0]);
            return n;
        }
    }
    int hasty = R->hasty, prune = R->pruning;
    for (int f = 0; f < 8; f++) {
        int k = s->found[f];
        if (!k) continue;
        int c = ftop(f, k), nf = accepts(s, c, fs);
        for (int g = 0; g < nf; g++)
            if (fs[g] != f) add(out, &n, FROM_FOUNDATION, 0, K_F2F, f, 0, fs[g]);
        if (hasty) continue;
        if (prune) {
            uint8_t less[8];
            memcpy(less, s->found, 8);
            less[f]--;
            if (needs_no_base(less, c)) continue;
        }
        for (int j = 0; j < 7; j++)
            if (tops[j] >= 0 && alt_on(c, tops[j])) add(out, &n, FROM_FOUNDATION, -2, K_F2T, f, 0, j);
        if (RANK(c) == 7)
            for (int j = 0; j < 7; j++)
                if (tops[j] < 0) add(out, &n, FROM_FOUNDATION, -2, K_F2T, f, 0, j);
    }
    for (int i = 0; i < 7; i++) {
        int len = s->len[i];
        if (!len) continue;
        int d = s->down[i], st = off[i];
        int run = alt_run(s, st, len, d);
        for (int k = 1; k <= run; k++) {
            int c = s->cards[st + len - k];
            int bare = len - k == d;
            int turn = bare && d ? 1 : 0;
            int prio = bare ? REVEALS : (alt_on(c, s->cards[st + len - k - 1]) ? SETTLED : TABLEAU);
            if (k == 1) {
                int nf = accepts(s, c, fs);
                for (int g = 0; g < nf; g++) add(out, &n, TO_FOUNDATION, 2 + turn, K_T2F, i, 1, fs[g]);
            }
            if (hasty && !bare && !accepts(s, s->cards[st + len - k - 1], fs)) continue;
            for (int j = 0; j < 7; j++)
                if (j != i && tops[j] >= 0 && alt_on(c, tops[j]))
                    add(out, &n, prio, turn, K_T2T, i, k, j);
            if (RANK(c) == 7)
                for (int j = 0; j < 7; j++)
                    if (tops[j] < 0) add(out, &n, prio, turn, K_T2T, i, k, j);
        }
    }
    /* waste cards that draws bring to the top (_reachable), in its order */
    int size = s->len[7], w = s->w;
    if (size) {
        int pos[64], drw[64], np = 0;
        uint8_t have[64];
        memset(have, 0, sizeof have);
        int draws = 0, p = w;
        for (;;) {
            if (p && !have[p]) { have[p] = 1; pos[np] = p; drw[np++] = draws; }
            if (p == size) break;
            p = p + GILBERT_CARDS_PER_DRAW < size ? p + GILBERT_CARDS_PER_DRAW : size;
            draws++;
        }
        draws++;
        p = 0;
        while (p < size) {
            p = p + GILBERT_CARDS_PER_DRAW < size ? p + GILBERT_CARDS_PER_DRAW : size;
            draws++;
            if (!have[p]) { have[p] = 1; pos[np] = p; drw[np++] = draws; }
        }
        int tst = off[7];
        for (int q = 0; q < np; q++) {
            int pp = pos[q], dr = drw[q];
            int c = s->cards[tst + pp - 1];
            int prio = FROM_WASTE + dr;
            int nf = accepts(s, c, fs);
            for (int g = 0; g < nf; g++) add(out, &n, TO_FOUNDATION + dr, 2, K_TAL2F, pp, dr, fs[g]);
            for (int j = 0; j < 7; j++)
                if (tops[j] >= 0 && alt_on(c, tops[j])) add(out, &n, prio, 0, K_TAL2T, pp, dr, j);
            if (RANK(c) == 7)
                for (int j = 0; j < 7; j++)
                    if (tops[j] < 0) add(out, &n, prio, 0, K_TAL2T, pp, dr, j);
        }
    }
    sort_gain_prio(out, n);
    return n;
}

static void gilbert_play(State *s, const Step *st) {
    switch (st->kind) {
    case K_TAL2F: case K_TAL2T: {
        int x = st->a, at = pstart(s, 7) + x - 1;
        uint8_t c = s->cards[at];
        cut(s, at, 1);
        s->len[7]--;
        s->w = (uint8_t)(x - 1);
        if (st->kind == K_TAL2F) s->found[st->c]++;
        else push(s, st->c, &c, 1);
        break;
    }
    case K_F2F:
        s->found[st->a]--; s->found[st->c]++;
        break;
    case K_F2T: {
        uint8_t c = (uint8_t)ftop(st->a, s->found[st->a]);
        s->found[st->a]--;
        push(s, st->c, &c, 1);
        break;
    }
    case K_T2F: case K_T2T: {
        int x = st->a, y = st->b;
        if (st->kind == K_T2F) { pop_to(s, x, 1, NULL); s->found[st->c]++; }
        else move_top(s, x, y, st->c);
        if (s->len[x] == s->down[x] && s->down[x]) s->down[x]--;
        break;
    }
    }
}

/* --- Shamrocks --- */
enum { SH_UP = 1, SH_BACK = 2, SH_ACROSS = 3 };

static int sh_moves(const State *s, int pruning, Step *out) {  /* Shamrocks._steps */
    int n = 0, off[19], tops[18];
    off[0] = 0;
    for (int i = 0; i < 18; i++) {
        off[i + 1] = off[i] + s->len[i];
        tops[i] = s->len[i] ? s->cards[off[i] + s->len[i] - 1] : -1;
    }
    /* by_rank[r]: the fans that take a card of rank r (a top one rank away, fewer than 3 cards) */
    uint32_t by_rank[15] = {0};
    for (int j = 0; j < 18; j++)
        if (s->len[j] > 0 && s->len[j] < 3) {
            int r = RANK(tops[j]);
            by_rank[r - 1] |= 1u << j;
            by_rank[r + 1] |= 1u << j;
        }
    for (int f = 0; f < 4; f++) {
        int k = s->found[f];
        if (!k) continue;
        for (uint32_t m = by_rank[k]; m; m &= m - 1)
            add(out, &n, FROM_FOUNDATION, -1, K_F2T, f, 0, __builtin_ctz(m));
    }
    for (int i = 0; i < 18; i++) {
        if (!s->len[i]) continue;
        int c = tops[i];
        if (s->found[SUIT(c)] == RANK(c) - 1) add(out, &n, TO_FOUNDATION, 1, K_T2F, i, 1, SUIT(c));
        if (pruning && s->len[i] == 1) continue;  /* Shamrocks._steps: no lone card across */
        int prio = s->len[i] == 1 ? REVEALS
                   : adj_any(c, s->cards[off[i] + s->len[i] - 2]) ? SETTLED : TABLEAU;
        for (uint32_t m = by_rank[RANK(c)] & ~(1u << i); m; m &= m - 1)
            add(out, &n, prio, 0, K_T2T, i, 1, __builtin_ctz(m));
    }
    return n;
}

static int dead(const Rules *R, const State *s);
static void simple_play(State *s, const Step *st);

/* One move of a combined step: from x to y (a fan, or 18 + f for foundation f). */
static Step sh_part(int x, int y) {
    Step p = {0};
    if (x >= 18) { p.kind = K_F2T; p.a = (uint8_t)(x - 18); p.c = (uint8_t)y; }
    else if (y >= 18) { p.kind = K_T2F; p.a = (uint8_t)x; p.b = 1; p.c = (uint8_t)(y - 18); }
    else { p.kind = K_T2T; p.a = (uint8_t)x; p.b = 1; p.c = (uint8_t)y; }
    return p;
}
static int sh_from(const Step *m) { return m->kind == K_F2T ? 18 + m->a : m->a; }
static int sh_to(const Step *m) { return m->kind == K_T2F ? 18 + m->c : m->c; }

#define SH_COMBINED_MAX 2000
/* Shamrocks._combined (proved there): each move across only with a move that uses it. */
static int sh_combined(const Rules *R, const State *s, Step *out, int n) {
    Step moves[MAXSTEPS], after[MAXSTEPS];
    memcpy(moves, out, n * sizeof(Step));
    int k = 0;
    for (int q = 0; q < n; q++) {
        const Step *st = &moves[q];
        if (st->kind != K_T2T) { out[k++] = *st; continue; }
        int a = st->a, b = st->c;
        State s1 = *s;
        simple_play(&s1, st);
        if (R->cut_dead && dead(R, &s1)) continue;
        int na = sh_moves(&s1, 1, after);
        for (int r = 0; r < na; r++) {
            const Step *y = &after[r];
            int x = y->a, z = y->c, use;
            if (y->kind == K_T2F) use = x == a;
            else if (y->kind == K_F2T) use = z == a || z == b;
            else use = x != b && (x == a || z == a || z == b);
            if (!use) continue;
            if (k >= SH_COMBINED_MAX) goto fallback;
            Step c = {st->prio, (int8_t)(st->gain + y->gain), K_SH2, (uint8_t)a, (uint8_t)b,
                      (uint8_t)sh_from(y), (uint8_t)sh_to(y)};
            out[k++] = c;
        }
        if (s1.len[a] < 2) continue;  /* the uncovered card lies alone: it does not go across */
        int u = ptop(&s1, a);
        for (int r = 0; r < na; r++) {
            const Step *y = &after[r];
            int a2 = y->a, b2 = y->c;
            if (y->kind != K_T2T || a2 == a || a2 == b || b2 == a || b2 == b) continue;
            int o2 = pstart(&s1, a2), l2 = s1.len[a2];
            for (int t = 0; t < 2; t++) {
                int j = t == 0 ? (a2 < b2 ? a2 : b2) : (a2 < b2 ? b2 : a2);
                int top = s1.cards[o2 + l2 - (j == a2 ? 2 : 1)];
                if ((j == a2 || s1.len[b2] == 1) && adj_any(top, u)) {
                    if (k >= SH_COMBINED_MAX) goto fallback;
                    Step c = {st->prio, 0, K_SH3, (uint8_t)a, (uint8_t)b, (uint8_t)a2,
                              (uint8_t)(b2 | (j == b2 ? 32 : 0))};
                    out[k++] = c;
                }
            }
        }
    }
    return k;
fallback:  /* more than SH_COMBINED_MAX: the moves themselves (as shamrocks.py) */
    memcpy(out, moves, n * sizeof(Step));
    return n;
}

static int shamrocks_steps(const Rules *R, const State *s, Step *out) {
    int n = sh_moves(s, R->pruning, out);
    if (R->hasty) {
        for (int q = 0; q < n; q++)
            if (out[q].kind == K_T2F) { out[0] = out[q]; return 1; }
    }
    if (R->pruning && !R->hasty) n = sh_combined(R, s, out, n);  /* the main search */
    sort_gain_prio(out, n);
    return n;
}

/* The moves of a K_SH2 or K_SH3 step, in order, into sub; their count. */
static int sh_parts(const Step *st, Step *sub) {
    sub[0] = sh_part(st->a, st->b);
    if (st->kind == K_SH2) { sub[1] = sh_part(st->c, st->d); return 2; }
    sub[1] = sh_part(st->c, st->d & 31);
    sub[2] = sh_part(st->a, st->d & 32 ? st->d & 31 : st->c);
    return 3;
}

static void simple_play(State *s, const Step *st) {  /* shamrocks, caprice moves */
    switch (st->kind) {
    case K_F2T: {
        uint8_t c = (uint8_t)ftop(st->a, s->found[st->a]);
        s->found[st->a]--;
        push(s, st->c, &c, 1);
        break;
    }
    case K_T2F:
        pop_to(s, st->a, 1, NULL);
        s->found[st->c]++;
        break;
    case K_T2T:
        move_top(s, st->a, st->b, st->c);
        break;
    case K_SH2: case K_SH3: {  /* Shamrocks._combined: two or three moves */
        Step sub[3];
        int m = sh_parts(st, sub);
        for (int i = 0; i < m; i++) simple_play(s, &sub[i]);
        break;
    }
    case K_DRAW: {  /* caprice's deal: the stock's top onto tableau/0, the next onto 1, ... */
        int ss = pstart(s, 12), sl = s->len[12];
        uint8_t dealt[12];
        int k = sl < 12 ? sl : 12;
        for (int i = 0; i < k; i++) dealt[i] = s->cards[ss + sl - 1 - i];
        cut(s, ss + sl - k, k);
        s->len[12] -= k;
        for (int i = 0; i < k; i++) push(s, i, &dealt[i], 1);
        break;
    }
    }
}

/* --- Gate --- */
static int low_enough(const uint8_t *found, int c) {
    int r = RANK(c);
    if (r <= 2) return 1;
    int red = RED(c);
    for (int s = 0; s < 4; s++) {
        int need = SRED(s) != red ? r - 1 : r - 2;
        if (found[s] < need) return 0;
    }
    return 1;
}

/* _awaited: some card could be built on c at once and is not already on a card it is
 * built on (the waste's top, a pillar's, a bar's top alone or on a card it does not build on) */
static int gate_awaited(const State *s, const int *off, const int *tops, int w, int tst, int c) {
    if (w && alt_on(s->cards[tst + w - 1], c)) return 1;
    for (int j = 0; j < 10; j++) {
        if (tops[j] < 0 || !alt_on(tops[j], c)) continue;
        if (j < 8 && s->len[j] > 1 && alt_on(tops[j], s->cards[off[j] + s->len[j] - 2])) continue;
        return 1;
    }
    return 0;
}

/* Gate._down_for_use (proved in gate.py): with single_card_moves, the top card c of
 * foundation f comes down onto bar j only with a move that uses it, in the reference's
 * order (Gate.moves of the position after it): a card onto c (the waste's, a pillar's,
 * another foundation's, another bar's top), or the card it uncovers onto a bar; then
 * c, a second foundation's top onto a bar, and the card that one uncovers onto c. */
static void gate_down_for_use(const State *s, const int *tops, int w, int tst, int f, int j,
                              int hasty, Step *out, int *n) {
    int k = s->found[f], c = CARD(f, k), t[10];
    uint8_t less[4];
    memcpy(less, s->found, 4);
    less[f]--;
    if (low_enough(less, c)) return;  /* its only step would be back up (safe) */
    for (int i = 0; i < 10; i++) t[i] = tops[i];
    t[j] = c;
    Step st;
    st.prio = FROM_FOUNDATION; st.gain = 0; st.kind = K_DOWN2; st.a = (uint8_t)f;
    st.c = (uint8_t)j;
#define DOWN2(from, to) do { st.b = (uint8_t)(from); st.d = (uint8_t)(to); out[(*n)++] = st; } while (0)
    if (w && alt_on(s->cards[tst + w - 1], c)) DOWN2(10, j);
    for (int r = 8; r < 10; r++)
        if (t[r] >= 0 && alt_on(t[r], c)) DOWN2(r, j);
    for (int g = 0; g < 4 && !hasty; g++) {  /* hasty: none from a foundation */
        int m = g == f ? k - 1 : s->found[g];
        if (!m) continue;
        int cg = CARD(g, m);
        if (g != f) {
            if (alt_on(cg, c)) DOWN2(11 + g, j);
            continue;
        }
        for (int j2 = 0; j2 < 8; j2++)
            if (t[j2] >= 0 && alt_on(cg, t[j2])) DOWN2(11 + g, j2);
    }
    for (int i = 0; i < 8; i++)
        if (i != j && t[i] >= 0 && alt_on(t[i], c)) DOWN2(i, j);
#undef DOWN2
    if (hasty) return;
    st.kind = K_DOWN3;
    for (int f1 = 0; f1 < 4; f1++) {
        int n1 = s->found[f1];
        if (f1 == f || n1 < 2 || !alt_on(CARD(f1, n1 - 1), c)) continue;
        int c1 = CARD(f1, n1);
        less[f1]--;
        int back = low_enough(less, c1);  /* the same for c1 */
        less[f1]++;
        if (back) continue;
        for (int j1 = 0; j1 < 8; j1++)
            if (t[j1] >= 0 && alt_on(c1, t[j1])) {
                st.b = (uint8_t)f1; st.d = (uint8_t)j1;
                out[(*n)++] = st;
            }
    }
}

/* Gate._across_alone: a second deferrable move could be used with c (on b, bar i) going
 * across onto bar j: a card b may go onto that is a foundation's top, or a top or second
 * card of another bar; or a card that may go onto b or c second on a foundation or a bar. */
static int gate_across_alone(const State *s, const int *off, int i, int j) {
    int b = s->cards[off[i] + s->len[i] - 2], c = s->cards[off[i] + s->len[i] - 1];
    for (int g = 0; g < 4; g++) {
        int m = s->found[g];
        if (m && alt_on(b, CARD(g, m))) return 1;
        if (m > 1 && (alt_on(CARD(g, m - 1), b) || alt_on(CARD(g, m - 1), c))) return 1;
    }
    for (int k = 0; k < 8; k++) {
        int len = s->len[k];
        if (k == i || k == j || !len) continue;
        if (alt_on(b, s->cards[off[k] + len - 1])) return 1;
        if (len > 1) {
            int x = s->cards[off[k] + len - 2];
            if (alt_on(b, x) || alt_on(x, b) || alt_on(x, c)) return 1;
        }
    }
    return 0;
}

/* Gate._across_for_use (proved in gate.py): the top card c of bar i, on the card b it is
 * built on, moves onto bar j only with a move that uses it, in the reference's order
 * (Gate.moves of the position after it): from the waste, a pillar, a foundation or a
 * bar onto b or c, or b up or onto a bar (full rules only: the restarts keep the move). */
static void gate_across_for_use(const State *s, const int *tops, int w, int tst, int i, int j,
                                Step *out, int *n) {
    int t[10], b = s->cards[pstart(s, i) + s->len[i] - 2];
    for (int k = 0; k < 10; k++) t[k] = tops[k];
    t[j] = t[i];
    t[i] = b;
    Step st;
    st.prio = SETTLED; st.gain = 0; st.kind = K_ACROSS2; st.a = (uint8_t)i; st.c = (uint8_t)j;
#define ACROSS2(from, to) do { st.b = (uint8_t)(from); st.d = (uint8_t)(to); out[(*n)++] = st; } while (0)
    int lo = i < j ? i : j, hi = i < j ? j : i;
    if (w) {
        int c = s->cards[tst + w - 1];
        if (alt_on(c, t[lo])) ACROSS2(10, lo);
        if (alt_on(c, t[hi])) ACROSS2(10, hi);
    }
    for (int r = 8; r < 10; r++) {
        if (t[r] < 0) continue;
        if (alt_on(t[r], t[lo])) ACROSS2(r, lo);
        if (alt_on(t[r], t[hi])) ACROSS2(r, hi);
    }
    for (int g = 0; g < 4; g++) {
        int m = s->found[g];
        if (!m) continue;
        int cg = CARD(g, m);
        if (alt_on(cg, t[lo])) ACROSS2(11 + g, lo);
        if (alt_on(cg, t[hi])) ACROSS2(11 + g, hi);
    }
    for (int k = 0; k < 8; k++) {
        if (t[k] < 0 || k == j) continue;
        int c = t[k];
        if (k == i) {
            if (s->found[SUIT(b)] == RANK(b) - 1) ACROSS2(i, 20 + SUIT(b));
            for (int q = 0; q < 8; q++)
                if (q != i && t[q] >= 0 && alt_on(b, t[q])) ACROSS2(i, q);
            continue;
        }
        if (alt_on(c, t[lo])) ACROSS2(k, lo);
        if (alt_on(c, t[hi])) ACROSS2(k, hi);
    }
#undef ACROSS2
}

static int gate_steps(const Rules *R, const State *s, Step *out) {
    int n = 0, off[12], tops[10];
    /* Gate.successors: the foundations' cards come down with a use (single cards, full rules) */
    int for_use = R->pruning && !R->runs_move;
    off[0] = 0;
    for (int i = 0; i < 11; i++) {
        off[i + 1] = off[i] + s->len[i];
        if (i < 10) tops[i] = s->len[i] ? s->cards[off[i] + s->len[i] - 1] : -1;
    }
    int w = s->w, tl = s->len[10], tst = off[10];
    uint64_t bar_tops = 0;
    for (int j = 0; j < 8; j++)
        if (tops[j] >= 0) bar_tops |= 1ULL << tops[j];
    uint64_t onto_bars = built_on(bar_tops);  /* the cards some bar's top may take */
#define ONTO_A_BAR(c) (onto_bars >> (c) & 1)
    /* safe */
    int no_pillars = !s->len[8] && !s->len[9];
    for (int i = 0; i < 8; i++) {
        if (s->len[i] && (s->len[i] > 1 || no_pillars)) {
            int c = tops[i];
            if (s->found[SUIT(c)] == RANK(c) - 1 && low_enough(s->found, c)) {
                add(out, &n, TO_FOUNDATION, 0, K_T2F, i, 1, SUIT(c));
                return n;
            }
        }
    }
    if (w) {
        int c = s->cards[tst + w - 1];
        if (s->found[SUIT(c)] == RANK(c) - 1 && low_enough(s->found, c)) {
            add(out, &n, TO_FOUNDATION, 0, K_TAL2F, w, 0, SUIT(c));
            return n;
        }
    }
    if (R->pruning && !w && tl > 0) {  /* Gate.successors: a draw alone (proved in gate.py) */
        add(out, &n, DRAWS, 0, K_DRAW, 0, 0, 0);
        return n;
    }
    if (w) {
        int c = s->cards[tst + w - 1];
        if (s->found[SUIT(c)] == RANK(c) - 1) add(out, &n, TO_FOUNDATION, 0, K_TAL2F, w, 0, SUIT(c));
        for (int j = 0; j < 8 && ONTO_A_BAR(c); j++)
            if (tops[j] >= 0 && alt_on(c, tops[j])) add(out, &n, FROM_WASTE, 0, K_TAL2T, w, 0, j);
        for (int j = 0; j < 8; j++)
            if (tops[j] < 0) add(out, &n, FROM_WASTE, 0, K_TAL2T, w, 0, j);
    } else if (tl > 0) {
        for (int j = 0; j < 8; j++)
            if (tops[j] < 0) add(out, &n, FROM_WASTE, 0, K_STOCK2T, 0, 0, j);
    }
    for (int r = 8; r < 10; r++) {
        if (!s->len[r]) continue;
        int c = tops[r];
        if (s->found[SUIT(c)] == RANK(c) - 1) add(out, &n, TO_FOUNDATION, 0, K_T2F, r, 1, SUIT(c));
        for (int j = 0; j < 8 && ONTO_A_BAR(c); j++)
            if (tops[j] >= 0 && alt_on(c, tops[j])) add(out, &n, REVEALS, 0, K_T2T, r, 1, j);
    }
    for (int f = 0; f < 4; f++) {
        int k = s->found[f];
        if (!k) continue;
        int c = CARD(f, k);
        if (!ONTO_A_BAR(c) || (R->hasty && !gate_awaited(s, off, tops, w, tst, c)))
            continue;  /* gate.py */
        for (int j = 0; j < 8; j++)
            if (tops[j] >= 0 && alt_on(c, tops[j])) {
                if (for_use) gate_down_for_use(s, tops, w, tst, f, j, R->hasty, out, &n);
                else add(out, &n, FROM_FOUNDATION, 0, K_F2T, f, 0, j);
            }
    }
    for (int i = 0; i < 8; i++) {
        int len = s->len[i];
        if (!len) continue;
        int st = off[i];
        int run = R->runs_move ? alt_run(s, st, len, 0) : 1;
        for (int k = 1; k <= run; k++) {
            int c = s->cards[st + len - k];
            int rest = len - k;
            if (k == 1 && s->found[SUIT(c)] == RANK(c) - 1)
                add(out, &n, TO_FOUNDATION, 0, K_T2F, i, 1, SUIT(c));
            if (!ONTO_A_BAR(c)) continue;
            int prio = !rest ? REVEALS : alt_on(c, s->cards[st + rest - 1]) ? SETTLED : TABLEAU;
            int across = prio == SETTLED && for_use && !R->hasty;  /* Gate._across_for_use */
            for (int j = 0; j < 8; j++)
                if (j != i && tops[j] >= 0 && alt_on(c, tops[j])) {
                    if (across && !gate_across_alone(s, off, i, j))
                        gate_across_for_use(s, tops, w, tst, i, j, out, &n);
                    else add(out, &n, prio, 0, K_T2T, i, k, j);
                }
        }
    }
#undef ONTO_A_BAR
    if (w < tl) add(out, &n, DRAWS, 0, K_DRAW, 0, 0, 0);
    if (R->hasty) {  /* Rules.successors' hasty mode: the first move to a foundation alone */
        for (int q = 0; q < n; q++)
            if (out[q].prio == TO_FOUNDATION) { out[0] = out[q]; return 1; }
    }
    sort_prio(out, n);
    return n;
}

static void gate_refill(State *s, int i) {
    /* a bar left empty takes the top of the fuller pillar (the left one on a tie) */
    if (i >= 8 || s->len[i]) return;
    int l = s->len[8], r = s->len[9];
    if (!l && !r) return;
    move_top(s, l >= r ? 8 : 9, 1, i);
}

/* One move of a combined Gate step: from `from` (a bar or pillar 0..9, the waste 10,
 * foundation 11 + g) onto bar `to`, or onto foundation to - 20. */
static Step gate_part(int from, int to) {
    Step p = {0};
    p.c = (uint8_t)(to >= 20 ? to - 20 : to);
    if (to >= 20) { p.kind = K_T2F; p.a = (uint8_t)from; p.b = 1; }
    else if (from < 10) { p.kind = K_T2T; p.a = (uint8_t)from; p.b = 1; }
    else if (from == 10) p.kind = K_TAL2T;
    else { p.kind = K_F2T; p.a = (uint8_t)(from - 11); }
    return p;
}

/* The moves of a K_DOWN2, K_DOWN3 or K_ACROSS2 step, in order, into sub; their count. */
static int gate_parts(const Step *st, Step *sub) {
    if (st->kind == K_ACROSS2) {  /* bar a onto bar c, then from b to d */
        sub[0] = gate_part(st->a, st->c);
        sub[1] = gate_part(st->b, st->d);
        return 2;
    }
    sub[0] = gate_part(11 + st->a, st->c);  /* foundation a onto bar c */
    if (st->kind == K_DOWN2) {  /* then from b (bar, pillar, waste, foundation) onto bar d */
        sub[1] = gate_part(st->b, st->d);
        return 2;
    }
    sub[1] = gate_part(11 + st->b, st->d);  /* foundation b onto bar d, */
    sub[2] = gate_part(11 + st->b, st->c);  /* then its next card onto bar c */
    return 3;
}

static void gate_play(State *s, const Step *st) {
    switch (st->kind) {
    case K_DOWN2: case K_DOWN3: case K_ACROSS2: {
        Step sub[3];
        int m = gate_parts(st, sub);
        for (int i = 0; i < m; i++) gate_play(s, &sub[i]);
        break;
    }
    case K_TAL2F: case K_TAL2T: {
        int at = pstart(s, 10) + s->w - 1;
        uint8_t c = s->cards[at];
        cut(s, at, 1);
        s->len[10]--;
        s->w--;
        if (st->kind == K_TAL2F) s->found[st->c]++;
        else push(s, st->c, &c, 1);
        break;
    }
    case K_STOCK2T: {
        int at = pstart(s, 10);
        uint8_t c = s->cards[at];
        cut(s, at, 1);
        s->len[10]--;
        s->w = 0;
        push(s, st->c, &c, 1);
        break;
    }
    case K_T2F:
        pop_to(s, st->a, 1, NULL);
        s->found[st->c]++;
        gate_refill(s, st->a);
        break;
    case K_T2T: {
        uint8_t tmp[MAXCARDS];
        int k = st->b;
        pop_to(s, st->a, k, tmp);
        gate_refill(s, st->a);
        push(s, st->c, tmp, k);
        break;
    }
    case K_F2T: {
        uint8_t c = (uint8_t)CARD(st->a, s->found[st->a]);
        s->found[st->a]--;
        push(s, st->c, &c, 1);
        break;
    }
    case K_DRAW:
        s->w++;
        break;
    }
}

/* --- Caprice --- */
static int caprice_steps(const Rules *R, const State *s, Step *out) {
    int n = 0, off[13], tops[12], fs[2];
    off[0] = 0;
    for (int i = 0; i < 12; i++) {
        off[i + 1] = off[i] + s->len[i];
        tops[i] = s->len[i] ? s->cards[off[i] + s->len[i] - 1] : -1;
    }
    if (R->hasty) {
        for (int i = 0; i < 12; i++) {
            if (tops[i] < 0) continue;
            if (accepts(s, tops[i], fs)) {
                add(out, &n, TO_FOUNDATION, 0, K_T2F, i, 1, fs[0]);
                return n;
            }
        }
    }
    int stock = s->len[12];
    int empties[12], ne = 0;
    for (int j = 0; j < 12; j++)
        if (tops[j] < 0) empties[ne++] = j;
    int lone_to_empty = 1;
    if (!stock && ne) { ne = 1; lone_to_empty = 0; }
    /* takes[c]: the piles whose top is one rank from c in its suit (c + 1 and c - 1 in
     * the same suit, kept apart from the next suit by a gap: index suit * 15 + rank) */
    uint16_t takes[60] = {0};
    for (int j = 0; j < 12; j++)
        if (tops[j] >= 0) {
            int x = SUIT(tops[j]) * 15 + RANK(tops[j]);
            takes[x - 1] |= (uint16_t)(1u << j);
            takes[x + 1] |= (uint16_t)(1u << j);
        }
#define TAKES(c) (takes[SUIT(c) * 15 + RANK(c)])
    for (int f = 0; f < 8; f++) {
        int k = s->found[f];
        if (!k) continue;
        int c = ftop(f, k);
        for (uint32_t m = TAKES(c); m; m &= m - 1)
            add(out, &n, FROM_FOUNDATION, 0, K_F2T, f, 0, __builtin_ctz(m));
        for (int e = 0; e < ne; e++) add(out, &n, FROM_FOUNDATION, 0, K_F2T, f, 0, empties[e]);
    }
    for (int i = 0; i < 12; i++) {
        if (tops[i] < 0) continue;
        int c = tops[i], alone = s->len[i] == 1;
        int nf = accepts(s, c, fs);
        for (int g = 0; g < nf; g++) add(out, &n, TO_FOUNDATION, 0, K_T2F, i, 1, fs[g]);
        int prio = alone ? REVEALS : TABLEAU;
        for (uint32_t m = TAKES(c) & ~(1u << i); m; m &= m - 1)
            add(out, &n, prio, 0, K_T2T, i, 1, __builtin_ctz(m));
        if (alone && !lone_to_empty) continue;
        int eprio = alone ? SETTLED : TABLEAU;
        for (int e = 0; e < ne; e++) add(out, &n, eprio, 0, K_T2T, i, 1, empties[e]);
    }
    if (stock) add(out, &n, CAPRICE_DEAL, 0, K_DRAW, 0, 0, 0);
    sort_prio(out, n);
    return n;
}

/* ---- dead positions (Rules.dead; dead.py stay_stuck) -------------------------------- */
/* Shamrocks.dead and Gilbert.dead, proved in shamrocks.py and gilbert.py: the cards that
 * can never leave their piles, as the greatest fixpoint of dead.py's stay_stuck, with the
 * sets of cards as bit masks (Shamrocks and Gilbert test every position they reach: measured, the
 * test first written card by card cost half the search's speed, this a fifth). */
/* The cards with a lower card of their suit in `under` (and, if `between`, a higher one). */
static inline uint64_t kept_off_by(uint64_t under, int between) {
    uint64_t out = 0;
    for (int su = 0; su < 4; su++) {
        uint64_t u = (under >> (13 * su)) & SUIT13;
        if (!u) continue;
        uint64_t m = (SUIT13 << (__builtin_ctzll(u) + 1)) & SUIT13;
        if (between) m &= (1ULL << (63 - __builtin_clzll(u))) - 1;
        out |= m << (13 * su);
    }
    return out;
}

/* Gate.dead (single cards), proved in gate.py: C starts as every card of the bars, the
 * pillars and the waste; a card is dropped when no lower card of its suit is under a stuck
 * card, or it has a base in Top(C), or (a pillar's or the waste's card) some bar holds no
 * stuck card. Top(C) from the Kings down: a card not under a stuck one that is in a bar,
 * or (some bar holding no stuck card) in a pillar, the waste or the stock, or has a base
 * among them (a foundation's card below its top: and the next card of its suit). */
static int gate_dead(const State *s) {
    uint64_t below[MAXCARDS];  /* below[o + k]: the cards under index k of the pile at o */
    int start[11], top[11];    /* piles 0..7 bars, 8..9 pillars, 10 the waste */
    uint64_t stuck = 0, bars = 0, filler = 0;
    int o = 0;
    for (int i = 0; i < 11; i++) {
        int n = i < 10 ? s->len[i] : s->w;
        uint64_t m = 0;
        start[i] = o;
        top[i] = n;
        for (int k = 0; k < n; k++) {
            int c = s->cards[o + k];
            below[o + k] = m;
            m |= 1ULL << c;
        }
        stuck |= m;
        if (i < 8) bars |= m;
        else filler |= m;
        o += s->len[i];
    }
    for (int k = s->w; k < s->len[10]; k++) filler |= 1ULL << s->cards[start[10] + k];
    uint64_t hidden = 0;  /* the foundations' cards below their tops */
    for (int f = 0; f < 4; f++)
        if (s->found[f] > 1) hidden |= ((1ULL << (s->found[f] - 1)) - 1) << (13 * f);
    while (stuck) {
        uint64_t under = 0;  /* the cards below a stuck card */
        int blocked = 1;     /* every bar holds a stuck card */
        for (int i = 0; i < 11; i++) {
            int k = top[i] - 1;
            while (k >= 0 && !((stuck >> s->cards[start[i] + k]) & 1)) k--;
            if (k > 0) under |= below[start[i] + k];
            if (k < 0 && i < 8) blocked = 0;
        }
        uint64_t loose = ALL52 & ~under, possible = 0;
        uint64_t placed = bars | (blocked ? 0 : filler);
        for (int r = 13; r >= 1; r--) {
            uint64_t rank = cards_of(1ULL << (r - 1)) & loose;
            /* a foundation's card below its top: only once the next card came down */
            possible |= rank & (placed | (built_on(possible) & ~(hidden & ~(possible >> 1))));
        }
        uint64_t keep = stuck & kept_off_by(under, 0) & ~built_on(possible)
                        & (blocked ? ALL52 : bars);
        if (keep == stuck) return 1;
        stuck = keep;
    }
    return 0;
}

static int dead(const Rules *R, const State *s) {
    if (R->variant == GATE) return R->runs_move ? 0 : gate_dead(s);
    if (R->variant != SHAMROCKS && R->variant != GILBERT) return 0;
    int gil = R->variant == GILBERT, np = gil ? 7 : 18;
    uint64_t below[MAXCARDS];  /* below[o + k]: the cards under index k of the pile at o */
    int start[18];
    uint64_t stuck = 0, low = 0, bottom = 0;  /* the first C; index 0 or 1; index 0 */
    uint64_t tab = 0;  /* Gilbert: the cards in the tableau */
    int o = 0;
    for (int i = 0; i < np; i++) {
        int n = s->len[i];
        uint64_t m = 0;
        start[i] = o;
        for (int k = 0; k < n; k++) {
            int c = s->cards[o + k];
            below[o + k] = m;
            m |= 1ULL << c;
            if (k <= 1) low |= 1ULL << c;
            if (k == 0) bottom |= 1ULL << c;
            if (!gil || k <= s->down[i]) stuck |= 1ULL << c;
            if (gil) tab |= 1ULL << c;
        }
        o += n;
    }
    while (stuck) {
        uint64_t under = 0;  /* the cards below a stuck card */
        for (int i = 0; i < np; i++)
            for (int k = s->len[i] - 1; k > 0; k--)
                if ((stuck >> s->cards[start[i] + k]) & 1) { under |= below[start[i] + k]; break; }
        uint64_t possible, based;  /* the possible landings; the cards with one as a base */
        uint64_t to_empty = 0;  /* Gilbert: the Sevens an empty pile may take */
        if (gil) {
            /* The cards that may become a tableau top (gilbert.py _tops): from the Kings
             * down, a card not under a stuck one that is in the tableau, or has a base
             * among them, or is a Seven while some pile holds no stuck card. */
            int blocked = 1;  /* every pile holds a stuck card */
            for (int i = 0; i < 7 && blocked; i++) {
                int k = s->len[i] - 1;
                while (k >= 0 && !((stuck >> s->cards[start[i] + k]) & 1)) k--;
                if (k < 0) blocked = 0;
            }
            uint64_t loose = ALL52 & ~under;
            possible = 0;
            for (int r = 13; r >= 1; r--) {
                uint64_t rank = cards_of(1ULL << (r - 1)) & loose;
                uint64_t add = rank & (tab | (r == 7 && !blocked ? ALL52 : 0));
                add |= rank & built_on(possible);
                possible |= add;
            }
            based = built_on(possible);
            if (!blocked) to_empty = cards_of(1ULL << 6);
        } else {  /* (a), then (b): one rank away from a bottom; bases one rank away */
            possible = low & ~under;
            possible |= ALL52 & ~(under | stuck) & cards_of(next_to(ranks_of(bottom & ~under)));
            based = cards_of(next_to(ranks_of(possible)));
        }
        /* a lower (Gilbert: and a higher) card of the suit under a stuck one */
        uint64_t keep = stuck & kept_off_by(under, gil) & ~based & ~to_empty;
        if (keep == stuck) return 1;
        stuck = keep;
    }
    return 0;
}

/* ---- dispatch --------------------------------------------------------------------- */
static int gen_steps(const Rules *R, const State *s, Step *out) {
    switch (R->variant) {
    case GILBERT: return gilbert_steps(R, s, out);
    case SHAMROCKS: return shamrocks_steps(R, s, out);
    case GATE: return gate_steps(R, s, out);
    default: return caprice_steps(R, s, out);
    }
}
static void play(const Rules *R, const State *s, const Step *st, State *child) {
    *child = *s;
    switch (R->variant) {
    case GILBERT: gilbert_play(child, st); break;
    case GATE: gate_play(child, st); break;
    default: simple_play(child, st); break;
    }
}
static int is_won(const Rules *R, const State *s) { return sum_found(s) == R->total; }
enum { GUIDE_SCORE, GUIDE_COUNT, GUIDE_BURIED, GUIDE_FULL_FANS };  /* rules.GUIDES */
static int score_of(const Rules *R, const State *s) {
    if (R->guide == GUIDE_COUNT) return sum_found(s);
    if (R->variant == GILBERT) {
        int d = 0;
        for (int i = 0; i < 7; i++) d += s->down[i];
        return 2 * sum_found(s) - d;
    }
    if (R->variant == SHAMROCKS) {  /* Shamrocks.score: less the cards above a suit's next */
        int sc = 4 * sum_found(s), o = 0;
        for (int i = 0; i < 18; i++) {
            int n = s->len[i];
            for (int k = 0; k < n; k++) {
                int c = s->cards[o + k];
                if (RANK(c) == s->found[SUIT(c)] + 1) sc -= n - 1 - k;
                if (R->guide == GUIDE_BURIED)  /* Shamrocks.other_score: less each higher */
                    for (int j = k + 1; j < n; j++) {  /* card of its suit above it */
                        int d = s->cards[o + j];
                        if (SUIT(d) == SUIT(c) && RANK(d) > RANK(c)) sc--;
                    }
            }
            if (R->guide == GUIDE_FULL_FANS && n == 3) sc -= 2;  /* less two a full fan */
            o += n;
        }
        return sc;
    }
    return sum_found(s);
}

/* ---- commands out ----------------------------------------------------------------- */
static PyObject *S_found[8], *S_tab[18], *S_res[2], *S_waste, *S_stock, *S_empty, *DRAW_CMD;

static PyObject *pile_name(const Rules *R, int pile) {
    if (R->variant == GATE && pile >= 8) return S_res[pile - 8];
    return S_tab[pile];
}
static PyObject *cmd(PyObject *from, PyObject *to, int count) {
    return Py_BuildValue("(OOi)", from, to, count);
}
/* The commands one step plays, as a tuple of (from, to, count) tuples. */
static PyObject *step_commands(const Rules *R, const Step *st) {
    PyObject *out = NULL, *c = NULL;
    switch (st->kind) {
    case K_T2T: c = cmd(pile_name(R, st->a), pile_name(R, st->c), st->b); break;
    case K_T2F: c = cmd(pile_name(R, st->a), S_found[st->c], 1); break;
    case K_F2T: c = cmd(S_found[st->a], pile_name(R, st->c), 1); break;
    case K_F2F: c = cmd(S_found[st->a], S_found[st->c], 1); break;
    case K_STOCK2T: c = cmd(S_stock, pile_name(R, st->c), 1); break;
    case K_DRAW: Py_INCREF(DRAW_CMD); c = DRAW_CMD; break;
    case K_DOWN2: case K_DOWN3: case K_ACROSS2: case K_SH2: case K_SH3: {  /* two or three moves */
        Step sub[3];
        int m = st->kind == K_SH2 || st->kind == K_SH3 ? sh_parts(st, sub) : gate_parts(st, sub);
        out = PyTuple_New(m);
        if (!out) return NULL;
        for (int i = 0; i < m; i++) {
            PyObject *one = step_commands(R, &sub[i]);
            if (!one) { Py_DECREF(out); return NULL; }
            c = PyTuple_GET_ITEM(one, 0);
            Py_INCREF(c);
            PyTuple_SET_ITEM(out, i, c);
            Py_DECREF(one);
        }
        return out;
    }
    case K_TAL2F: case K_TAL2T: {
        int draws = st->b;
        out = PyTuple_New(draws + 1);
        if (!out) return NULL;
        for (int i = 0; i < draws; i++) { Py_INCREF(DRAW_CMD); PyTuple_SET_ITEM(out, i, DRAW_CMD); }
        c = st->kind == K_TAL2F ? cmd(S_waste, S_found[st->c], 1) : cmd(S_waste, pile_name(R, st->c), 1);
        if (!c) { Py_DECREF(out); return NULL; }
        PyTuple_SET_ITEM(out, draws, c);
        return out;
    }
    }
    if (!c) return NULL;
    out = PyTuple_Pack(1, c);
    Py_DECREF(c);
    return out;
}

/* ---- the search ------------------------------------------------------------------- */
typedef struct {
    PyObject *clock;
    double deadline;
    int error;  /* a Python error is set */
} Clock;

static int past_deadline(Clock *ck) {  /* clock() > deadline */
    PyObject *t = PyObject_CallNoArgs(ck->clock);
    if (!t) { ck->error = 1; return 1; }
    double now = PyFloat_AsDouble(t);
    Py_DECREF(t);
    if (now == -1.0 && PyErr_Occurred()) { ck->error = 1; return 1; }
    return now > ck->deadline;
}

static int clock_before(Clock *ck) {  /* clock() < deadline */
    PyObject *t = PyObject_CallNoArgs(ck->clock);
    if (!t) { ck->error = 1; return 0; }
    double now = PyFloat_AsDouble(t);
    Py_DECREF(t);
    if (now == -1.0 && PyErr_Occurred()) { ck->error = 1; return 0; }
    return now < ck->deadline;
}

/* The steps of s (shaken with rng, as search._shaken) appended to the pool. */
static int steps_of(const Rules *R, const State *s, Steps *pool, MT *rng, double spread, int *count) {
    if (!steps_reserve(pool, MAXSTEPS)) return 0;
    Step *v = pool->v + pool->n;
    int n = gen_steps(R, s, v);
    if (rng && n >= 2) {
        double rank[MAXSTEPS];
        int idx[MAXSTEPS];
        Step tmp[MAXSTEPS];
        for (int i = 0; i < n; i++) { rank[i] = i + spread * mt_random(rng); idx[i] = i; }
        for (int i = 1; i < n; i++) {  /* stable, as sorted() */
            int x = idx[i], j = i - 1;
            while (j >= 0 && rank[idx[j]] > rank[x]) { idx[j + 1] = idx[j]; j--; }
            idx[j + 1] = x;
        }
        for (int i = 0; i < n; i++) tmp[i] = v[idx[i]];
        memcpy(v, tmp, n * sizeof(Step));
    }
    pool->n += n;
    *count = n;
    return 1;
}

typedef struct {
    State s;
    Step via;
    size_t step0;
    int nsteps, at;
} Frame;

/* search.shortcut: leave out the steps between a position and a later one of the line
 * that one of its steps reaches. states[0..L], line[0..L-1]. Returns the new length. */
static int shortcut(const Rules *R, const State *states, Step *line, int L, Clock *ck, Step *out) {
    /* index the exact positions */
    size_t cap = 16;
    while (cap < (size_t)(L + 1) * 2) cap *= 2;
    H128 *hs = calloc(cap, sizeof(H128));
    int *ix = malloc(cap * sizeof(int));
    if (!hs || !ix) { free(hs); free(ix); memcpy(out, line, L * sizeof(Step)); return L; }
    for (int i = 0; i <= L; i++) {
        H128 h = exact_of(&states[i]);
        size_t j = h.a & (cap - 1);
        while (hs[j].b && !(hs[j].a == h.a && hs[j].b == h.b)) j = (j + 1) & (cap - 1);
        hs[j] = h; ix[j] = i;  /* a later index wins, as the dict does */
    }
    Step buf[MAXSTEPS];
    int n = 0, i = 0;
    while (i < L) {
        int best = i + 1;
        Step via = line[i];
        if (!ck->error && clock_before(ck)) {
            int k = gen_steps(R, &states[i], buf);
            for (int q = 0; q < k; q++) {
                State child;
                play(R, &states[i], &buf[q], &child);
                H128 h = exact_of(&child);
                size_t j = h.a & (cap - 1);
                while (hs[j].b) {
                    if (hs[j].a == h.a && hs[j].b == h.b) {
                        int at = ix[j];
                        if (at > best && memcmp(&states[at], &child, HEAD + child.ncards) == 0) {
                            best = at; via = buf[q];
                        }
                        break;
                    }
                    j = (j + 1) & (cap - 1);
                }
            }
        }
        out[n++] = via;
        i = best;
    }
    free(hs); free(ix);
    return n;
}

enum { WON, LOST, UNKNOWN, FAILED };

typedef struct {
    int result;
    Step *line;  /* malloc'd */
    int nline;
    long long nodes;
} Outcome;

/* search.DepthFirst: a depth-first search that a budget pauses and a later run resumes,
 * its table and path kept. With `prefetch` (the main search, whose table holds millions
 * of keys), a position's children's keys are made when it is entered (keys, indexed as
 * pool) and their table slots prefetched: most children were met before, and their
 * probes, each a cache miss, then overlap instead of following one another. The same
 * positions in the same order: only when the work is done changes. (The restarts' tables
 * are small: there it only cost each child a second play, measured in benchmarks/README,
 * branch gs5.) */
typedef struct {
    Rules R;
    Table seen;
    Steps pool;
    int prefetch;
    H128 *keys;
    size_t capk;
    Frame *frames;
    size_t nfr, capfr;
    long long nodes;
    int started, lost, has_pending;
    State start, pending;
    Step pending_via;
} Dfs;

static int dfs_init(Dfs *d, const Rules *R, const State *start) {
    memset(d, 0, sizeof *d);
    d->R = *R;
    d->start = *start;
    if (!table_init(&d->seen, 1 << 12)) { PyErr_NoMemory(); return -1; }
    if (table_add(&d->seen, key_of(R, start)) < 0) { PyErr_NoMemory(); return -1; }
    d->nodes = 1;
    return 0;
}

static void dfs_free(Dfs *d) {
    table_free(&d->seen);
    free(d->pool.v); d->pool.v = NULL;
    free(d->keys); d->keys = NULL;
    free(d->frames); d->frames = NULL;
}

static int dfs_push(Dfs *d, const State *s, const Step *via, MT *rng, double spread) {
    if (d->nfr == d->capfr) {
        size_t nc = d->capfr ? d->capfr * 2 : 256;
        Frame *nf = realloc(d->frames, nc * sizeof(Frame));
        if (!nf) return 0;
        d->frames = nf; d->capfr = nc;
    }
    Frame *g = &d->frames[d->nfr];
    g->s = *s;
    if (via) g->via = *via;
    g->step0 = d->pool.n;
    g->at = 0;
    if (!steps_of(&d->R, s, &d->pool, rng, spread, &g->nsteps)) return 0;
    if (d->prefetch && d->pool.n > d->capk) {
        size_t nc = d->capk ? d->capk : 1024;
        while (nc < d->pool.n) nc *= 2;
        H128 *nh = realloc(d->keys, nc * sizeof(H128));
        if (!nh) return 0;
        d->keys = nh; d->capk = nc;
    }
    for (size_t q = g->step0; d->prefetch && q < d->pool.n; q++) {
        State child;
        play(&d->R, &g->s, &d->pool.v[q], &child);
        d->keys[q] = key_of(&d->R, &child);
        table_prefetch(&d->seen, d->keys[q]);
    }
    d->nfr++;
    return 1;
}

/* Until max_nodes positions are counted in all, or the clock passes its deadline. */
static void dfs_run(Dfs *d, long long max_nodes, Clock *ck, MT *rng, double spread, Outcome *o) {
    const Rules *R = &d->R;
    o->line = NULL; o->nline = 0;
    if (d->lost) { o->result = LOST; o->nodes = d->nodes; return; }
    if (!d->started) {
        if (max_nodes <= d->nodes) { o->result = UNKNOWN; o->nodes = d->nodes; return; }
        if (!dfs_push(d, &d->start, NULL, rng, spread)) goto oom;
        d->started = 1;
    }
    if (d->has_pending) {  /* counted when the last run paused, not yet entered */
        d->has_pending = 0;
        if (!(R->cut_dead && dead(R, &d->pending)) &&
            !dfs_push(d, &d->pending, &d->pending_via, rng, spread)) goto oom;
    }
    while (d->nfr) {
        Frame *f = &d->frames[d->nfr - 1];
        if (f->at == f->nsteps) {
            d->pool.n = f->step0;
            d->nfr--;
            continue;
        }
        size_t q = f->step0 + f->at++;
        Step step = d->pool.v[q];
        State child;
        play(R, &f->s, &step, &child);
        /* moved straight back to the position the search came from (search.DepthFirst) */
        if (d->nfr >= 2 && memcmp(&child, &d->frames[d->nfr - 2].s, HEAD + child.ncards) == 0)
            continue;
        int added = table_add(&d->seen, d->prefetch ? d->keys[q] : key_of(R, &child));
        if (added < 0) goto oom;
        if (!added) continue;
        d->nodes++;
        if (is_won(R, &child)) {
            int L = (int)d->nfr;  /* the line: frames 1.. then this step */
            State *states = malloc((L + 1) * sizeof(State));
            Step *line = malloc(L * sizeof(Step));
            Step *out = malloc(L * sizeof(Step));
            if (!states || !line || !out) { free(states); free(line); free(out); goto oom; }
            for (int i = 0; i < L; i++) states[i] = d->frames[i].s;
            states[L] = child;
            for (int i = 1; i < L; i++) line[i - 1] = d->frames[i].via;
            line[L - 1] = step;
            o->nline = shortcut(R, states, line, L, ck, out);
            o->line = out;
            free(states); free(line);
            o->result = ck->error ? FAILED : WON;
            o->nodes = d->nodes;
            return;
        }
        if (d->nodes >= max_nodes || (d->nodes % CHECK_CLOCK_EVERY == 0 && past_deadline(ck))) {
            d->has_pending = 1;
            d->pending = child;
            d->pending_via = step;
            o->result = ck->error ? FAILED : UNKNOWN;
            o->nodes = d->nodes;
            return;
        }
        if (R->cut_dead && dead(R, &child)) continue;  /* counted, not searched */
        if (!dfs_push(d, &child, &step, rng, spread)) goto oom;
    }
    d->lost = 1;
    o->result = LOST;
    o->nodes = d->nodes;
    return;
oom:
    PyErr_NoMemory();
    o->result = FAILED;
}

/* search._search's depth-first branch: one run of a fresh search. */
static void dfs(const Rules *R, const State *start, long long max_nodes, Clock *ck, MT *rng,
                double spread, Outcome *o) {
    Dfs d;
    o->line = NULL; o->nline = 0;
    if (dfs_init(&d, R, start) < 0) { dfs_free(&d); o->result = FAILED; return; }
    dfs_run(&d, max_nodes, ck, rng, spread, o);
    dfs_free(&d);
}

/* search._best_first: always expand the open position of highest score, oldest first on ties. */
typedef struct {
    const int *score;
    uint32_t *v;
    size_t n, cap;
} Heap;

static inline int heap_before(const Heap *h, uint32_t x, uint32_t y) {
    return h->score[x] > h->score[y] || (h->score[x] == h->score[y] && x < y);
}
static int heap_push(Heap *h, uint32_t id) {
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 1024;
        uint32_t *nv = realloc(h->v, nc * sizeof(uint32_t));
        if (!nv) return 0;
        h->v = nv; h->cap = nc;
    }
    size_t i = h->n++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!heap_before(h, id, h->v[p])) break;
        h->v[i] = h->v[p];
        i = p;
    }
    h->v[i] = id;
    return 1;
}
static uint32_t heap_pop(Heap *h) {
    uint32_t top = h->v[0], last = h->v[--h->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        uint32_t mv = last;
        if (l < h->n && heap_before(h, h->v[l], mv)) { m = l; mv = h->v[l]; }
        if (r < h->n && heap_before(h, h->v[r], mv)) { m = r; mv = h->v[r]; }
        if (m == i) break;
        h->v[i] = h->v[m];
        i = m;
    }
    if (h->n) h->v[i] = last;
    return top;
}

static void best_first(const Rules *R, const State *start, long long max_nodes, Clock *ck,
                       Outcome *o) {
    Table seen;
    Heap heap = {0};
    /* the positions kept in a stride of what this variant's positions use */
    size_t stride = (HEAD + (size_t)R->total + 8 + 7) & ~(size_t)7;
    uint8_t *states = NULL;
    State cur;
    uint32_t *parent = NULL;
    Step *via = NULL;
    int *score = NULL;
    size_t cap = 0, count = 0;
    Step buf[MAXSTEPS];
    o->line = NULL; o->nline = 0;
    if (!table_init(&seen, 1 << 12)) { o->result = FAILED; PyErr_NoMemory(); return; }
    table_add(&seen, key_of(R, start));
    long long nodes = 1;
    o->nodes = 1;
    if (max_nodes <= 1) { o->result = UNKNOWN; table_free(&seen); return; }
#define GROW()                                                                     \
    if (count == cap) {                                                            \
        size_t nc = cap ? cap * 2 : 4096;                                          \
        uint8_t *ns = realloc(states, nc * stride);                                \
        if (!ns) goto oom;                                                         \
        states = ns;                                                               \
        uint32_t *np = realloc(parent, nc * sizeof(uint32_t));                     \
        if (!np) goto oom;                                                         \
        parent = np;                                                               \
        Step *nv = realloc(via, nc * sizeof(Step));                                \
        if (!nv) goto oom;                                                         \
        via = nv;                                                                  \
        int *nsc = realloc(score, nc * sizeof(int));                               \
        if (!nsc) goto oom;                                                        \
        score = nsc;                                                               \
        cap = nc;                                                                  \
        heap.score = score;                                                        \
    }
    GROW();
    memcpy(states, start, stride); parent[0] = 0; score[0] = score_of(R, start);
    count = 1;
    if (!heap_push(&heap, 0)) goto oom;
    while (heap.n) {
        uint32_t id = heap_pop(&heap);
        memset(&cur, 0, sizeof cur);
        memcpy(&cur, states + id * stride, stride);
        int k = gen_steps(R, &cur, buf);
        for (int q = 0; q < k; q++) {
            State child;
            play(R, &cur, &buf[q], &child);
            int added = table_add(&seen, key_of(R, &child));
            if (added < 0) goto oom;
            if (!added) continue;
            nodes++;
            if (is_won(R, &child)) {
                int L = 1;
                for (uint32_t x = id; x != 0; x = parent[x]) L++;
                Step *line = malloc(L * sizeof(Step));
                if (!line) goto oom;
                line[L - 1] = buf[q];
                int i = L - 2;
                for (uint32_t x = id; x != 0; x = parent[x]) line[i--] = via[x];
                o->line = line; o->nline = L;
                o->result = WON; o->nodes = nodes;
                goto done;
            }
            if (nodes >= max_nodes || (nodes % CHECK_CLOCK_EVERY == 0 && past_deadline(ck))) {
                o->result = ck->error ? FAILED : UNKNOWN;
                o->nodes = nodes;
                goto done;
            }
            if (R->cut_dead && dead(R, &child)) continue;  /* counted, not searched */
            GROW();
            memcpy(states + count * stride, &child, stride);
            parent[count] = id; via[count] = buf[q];
            score[count] = score_of(R, &child);
            if (!heap_push(&heap, (uint32_t)count)) goto oom;
            count++;
        }
    }
#undef GROW
    o->result = LOST; o->nodes = nodes;
    goto done;
oom:
    PyErr_NoMemory();
    o->result = FAILED;
done:
    table_free(&seen);
    free(heap.v); free(states); free(parent); free(via); free(score);
}

/* ---- Python glue ------------------------------------------------------------------ */
static int parse_cards(PyObject *seq, uint8_t *dst, int room, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > room) { Py_DECREF(fast); PyErr_Format(PyExc_ValueError, "too many cards in %s", what); return -1; }
    for (Py_ssize_t i = 0; i < n; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
        if (v < 0 || v >= 52) { Py_DECREF(fast); PyErr_Format(PyExc_ValueError, "bad card %ld in %s", v, what); return -1; }
        dst[i] = (uint8_t)v;
    }
    Py_DECREF(fast);
    return (int)n;
}

static int parse_ints(PyObject *seq, uint8_t *dst, int want, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != want) {
        Py_DECREF(fast); PyErr_Format(PyExc_ValueError, "%s: %d values expected", what, want); return -1;
    }
    for (int i = 0; i < want; i++) {
        long v = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (v == -1 && PyErr_Occurred()) { Py_DECREF(fast); return -1; }
        if (v < 0 || v > 255) { Py_DECREF(fast); PyErr_Format(PyExc_ValueError, "%s: bad value", what); return -1; }
        dst[i] = (uint8_t)v;
    }
    Py_DECREF(fast);
    return 0;
}

/* piles (a sequence of card sequences) into s from pile `first` on */
static int parse_piles(PyObject *seq, State *s, int first, int want, const char *what) {
    PyObject *fast = PySequence_Fast(seq, what);
    if (!fast) return -1;
    if (PySequence_Fast_GET_SIZE(fast) != want) {
        Py_DECREF(fast); PyErr_Format(PyExc_ValueError, "%s: %d piles expected", what, want); return -1;
    }
    for (int i = 0; i < want; i++) {
        int n = parse_cards(PySequence_Fast_GET_ITEM(fast, i), s->cards + s->ncards,
                            MAXCARDS - s->ncards, what);
        if (n < 0) { Py_DECREF(fast); return -1; }
        s->len[first + i] = (uint8_t)n;
        s->ncards += n;
    }
    Py_DECREF(fast);
    return 0;
}

static int parse_state(const Rules *R, PyObject *t, State *s) {
    memset(s, 0, sizeof *s);
    if (!PyTuple_Check(t)) { PyErr_SetString(PyExc_TypeError, "a position is a tuple"); return -1; }
    Py_ssize_t n = PyTuple_GET_SIZE(t);
    int want = R->variant == GILBERT || R->variant == GATE ? 5 : R->variant == SHAMROCKS ? 2 : 3;
    if (n != want) { PyErr_SetString(PyExc_ValueError, "a position of the wrong shape"); return -1; }
    if (parse_ints(PyTuple_GET_ITEM(t, 0), s->found, R->nfound, "foundations") < 0) return -1;
    switch (R->variant) {
    case GILBERT: {
        if (parse_piles(PyTuple_GET_ITEM(t, 1), s, 0, 7, "tableau") < 0) return -1;
        if (parse_ints(PyTuple_GET_ITEM(t, 2), s->down, 7, "down") < 0) return -1;
        int k = parse_cards(PyTuple_GET_ITEM(t, 3), s->cards + s->ncards, MAXCARDS - s->ncards, "talon");
        if (k < 0) return -1;
        s->len[7] = (uint8_t)k; s->ncards += k;
        long w = PyLong_AsLong(PyTuple_GET_ITEM(t, 4));
        if (w == -1 && PyErr_Occurred()) return -1;
        if (w < 0 || w > k) { PyErr_SetString(PyExc_ValueError, "bad waste count"); return -1; }
        s->w = (uint8_t)w;
        for (int i = 0; i < 7; i++)
            if (s->down[i] > s->len[i] || (s->len[i] && s->down[i] == s->len[i])) {
                PyErr_SetString(PyExc_ValueError, "bad face-down count"); return -1;
            }
        break;
    }
    case SHAMROCKS:
        if (parse_piles(PyTuple_GET_ITEM(t, 1), s, 0, 18, "fans") < 0) return -1;
        break;
    case GATE: {
        if (parse_piles(PyTuple_GET_ITEM(t, 1), s, 0, 8, "bars") < 0) return -1;
        if (parse_piles(PyTuple_GET_ITEM(t, 2), s, 8, 2, "pillars") < 0) return -1;
        int k = parse_cards(PyTuple_GET_ITEM(t, 3), s->cards + s->ncards, MAXCARDS - s->ncards, "talon");
        if (k < 0) return -1;
        s->len[10] = (uint8_t)k; s->ncards += k;
        long w = PyLong_AsLong(PyTuple_GET_ITEM(t, 4));
        if (w == -1 && PyErr_Occurred()) return -1;
        if (w < 0 || w > k) { PyErr_SetString(PyExc_ValueError, "bad waste count"); return -1; }
        s->w = (uint8_t)w;
        break;
    }
    case CAPRICE: {
        if (parse_piles(PyTuple_GET_ITEM(t, 1), s, 0, 12, "tableau") < 0) return -1;
        int k = parse_cards(PyTuple_GET_ITEM(t, 2), s->cards + s->ncards, MAXCARDS - s->ncards, "stock");
        if (k < 0) return -1;
        if (k % 12) { PyErr_SetString(PyExc_ValueError, "the stock deals twelve at a time"); return -1; }
        s->len[12] = (uint8_t)k; s->ncards += k;
        break;
    }
    }
    return 0;
}

static const char *VARIANTS[] = {"gilbert", "shamrocks", "gate", "caprice"};

PyDoc_STRVAR(search_doc,
"search(variant, hasty, pruning, runs_move, cut_dead, position, max_nodes, deadline, clock,\n"
"       rng, shake, depth_first, guide) -> (result, line, nodes)\n\n"
"One search of service.solver.search._search, natively: result 'won', 'lost' or\n"
"'unknown'; line the steps of a won line, each a tuple of (from, to, count) commands.\n"
"rng (a Random, advanced as random.Random would be) shakes the order; None: no shaking.\n"
"guide: what a best-first search scores by, rules.GUIDES's index (Rules.guide).");

static int rules_of(const char *variant, int hasty, int pruning, int runs_move, int cut_dead,
                    Rules *R) {
    memset(R, 0, sizeof *R);
    R->variant = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(variant, VARIANTS[i]) == 0) R->variant = i;
    if (R->variant < 0) { PyErr_Format(PyExc_ValueError, "no native rules for %s", variant); return -1; }
    R->hasty = hasty; R->pruning = pruning; R->runs_move = runs_move; R->cut_dead = cut_dead;
    R->total = R->variant == CAPRICE ? 104 : 52;
    R->nfound = R->variant == GILBERT || R->variant == CAPRICE ? 8 : 4;
    return 0;
}

static PyObject *outcome_tuple(const Rules *R, Outcome *o) {
    if (o->result == FAILED) { free(o->line); return NULL; }
    PyObject *line = PyList_New(o->nline);
    if (!line) { free(o->line); return NULL; }
    for (int i = 0; i < o->nline; i++) {
        PyObject *c = step_commands(R, &o->line[i]);
        if (!c) { free(o->line); Py_DECREF(line); return NULL; }
        PyList_SET_ITEM(line, i, c);
    }
    free(o->line);
    o->line = NULL;
    static const char *names[] = {"won", "lost", "unknown"};
    return Py_BuildValue("(sNL)", names[o->result], line, o->nodes);
}

/* The resumable search as a Python object. */
typedef struct {
    PyObject_HEAD
    Dfs d;
    int ready;
} DepthFirstObject;

static PyObject *depthfirst_new(PyTypeObject *type, PyObject *args, PyObject *kw) {
    const char *variant;
    int hasty, pruning, runs_move, cut_dead;
    PyObject *pos;
    (void)kw;
    if (!PyArg_ParseTuple(args, "sppppO", &variant, &hasty, &pruning, &runs_move, &cut_dead, &pos))
        return NULL;
    Rules R;
    if (rules_of(variant, hasty, pruning, runs_move, cut_dead, &R) < 0) return NULL;
    State start;
    if (parse_state(&R, pos, &start) < 0) return NULL;
    DepthFirstObject *self = (DepthFirstObject *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    if (dfs_init(&self->d, &R, &start) < 0) { dfs_free(&self->d); Py_DECREF(self); return NULL; }
    self->d.prefetch = 1;  /* the main search: its table grows large */
    self->ready = 1;
    return (PyObject *)self;
}

static void depthfirst_dealloc(PyObject *self) {
    DepthFirstObject *o = (DepthFirstObject *)self;
    if (o->ready) dfs_free(&o->d);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *depthfirst_run(PyObject *self, PyObject *args) {
    DepthFirstObject *o = (DepthFirstObject *)self;
    long long max_nodes;
    double deadline;
    PyObject *clock;
    if (!PyArg_ParseTuple(args, "LdO", &max_nodes, &deadline, &clock)) return NULL;
    Clock ck = {clock, deadline, 0};
    Outcome out = {UNKNOWN, NULL, 0, 0};
    if (is_won(&o->d.R, &o->d.start)) { out.result = WON; out.nodes = 0; }
    else dfs_run(&o->d, max_nodes, &ck, NULL, 0.0, &out);
    return outcome_tuple(&o->d.R, &out);
}

static PyObject *depthfirst_nodes(PyObject *self, void *closure) {
    (void)closure;
    return PyLong_FromLongLong(((DepthFirstObject *)self)->d.nodes);
}

static PyMethodDef depthfirst_methods[] = {
    {"run", depthfirst_run, METH_VARARGS,
     "run(max_nodes, deadline, clock) -> (result, line, nodes): on until max_nodes positions "
     "in all; 'unknown' pauses it, a later run resumes."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef depthfirst_getset[] = {
    {"nodes", depthfirst_nodes, NULL, "positions counted so far", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject DepthFirstType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "service.solver._core.DepthFirst",
    .tp_basicsize = sizeof(DepthFirstObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "DepthFirst(variant, hasty, pruning, runs_move, cut_dead, position): search.DepthFirst in "
              "the core.",
    .tp_new = depthfirst_new,
    .tp_dealloc = depthfirst_dealloc,
    .tp_methods = depthfirst_methods,
    .tp_getset = depthfirst_getset,
};

static PyObject *py_search(PyObject *self, PyObject *args) {
    (void)self;
    const char *variant;
    int hasty, pruning, runs_move, cut_dead, depth_first, guide;
    PyObject *pos, *clock, *rng_state;
    long long max_nodes;
    double deadline, spread;
    if (!PyArg_ParseTuple(args, "sppppOLdOOdpi", &variant, &hasty, &pruning, &runs_move, &cut_dead,
                          &pos, &max_nodes, &deadline, &clock, &rng_state, &spread, &depth_first,
                          &guide))
        return NULL;
    Rules R;
    if (rules_of(variant, hasty, pruning, runs_move, cut_dead, &R) < 0) return NULL;
    if (guide < GUIDE_SCORE || guide > GUIDE_FULL_FANS)
        return PyErr_Format(PyExc_ValueError, "no guide %d", guide);
    R.guide = guide;
    State start;
    if (parse_state(&R, pos, &start) < 0) return NULL;
    MT *rng = NULL;
    if (rng_state != Py_None) {
        if (!PyObject_TypeCheck(rng_state, &RandomType))
            return PyErr_Format(PyExc_TypeError, "the generator is a _core.Random");
        rng = &((RandomObject *)rng_state)->mt;
    }
    Clock ck = {clock, deadline, 0};
    Outcome o = {UNKNOWN, NULL, 0, 0};
    if (is_won(&R, &start)) {
        o.result = WON;
    } else if (R.variant == SHAMROCKS && !depth_first) {
        best_first(&R, &start, max_nodes, &ck, &o);
    } else {
        dfs(&R, &start, max_nodes, &ck, rng, spread, &o);
    }
    return outcome_tuple(&R, &o);
}

static PyObject *py_dead(PyObject *self, PyObject *args) {
    (void)self;
    const char *variant;
    int runs_move;
    PyObject *pos;
    if (!PyArg_ParseTuple(args, "spO", &variant, &runs_move, &pos)) return NULL;
    Rules R;
    if (rules_of(variant, 0, 1, runs_move, 0, &R) < 0) return NULL;
    State s;
    if (parse_state(&R, pos, &s) < 0) return NULL;
    return PyBool_FromLong(dead(&R, &s));
}

static PyMethodDef methods[] = {
    {"search", py_search, METH_VARARGS, search_doc},
    {"dead", py_dead, METH_VARARGS,
     "dead(variant, runs_move, position) -> bool: Rules.dead (shamrocks.py, gilbert.py, gate.py),\n"
     "natively."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {
    PyModuleDef_HEAD_INIT, "_core", "The solver's native core (see service/solver/native.py).",
    -1, methods,
};

PyMODINIT_FUNC PyInit__core(void) {
    char name[32];
    for (int c = 0; c < 52; c++) {  /* cards.py: suit * 13 + rank - 1, suits C D H S */
        RANK_T[c] = (uint8_t)(c % 13 + 1);
        SUIT_T[c] = (uint8_t)(c / 13);
        RED_T[c] = SUIT_T[c] == 1 || SUIT_T[c] == 2;
    }
    for (int i = 0; i < 8; i++) {
        snprintf(name, sizeof name, "foundation/%d", i);
        if (!(S_found[i] = PyUnicode_InternFromString(name))) return NULL;
    }
    for (int i = 0; i < 18; i++) {
        snprintf(name, sizeof name, "tableau/%d", i);
        if (!(S_tab[i] = PyUnicode_InternFromString(name))) return NULL;
    }
    for (int i = 0; i < 2; i++) {
        snprintf(name, sizeof name, "reserve/%d", i);
        if (!(S_res[i] = PyUnicode_InternFromString(name))) return NULL;
    }
    if (!(S_waste = PyUnicode_InternFromString("waste"))) return NULL;
    if (!(S_stock = PyUnicode_InternFromString("stock"))) return NULL;
    if (!(S_empty = PyUnicode_InternFromString(""))) return NULL;
    if (!(DRAW_CMD = Py_BuildValue("(OOi)", S_stock, S_empty, 0))) return NULL;
    if (PyType_Ready(&RandomType) < 0 || PyType_Ready(&DepthFirstType) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&RandomType);
    if (PyModule_AddObject(m, "Random", (PyObject *)&RandomType) < 0) {
        Py_DECREF(&RandomType); Py_DECREF(m); return NULL;
    }
    Py_INCREF(&DepthFirstType);
    if (PyModule_AddObject(m, "DepthFirst", (PyObject *)&DepthFirstType) < 0) {
        Py_DECREF(&DepthFirstType); Py_DECREF(m); return NULL;
    }
    return m;
}

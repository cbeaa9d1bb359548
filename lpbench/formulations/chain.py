"""Chain bound at paper size (ours, issue 12; slot model, eqs. (1)-(4)): the chain (L) of ``latency-astar``
without its table over subsets, by Lagrangian relaxation.

**The chain.** Let t0 = min_j a_j and c_j = a_j − t0 + o_j, the least C_j − t0 by (2). Take a set U of m
requests and the order in which they complete, numbered from the end: e_m completes first, e_1 last
(ties in any order). With gaps δ_r = C_{e_r} − C_{e_{r+1}},

    Σ_{j∈U} (C_j − t0) = m·(C_{e_m} − t0) + Σ_{r=1}^{m−1} r·δ_r,

and for every three consecutive completions h = e_{r+1}, j = e_r, k = e_{r−1}, Lemmas 2 and 2' of
:mod:`lpbench.formulations.completion` give δ_r >= w(h, j), δ_r + δ_{r−1} >= w(h, k) and, Lemma 2' in its exact
form, one of 2δ_r + δ_{r−1} >= p_h + p_j + p_k − M, δ_r + δ_{r−1} >= o_k, δ_r >= o_j (the gaps the three requests
alone allow). Each gap is the first gap of one such triple and the second of the next,
and its weight is split between them: a share α to the first, 1 − α to the second (the last gap δ_1, in one
triple only, gives it all of its weight 1; the first gap's share 1 − α is dropped). Triple (e_{r+1}, e_r,
e_{r−1}) thus carries α·r·δ_r + (1 − α)(r − 1)·δ_{r−1} (δ_1 at weight 1 when r = 2), at least the same
weights times w(h, j) and w(j, k) plus B(r, h, j, k) >= 0, the integer minimum of the excess over that
set (the single row 2δ_r + δ_{r−1} >= T(h, j, k) of Lemma 2' until 2026-12-01). Summing, with the first gap at its w:

    Σ_{j∈U} (C_j − t0) >= chain_U(e) := m·c_{e_m} + Σ_{r=1}^{m−1} r·w(e_{r+1}, e_r)
                                         + Σ_{r=2}^{m−1} B(r, e_{r+1}, e_r, e_{r−1})

(UNIT·B: :func:`~lpbench.formulations.completion.triple_bonus`). With α = 2/3 this is (L) of ``latency-astar`` at
its root (r there is c_l = m − l + 1), which minimises it over orders with a table over all subsets: 2^n·n²
entries, so at most 16 requests.

**The split.** Any α in [1/2, 1] gives a valid bound: the two shares of each gap's weight add up to it, and each
triple's shares are at least their value at the pair separations plus the least excess the triple allows (the
candidates of ``triple_bonus`` need the first gap's weight at least the second's, α·r >= (1 − α)(r − 1)). Which α
is best depends on which case of Lemma 2' binds. For large r, the least excess over the row 2δ_r + δ_{r−1} >= R alone
is about r·R′·min(α/2, 1 − α) (R′ the excess of R over the pair separations), largest at α = 2/3; over the row
δ_r + δ_{r−1} >= o_k alone it is about r·O′·min(α, 1 − α), largest at α = 1/2. ``SPLIT`` = 5/8
(in eighths, ``UNIT`` = 8) was chosen by a scan of α on ten full jaillet draws (each draw's best U, 6-8 s of ascent per
value, scratch, 2026-12-01; docs/seed004-certification.md): from α = 2/3 the bound rose on all ten, to its best at
α = 0.60-0.62, by 0.8-3.8 %, and fell steeply above 2/3 and below 0.55 (the least over sequences of functions linear
in α is concave in it). 5/8 was within 0.1 % of the best scanned value on the four Model-1 draws where it was
scanned and within 0.6 % on three Model-2 draws. ``latency-astar``'s (L) keeps 2/3: with 5/8 its search proved no
more (its docstring).

**Lagrangian q-path relaxation** (Picard & Queyranne 1978, for the time-dependent TSP). Relax "each
request of U once" to "a sequence of m requests, none twice among three consecutive ones" and price a
visit of j at λ_j:

    L_U(λ) = min over such sequences of (chain_U(e) + Σ_{r=1}^{m} λ_{e_r}) − Σ_{j∈U} λ_j.

Every order of U is such a sequence, with Σ_r λ_{e_r} = Σ_j λ_j, so L_U(λ) <= min over orders of chain_U
for *every* λ ∈ R^U (weak duality): each λ found gives a valid bound, however far it is from the best one.
The minimum is a dynamic programme over the last two requests of the tail, position r from the end:

    F_1(j, k) = w(j, k) + λ_k,
    F_r(j, k) = r·w(j, k) + λ_k + min_{l ∉ {j, k}} (B(r, j, k, l) + F_{r−1}(k, l)),     r = 2..m−1
    L_U(λ)    = min_{h ≠ j} (m·c_h + λ_h + F_{m−1}(h, j)) − Σ_{j∈U} λ_j,

m³ per position (the minima over l in a numba kernel, :func:`_tail_minima`: 0.7 ms per evaluation for m = 36
where numpy took 2.3 ms, the same float32 values). λ is searched by subgradient ascent (g_j = visits of
j − 1; Polyak steps towards 1.05 × the best value; step times ``SHRINK`` after ``PATIENCE`` steps without
improvement, from the best λ, until it is below ``THETA_MIN``). The best λ is re-evaluated in exact integer
arithmetic (λ rounded to a multiple of 1/(UNIT·LAMBDA_SCALE), every cost in those units; compiled,
:func:`_exact_tail`: 0.19 s against numpy's 0.52 s in the 11 evaluations of a 5 s run on jaillet-model2 draw 28,
0.23 against 0.62 s in 30 on jaillet-model1 draw 0, scratch profile), and only that value is used. With (L)'s split,
2/3, it equals the subset table's root value on the first 12 requests of jaillet-model1 draws 0-4, and with 5/8 it is
at least that value there (tests/test_chain.py; it also compares the programme with every order on small instances).

**Requests left out of U.** The chain charges only its first completion its c, so a short request in U
makes it weak. A schedule restricted to a subset of the requests is a schedule of that subset (memory
only decreases), so total latency >= [the chain bound of U, less Σ_{j∈U} (a_j − t0)] + [any lower bound
on the optimum of the requests not in U]: here the larger of Σ o_j and ``volume-bound`` on them, and for the
``REST_CANDIDATES`` best sets U after the third step below, best first, also ``latency-astar``'s certified bound on
them alone (``subset-bound``'s rest: :func:`~lpbench.formulations.subset_bound.rest_bound`, all of them within
``REST_SHARE`` of the time left, where its chain table fits; until 2026-12-03 the best U's alone: with the block of
the first three completions below, on the first 17 requests of jaillet-model1 draw 19 larger sets U overtook the
five longest requests, whose 12 left-out requests the search raises most, and the bound fell from 327 to 324).
Where all requests arrive together (Model 1) the short requests left out wait for each other's memory, which volume
does not see: on nine full jaillet-model1 draws the search (3 s on six, 20 s on three) added 4-36 to their bound by
volume (0.1-0.5 % of the chain), on two Model-2 draws nothing (docs/seed004-certification.md, "The requests left out by
the exact search").

**The first completion beside the requests left out** (2026-12-03). The two parts above ignore each other: U's first
completion is charged only its c, the left-out requests R only their own optimum, as if they had the memory to
themselves. For a schedule, let h be U's first completer. Its restriction to R ∪ {h} is a schedule of R ∪ {h}, so

    m·(C_h − t0) + Σ_{j∈R} (C_j − a_j) >= W(h) := min over the schedules of R ∪ {h} of the same sum,

and the bound holds with the first completion's term m·c_h and R's bound ``rest`` replaced by W(h): the programme's
first term becomes m·(c_h + X_h/m), X_h = max(0, W(h) − rest − m·c_h), with R's bound added as before. With own floors
the first completion's weight is ω = W_{m−1} + 1 in [1, m], not m. f(ω) = min over schedules of ω·(C_h − t0) +
Σ_R (C_j − a_j) is a minimum of functions linear in ω, so concave, with f(0) >= rest and f(m) >= W(h); on [0, m] it
lies above its chord, f(ω) >= rest + (ω/m)(W(h) − rest) >= ω·c_h + rest + (ω/m)·X_h: the term ω·(c_h + X_h/m) is
valid at every weight (rounded down in the exact evaluation). W(h) is CP-SAT's proven bound on the weighted problem
(:func:`~lpbench.formulations.latency_cp.weighted_latency_bound`), for the ``JOINT_CANDIDATES`` best U after the rest's
search (within ``JOINT_MARGIN`` of the best value), each with at most ``JOINT_SHARE`` of the time left at its turn,
the first completers whose programme value is least first, until no other
could lower the value at the current multipliers (:func:`first_beside_rest`; X_h = 0 for the others). Only the exact
evaluations charge X, and the searches follow the values without it (the float values of the ascents, the exact values
of the split searches' steps): their paths are those without X, and the best value with X is at least the best without
(guiding them with X too ended lower on two of five full draws, by up to 0.3 %). Where U is a few long requests and
many short ones wait beside them it moves the bound most: on the first 17 requests of jaillet-model1 draw 19,
327 → 356 (OPT 395); on full draws, where R's requests are short, by 0-0.3 % (docs/seed004-certification.md, "The
first completion beside the requests left out").

**The first three completions in absolute time** (2026-12-03, third session). The chain's gaps are relative: it
charges the first completion its floor c and each later one only its separations from the ones before, so its second
and third completions may come earlier than they could (C_j − t0 >= c_j), and the memory the first three need from t0
is seen only through their pair and triple rows. Let x, y, l = e_m, e_{m−1}, e_{m−2} complete first, second and third.
The chain charges them W_m·(C_x − t0) + W_{m−1}·δ_{m−1} + b·δ_{m−2}, where b is the top triple's share of δ_{m−2}
(the other share, a, is in triple (y, l, e_{m−3}); W_r = r but for own floors), at least A1·c_x + A2·w(x, y) +
A3·w(y, l) + B(m − 1, x, y, l) (A1, A2, A3 = W_m, W_{m−1}, b in the programme's units). A schedule restricted to
{x, y, l} is a schedule of the three alone with the same completions, so that part is also at least

    Block(x, y, l) + A3·w(y, l),  Block := min A1·u + A2·δ1 + A3·(δ2 − w(y, l))

over u = C_x − t0, δ1 = C_y − C_x and δ2 = C_l − C_y of the three alone from t0: u >= c_x, u + δ1 >= c_y, u + δ1 + δ2
>= c_l (arrivals), Lemma 2 for the three pairs and one of the three cases of Lemma 2' in its exact form, which by
Lemma 1 are exactly the gaps the three alone allow (:func:`_first_three`; tests/test_chain.py checks it against a
brute force over start times). Only the top triple's share of δ_{m−2} is taken, so each gap's shares still add up to
its weight, and the triples below are untouched. The programme's top becomes

    min over x, y, l of  max(Block(x, y, l), A1·(c_x + X_x/m) + A2·w(x, y) + B(m − 1, x, y, l)) + λ_x + λ_y
                         + node(m − 1, y) + F_{m−2}(y, l)

(F_{m−2} charges A3·w(y, l) with the rest of δ_{m−2}'s weight at w(y, l)): both terms of the max bound the same
part of the chain, the second with the first completion's X ("The first completion beside the requests left out",
which uses R's latency that the block does not). So at every λ it is at least the plain programme's value. The table
has m³ entries (3 ms at m = 43, compiled; scratch timing), rebuilt with each split and μ; ``FIRST_THREE`` = False
restores the plain top. For the split searches' supergradient, the top triple's excess is read at the block's least
gaps (:func:`_block_of`). A probe of a block over the first three completions that takes δ_{m−2} whole and drops triple
(y, l, e_{m−3}) instead was 1.4-1.6 % below the plain programme on two full Model-1 draws: the triple it drops is
worth more than the block gains (scratch, docs/seed004-certification.md).

**The first four completions** (2026-12-03, fifth session). The same argument one completion further. Let e = e_{m−3}
complete fourth. In the programme's value of a sequence, top(x, y, l) + B(m − 2, y, l, e) (the entry of the block
above and the bonus of triple (y, l, e), whose shares of δ_{m−2}, A3 and a, add up to its weight W_{m−2}) bounds

    P := A1·u + A2·δ1 + W_{m−2}·(δ2 − w(y, l)) + b·(δ3 − w(l, e)),    δ3 = C_e − C_l,

with b triple (y, l, e)'s share of δ_{m−3} (its other share and the pair separations are in the rest of the chain,
which is untouched). A schedule restricted to {x, y, l, e} is a schedule of the four alone with the same completions,
so P >= Q(x, y, l, e), the least of P over the schedules of the four alone from t0 that complete in that order
(:func:`_four_of`: exact, by Lemma 1, from the four memory rows at the completions and the floors c; tests/test_chain.py
checks it against CP-SAT on the cumulative model of ``latency-cp`` and a brute force over start times). Each
quadruple's top + B is therefore raised to max(top + B, Q), and with the first completion's X the top's entry
max(block, plain + X) bounds P plus R's latency beyond its bound, which is >= P >= Q, so the max still holds. The
programme's minimum over the first four also forbids x = e, a repeat the relaxation allowed (every order of U is still
a sequence). Q has m⁴ entries, so it is taken lazily, in the exact evaluations only: the least quadruple is raised, its
raised value bounds the minimum from above, and the quadruples below that bound are raised in increasing value until
the next one is no lower than the least raised value (:func:`_four_below`, :func:`_four_raise`; every raise is
>= 0, so none after it can be lower). tests/test_chain.py checks the lazy minimum against every quadruple raised, and
the value against OPT on the small instances. As with X, the searches follow the values without the block: every exact
value is at least the one with the first three's block alone at the same multipliers. Its cost (``python
benchmarks/bench_chain.py --draws jaillet-model1:0,jaillet-model2:60 --seconds 10``, with and without
``--no-first-four``, two runs each, 2026-12-03): the exact evaluations take 0.71-0.76 s of a 10 s ``chain_bound`` on
jaillet-model1 draw 0 with the block and 0.47-0.52 s without (48-56 evaluations, a median of 879 quadruples raised, at
most 2,975; m up to 53; the kernels 0.14-0.15 s of it), 0.65-0.69 against 0.58-0.64 s on jaillet-model2 draw 60. Paired,
``chain_bound`` alone at 10 s on 10 + 10 draws, it adds 0.39 % (Model 1) and 0.18 % (Model 2) at the median, up to
1.2 % (``python benchmarks/chain_first_three.py --flag FIRST_FOUR --seconds 10``; the 60 s certify run:
docs/seed004-certification.md).
``FIRST_FOUR`` = False restores the first three's block alone.

U ranges over W less its r shortest requests or its r smallest-peak requests (the drop rule of
``latency-astar``); r = n is ``volume-bound`` itself. The search: (1) for r on a grid of step
n/SCAN_POINTS, from the largest down (U grows; a small U converges in few steps), both orders side by side,
``SCAN_STEPS`` subgradient steps each, λ carried from one r to the next (requests new to U start at 0), an order
left once a value falls below ``SCAN_COLLAPSE`` times its best (past its peak the values of the larger sets, whose
new requests start at λ = 0, collapse, often below 0, and each of their steps costs m⁴);
(2) the r between the best one and its grid neighbours, from its λ;
(3) the values of r tried, best first, up to ``POLISH_STEPS`` more steps each, until ``SPLIT_SHARE`` of the time
left after (2) remains; (4) the split per position (below) on the best U, from its λ, until it stalls; (5) the split
per position and pair (below) from its best shares and λ, with the rest; both with own floors by position (below).
Every value tried is a valid bound; the largest is reported.

**The split per position** (:func:`split_search`). The argument of "The split" holds with a share α_r of its own
for each gap δ_r: triple (e_{r+1}, e_r, e_{r−1}) then carries a_r·δ_r + b_r·δ_{r−1}, a_r = α_r·r, b_r = (1 −
α_{r−1})(r − 1) (b_2 = 1, the last gap's whole weight), the two shares of each gap still add up to its weight r,
and α_r in [1/2, 1] keeps a_r >= r/2 >= (r − 1)/2 >= b_r, which the candidates of ``triple_excess`` need. The first
gap δ_{m−1}, in one triple only, gives it all its weight (α_{m−1} = 1, where the fixed split drops the share 1 − α):
its bonus only rises, since every excess is >= 0. The bonus of each triple is the least over 7 candidates of a
function linear in (α_r, α_{r−1}), so L_U is, for each λ, a least of functions linear in α: concave, with the
supergradient g_r = r·(D1 at triple r − D2 at triple r + 1), read at the minimising sequence's triples and their
least candidates (D1, D2: a candidate's excesses over the pair separations). The search alternates
``SPLIT_LAMBDA_STEPS`` steps of the λ ascent with one Polyak step in α (towards 1.05 × the best value, scaled by
``SPLIT_STEP``, projected on [1/2, 1]; step halved from the best α after ``PATIENCE`` steps without improvement,
until below ``THETA_MIN``), α in units of 1/``SPLIT_FINE``, U's own tables rebuilt at each step
(:func:`_split_tables`, m⁴ entries over 7 candidates: 1-16 ms at m = 25-47, ``python benchmarks/bench_chain.py``).
Each exact value is a valid bound. On six paper-size draws at 10 s it raised ``chain-bound`` by 0.37-0.82 % (the
same command), and the 10 s certify run's median
gaps from 11.0 to 10.7 % (Model 1) and 12.5 to 12.0 % (Model 2) (docs/seed004-certification.md; tests/test_chain.py
checks the tables against numpy and the fixed split, and random splits and the search against brute force).

**The split per position and pair.** The same argument holds with a share α_r(h, j) for gap δ_r and its two
requests h = e_{r+1}, j = e_r: both triples that hold δ_r, (h, j, e_{r−1}) as its first gap and (e_{r+2}, h, j) as
its second, see that pair, so their shares α_r(h, j)·r and (1 − α_r(h, j))·r still add up to δ_r's weight in every
sequence the programme ranges over, and the bonus of triple (h, j, k) at position r, with a = α_r(h, j)·r and
b = (1 − α_{r−1}(j, k))(r − 1), is still a function of (r, h, j, k) alone. α in [1/2, 1] (the first gap's at 1)
keeps a >= b as before, and L_U stays, for each λ, a least of functions linear in the m³ shares: concave, with the
supergradient of the split per position read per pair. The fifth step starts from the split per position's best
shares (α_r(h, j) = α_r) and λ, where its value is that step's, and runs the same search over the m³ shares
(_split_tables takes them as an (m, m, m) array for both steps) with the time the split per position leaves when it
stalls (it did in 0.4-3.8 s of the 10 s on six paper-size draws): +0.21-0.90 % over it there (10,419 → 10,450 on
jaillet-model1 draw 0; ``python benchmarks/bench_chain.py``, docs/seed004-certification.md).

**Own floors by position** (2026-12-02, third session). The chain charges only its first completion its own
floor c; on Model 2, where arrivals are spread, its minimising sequence completes late arrivals long before a_j + o_j
(docs/seed004-certification.md). For every schedule, every position q (from the end) and every μ_q in [0, 1],
C_{e_q} − t0 = μ_q (C_{e_q} − t0) + (1 − μ_q)(C_{e_q} − t0) >= μ_q·c_{e_q} + (1 − μ_q)(C_{e_q} − t0). Summed over q,
with C_{e_q} − t0 = (C_{e_m} − t0) + Σ_{r>=q} δ_r as above,

    Σ_{j∈U} (C_j − t0) >= Σ_q μ_q·c_{e_q} + W_m·(C_{e_m} − t0) + Σ_{r=1}^{m−1} W_r·δ_r,   W_r = Σ_{q<=r} (1 − μ_q),

the chain with each gap's weight r replaced by W_r >= 0 (W_r = r at μ = 0) and the cost μ_q·c_k of request k at
position q (μ_m = 0: the first completion has its c already). Everything above holds with W_r in place of r: the
shares a = α_r·W_r and b = (1 − α_{r−1})·W_{r−1} (W_1 at r = 2) still add up to each gap's weight, and where b would
exceed a (possible only for μ_r near 1, where W_r is close to W_{r−1}), b is lowered to a: the triple then carries
less of δ_{r−1}, whose whole weight is still charged at w(e_r, e_{r−1}), so the bound only falls
(:func:`_split_tables`). The cost μ_q·c_k depends only on the position and the request, so the programme keeps its
form. μ is searched with the shares in the fourth and fifth steps (one Polyak step for both; in units of
1/``FLOOR_FINE``): for a sequence, ∂L_U/∂μ_q is c of position q less the completion time the chain implies there
(its gaps at their pair separations plus the excesses of the least candidates, weighted as in the bonus).
tests/test_chain.py checks random μ, shares and λ against brute force on 100 small instances, and that charging the
floors without lowering the weights exceeds OPT there.

**Tables.** The triple bonuses are built once (exact, in units of 1/``UNIT``, and a float32 copy laid out for the
search), N⁴ entries each over a set T of N requests; each U ⊆ T gathers its part. T is all n requests when their
estimated build time (``TABLE_SECONDS_PER_ENTRY``) is at most ``TABLE_SHARE`` of the time left; otherwise T is the
union of the two orders' U at the least r whose union fits, and r is scanned from there up (every U is valid, so
leaving the largest ones out only narrows the search: on jaillet-model2 draw 28, 102 requests, the best U found in 20
s has 66, while the n⁴ tables (estimated at 3.2 s) left a 10 s solve's chain no time for one, so it returned
``volume-bound``; docs/seed004-certification.md). When not even the tables of the smallest U fit, none is built and
the bound is ``volume-bound``.
"""
from __future__ import annotations

import time

import numpy as np

from ..semantics import SLOT
from ..solvers.base import SolveResult
from .base import FORMULATIONS, ClosedForm
from .compiled import compiled, fits
from .completion import SPLIT, separation, triple_bonus, triple_excess
from .volume import VolumeBound, bound_alone

UNIT = SPLIT[1]          # every cost of the programme in units of 1/UNIT (SPLIT: module docstring, "The split")
LAMBDA_SCALE = 1 << 12   # λ resolution of the exact evaluation: multiples of 1/(UNIT·LAMBDA_SCALE)
EXACT_BIG = 1 << 58      # "no such sequence" in the exact evaluation
TOP_BIG = 1 << 40        # a repeated request in the first three completions' block (times LAMBDA_SCALE < EXACT_BIG)
SCAN_POINTS = 8          # values of r per order in the first pass
SCAN_STEPS = 50          # subgradient steps per r in the first passes
SCAN_COLLAPSE = 0.5      # the first pass leaves an order after a value below this share of its best
POLISH_STEPS = 2000      # at most this many steps for the best r
PATIENCE = 8             # steps without improvement before the step size shrinks
SHRINK = 0.5             # by this factor, from the best λ
THETA_MIN = 2.0 ** -7    # stop when the step factor falls below this (the ascent has stalled)
TARGET_MARGIN = 0.05
#: the split per position (module docstring): α in units of 1/SPLIT_FINE; SPLIT_SHARE of the time left after the
#: scan goes to it on the best set U; SPLIT_LAMBDA_STEPS steps of the λ ascent (from a step factor of at least
#: SPLIT_LAMBDA_THETA) per step of α, whose Polyak step is scaled by SPLIT_STEP
SPLIT_FINE = 48
SPLIT_SHARE = 0.4
SPLIT_LAMBDA_STEPS = 20
SPLIT_LAMBDA_THETA = 2.0 ** -4
SPLIT_STEP = 0.3
#: the first three completions as a block in absolute time (module docstring); False: the plain top of the programme
FIRST_THREE = True
#: with the first three's block, the first four completions' block in the exact evaluations (module docstring); False:
#: the first three's block alone
FIRST_FOUR = True
#: own floors by position (module docstring): μ in units of 1/FLOOR_FINE
FLOOR_FINE = 16
#: at most this share of the time left after the third step goes to the exact search on the left-out requests of
#: the REST_CANDIDATES best sets U, best first, while it lasts (module docstring, "Requests left out of U")
REST_SHARE = 0.1
REST_CANDIDATES = 8
#: at most this share of the time left after that goes to the first completion beside the left-out requests (CP-SAT,
#: no solve started with less than JOINT_MIN_SECONDS; module docstring, "The first completion beside the requests
#: left out")
JOINT_SHARE = 0.25
JOINT_MIN_SECONDS = 0.005
#: ... on the JOINT_CANDIDATES best sets U with requests left out whose value is within JOINT_MARGIN of the best U's
#: (the first four completions' block can rank first a U on which the step adds less than on the next one: on the
#: first 17 requests of jaillet-model1 draw 19, 332 for 7 requests in the chain and 328 for 5, where the step gives 356)
JOINT_CANDIDATES = 3
JOINT_MARGIN = 0.05
#: seconds per entry to build both tables of triple bonuses (n^4 entries; 1.5-2.1 s at 102 requests on the
#: 2-core machine, ``python benchmarks/bench_chain.py``: up to 2.0e-8; 2.8 s on 2026-11-28, 2.6e-8): the search
#: is not started when they would not be ready in time. The builds also stop at the deadline, since a loaded
#: machine can take twice as long (``lpbench solve`` on jaillet-model2 draw 28, chain-bound at 5 s: 5.4 s for a
#: 4.0 s budget, before that check)
TABLE_SECONDS_PER_ENTRY = 3.0e-8
#: at most this share of the time left goes to the tables; the chains' evaluations get the rest
TABLE_SHARE = 0.5
#: seconds to compile the programme's kernels cold (:func:`_tail_minima` 1.4 s, :func:`_exact_tail` 0.7 s after an
#: install, 2026-11-28; :func:`_first_three` with :func:`_block_of` 1.8 s with an empty NUMBA_CACHE_DIR, scratch
#: timing, 2026-12-03): with less time left and not all in numba's cache, no chain is started (``compiled.fits``)
COLD_COMPILE_SECONDS = 4.0
#: and the first four completions' block's (:func:`_four_of`, :func:`_four_below`, :func:`_four_raise`: 1.6 s cold
#: after numba's start, scratch timing, 2026-12-03): with less time left and not in the cache, the chain runs without
#: that block
FOUR_COMPILE_SECONDS = 3.0


def repeats(m: int) -> np.ndarray:
    """[j, k, l] over m requests: True where l ∈ {j, k} or j = k (a request twice among three consecutive)."""
    eye = np.eye(m, dtype=bool)
    return eye[:, None, :] | eye[None, :, :] | eye[:, :, None]


def search_table(B3: np.ndarray, deadline: float | None = None) -> np.ndarray | None:
    """B3 (in units of 1/unit, [r, j, k, l] over all requests) as the float32 table of the search, [r, l, j, k], +inf
    where l ∈ {j, k} or j = k: each minimum over l is then a reduction over the first axis (twice as fast as over
    the last). Built once per instance and gathered per set U. None once ``deadline`` has passed."""
    bad = repeats(B3.shape[1])
    Bt = np.empty(B3.shape, dtype=np.float32)
    for r in range(B3.shape[0]):
        if deadline is not None and time.perf_counter() > deadline:
            return None
        Bt[r] = np.where(bad, np.float32(np.inf), B3[r]).transpose(2, 0, 1)
    return Bt


@compiled
def _tail_minima(Bt, wu, lamu, weight, node, F):
    """F[r] for r = 2..m−1 of the module docstring's programme (float32, as the numpy form computes it: each
    B(r, j, k, l) + F_{r−1}(k, l) rounded, then weight[r]·w + λ_k + node[r, k] + the least of them; weight[r] = r and
    node 0 but for own floors, "Own floors by position"); F[1] is filled by the caller."""
    m = wu.shape[0]
    acc = np.empty((m, m), dtype=np.float32)
    prev_t = np.empty((m, m), dtype=np.float32)
    for r in range(2, m):
        for k in range(m):
            for l in range(m):
                prev_t[l, k] = F[r - 1, k, l]
        acc[:, :] = np.inf
        for l in range(m):
            for j in range(m):
                for k in range(m):
                    v = Bt[r, l, j, k] + prev_t[l, k]
                    if v < acc[j, k]:
                        acc[j, k] = v
        rf = weight[r]
        for j in range(m):
            for k in range(m):
                F[r, j, k] = rf * wu[j, k] + lamu[k] + node[r, k] + acc[j, k]


@compiled
def _exact_tail(B3, keep, w, lamq, weight, node, S, last):
    """F_last of the module docstring's programme in exact integers (units of 1/(unit·S)): F_1(j, k) =
    weight[1]·w(j, k) + λ_k + node[1, k], then for r = 2..last F_r(j, k) = weight[r]·w(j, k) + λ_k + node[r, k] + min
    over l ∉ {j, k} of (S·B3[r, j, k, l] + F_{r−1}(k, l)), j ≠ k (weight[r] = r and node 0 but for own floors);
    ``EXACT_BIG`` (capped) where no sequence exists. U's part of B3 is read at ``keep``, its table positions. ``last``
    is m − 1, or m − 2 below the first three completions' block ("The first three completions in absolute time")."""
    m = len(keep)
    F = np.empty((m, m), dtype=np.int64)
    G = np.empty((m, m), dtype=np.int64)
    for j in range(m):
        for k in range(m):
            F[j, k] = EXACT_BIG if j == k else weight[1] * w[j, k] + lamq[k] + node[1, k]
    for r in range(2, last + 1):
        for j in range(m):
            for k in range(m):
                if j == k:
                    G[j, k] = EXACT_BIG
                    continue
                least = EXACT_BIG
                for l in range(m):
                    if l != j and l != k:
                        v = S * np.int64(B3[r, keep[j], keep[k], keep[l]]) + F[k, l]
                        if v < least:
                            least = v
                G[j, k] = min(weight[r] * w[j, k] + lamq[k] + node[r, k] + least, EXACT_BIG)
        F, G = G, F
    return F


@compiled
def _top_minima(top, lam, G, first):
    """G[y, l] = min over x of top[x, y, l] + lam[x] and ``first`` [y, l] the least x (the first three completions'
    block at the programme's top, :meth:`_QPath.value`)."""
    m = top.shape[0]
    G[:, :] = np.inf
    for x in range(m):
        for y in range(m):
            for l in range(m):
                v = top[x, y, l] + lam[x]
                if v < G[y, l]:
                    G[y, l] = v
                    first[y, l] = x


@compiled
def _block_of(c, p, o, w, M, A1, A2, a3, x, y, l):
    """(the block of :func:`_first_three` for x, y, l with a3 = A3[y, l], and its gaps δ1, δ2 at the least value)."""
    wyl = w[y, l]
    u = c[x]
    v0 = max(c[y], u + w[x, y])
    z0 = max(c[l], u + w[x, l])
    v = max(v0, u + o[y])                                        # case 3: y starts at or after C_x
    z = max(z0, v + wyl)
    best, d1, d2 = A2 * (v - u) + a3 * (z - v - wyl), v - u, z - v
    z = max(z0, u + o[l], v0 + wyl)                              # case 2: l starts at or after C_x
    value = A2 * (v0 - u) + a3 * (z - v0 - wyl)
    if value < best:
        best, d1, d2 = value, v0 - u, z - v0
    R = p[x] + p[y] + p[l] - M + 2 * u                           # case 1: v + z >= R
    for v in range(v0, max(v0, (R - wyl + 1) // 2) + 1):
        z = max(z0, v + wyl, R - v)
        value = A2 * (v - u) + a3 * (z - v - wyl)
        if value < best:
            best, d1, d2 = value, v - u, z - v
    return A1 * u + best, d1, d2


@compiled
def _first_three(c, p, o, w, M, A1, A2, A3):
    """Block[x, y, l] of the module docstring's "The first three completions in absolute time": the least
    A1·u + A2·δ1 + A3[y, l]·(δ2 − w(y, l)) over the completions u = C_x − t0, u + δ1 = C_y − t0 and u + δ1 + δ2 =
    C_l − t0 that x, y, l alone allow in that order (u >= c_x, u + δ1 >= c_y, u + δ1 + δ2 >= c_l, δ1 >= w(x, y),
    δ2 >= w(y, l), δ1 + δ2 >= w(x, l) and one of Lemma 2''s three cases), for A1, A2 >= A3 >= 0; ``EXACT_BIG``
    where two of x, y, l coincide. With v = u + δ1 and z = u + δ1 + δ2 the objective is A1·u + (A2 − A3)·v + A3·z
    less constants, every coefficient >= 0 (as A2 >= A3), and all constraints but case 1's push a variable up from
    another: u = c_x, and in cases 2 and 3 v and z at their least values; in case 1 (v + z − 2u >= R, R = p_x + p_y
    + p_l − M) z is least for each v, and v runs from its least value to where the row holds at z = v + w(y, l)
    (:func:`_block_of`)."""
    m = c.shape[0]
    B = np.empty((m, m, m), dtype=np.int64)
    for x in range(m):
        for y in range(m):
            for l in range(m):
                if x == y or x == l or y == l:
                    B[x, y, l] = EXACT_BIG
                else:
                    B[x, y, l] = _block_of(c, p, o, w, M, A1, A2, A3[y, l], x, y, l)[0]
    return B


@compiled
def _four_of(c, p, o, M, A1, A2, A3, A4, wyl, wle, x, y, l, e):
    """Q(x, y, l, e) of the module docstring's "The first four completions": the least A1·u + A2·(v − u) + A3·(z − v −
    w(y, l)) + A4·(t − z − w(l, e)) over the completions u, v, z, t (from t0) of x, y, l, e that the four alone allow
    in that order (ties allowed), for A1 >= A2 >= A3 >= A4 >= 0 (``wyl``, ``wle``: w(y, l), w(l, e)); ``EXACT_BIG``
    if none. By Lemma 1 memory peaks at completions, and at request i's, a later j (C_j − C_i = d) holds p_j − d if
    d < o_j, else nothing, so the memory rows are, with f_j(d) that holding:

        x: p_x + f_y(v − u) + f_l(z − u) + f_e(t − u) <= M,   y: p_y + f_l(z − v) + f_e(t − v) <= M,
        l: p_l + f_e(t − z) <= M,                               and u >= c_x, v >= c_y, z >= c_l, t >= c_e.

    Every f is non-increasing and the objective's coefficients of u, v, z, t (A1 − A2, A2 − A3, A3 − A4, A4) are
    >= 0, so u = c_x; for each v and z, t is the least value that the rows allow; and v beyond max(c_y, u + o_y) or z
    beyond max(c_l, v + o_l) relaxes no row (f_y, f_l are 0 there) while raising the objective. The kernel runs over
    the v and z between (at most (o_y + 1)(o_l + 1) pairs)."""
    u = c[x]
    best = EXACT_BIG
    v_lo = max(c[y], u)
    for v in range(v_lo, max(v_lo, u + o[y]) + 1):
        fy = p[y] - (v - u) if v - u < o[y] else 0
        z_lo = max(c[l], v)
        for z in range(z_lo, max(z_lo, v + o[l]) + 1):
            cap_x = M - p[x] - fy - (p[l] - (z - u) if z - u < o[l] else 0)
            cap_y = M - p[y] - (p[l] - (z - v) if z - v < o[l] else 0)
            if cap_x < 0 or cap_y < 0:
                continue
            t = max(c[e], z + min(o[e], max(0, p[e] + p[l] - M)),      # the least d with f_e(d) <= cap, at each row
                    v + min(o[e], max(0, p[e] - cap_y)), u + min(o[e], max(0, p[e] - cap_x)))
            value = A1 * u + A2 * (v - u) + A3 * (z - v - wyl) + A4 * (t - z - wle)
            if value < best:
                best = value
    return best


@compiled
def _four_below(head, G, pairs, low, least_e, bound):
    """The quadruples x, y, l, e of distinct requests whose V = head[x, y, l] + G[y, l, e] is below ``bound``: (their
    V, their index ((x·m + y)·m + l)·m + e). ``G`` is ``EXACT_BIG`` where y, l, e repeat or no tail follows,
    ``least_e`` [y, l] its least over e, ``low`` [y, l] = min over x of head + least_e (a lower bound on V through
    y, l), and ``pairs`` the (y, l) (as y·m + l) in increasing ``low``, so that the scan leaves the pairs and first
    completers that cannot reach the bound (the lazy minimum of :meth:`_QPath.exact`)."""
    m = head.shape[0]
    values = np.empty(1024, dtype=np.int64)
    index = np.empty(1024, dtype=np.int64)
    count = 0
    for yl in pairs:
        y, l = yl // m, yl % m
        if low[y, l] >= bound:
            break
        for x in range(m):
            h = head[x, y, l]
            if h < EXACT_BIG and h + least_e[y, l] < bound:
                for e in range(m):
                    if e != x and G[y, l, e] < EXACT_BIG and h + G[y, l, e] < bound:
                        if count == len(values):
                            values, index = np.concatenate((values, values)), np.concatenate((index, index))
                        values[count], index[count] = h + G[y, l, e], ((x * m + y) * m + l) * m + e
                        count += 1
    return values[:count], index[:count]


@compiled
def _four_raise(bound, values, index, parts, Bm, c, p, o, w, M, A1, A2, A3, A4, S):
    """The quadruples of :func:`_four_below` (``values`` ascending), each raised by max(0, S·Q(x, y, l, e) −
    parts[x, y, l] − Bm[y, l, e]) (:func:`_four_of` with A4[y, l, e]), in turn until the next one's V is at least the
    least raised value or ``bound`` (every raise is >= 0, so none after it can be lower): (that least, the number of
    Q computed)."""
    m = parts.shape[0]
    solved = 0
    for i in range(len(values)):
        if values[i] >= bound:
            break
        at = index[i]
        e, l, y, x = at % m, at // m % m, at // (m * m) % m, at // (m * m * m)
        Q = _four_of(c, p, o, M, A1, A2, A3, A4[y, l, e], w[y, l], w[l, e], x, y, l, e)
        solved += 1
        bound = min(bound, values[i] + max(0, S * Q - parts[x, y, l] - Bm[y, l, e]))
    return bound, solved


class _QPath:
    """The q-path programme of the module docstring for one set U (``keep``, ascending), in units of 1/``unit``
    (the table's: ``UNIT``, or 3 for the tables of ``latency-astar``): c and w of U, and the tables of all requests
    (``B3`` exact, ``Bt`` from :func:`search_table`), of which U's part is gathered (the search's once, the exact one
    position by position)."""

    def __init__(self, c: np.ndarray, w: np.ndarray, B3: np.ndarray, Bt: np.ndarray, keep: np.ndarray,
                 unit: int = UNIT, weight_unit: int = 1, extra: np.ndarray | None = None,
                 requests: tuple | None = None, four: bool = True):
        self.m = m = len(c)
        self.unit = unit
        # U's (peaks, outputs, memory): with them (and m >= 4) the first three completions are a block in absolute
        # time (module docstring), whose tables ``top`` (the block, the plain charge, their max; units of 1/unit)
        # :meth:`first_three` builds for the current weights and tables; None: the plain top of the programme
        self.requests = requests if requests is not None and m >= 4 else None
        self.top = None
        # with the block, the first four completions' block in the exact evaluation (module docstring): ``a4`` [y, l, e]
        # the share of δ_{m−3} that triple (y, l, e) carries (units of 1/unit), set with the top's tables
        self.four = self.requests is not None and FIRST_FOUR and four
        self.quadruples = 0               # the quadruples whose Q the last exact evaluation computed
        self.c, self.w = np.asarray(c, dtype=np.int64), np.asarray(w, dtype=np.int64)
        # X_h (ints, latency units) of the first completion beside the requests left out (module docstring): the
        # first completer h is charged weight·(c_h + X_h/m) by the exact evaluation; the search's float value leaves
        # X out, so the ascent's path is the chain's own and every exact value is at least the one without X
        self.extra = np.zeros(m, dtype=np.int64) if extra is None else np.asarray(extra, dtype=np.int64)
        self.scale = unit // weight_unit
        # the weights (gap r: weight[r], r = 1..m−1; the first completion: weight[m]) in units of 1/weight_unit, c and
        # w in units of weight_unit/unit, so that weight·w is in units of 1/unit; node[r, k] (units of 1/unit) is what
        # request k costs at position r beside λ_k. Weights r and no node costs but for own floors (:meth:`own_floors`)
        scale = unit // weight_unit
        self.cu, self.wu, self.B3, self.keep = scale * c, scale * w, B3, keep
        self.eye = np.eye(m, dtype=bool)
        self.wuf = self.wu.astype(np.float32)
        self.weight_unit = weight_unit
        self.set_weights(weight_unit * np.arange(m + 1, dtype=np.int64), np.zeros((m + 1, m), dtype=np.int64))
        if Bt.shape[1] == m:                                   # U's own table (keep is then 0..m−1): shared
            self.Bt = Bt
        else:
            self.Bt = np.ascontiguousarray(Bt[:m][:, keep[:, None, None], keep[None, :, None], keep[None, None, :]])

    def value(self, lam: np.ndarray) -> tuple[float, np.ndarray]:
        """(unit·L_U(λ), approximately (float32), and the visits of each request on a minimising sequence, which
        is left in ``self.sequence``; :meth:`firsts` then gives the least value of a sequence that each request
        starts)."""
        m, wu, lamu = self.m, self.wuf, (self.unit * lam).astype(np.float32)
        F = np.empty((m, m, m), dtype=np.float32)
        F[1] = self.weightf[1] * wu + lamu[None, :] + self.nodef[1][None, :]
        F[1][self.eye] = np.inf
        _tail_minima(self.Bt, wu, lamu, self.weightf, self.nodef, F)
        if self.top is None:
            V = (self.weight[m] * self.cu + lamu + self.node[m])[:, None] + F[m - 1]
            h, j = np.unravel_index(np.argmin(V), V.shape)
            value = float(V[h, j]) - float(lamu.sum())
            self._firsts = lambda: V.min(axis=1)
            sequence, below = [int(h), int(j)], m - 1
        else:                                                  # the first three completions' block, then F_{m−2}
            lam_x = (lamu + self.node[m]).astype(np.float64)
            G, least = np.empty((m, m)), np.empty((m, m), dtype=np.int64)  # least: the first completer x of each y, l
            _top_minima(self.topf, lam_x, G, least)
            R = (lamu + self.node[m - 1])[:, None] + F[m - 2]
            V = G + R
            h, j = np.unravel_index(np.argmin(V), V.shape)
            value = float(V[h, j]) - float(lamu.sum())
            self._firsts = lambda: (self.topf + lam_x[:, None, None] + R[None]).min(axis=(1, 2))
            sequence, below = [int(least[h, j]), int(h), int(j)], m - 2
        self._lam_sum = float(lamu.sum())
        for r in range(below, 1, -1):                          # follow the minimising tail
            l = int(np.argmin(self.Bt[r][:, h, j] + F[r - 1][j]))
            sequence.append(l)
            h, j = j, l
        self.sequence = np.array(sequence)                     # first completer first: e_m, ..., e_1
        return value, np.bincount(self.sequence, minlength=m).astype(np.float64)

    def firsts(self) -> np.ndarray:
        """The least value (as :meth:`value`'s) of a sequence that each request starts, at the λ of the last
        :meth:`value`."""
        return (self._firsts() - self._lam_sum) / self.unit

    def exact(self, lam: np.ndarray) -> tuple[int, int]:
        """L_U(λ') for λ' = λ rounded to a multiple of 1/(unit·LAMBDA_SCALE), exactly: (numerator, denominator)
        (:func:`_exact_tail`), the first completion with its X and, if ``four``, the first four completions' block
        (``quadruples`` then counts the Q computed); the numerator without either, which the split searches follow, is
        left in ``self.plain``."""
        S = LAMBDA_SCALE
        lamq = np.round(self.unit * S * lam).astype(np.int64)
        w = S * self.wu.astype(np.int64)
        m = self.m
        last = m - 1 if self.top is None else m - 3 if self.four else m - 2
        F = _exact_tail(self.B3, self.keep, w, lamq, self.weight, S * self.node, S, last)
        extra = (self.weight[m] * S * self.scale * self.extra) // m      # rounded down: still a bound
        if self.top is None:
            V = (self.weight[m] * S * self.cu + lamq + S * self.node[m])[:, None] + F
            self.plain = int(V.min()) - int(lamq.sum())                                # the value without X
            return int((V + extra[:, None]).min()) - int(lamq.sum()), self.unit * S
        block, plain, top = self.top      # the first three completions' block, then F_{m−2} (module docstring)
        # x and y's λ and node costs [x, y], and F_{m−2} [y, l]: with the first four's block, from F_{m−3} [l, e] by
        # _exact_tail's step in numpy, whose charge at position m − 2 beside the minimum over e is third's [y, l]
        firsts = (lamq + S * self.node[m])[:, None] + (lamq + S * self.node[m - 1])[None, :]
        if self.four:
            F3 = F
            Bm = S * self.B3[m - 2][np.ix_(self.keep, self.keep, self.keep)].astype(np.int64)
            G = np.where(repeats(m) | (F3 >= EXACT_BIG)[None, :, :], EXACT_BIG, Bm + F3[None, :, :])
            tail = G.min(axis=2)                                                 # [y, l]: min over e of B + F_{m−3}
            third = self.weight[m - 2] * w + lamq[None, :] + S * self.node[m - 2][None, :]
            F = np.minimum(third + tail, EXACT_BIG)
            F[self.eye] = EXACT_BIG
        rest = firsts[:, :, None] + F[None, :, :]
        self.plain = int((S * top + rest).min()) - int(lamq.sum())
        parts = np.maximum(S * block, S * plain + extra[:, None, None])
        value = int((parts + rest).min()) - int(lamq.sum())
        if self.four:                     # the first four completions' block (module docstring)
            head = firsts[:, :, None] + third[None, :, :] + parts
            head[top >= TOP_BIG] = EXACT_BIG
            p, o, M = self.requests
            coefficients = (self.c, p, o, self.w, M, self.a1, self.a2, int(self.weight[m - 2]) * self.scale, self.a4, S)
            low = np.minimum(head.min(axis=0) + tail, EXACT_BIG)
            scan = (head, G, np.argsort(low, axis=None, kind="stable"), low, tail)
            values, index, step = [], [], 1        # the least quadruple: below low's least + step (x = e excluded)
            while not len(values) and int(low.min()) + step < EXACT_BIG:
                values, index = _four_below(*scan, int(low.min()) + step)
                step *= 64
            if len(values):                        # its raised value bounds the least; the ones below it, in order
                i = int(np.argmin(values))
                bound, _ = _four_raise(EXACT_BIG, values[i:i + 1], index[i:i + 1], parts, Bm, *coefficients)
                values, index = _four_below(*scan, bound)
                order = np.argsort(values, kind="stable")
                four, self.quadruples = _four_raise(bound, values[order], index[order], parts, Bm, *coefficients)
                value = max(value, int(four) - int(lamq.sum()))
        return value, self.unit * S

    def first_three(self, A3: np.ndarray, Btop: np.ndarray, A4: np.ndarray | int) -> None:
        """The table of the first three completions' block (module docstring) for the current weights, if U's
        requests were given: ``A3`` [y, l] the share of δ_{m−2}'s weight that the top triple carries and ``Btop``
        [x, y, l] its bonus, both in units of 1/unit as the programme's tables have them (the top triple (x, y, l)
        at position m − 1). Its entries are max(block, the plain top's charge A1·c_x + A2·w(x, y) + Btop): both are
        bounds on the same part of the chain, and the plain one takes the first completion's X (:meth:`exact`).
        ``A4`` [y, l, e] (or one value for all): the share of δ_{m−3}'s weight that triple (y, l, e) carries at position
        m − 2, for the first four completions' block."""
        if self.requests is None:
            return
        m, scale = self.m, self.scale
        p, o, M = self.requests
        A1, A2 = int(self.weight[m]) * scale, int(self.weight[m - 1]) * scale
        self.a1, self.a2, self.a3 = A1, A2, np.ascontiguousarray(A3, dtype=np.int64)
        self.a4 = np.ascontiguousarray(np.broadcast_to(A4, (m, m, m)), dtype=np.int64)
        block = _first_three(self.c, p, o, self.w, M, A1, A2, self.a3)
        plain = A1 * self.c[:, None, None] + A2 * self.w[:, :, None] + Btop.astype(np.int64)
        block = np.minimum(block, TOP_BIG)
        top = np.maximum(block, plain)    # without X; :meth:`exact` adds X to the plain charge
        self.top = (block, plain, top)
        self.topf = np.where(top >= TOP_BIG, np.inf, top.astype(np.float64))

    def split_top(self, shares: np.ndarray) -> None:
        """:meth:`first_three` on U's own tables of a split per position and pair (``shares``, units of
        1/SPLIT_FINE), as :func:`_split_tables` has just built them: the top triple's share of δ_{m−2} is its b there
        (the first gap's share is 1, so its a is SPLIT_FINE·W_{m−1})."""
        m, weight = self.m, self.weight
        a = shares[m - 2] * weight[m - 2]                     # [y, l]: triple (y, l, e)'s share of δ_{m−2}, and of
        b = SPLIT_FINE * weight[1] if m == 4 else (SPLIT_FINE - shares[m - 3]) * weight[m - 3]    # δ_{m−3} [l, e]
        self.first_three(np.minimum((SPLIT_FINE - shares[m - 2]) * weight[m - 2], SPLIT_FINE * weight[m - 1]),
                         self.B3[m - 1], np.minimum(a[:, :, None], b))

    def set_weights(self, weight: np.ndarray, node: np.ndarray) -> None:
        """The programme's weights (units of 1/weight_unit) and node costs (units of 1/unit), both ints."""
        self.weight, self.node = weight, node
        self.weightf, self.nodef = weight.astype(np.float32), node.astype(np.float32)

    def own_floors(self, mu: np.ndarray) -> None:
        """Weights and node costs of own floors priced by position (module docstring, "Own floors by position"):
        ``mu`` (ints, units of 1/weight_unit, index q = 1..m − 1; mu[0] and mu[m] unused) gives gap r the weight
        W_r = Σ_{q<=r} (1 − μ_q), the first completion W_{m−1} + 1, and request k at position q the cost μ_q·c_k."""
        m, d = self.m, self.weight_unit
        mu = mu.copy()
        mu[0] = mu[m] = 0
        weight = np.concatenate([[0], np.cumsum(d - mu[1:m])]).astype(np.int64)
        weight = np.append(weight, weight[m - 1] + d)
        self.set_weights(weight, mu[:, None] * self.cu[None, :])


def _ascent(q: _QPath, lam: np.ndarray, theta: float, steps: int, deadline: float) -> tuple[np.ndarray, float]:
    """Subgradient ascent on L_U from ``lam`` with step factor ``theta`` (module docstring): the best λ seen
    and the step factor reached (0 once it fell below ``THETA_MIN``: the ascent has stalled)."""
    best_lam, best = lam.copy(), -np.inf
    stall = 0
    for _ in range(steps):
        if time.perf_counter() > deadline:
            break
        value, visits = q.value(lam)
        value /= q.unit
        if value > best + 1e-6:
            best_lam, best, stall = lam.copy(), value, 0
        else:
            stall += 1
            if stall >= PATIENCE:
                theta, stall, lam = theta * SHRINK, 0, best_lam.copy()
                if theta < THETA_MIN:
                    return best_lam, 0.0
                continue
        g = visits - 1
        norm = float(g @ g)
        if norm == 0:             # the minimising sequence is an order of U: L_U is at its optimum
            return best_lam, 0.0
        goal = (1 + TARGET_MARGIN) * abs(best) + 1
        lam = lam + theta * (goal - value) / norm * g
    return best_lam, theta


@compiled
def _split_tables(D1, D2, shares, unit, weight, Bx, Bt):
    """U's triple bonuses under a split per position and pair (module docstring, "The split per position and
    pair"), in units of 1/(unit·weight unit): Bx[r, h, j, k] = min over the candidates x of a·D1[x, h, j, k] +
    b·D2[x, h, j, k] with a = shares[r, h, j]·weight[r] and b = (unit − shares[r − 1, j, k])·weight[r − 1], or
    unit·weight[1] when r = 2 (the last gap at its whole weight), and b at most a ("Own floors by position"; it is
    below a unless the weights are own floors'), r = 2..m − 1 (a split per position: shares[r] constant; weight[r] = r
    but for own floors); Bt is its float32 copy in the search's layout (:func:`search_table`: Bt[r, k, h, j], +inf
    where a request repeats)."""
    X, m = D1.shape[0], D1.shape[1]
    for r in range(2, m):
        for x in range(X):                       # candidate by candidate: every array read in its memory order
            for h in range(m):
                for j in range(m):
                    a = shares[r, h, j] * weight[r]
                    for k in range(m):
                        b = unit * weight[1] if r == 2 else (unit - shares[r - 1, j, k]) * weight[r - 1]
                        if b > a:
                            b = a
                        v = a * D1[x, h, j, k] + b * D2[x, h, j, k]
                        if x == 0 or v < Bx[r, h, j, k]:
                            Bx[r, h, j, k] = v
        search_layout(Bx, r, Bt)


@compiled
def search_layout(Bx, r, Bt):
    """Bt[r, k, h, j] = Bx[r, h, j, k] in float32, +inf where a request repeats (:func:`search_table`'s layout), for
    one position r."""
    m = Bx.shape[1]
    for k in range(m):
        for h in range(m):
            for j in range(m):
                if h == j or k == h or k == j:
                    Bt[r, k, h, j] = np.inf
                else:
                    Bt[r, k, h, j] = np.float32(Bx[r, h, j, k])


def split_search(c: np.ndarray, w: np.ndarray, p: np.ndarray, o: np.ndarray, M: int, lam: np.ndarray,
                 deadline: float, trace: list | None = None, pair: bool = True, floors: bool = True,
                 extra: np.ndarray | None = None, four: bool = True) -> dict:
    """The best exact L_U(λ) over λ and the split per position (module docstring, "The split per position"),
    searched from ``lam`` and α_r = ``SPLIT`` (the first gap's at 1) until it stalls, then (``pair``) over the split
    per position and pair from its best shares and λ until ``deadline``: {"position": (numerator, denominator),
    "pair": (numerator, denominator)}, a step left out when not one of its evaluations fitted. U's requests: first
    completions ``c``, separations ``w``, peaks ``p`` = s + o, outputs ``o``; ``trace`` receives (step, value) for
    each exact value; ``extra``: the first completion's X_h ("The first completion beside the requests left out")."""
    m = len(c)
    D1, D2 = triple_excess(p, o, w, M)
    alpha = np.full(m, SPLIT[0] / SPLIT[1])
    alpha[m - 1] = 1.0                           # the first gap, in one triple only: all of its weight there
    mu = np.zeros(m + 1) if floors else None      # own floors' μ_q, q = 1..m − 1 (module docstring)
    # a·D1 + b·D2 <= SPLIT_FINE·FLOOR_FINE·r·3M (a + b <= SPLIT_FINE·FLOOR_FINE·r; D1, D2 <= 3M): int32 unless that
    # could overflow
    Bx = np.zeros((m, m, m, m), dtype=np.int32 if 3 * SPLIT_FINE * FLOOR_FINE * m * M < 2 ** 31 else np.int64)
    Bt = np.full((m, m, m, m), np.inf, dtype=np.float32)
    # reads Bx and Bt as _split_tables rewrites them; weights in units of 1/FLOOR_FINE
    q = _QPath(c, w, Bx, Bt, np.arange(m), unit=SPLIT_FINE * FLOOR_FINE, weight_unit=FLOOR_FINE, extra=extra,
               requests=(p, o, M) if FIRST_THREE else None, four=four)
    found = {}
    best, alpha, mu, lam = _share_ascent(q, c, D1, D2, alpha, mu, lam, deadline, trace, "position")
    if best is not None:
        found["position"] = best
        if pair and time.perf_counter() < deadline:
            per_pair = np.ascontiguousarray(np.broadcast_to(alpha[:, None, None], (m, m, m)))
            best = _share_ascent(q, c, D1, D2, per_pair, mu, lam, deadline, trace, "pair")[0]
            if best is not None:
                found["pair"] = best
    return found


def _share_ascent(q: _QPath, c: np.ndarray, D1: np.ndarray, D2: np.ndarray, alpha: np.ndarray, mu: np.ndarray | None,
                  lam: np.ndarray, deadline: float, trace: list | None,
                  step: str) -> tuple[tuple[int, int] | None, np.ndarray, np.ndarray | None, np.ndarray]:
    """The search of :func:`split_search` over the shares ``alpha``: α_r (shape (m,), per position) or α_r(h, j)
    (shape (m, m, m), per position and pair), and with ``mu`` (not None) over own floors' μ too (one Polyak step for
    both), from ``alpha``, ``mu`` and ``lam``: (the best exact (numerator, denominator) or None, with the first
    completion's X; the shares, μ and λ of the best value without X, which the search follows)."""
    m = q.m
    best_value, best_alpha, best_mu, best_lam = -np.inf, alpha.copy(), mu, lam.copy()
    found = None                                 # the best exact value with X (the search follows the one without)
    theta, lam_theta, stall = 1.0, 1.0, 0
    at = (lambda r, h, j: r) if alpha.ndim == 1 else (lambda r, h, j: (r, h, j))      # α's index of gap r
    while time.perf_counter() < deadline:
        shares = np.rint(alpha * SPLIT_FINE).astype(np.int64)
        if alpha.ndim == 1:
            shares = np.ascontiguousarray(np.broadcast_to(shares[:, None, None], (m, m, m)))
        if mu is not None:                       # else q keeps the weights r it was built with
            q.own_floors(np.rint(mu * q.weight_unit).astype(np.int64))
        _split_tables(D1, D2, shares, SPLIT_FINE, q.weight, q.B3, q.Bt)
        q.split_top(shares)
        lam, lam_theta = _ascent(q, lam, max(lam_theta, SPLIT_LAMBDA_THETA), SPLIT_LAMBDA_STEPS, deadline)
        num, den = q.exact(lam)
        if trace is not None:
            trace.append((step, num / den))
        if found is None or num * found[1] > found[0] * den:
            found = (num, den)
        num = q.plain
        if num / den > best_value + 1e-9:
            best_value, best_alpha, best_lam, stall = num / den, alpha.copy(), lam.copy(), 0
            best_mu = None if mu is None else mu.copy()
        else:
            stall += 1
            if stall >= PATIENCE:
                theta, stall, alpha = theta * SHRINK, 0, best_alpha.copy()
                mu = None if mu is None else best_mu.copy()
                if theta < THETA_MIN:
                    break
                continue
        q.value(lam)                             # its minimising sequence, e_m first
        e = q.sequence
        W = q.weight / q.weight_unit             # the gaps' weights W_r (r at μ = 0)
        g = np.zeros(alpha.shape)                # a supergradient of L_U in α at this λ and μ
        dW = np.zeros(m)                         # and ∂L_U/∂W_r: the gap δ_r the sequence implies (for μ)
        dW[1:] = q.wu[e[m - 2::-1], e[m - 1:0:-1]] / (q.unit // q.weight_unit)        # w(e_{r+1}, e_r), r = 1..m−1
        top = m
        if q.top is not None:                    # the first three completions' block at its least gaps
            top = m - 1
            (x, y, k), (p, o, M) = e[:3], q.requests
            _, d1, d2 = _block_of(q.c, p, o, q.w, M, q.a1, q.a2, q.a3[y, k], x, y, k)
            d1, d2 = d1 - q.w[x, y], d2 - q.w[y, k]                  # their excesses over the pair separations
            g[at(m - 2, y, k)] -= W[m - 2] * d2
            dW[m - 1] += d1
            dW[m - 2] += (1 - shares[m - 2, y, k] / SPLIT_FINE) * d2
        for r in range(2, top):                  # triple (e_{r+1}, e_r, e_{r−1}) at its least candidate x
            h, j, k = e[m - r - 1], e[m - r], e[m - r + 1]
            a = shares[r, h, j] * q.weight[r]
            b = SPLIT_FINE * q.weight[1] if r == 2 else (SPLIT_FINE - shares[r - 1, j, k]) * q.weight[r - 1]
            x = int(np.argmin(a * D1[:, h, j, k] + min(a, b) * D2[:, h, j, k]))
            share = shares[r, h, j] / SPLIT_FINE
            if b >= a:                           # b at a (own floors only): the triple's whole weight is α_r·W_r
                g[at(r, h, j)] += W[r] * (D1[x, h, j, k] + D2[x, h, j, k])
                dW[r] += share * (D1[x, h, j, k] + D2[x, h, j, k])
                continue
            g[at(r, h, j)] += W[r] * D1[x, h, j, k]
            dW[r] += share * D1[x, h, j, k]
            if r > 2:
                g[at(r - 1, j, k)] -= W[r - 1] * D2[x, h, j, k]
                dW[r - 1] += (1 - shares[r - 1, j, k] / SPLIT_FINE) * D2[x, h, j, k]
            else:
                dW[1] += D2[x, h, j, k]
        g[m - 1] = 0.0
        norm = float((g * g).sum())
        if mu is not None:                       # ∂L_U/∂μ_q: c of position q less the completion the chain implies
            implied = c[e[0]] + np.cumsum(dW[::-1])[::-1]               # implied[q] = c_first + Σ_{r>=q} dW[r]
            g_mu = np.zeros(m + 1)
            g_mu[1:m] = c[e[m - np.arange(1, m)]] - implied[1:m]
            g_mu[1:m][(mu[1:m] <= 0) & (g_mu[1:m] < 0)] = 0.0          # projected: μ stays in [0, 1]
            g_mu[1:m][(mu[1:m] >= 1) & (g_mu[1:m] > 0)] = 0.0
            norm += float((g_mu * g_mu).sum())
        if norm == 0:
            break
        goal = (1 + TARGET_MARGIN) * abs(best_value) + 1
        factor = SPLIT_STEP * theta * (goal - num / den) / norm
        alpha = np.clip(alpha + factor * g, 0.5, 1.0)
        alpha[m - 1] = 1.0
        if mu is not None:
            mu = np.clip(mu + factor * g_mu, 0.0, 1.0)
    return found, best_alpha, best_mu, best_lam


def first_beside_rest(inst, keep: np.ndarray, gone: np.ndarray, rest: int, c: np.ndarray, t0: int,
                      seconds: float, firsts: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """(X_h for each h of U = ``keep``, in U's order, and how many were found) of the module docstring's "The first
    completion beside the requests left out": max(0, W(h) − ``rest`` − m·c_h), W(h) a certified lower bound on
    m·(C_h − t0) + Σ_{j∈R} (C_j − a_j) over the schedules of R ∪ {h} (R = ``gone``, ``rest`` the bound on OPT(R)
    that the chain adds), by CP-SAT (:func:`~.latency_cp.weighted_latency_bound`), each with an equal share of what is
    left of ``seconds``; X_h = 0 for those not reached. The first completers of least c first, or with ``firsts`` (the
    programme's least value with each request first, at the current multipliers) of least value first, until the
    next one's is at least the least value + X_h found so far: at these multipliers no request left can lower it."""
    from ..sim.multi import sub_instance
    from .latency_cp import weighted_latency_bound

    m = len(keep)
    X = np.zeros(m, dtype=np.int64)
    end = time.perf_counter() + seconds
    solved = 0
    order = np.argsort(c[keep] if firsts is None else firsts, kind="stable")
    least = np.inf
    for done, i in enumerate(order):
        left = end - time.perf_counter()
        if left < JOINT_MIN_SECONDS or (firsts is not None and firsts[i] >= least):
            break
        h = int(keep[i])
        ids = np.sort(np.append(gone, h))
        weights = np.where(ids == h, m, 1)
        W = weighted_latency_bound(sub_instance(inst, ids), weights, left / (m - done))
        W += m * (int(inst.arrival[h]) - t0)                  # m·(C_h − a_h) → m·(C_h − t0)
        X[i] = max(0, W - rest - m * int(c[h]))
        solved += 1
        if firsts is not None:
            least = min(least, firsts[i] + X[i])
    return X, solved


def drop_orders(s: np.ndarray, o: np.ndarray) -> dict:
    """The requests in the order U drops them (module docstring): by output length, and by peak s + o."""
    return {"shortest": np.argsort(o, kind="stable"), "smallest-peak": np.argsort(s + o, kind="stable")}


def table_requests(orders: dict, n: int, seconds: float) -> tuple[np.ndarray, int] | None:
    """(T, r_floor): the requests the tables cover (ascending) and the least r scanned, so that the tables' N⁴
    entries take at most ``TABLE_SHARE`` of ``seconds`` by the estimate (module docstring): all n requests and r = 0
    if they fit, else the union over ``orders`` of U at the least r that fits (U keeps at least two requests);
    None when none fits."""
    budget = TABLE_SHARE * max(seconds, 0.0)
    for r in range(max(n - 2, 1)):
        T = np.unique(np.concatenate([order[r:] for order in orders.values()]))
        if len(T) ** 4 * TABLE_SECONDS_PER_ENTRY <= budget:
            return T, r
    return None


def chain_bound(inst, deadline: float, trace: list | None = None) -> tuple[int, str]:
    """(certified lower bound on total latency, which U gave it, or "volume-bound" where no chain beat it) by
    the search of the module docstring; ``trace`` (a list) receives (order, r, steps, bound) per evaluation (steps
    "split per position" or "split per position and pair" for the fourth and fifth steps)."""
    a, s, o = (x.astype(np.int64) for x in (inst.arrival, inst.prompt, inst.output))
    M, n = int(inst.memory), inst.n
    t0 = int(a.min())
    c = a - t0 + o
    w = separation(inst)
    best = (int(round(VolumeBound(inst).value())), "volume-bound")            # r = n: no chain
    orders = drop_orders(s, o)
    tabled = table_requests(orders, n, deadline - time.perf_counter())
    kernels = (_tail_minima, _exact_tail, _first_three, _top_minima)
    if tabled is None or not fits(deadline - time.perf_counter(), COLD_COMPILE_SECONDS, *kernels):
        return best                                # the tables or the kernels would not be ready in time: no chain
    four = FIRST_FOUR and fits(deadline - time.perf_counter(), COLD_COMPILE_SECONDS + FOUR_COMPILE_SECONDS, *kernels,
                               _four_below, _four_raise)
    T, r_floor = tabled
    N = len(T)
    at = np.full(n, -1, dtype=np.int64)            # each request's position in the tables (−1: not in T)
    at[T] = np.arange(N)
    # UNIT·B <= a·c·δ1 + (UNIT − a)·c·δ2 <= UNIT·c·3M with c < N (δ1, δ2 <= 3M): int32 unless that could overflow
    B3 = triple_bonus((s + o)[T], o[T], w[np.ix_(T, T)], M, N,
                      dtype=np.int32 if 3 * UNIT * N * M < 2 ** 31 else np.int64, deadline=deadline, split=SPLIT)
    Bt = search_table(B3, deadline) if B3 is not None else None
    if Bt is None:
        return best                                # the tables took longer than estimated: no time for a chain
    left_out: dict = {}

    def rest_bound(gone: np.ndarray) -> int:
        key = gone.tobytes()
        if key not in left_out:
            left_out[key] = bound_alone(inst, gone)
        return left_out[key]

    def programme(keep: np.ndarray, extra: np.ndarray | None = None) -> _QPath:
        """U's programme on the fixed split's tables, with the first three completions' block (module docstring)
        and the first completion's X (``extra``)."""
        m = len(keep)
        q = _QPath(c[keep], w[np.ix_(keep, keep)], B3, Bt, at[keep], unit=UNIT, extra=extra,
                   requests=((s + o)[keep], o[keep], M) if FIRST_THREE else None, four=four)
        if q.requests is not None:      # the top triple's share of δ_{m−2}: (UNIT − SPLIT[0])·(m − 2) (triple_bonus)
            ids = at[keep]
            q.first_three(np.full((m, m), (UNIT - SPLIT[0]) * (m - 2)), B3[m - 1][np.ix_(ids, ids, ids)],
                          UNIT if m == 4 else (UNIT - SPLIT[0]) * (m - 3))
        return q

    lams: dict = {}                       # (λ by request index, step factor) of each candidate U
    values: dict = {}
    extras: dict = {}                     # X of the first completion beside the left-out requests, per candidate
    notes: dict = {}                      # what the steps after the third added, per candidate (for the message)

    def evaluate(cand, steps: int, start=None, until: float = deadline, q: _QPath | None = None) -> None:
        nonlocal best
        key, r = cand
        keep = np.sort(orders[key][r:])
        m = len(keep)
        if m <= 1:
            value = (int(c[keep].sum()) if m else 0) - int((a[keep] - t0).sum())
        else:
            if q is None:                                       # else the caller's programme of this U
                q = programme(keep, extras.get(cand))
            lam, theta = lams.get(cand, (np.zeros(n) if start is None else start, 1.0))
            if theta == 0 and steps > 0:
                return                                          # stalled before: nothing more to gain
            lam = lam.copy()
            lam[keep], theta = _ascent(q, lam[keep], theta, steps, until)
            lams[cand] = lam, theta
            num, den = q.exact(lam[keep])
            value = -(-num // den) - int((a[keep] - t0).sum())          # ceil: the objective is an integer
        values[cand] = total = value + rest_bound(orders[key][:r])
        if trace is not None:
            trace.append((key, r, steps, total))
        if total > best[0]:
            best = (total, f"U = all but the {r} {key} requests ({m} in the chain){notes.get(cand, '')}")

    # 1. scan r downwards (U grows), both orders side by side, λ carried from one r to the next per order
    step = max(1, n // SCAN_POINTS)
    prev: dict = {}
    peak = {key: -np.inf for key in orders}           # per order: its best value so far
    done: set = set()                                  # the orders left (their values collapsed)
    for r in sorted(set(range((n - 2) // step * step, r_floor - 1, -step)) | {r_floor}, reverse=True):
        sets = set()
        for key in orders:
            U = np.sort(orders[key][r:]).tobytes()
            if U not in sets and key not in done and time.perf_counter() < deadline:
                sets.add(U)                                          # the same U from both orders: once
                evaluate((key, r), SCAN_STEPS, lams[prev[key]][0] if key in prev else None)
                prev[key] = (key, r)
                if (key, r) in values:
                    peak[key] = max(peak[key], values[key, r])
                    if peak[key] > 0 and values[key, r] < SCAN_COLLAPSE * peak[key]:
                        done.add(key)
    # 2. the neighbours of the best r, from its λ; 3. polish, best first, while time is left
    if values:
        key, r0 = max(values, key=values.get)
        for r in range(max(r_floor, r0 - step + 1), min(n - 1, r0 + step)):
            if (key, r) not in values and time.perf_counter() < deadline:
                evaluate((key, r), SCAN_STEPS, lams[(key, r0)][0] if (key, r0) in lams else None)
    split_at = time.perf_counter() + (1 - SPLIT_SHARE) * (deadline - time.perf_counter())
    for cand in sorted(values, key=values.get, reverse=True):
        if time.perf_counter() >= split_at:
            break
        evaluate(cand, POLISH_STEPS, until=split_at)
    # the requests the REST_CANDIDATES best sets U leave out by the exact search, best first, within REST_SHARE of the
    # time left: every value with such a U rises by what the search adds to their bound alone
    from .subset_bound import rest_bound as searched_rest
    rest_until = time.perf_counter() + REST_SHARE * (deadline - time.perf_counter())
    for cand in sorted(values, key=values.get, reverse=True)[:REST_CANDIDATES]:
        if time.perf_counter() >= rest_until:
            break
        key, r = cand
        gone = orders[key][:r]
        alone = rest_bound(gone)
        searched, how = searched_rest(inst, gone, alone, rest_until - time.perf_counter())
        if searched > alone:
            left_out[gone.tobytes()] = searched
            values[cand] += searched - alone
            notes[cand] = f", the {r} left out {how}"
            if trace is not None:
                trace.append((key, r, "the rest " + how, values[cand]))
            if values[cand] > best[0]:
                best = (values[cand], f"U = all but the {r} {key} requests ({n - r} in the chain){notes[cand]}")
    # the first completion beside the requests left out (module docstring): the JOINT_CANDIDATES best sets U with
    # requests left out, within JOINT_MARGIN of the best value, best first, each with JOINT_SHARE of the time left at
    # its turn; each such U's value again at its λ with the new first terms
    ranked = sorted((cand for cand in values if cand[1] >= 1 and cand in lams), key=values.get, reverse=True)
    ranked = [cand for cand in ranked if values[cand] >= (1 - JOINT_MARGIN) * max(values.values())][:JOINT_CANDIDATES]
    for cand in ranked:
        if not fits(deadline - time.perf_counter(), COLD_COMPILE_SECONDS, *kernels):
            break
        key, r = cand
        keep, gone = np.sort(orders[key][r:]), orders[key][:r]
        if len(keep) >= 2:
            q = programme(keep)
            q.value(lams[cand][0][keep])
            X, solved = first_beside_rest(inst, keep, gone, rest_bound(gone), c, t0,
                                          JOINT_SHARE * (deadline - time.perf_counter()), firsts=q.firsts())
            if X.any():
                extras[cand] = q.extra = X
                notes[cand] = notes.get(cand, "") + (f", the first completion beside them by CP-SAT ({solved} of "
                                                     f"{len(keep)})")
                evaluate(cand, 0, q=q)
                if trace is not None:
                    trace.append((key, r, "the first completion", values[cand]))
    # 4. the split per position on the best U, from its λ, then (5.) per position and pair, with the time left
    if values and fits(deadline - time.perf_counter(), COLD_COMPILE_SECONDS, _split_tables):
        key, r = cand = max(values, key=values.get)
        keep = np.sort(orders[key][r:])
        if len(keep) >= 3 and cand in lams:
            found = split_search(c[keep], w[np.ix_(keep, keep)], (s + o)[keep], o[keep], M, lams[cand][0][keep],
                                 deadline, extra=extras.get(cand), four=four)
            named = {"position": "split per position", "pair": "split per position and pair"}
            for step, (num, den) in found.items():
                total = -(-num // den) - int((a[keep] - t0).sum()) + rest_bound(orders[key][:r])
                if trace is not None:
                    trace.append((key, r, named[step], total))
                if total > best[0]:
                    best = (total, f"U = all but the {r} {key} requests ({len(keep)} in the chain), {named[step]}"
                                   f"{notes.get(cand, '')}")
    return best


@FORMULATIONS.register("chain-bound")
class ChainBound(ClosedForm):
    name = "chain-bound"
    models = (SLOT,)
    exact = False
    integral_objective = True
    summary = ("Lemmas 2 and 2' along the completion order by a Lagrangian q-path relaxation (ours; up to 110 "
               "requests, seconds at 50): lower bound")
    #: the two tables of triple bonuses (exact and search) have n^4 entries each, 4 bytes (1.2 GB at 110
    #: requests); 110 covers every jaillet-model2 draw of seed 0 (at most 102 of 200 draws)
    max_requests = 110
    scalable_alternative = "use --formulation volume-bound or lagrange-bound, which scale"

    def solve(self, profile, warm=None) -> SolveResult:
        """Status "optimal" when every set U was searched until its ascent stalled, "time_limit" when the
        limit cut the search short (the bound is valid either way; more time may raise it)."""
        t0 = time.perf_counter()
        deadline = t0 + 0.95 * profile.time_limit
        bound, which = chain_bound(self.inst, deadline)
        status = "time_limit" if time.perf_counter() >= deadline else "optimal"
        return SolveResult(status, float(bound), float(bound), time.perf_counter() - t0, message=which)

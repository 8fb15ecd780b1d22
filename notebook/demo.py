# ruff: noqa: E501 - display formulas in the markdown bodies are long lines by nature
"""Demo notes for `manage.py load_demo`: topics, notes, snippet checks and one correction.

``load()`` is idempotent: rows are matched by slug (notes, topics), by note and name (checks) and
by note and date (corrections); a row is saved only when something in it differs, so running it
again neither changes content nor adds history entries. Checks whose latest run did not pass on
their current code are run here, synchronously (a few seconds), so a fresh site shows Verified.
"""

from __future__ import annotations

import datetime as dt

from django.db import models

from . import services
from .models import Correction, Note, SnippetCheck, Topic

TOPICS = [
    ("Deep learning", "deep-learning", "Transformers and the parts they are built from."),
    ("ML theory", "ml-theory", "Why the losses and estimators are the ones they are."),
    ("Math", "math", "Linear algebra and calculus that keeps coming back."),
    ("Data & statistics", "data-statistics", "Estimators, variance and honest numbers."),
    ("Algorithms", "algorithms", "Metrics and procedures written out by hand."),
    ("Tools", "tools", "Habits and tools that keep experiments reproducible."),
]

ATTENTION_CHECK = """\
import numpy as np

def softmax(z):
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)

def attention(Q, K, V):
    scores = Q @ K.T / np.sqrt(K.shape[-1])
    weights = softmax(scores)
    return weights @ V, weights

rng = np.random.default_rng(0)
Q, K, V = (rng.standard_normal((4, 8)) for _ in range(3))
out, w = attention(Q, K, V)
print("out", out.shape)
print("weights", w.shape)
print("rows sum to 1:", bool(np.allclose(w.sum(axis=-1), 1.0)))
"""

ROPE_CHECK = """\
import numpy as np

def rope(x, pos, base=10000.0):
    d = x.shape[-1]
    freqs = base ** (-np.arange(0, d, 2) / d)
    theta = np.concatenate([pos * freqs, pos * freqs])
    first, second = x[: d // 2], x[d // 2:]
    swapped = np.concatenate([-second, first])
    return x * np.cos(theta) + swapped * np.sin(theta)

rng = np.random.default_rng(1)
q, k = rng.standard_normal(16), rng.standard_normal(16)
near = rope(q, 3) @ rope(k, 1)    # offset 2
far = rope(q, 40) @ rope(k, 38)   # offset 2, much later in the sequence
print("same offset, same score:", bool(np.isclose(near, far)))
print("norm kept:", bool(np.isclose(np.linalg.norm(rope(q, 7)), np.linalg.norm(q))))
"""

NORM_CHECK = """\
import numpy as np

x = np.array([2.0, 4.0, 6.0, 8.0])
eps = 1e-5
ln = (x - x.mean()) / np.sqrt(x.var() + eps)
rms = x / np.sqrt(np.mean(x ** 2) + eps)
print("layer norm:", np.round(ln, 3))
print("mean", round(float(ln.mean()), 6) + 0.0, "std", round(float(ln.std()), 3))
print("rms norm:  ", np.round(rms, 3))
"""

SWIGLU_CHECK = """\
d_model = 512
plain = 2 * d_model * (4 * d_model)          # up and down projections
naive_swiglu = 3 * d_model * (4 * d_model)   # gate, up, down with the same width
d_ff = int(8 * d_model / 3)
matched = 3 * d_model * d_ff
print("plain FFN:        ", plain)
print("SwiGLU at 4x:     ", naive_swiglu, f"(+{naive_swiglu / plain - 1:.0%})")
print("SwiGLU at 8/3 x:  ", matched, f"(d_ff = {d_ff})")
"""

KV_CACHE_CHECK = """\
import numpy as np

rng = np.random.default_rng(2)
T, d = 6, 4
X = rng.standard_normal((T, d))
Wq, Wk, Wv = (rng.standard_normal((d, d)) for _ in range(3))

def softmax(z):
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)

# all positions at once, with a causal mask
Q, K, V = X @ Wq, X @ Wk, X @ Wv
mask = np.triu(np.full((T, T), -np.inf), k=1)
full = softmax(Q @ K.T / np.sqrt(d) + mask) @ V

# one position at a time, appending to the cache
keys, values, steps = np.empty((0, d)), np.empty((0, d)), []
for t in range(T):
    keys = np.vstack([keys, X[t] @ Wk])
    values = np.vstack([values, X[t] @ Wv])
    steps.append(softmax((X[t] @ Wq) @ keys.T / np.sqrt(d)) @ values)

print("cache shape after decoding:", keys.shape)
print("matches full attention:", bool(np.allclose(full, np.array(steps))))
"""

LSE_CHECK = """\
import numpy as np

logits = np.array([1000.0, 1001.0, 1002.0])
with np.errstate(over="ignore", invalid="ignore"):
    naive = np.exp(logits) / np.exp(logits).sum()
m = logits.max()
lse = m + np.log(np.exp(logits - m).sum())
stable = np.exp(logits - lse)
print("naive:", naive)
print("logsumexp:", round(float(lse), 4))
print("stable:", np.round(stable, 4))
"""

BESSEL_CHECK = """\
import numpy as np

data = np.array([10, 12, 23, 23, 16, 23, 21, 16])
print("mean:", data.mean())
print("divide by N:  ", round(float(np.var(data)), 4))
print("divide by N-1:", round(float(np.var(data, ddof=1)), 4))

# Average both estimators over many small samples from a population with variance 4.
rng = np.random.default_rng(3)
samples = rng.normal(0.0, 2.0, size=(200_000, 5))
print("E[var, N]  ~", round(float(samples.var(axis=1).mean()), 2))
print("E[var, N-1]~", round(float(samples.var(axis=1, ddof=1).mean()), 2))
"""

BENCH_CHECK = """\
import numpy as np

# Timings (ms) from five runs of the same configuration, fixed here so the check is exact.
timings = np.array([41.8, 40.9, 44.7, 41.2, 58.3])
N_RUNS = len(timings)

one_run = timings[:1]                  # the bug: the list held a single measurement
all_runs = timings[:N_RUNS]            # the fix: every run is kept

def summary(t):
    q1, med, q3 = np.percentile(t, [25, 50, 75])
    return f"median {med:.1f} ms, IQR {q3 - q1:.1f} ms over {len(t)} run(s)"

print("bug:", summary(one_run))
print("fix:", summary(all_runs))
"""

MASK_CHECK = """\
import numpy as np

T = 4
causal = np.triu(np.full((T, T), -np.inf), k=1)
padding = np.where(np.array([True, True, True, False]), 0.0, -np.inf)  # last token is padding
mask = causal + padding          # broadcasting adds the padding row to every query
print(mask)
scores = np.zeros((T, T)) + mask
w = np.exp(scores - scores.max(axis=-1, keepdims=True))
w /= w.sum(axis=-1, keepdims=True)
print(np.round(w, 3))
"""

AP_CHECK = """\
import numpy as np

def average_precision(recall, precision):
    r = np.concatenate(([0.0], recall, [1.0]))
    p = np.concatenate(([0.0], precision, [0.0]))
    p = np.maximum.accumulate(p[::-1])[::-1]          # precision envelope, right to left
    step = np.flatnonzero(r[1:] != r[:-1])
    return float(np.sum((r[step + 1] - r[step]) * p[step + 1]))

recall = np.array([0.2, 0.4, 0.4, 0.6, 0.8, 1.0])
precision = np.array([1.0, 1.0, 0.67, 0.75, 0.8, 0.71])
print("AP:", round(average_precision(recall, precision), 4))
"""

COV_CHECK = """\
import numpy as np

rng = np.random.default_rng(4)
X = rng.standard_normal((500, 6))
centred = X - X.mean(axis=0)
cov = centred.T @ centred / (X.shape[0] - 1)
print("shape:", cov.shape)
print("same as np.cov:", bool(np.allclose(cov, np.cov(X, rowvar=False))))
print("symmetric:", bool(np.allclose(cov, cov.T)))
"""

NOTES = [
    {
        "slug": "benchmark-your-benchmark",
        "title": "Benchmark Your Benchmark",
        "date": dt.date(2026, 7, 24),
        "kind": Note.Kind.DEBUGGING,
        "topics": ["tools", "deep-learning"],
        "summary": "A timing reported without its spread is an anecdote, and a benchmark that "
        "never checks its answers is not measuring what you think.",
        "body": """\
The speed-up table for the KV cache looked healthy: a median and a spread for every
configuration. The spread was suspicious only in hindsight — it was always zero. The loop that
was meant to repeat each measurement built a one-element list:

```python
samples = [measure(model, prompt, steps)]                        # one run, every time
samples = [measure(model, prompt, steps) for _ in range(N_RUNS)]  # what was intended
```

`N_RUNS` existed, was set to 5, and was read by nothing. The model code had a large test suite;
the benchmark script had none, so nothing noticed.

Two rules came out of it:

1. **Gate before you time.** Both configurations must produce identical tokens under greedy
   decoding before a single timing is taken; if they differ, it is a bug report, not a result.
2. **Report the spread.** Median and interquartile range over several runs, and say how many.

The check below replays the bug on five fixed timings: the one-run summary claims an IQR of
zero, the honest one does not.
""",
        "written_up_in": "https://example.org/writing/transformer-from-raw-tensors",
        "written_up_in_title": "A Transformer from Raw Tensors",
        "part_of": "Learning with Verifiable Rewards",
        "checks": [
            (
                "one run has no spread",
                BENCH_CHECK,
                "bug: median 41.8 ms, IQR 0.0 ms over 1 run(s)\n"
                "fix: median 41.8 ms, IQR 3.5 ms over 5 run(s)",
            )
        ],
    },
    {
        "slug": "swiglu-parameter-budget",
        "title": "SwiGLU and its parameter budget",
        "date": dt.date(2026, 5, 2),
        "kind": Note.Kind.CODE,
        "topics": ["deep-learning"],
        "summary": "The gate lets each hidden unit be switched by the input itself; the third "
        "matrix it needs must be paid for by a narrower hidden layer.",
        "body": """\
A gated feed-forward block multiplies two projections of the input, one passed through SiLU:

$$\\mathrm{FFN}(x) = W_{\\text{down}}\\big(\\mathrm{SiLU}(W_{\\text{gate}}x) \\odot W_{\\text{up}}x\\big)$$

```python
import numpy as np

def silu(z):
    return z / (1.0 + np.exp(-z))

def swiglu_ffn(x, w_gate, w_up, w_down):
    # x: (tokens, d_model); w_gate, w_up: (d_model, d_ff); w_down: (d_ff, d_model)
    return (silu(x @ w_gate) * (x @ w_up)) @ w_down
```

The gate is computed from the token, so the block decides per token which hidden features get
through instead of applying one fixed mixing.

**The budget trap.** A plain FFN has two matrices of size $d \\times 4d$. SwiGLU has three, so
keeping $d_{ff} = 4d$ adds half again as many parameters. Models in the Llama family shrink the
hidden width to about $\\tfrac{8}{3}d$, which brings the count back to where it was.
""",
        "checks": [
            (
                "parameter counts",
                SWIGLU_CHECK,
                "plain FFN:         2097152\n"
                "SwiGLU at 4x:      3145728 (+50%)\n"
                "SwiGLU at 8/3 x:   2096640 (d_ff = 1365)",
            )
        ],
        "packages": "",
    },
    {
        "slug": "pre-norm-vs-post-norm",
        "title": "Pre-norm vs post-norm",
        "date": dt.date(2026, 5, 2),
        "kind": Note.Kind.DERIVATION,
        "topics": ["deep-learning"],
        "summary": "Where the normalisation sits decides whether the residual path is a clean "
        "identity, and with it how much warm-up a deep stack needs.",
        "body": """\
The original Transformer normalised *after* adding the sub-layer to the residual; nearly every
recent model normalises the sub-layer's *input* instead.

| | post-norm | pre-norm |
|---|---|---|
| one block | $x \\leftarrow \\mathrm{LN}(x + F(x))$ | $x \\leftarrow x + F(\\mathrm{LN}(x))$ |
| residual stream | normalised at every block | never normalised |
| gradient to the input | passes through every LN | has an identity path |
| warm-up | needed, and touchy | usually optional |

In pre-norm, unrolling $L$ blocks gives $x_L = x_0 + \\sum_{l} F_l(\\mathrm{LN}(x_l))$, so
$\\partial x_L / \\partial x_0$ contains the identity no matter how deep the stack is. Xiong et
al. (2020) show that post-norm's gradients near the output are large at initialisation, which is
why it wants a learning-rate warm-up. The price of pre-norm: the stream's scale grows with depth,
so a final LN before the output head is needed.
""",
    },
    {
        "slug": "rmsnorm-vs-layernorm",
        "title": "RMSNorm vs LayerNorm",
        "date": dt.date(2026, 5, 2),
        "kind": Note.Kind.CODE,
        "topics": ["deep-learning"],
        "summary": "RMSNorm skips the mean subtraction and the bias and divides by the root "
        "mean square; it trains as well and costs less.",
        "body": """\
LayerNorm centres and scales each vector over its features:

$$\\mathrm{LN}(x) = \\gamma \\odot \\frac{x - \\mu}{\\sqrt{\\sigma^2 + \\epsilon}} + \\beta$$

RMSNorm keeps only the scaling (Zhang & Sennrich, 2019):

$$\\mathrm{RMSNorm}(x) = \\gamma \\odot \\frac{x}{\\sqrt{\\tfrac{1}{d}\\sum_i x_i^2 + \\epsilon}}$$

For `[2, 4, 6, 8]` LayerNorm gives roughly `[-1.342, -0.447, 0.447, 1.342]` — mean 0, standard
deviation 1. RMSNorm leaves the mean where it was and only brings the root mean square to 1.
The paper reports 7–64% faster steps depending on the model, and Llama, Mistral, Qwen and Gemma
all use it: re-centring turned out not to be what makes normalisation help.
""",
        "checks": [
            (
                "both norms on [2, 4, 6, 8]",
                NORM_CHECK,
                "layer norm: [-1.342 -0.447  0.447  1.342]\n"
                "mean 0.0 std 1.0\n"
                "rms norm:   [0.365 0.73  1.095 1.461]",
            )
        ],
    },
    {
        "slug": "scaled-dot-product-attention",
        "title": "Scaled dot-product attention in numpy",
        "date": dt.date(2026, 5, 2),
        "kind": Note.Kind.CODE,
        "topics": ["deep-learning"],
        "summary": "Dividing by the square root of the key width keeps the scores' variance "
        "near one, so softmax does not saturate as the head gets wider.",
        "body": """\
$$\\mathrm{Attention}(Q, K, V) = \\mathrm{softmax}\\!\\left(\\frac{QK^\\top}{\\sqrt{d_k}}\\right)V$$

Shapes: $Q$ is tokens × $d_k$, $K$ is tokens × $d_k$, $V$ is tokens × $d_v$; the weights are
tokens × tokens and each row sums to one.

Why the $\\sqrt{d_k}$: if the entries of $q$ and $k$ have unit variance, $q \\cdot k$ is a sum of
$d_k$ such products and has variance $d_k$. Unscaled, a 64-wide head produces scores with a
standard deviation of 8, softmax puts almost all its weight on one key, and the gradient through
the other keys all but disappears. Dividing restores unit variance.

A causal mask adds $-\\infty$ above the diagonal before the softmax, so a token can only attend
to itself and earlier tokens — the property autoregressive generation depends on.
""",
        "checks": [
            (
                "four tokens, width eight",
                ATTENTION_CHECK,
                "out (4, 8)\nweights (4, 4)\nrows sum to 1: True",
            )
        ],
    },
    {
        "slug": "rope-rotary-position-embedding",
        "title": "RoPE: rotary position embedding",
        "date": dt.date(2026, 4, 23),
        "kind": Note.Kind.CODE,
        "topics": ["deep-learning"],
        "summary": "Rotating queries and keys by angles proportional to their positions makes "
        "their dot product depend only on the distance between them.",
        "body": """\
RoPE treats each pair of features as a point in the plane and rotates it by $m\\,\\theta_i$ at
position $m$, with $\\theta_i = \\text{base}^{-2i/d}$. A rotation by $m\\theta$ followed by the
transpose of a rotation by $n\\theta$ is a rotation by $(n-m)\\theta$, hence

$$\\langle R_m q, R_n k \\rangle = \\langle q, R_{n-m} k \\rangle.$$

The "rotate half" form pairs feature $i$ with feature $i + d/2$ instead of neighbours; it is the
same rotation on a permuted basis and needs one concatenation instead of an interleave.

Three details that bite:

- rotate **Q and K only**, never V;
- rotate **per head** (width $d_k$), after the heads are split — see
  [the note on where RoPE applies](/notebook/rope-applies-per-head/);
- when decoding with a KV cache, rotate the new token by its absolute position, not by 0.
""",
        "written_up_in": "https://example.org/writing/positional-encoding",
        "written_up_in_title": "Positional Encoding: Teaching Transformers to Count",
        "checks": [
            (
                "score depends on the offset only",
                ROPE_CHECK,
                "same offset, same score: True\nnorm kept: True",
            )
        ],
    },
    {
        "slug": "rope-applies-per-head",
        "title": "RoPE applies at d_k, not d_model",
        "date": dt.date(2026, 4, 21),
        "kind": Note.Kind.DEBUGGING,
        "topics": ["deep-learning"],
        "summary": "Rotating the whole model-width vector before the head split pairs features "
        "from different heads and loses the relative-position property.",
        "body": """\
The bug: the rotation was applied to the $(B, T, d_{model})$ activations, and the heads were
split afterwards. Training ran and the loss went down, just more slowly than it should.

```python
# before: rotate, then split — rotation pairs straddle head boundaries
h = rotate(h, positions)
q, k, v = split_heads(project(h))

# after: split, then rotate each head's queries and keys
q, k, v = split_heads(project(h))      # (B, H, T, d_k)
q, k = rotate(q, positions), rotate(k, positions)
```

The frequencies $\\theta_i$ are defined over the $d_k$ features of one head. Applied at
$d_{model}$, a head sees a slice of a schedule meant for a wider vector, pairs may cross heads,
and $\\langle q_m, k_n \\rangle$ no longer depends on $m - n$ alone.
""",
    },
    {
        "slug": "kv-cache",
        "title": "The KV cache in a few lines",
        "date": dt.date(2026, 4, 21),
        "kind": Note.Kind.CODE,
        "topics": ["deep-learning"],
        "summary": "Keeping the keys and values of past tokens means each new token costs one "
        "projection and one attention row instead of recomputing the prefix.",
        "body": """\
During generation, the keys and values of earlier positions never change. Store them and append:

```python
def step(x_new, cache):
    k_new, v_new = x_new @ Wk, x_new @ Wv
    K = np.vstack([cache["K"], k_new])   # (t, d_k)
    V = np.vstack([cache["V"], v_new])
    cache["K"], cache["V"] = K, V
    return softmax((x_new @ Wq) @ K.T / np.sqrt(K.shape[1])) @ V
```

Without the cache, generating $T$ tokens re-runs attention over the whole prefix at every step,
$O(T^2)$ work per step and $O(T^3)$ in total for the scores. With it, a step projects one token
and computes one row of scores against the $t$ cached keys: $O(t)$ per step, $O(T^2)$ in
total. The memory bill is $2 \\times \\text{layers} \\times T \\times d$ numbers per sequence.

The check decodes six tokens one at a time and compares with masked attention over all six.
""",
        "checks": [
            (
                "incremental equals masked full attention",
                KV_CACHE_CHECK,
                "cache shape after decoding: (6, 4)\nmatches full attention: True",
            )
        ],
        "corrections": [
            (
                dt.date(2026, 5, 9),
                "The note said that with a cache each decoding step costs O(1).",
                "Only the projection of the new token is constant; the attention row still "
                "reads all t cached keys, so a step is O(t). The cost paragraph now says so.",
            )
        ],
    },
    {
        "slug": "log-sum-exp-trick",
        "title": "The log-sum-exp trick",
        "date": dt.date(2024, 12, 15),
        "kind": Note.Kind.CODE,
        "topics": ["deep-learning", "math"],
        "summary": "Subtracting the largest logit before exponentiating changes nothing "
        "mathematically and keeps softmax finite for any input.",
        "body": """\
$$\\log \\sum_i e^{x_i} = m + \\log \\sum_i e^{x_i - m}, \\qquad m = \\max_i x_i$$

Every exponent on the right is at most $0$, so nothing overflows, and at least one term is
$e^0 = 1$, so the sum cannot underflow to zero and the log stays finite. Softmax follows as
$\\mathrm{softmax}(x)_i = e^{x_i - \\mathrm{LSE}(x)}$.

With logits around 1000, `np.exp` overflows to `inf` and the naive softmax returns `nan`; the
shifted version returns the same probabilities as for logits `[0, 1, 2]`.
""",
        "checks": [
            (
                "logits near 1000",
                LSE_CHECK,
                "naive: [nan nan nan]\nlogsumexp: 1002.4076\nstable: [0.09   0.2447 0.6652]",
            )
        ],
    },
    {
        "slug": "bessels-correction",
        "title": "Bessel's correction",
        "date": dt.date(2024, 12, 15),
        "kind": Note.Kind.CODE,
        "topics": ["data-statistics"],
        "summary": "Deviations from the sample mean are smaller than deviations from the true "
        "mean, so dividing by N underestimates the variance; N − 1 repairs it.",
        "body": """\
The sample mean sits closer to the sample than the population mean does, so squared deviations
from it are too small on average. Precisely:

$$\\mathbb{E}\\Big[\\sum_{i=1}^{N} (x_i - \\bar{x})^2\\Big] = (N - 1)\\,\\sigma^2$$

so dividing by $N - 1$ gives an unbiased estimate. In numpy that is `ddof=1`; the default
`np.var` divides by $N$ (pandas' `.var()` defaults to $N-1$ — mixing the two is a classic
source of small disagreements).

The check computes both on eight numbers and then averages each estimator over many samples of
five from a population with variance 4: dividing by $N$ lands near $3.2 = \\tfrac{4}{5}\\cdot 4$.
""",
        "checks": [
            (
                "both estimators",
                BESSEL_CHECK,
                "mean: 18.0\ndivide by N:   24.0\ndivide by N-1: 27.4286\n"
                "E[var, N]  ~ 3.2\nE[var, N-1]~ 4.0",
            )
        ],
    },
    {
        "slug": "causal-mask-additive",
        "title": "Causal masks as additive tensors",
        "date": dt.date(2026, 4, 21),
        "kind": Note.Kind.CODE,
        "topics": ["deep-learning"],
        "summary": "Masks made of 0 and −∞ combine by addition, so a causal mask and a padding "
        "mask become one tensor added to the scores.",
        "body": """\
An additive mask holds $0$ where attention is allowed and $-\\infty$ where it is not; adding it
to the scores before softmax sends the forbidden weights to exactly zero. Two such masks combine
by plain addition (any $-\\infty$ wins), and broadcasting handles batch and head axes.

A multiplicative 0/1 mask applied *after* softmax does not combine this way: the rows no longer
sum to one and need renormalising.

The check builds a causal mask for four tokens, adds a padding mask that hides the last one, and
shows the resulting weights.
""",
        "checks": [
            (
                "causal plus padding",
                MASK_CHECK,
                "[[  0. -inf -inf -inf]\n [  0.   0. -inf -inf]\n [  0.   0.   0. -inf]\n"
                " [  0.   0.   0. -inf]]\n"
                "[[1.    0.    0.    0.   ]\n [0.5   0.5   0.    0.   ]\n"
                " [0.333 0.333 0.333 0.   ]\n [0.333 0.333 0.333 0.   ]]",
            )
        ],
    },
    {
        "slug": "softmax-temperature",
        "title": "Softmax with a temperature",
        "date": dt.date(2026, 4, 21),
        "kind": Note.Kind.DERIVATION,
        "topics": ["math"],
        "summary": "One scalar slides softmax from argmax to uniform; sampling, distillation "
        "and contrastive losses all turn the same knob.",
        "body": """\
$$\\mathrm{softmax}(x; \\tau)_i = \\frac{e^{x_i/\\tau}}{\\sum_j e^{x_j/\\tau}}$$

- As $\\tau \\to 0^+$ the largest logit dominates every other term: the output tends to a
  one-hot vector on the argmax.
- At $\\tau = 1$ it is the ordinary softmax.
- As $\\tau \\to \\infty$ every $x_i/\\tau \\to 0$, every term tends to $1$, and the output tends
  to uniform.

Dividing logits by $\\tau$ never changes their order, only how sharply the probability mass is
concentrated. The sampling temperature of a language model is exactly this $\\tau$.
""",
    },
    {
        "slug": "bias-variance-decomposition",
        "title": "The bias–variance decomposition",
        "date": dt.date(2026, 4, 21),
        "kind": Note.Kind.DERIVATION,
        "topics": ["ml-theory"],
        "summary": "Expected squared error splits into squared bias, variance and noise; every "
        "regulariser trades the first two.",
        "body": """\
With $y = f(x) + \\varepsilon$, noise of variance $\\sigma^2$ and a model $\\hat f$ fitted on a
random training set:

$$\\mathbb{E}\\big[(y - \\hat f(x))^2\\big] = \\big(\\mathbb{E}[\\hat f(x)] - f(x)\\big)^2 + \\mathrm{Var}\\big(\\hat f(x)\\big) + \\sigma^2$$

Add and subtract $\\mathbb{E}[\\hat f(x)]$ inside the square; the cross terms vanish because the
noise is independent of the fit and has mean zero.

- **Bias²**: the model family cannot represent $f$.
- **Variance**: the fit moves with the particular training sample.
- **Noise**: no model removes it.
""",
    },
    {
        "slug": "average-precision-by-hand",
        "title": "Average precision by hand",
        "date": dt.date(2024, 12, 15),
        "kind": Note.Kind.CODE,
        "topics": ["algorithms"],
        "summary": "Take the precision envelope from the right, then sum precision times each "
        "step in recall — twenty lines, no library.",
        "body": """\
All-point interpolated AP, the definition behind most detection and retrieval leaderboards:

1. pad recall with 0 and 1, precision with 0 and 0;
2. replace each precision by the maximum precision at any higher recall (the envelope);
3. sum $(r_{k+1} - r_k)\\,p_{k+1}$ over the points where recall changes.

$$\\mathrm{AP} = \\sum_k (r_{k+1} - r_k)\\, \\max_{r \\ge r_{k+1}} p(r)$$

The envelope is one line in numpy: `np.maximum.accumulate` over the reversed array.
""",
        "checks": [("six points", AP_CHECK, "AP: 0.862")],
    },
    {
        "slug": "vectorised-covariance",
        "title": "A covariance matrix in one matrix product",
        "date": dt.date(2024, 12, 15),
        "kind": Note.Kind.CODE,
        "topics": ["data-statistics", "math"],
        "summary": "Centre the columns once, multiply the matrix by its transpose once, divide "
        "by n − 1: the BLAS does the rest.",
        "body": """\
$$\\Sigma = \\frac{1}{n-1}\\,(X - \\bar X)^\\top (X - \\bar X)$$

For an $n \\times p$ data matrix this is a single $p \\times n$ by $n \\times p$ product, which
numpy hands to an optimised BLAS routine. It matches `np.cov(X, rowvar=False)` — note the
`rowvar`: by default `np.cov` treats *rows* as variables.
""",
        "checks": [
            (
                "agrees with np.cov",
                COV_CHECK,
                "shape: (6, 6)\nsame as np.cov: True\nsymmetric: True",
            )
        ],
    },
    {
        "slug": "chain-rule-for-vectors",
        "title": "The chain rule for vectors",
        "date": dt.date(2026, 4, 21),
        "kind": Note.Kind.DERIVATION,
        "topics": ["math"],
        "summary": "Backpropagation is the vector chain rule evaluated right to left as "
        "vector–Jacobian products, never forming a Jacobian.",
        "body": """\
For $y = f(g(x))$ with $x \\in \\mathbb{R}^n$, $g(x) \\in \\mathbb{R}^m$, $y \\in \\mathbb{R}^k$:

$$\\frac{\\partial y}{\\partial x} = \\frac{\\partial f}{\\partial g}\\,\\frac{\\partial g}{\\partial x}, \\qquad (k \\times m)(m \\times n) = (k \\times n).$$

With a scalar loss, $k = 1$: multiplying from the left keeps every intermediate a row vector,
so each layer only needs to supply the product of a vector with its Jacobian. That is what an
autograd engine stores per operation.
""",
    },
]


def _upsert(model: type[models.Model], lookup: dict, values: dict) -> models.Model:
    """Create, or update only the fields that differ (no history entry when nothing does)."""
    obj = model.objects.filter(**lookup).first()
    if obj is None:
        return model.objects.create(**lookup, **values)
    changed = [name for name, value in values.items() if getattr(obj, name) != value]
    if changed:
        for name in changed:
            setattr(obj, name, values[name])
        obj.save()
    return obj


def load() -> str:
    """Create or update the demo notebook; run checks that have no passing current run."""
    topics = {
        slug: _upsert(Topic, {"slug": slug}, {"name": name, "description": description})
        for name, slug, description in TOPICS
    }
    runs = 0
    for spec in NOTES:
        note = _upsert(
            Note,
            {"slug": spec["slug"]},
            {
                "title": spec["title"],
                "date": spec["date"],
                "kind": spec["kind"],
                "summary": spec["summary"],
                "body": spec["body"],
                "written_up_in": spec.get("written_up_in", ""),
                "written_up_in_title": spec.get("written_up_in_title", ""),
                "part_of": spec.get("part_of", ""),
                "published": True,
            },
        )
        wanted = {topics[slug] for slug in spec["topics"]}
        if set(note.topics.all()) != wanted:
            note.topics.set(wanted)
        for name, code, expected in spec.get("checks", []):
            check = SnippetCheck(note=note, name=name, code=code, expected_output=expected)
            check.packages = spec.get("packages", "numpy")
            check = _upsert(
                SnippetCheck,
                {"note": note, "name": name},
                {
                    "code": code,
                    "expected_output": expected,
                    "packages": check.packages,
                    # stored up front so saving does not also queue a run on the worker
                    "code_hash": check.compute_code_hash(),
                },
            )
            if not check.is_passing:
                services.run_check(check=check)
                runs += 1
        for date, wrong, changed in spec.get("corrections", []):
            _upsert(
                Correction,
                {"note": note, "date": date},
                {"what_was_wrong": wrong, "what_changed": changed},
            )
    verified = Note.objects.filter(slug__in=[s["slug"] for s in NOTES]).verified().count()
    return f"{len(NOTES)} notes, {len(TOPICS)} topics, {runs} check run(s), {verified} verified"

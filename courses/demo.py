"""Demo content: the course "Reading ML papers" and the symbol glossary.

``load()`` is idempotent: rows are found by slug (courses, chapters, symbols) or by their place
(an equation's order in its chapter …) and updated in place, so running it again changes
nothing and learners' attempts on existing questions and parts survive. ``manage.py load_demo``
runs it inside a transaction.
"""

from __future__ import annotations

from textwrap import dedent

from . import services
from .glossary import GLOSSARY
from .models import (
    Chapter,
    ChapterSymbol,
    Choice,
    CodeListing,
    Course,
    Equation,
    EquationPart,
    Question,
    Symbol,
)

OUT, IN, LEARNED, CONST, OP = "output", "input", "learned", "constant", "operation"


def _code(text: str) -> str:
    return dedent(text).strip("\n") + "\n"


# --- softmax with temperature ---------------------------------------------------------------

SOFTMAX = {
    "slug": "softmax-temperature",
    "title": "Softmax with temperature",
    "summary": "How one number, the temperature, decides whether a softmax picks a winner or "
    "spreads its bets.",
    "prerequisites_note": "Exponentials and sums",
    "symbols": ["softmax", "exp", "sum", "tau", "subscript"],
    "idea": """
        A model's last layer usually hands you *logits*: one unbounded score per option. Softmax
        turns them into a probability distribution by exponentiating every score and dividing by
        the total, so every entry ends up positive and the entries add up to one.

        Dividing the logits by a temperature $T$ before the exponential changes how sharp that
        distribution is. A small $T$ stretches the gaps between scores, so the largest one takes
        almost all the mass; a large $T$ squeezes the gaps, and the result drifts towards
        uniform. The ranking of the options never changes, only how confident the output looks.

        You will meet the same knob when sampling text from a language model, in knowledge
        distillation, and hidden inside attention, where $\\sqrt{d_k}$ plays the part of a
        temperature.
    """,
    "try_it_intro": "Give each part of the formula its role, then check.",
    "equations": [
        {
            "title": "Softmax with temperature",
            "latex": r"p_i = \frac{\exp(z_i / T)}{\sum_{j=1}^{n} \exp(z_j / T)}",
            "shape_note": "$z$, $p$: one entry per option ($n$ of them). $T$: a single number.",
            "widget": "softmax",
            "parts": [
                ("p_i", OUT, "The probability given to option $i$: what the formula computes."),
                ("z_i", IN, "A logit handed over by the layer before; nothing here changes it."),
                ("T", CONST, "Chosen by whoever runs the model; training does not touch it."),
                (r"\exp", OP, "Makes every score positive while keeping their order."),
                (r"\sum_{j=1}^{n}", OP, "Adds up all the exponentials so the result is 1."),
            ],
        },
    ],
    "listings": [
        {
            "filename": "softmax_temperature.py",
            "source": _code(
                """
                import numpy as np


                def softmax(logits, temperature=1.0):
                    z = np.asarray(logits, dtype=float) / temperature
                    z -= z.max()  # shifting every logit by the same amount changes nothing
                    e = np.exp(z)
                    return e / e.sum()


                logits = [2.0, 1.0, 0.1]
                for temperature in (0.5, 1.0, 5.0):
                    print(temperature, softmax(logits, temperature).round(3).tolist())
                """
            ),
            "expected_output": "0.5 [0.864, 0.117, 0.019]\n1.0 [0.659, 0.242, 0.099]\n"
            "5.0 [0.4, 0.327, 0.273]\n",
        }
    ],
    "questions": [
        {
            "prompt": "What happens to the softmax output as $T$ grows very large?",
            "explanation": "Dividing by a huge $T$ pushes every logit towards 0, and "
            "$\\exp(0) = 1$ for all of them, so each option gets about $1/n$.",
            "choices": [
                ("It approaches the uniform distribution.", True, "Right: the gaps vanish."),
                ("All the mass goes to the largest logit.", False, "That is the $T \\to 0$ end."),
                (
                    "The outputs stop adding up to 1.",
                    False,
                    "The division by the sum keeps the total at exactly 1 for every $T$.",
                ),
            ],
        },
        {
            "prompt": "Can changing $T$ (with $T > 0$) change which option has the highest "
            "probability?",
            "explanation": "Dividing by a positive number and exponentiating are both "
            "increasing functions, so the order of the options is kept.",
            "choices": [
                ("No, the ranking is always kept.", True, "Right: only the sharpness moves."),
                (
                    "Yes, a high $T$ can reverse it.",
                    False,
                    "It flattens the gaps but never swaps two options.",
                ),
            ],
        },
        {
            "prompt": "Why does the code subtract the largest logit first?",
            "explanation": "Softmax is unchanged when the same number is subtracted from every "
            "logit, and after the shift the biggest exponent is $\\exp(0) = 1$, so nothing "
            "overflows.",
            "choices": [
                ("To avoid overflow in the exponential.", True, "Right: the result is the same."),
                ("To make the output sum to 1.", False, "The division does that."),
                ("To apply the temperature.", False, "The temperature is the division by $T$."),
            ],
        },
    ],
}

# --- RMSNorm vs LayerNorm -------------------------------------------------------------------

NORMS = {
    "slug": "rmsnorm-vs-layernorm",
    "title": "RMSNorm vs LayerNorm",
    "summary": "Two ways to keep each token's features on a steady scale, and what RMSNorm "
    "leaves out.",
    "prerequisites_note": "Means and variances",
    "symbols": ["layer-norm", "rms-norm", "mu", "sigma", "gamma", "epsilon", "hadamard"],
    "idea": """
        Deep networks train better when the numbers flowing between layers keep a predictable
        size. Layer normalization does this per token: it subtracts the mean of that token's
        $d$ features, divides by their standard deviation, and then lets the model rescale and
        shift the result with two learned vectors, $\\gamma$ and $\\beta$.

        RMSNorm, used by many recent language models, keeps only half of that recipe. It does
        not centre the features; it divides them by their root mean square and multiplies by
        $\\gamma$. That saves a reduction per token and, in practice, trains about as well.

        The difference shows when every feature is shifted by the same amount: LayerNorm's
        output does not move at all, RMSNorm's does.
    """,
    "try_it_intro": "Label the parts of RMSNorm. The learned vector is the one training sets.",
    "equations": [
        {
            "title": "RMSNorm",
            "latex": r"\operatorname{RMSNorm}(\mathbf{x}) = \frac{\mathbf{x}}"
            r"{\sqrt{\frac{1}{d}\sum_{i=1}^{d} x_i^2 + \epsilon}} \odot \boldsymbol{\gamma}",
            "shape_note": "$\\mathbf{x}$, $\\boldsymbol{\\gamma}$, output: $d$ features of one "
            "token.",
            "widget": "norms",
            "parts": [
                (r"\operatorname{RMSNorm}(\mathbf{x})", OUT, "The rescaled features: the result."),
                (r"\mathbf{x}", IN, "One token's features, arriving from the layer before."),
                (
                    r"\boldsymbol{\gamma}",
                    LEARNED,
                    "A per-feature scale that gradient descent adjusts.",
                ),
                (r"\epsilon", CONST, "A tiny number picked by hand so we never divide by zero."),
                (r"\sum_{i=1}^{d}", OP, "Adds the squares before averaging them."),
            ],
        },
        {
            "title": "LayerNorm, for comparison",
            "latex": r"\operatorname{LN}(\mathbf{x}) = \boldsymbol{\gamma} \odot "
            r"\frac{\mathbf{x} - \mu}{\sqrt{\sigma^2 + \epsilon}} + \boldsymbol{\beta}",
            "shape_note": "$\\mu$, $\\sigma^2$: one number each per token.",
            "widget": "",
            "parts": [],
        },
    ],
    "listings": [
        {
            "filename": "norms.py",
            "source": _code(
                """
                import numpy as np


                def layer_norm(x, eps=1e-5):
                    centred = x - x.mean(axis=-1, keepdims=True)
                    return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + eps)


                def rms_norm(x, eps=1e-5):
                    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True) + eps)


                x = np.array([2.0, 4.0, 6.0, 8.0])
                for name, norm in [("layer", layer_norm), ("rms  ", rms_norm)]:
                    print(name, norm(x).round(3).tolist(), norm(x + 10).round(3).tolist())
                """
            ),
            "expected_output": "layer [-1.342, -0.447, 0.447, 1.342] "
            "[-1.342, -0.447, 0.447, 1.342]\n"
            "rms   [0.365, 0.73, 1.095, 1.461] [0.791, 0.923, 1.055, 1.187]\n",
        }
    ],
    "questions": [
        {
            "prompt": "What does RMSNorm leave out compared with LayerNorm?",
            "explanation": "RMSNorm neither subtracts the mean nor adds a learned shift; it "
            "only rescales.",
            "choices": [
                (
                    "Subtracting the mean (and the shift $\\boldsymbol{\\beta}$).",
                    True,
                    "Right: no centring, no bias.",
                ),
                ("The learned scale $\\boldsymbol{\\gamma}$.", False, "RMSNorm keeps it."),
                ("The $\\epsilon$ under the root.", False, "It keeps that too."),
            ],
        },
        {
            "prompt": "Add 10 to every feature of a token. Which output stays the same?",
            "explanation": "A constant shift moves the mean by the same amount and leaves the "
            "spread alone, so centring removes it; the root mean square, however, grows.",
            "choices": [
                ("LayerNorm's.", True, "Right: it subtracts the mean first."),
                ("RMSNorm's.", False, "Its denominator changes with the shift."),
                ("Both.", False, "Only the one that centres is immune."),
            ],
        },
        {
            "prompt": "Over which axis are the statistics taken?",
            "explanation": "Both norms look at one token at a time, across its features, so "
            "they behave the same in training and at inference.",
            "choices": [
                ("The features of one token.", True, "Right."),
                ("The tokens of a batch, per feature.", False, "That describes batch norm."),
            ],
        },
    ],
}

# --- RoPE -----------------------------------------------------------------------------------

ROPE = {
    "slug": "rope",
    "title": "Rotary position embeddings (RoPE)",
    "summary": "Positions as rotations: why the attention score ends up depending only on how "
    "far apart two tokens are.",
    "prerequisites_note": "Dot products, sines and cosines",
    "symbols": ["rope", "rope-angle", "cos", "sin", "transpose", "qk-vectors", "positions"],
    "idea": """
        Attention on its own cannot tell where a token sits in the sequence. RoPE fixes that
        without adding anything to the embeddings: it splits a query or key vector into pairs of
        features and turns each pair by an angle proportional to the token's position $m$.
        Different pairs turn at different speeds, from fast to very slow, like the hands of a
        clock.

        Rotations keep lengths, and the dot product of two rotated vectors only depends on the
        difference of their angles. So the score between a query at position $m$ and a key at
        position $n$ depends on $m - n$, the offset, and not on where the pair sits in the text.
    """,
    "try_it_intro": "Label the parts of the rotation angle and of the score.",
    "equations": [
        {
            "title": "The angle of each pair",
            "latex": r"\theta_i = b^{-2i/d}, \qquad i = 0, 1, \ldots, \tfrac{d}{2} - 1",
            "shape_note": "One angle per pair of features: $d/2$ of them.",
            "widget": "",
            "parts": [
                (r"\theta_i", OUT, "The rotation speed of pair $i$."),
                ("b", CONST, "The base, often 10000, fixed before training."),
                ("d", CONST, "The head width, set by the architecture."),
                ("i", IN, "Which pair we are looking at."),
            ],
        },
        {
            "title": "The score depends on the offset",
            "latex": r"(R_m \mathbf{q})^\top (R_n \mathbf{k}) = \mathbf{q}^\top R_{n-m} \mathbf{k}",
            "shape_note": "$\\mathbf{q}$, $\\mathbf{k}$: $d$ features. $R_m$: $d \\times d$, "
            "block-diagonal rotations.",
            "widget": "rope",
            "parts": [
                (r"\mathbf{q}", IN, "A query vector, from the attention projection."),
                (r"\mathbf{k}", IN, "A key vector, from the attention projection."),
                ("R_m", OP, "Rotates each feature pair by $m\\,\\theta_i$."),
                (r"^\top", OP, "Transposes, so the product is a dot product."),
            ],
        },
    ],
    "listings": [
        {
            "filename": "rope_offsets.py",
            "source": _code(
                """
                import numpy as np


                def rope(x, position, base=10000.0):
                    d = x.shape[-1]
                    angles = position * base ** (-np.arange(0, d, 2) / d)  # one angle per pair
                    cos, sin = np.cos(angles), np.sin(angles)
                    even, odd = x[0::2], x[1::2]
                    out = np.empty_like(x)
                    out[0::2] = even * cos - odd * sin
                    out[1::2] = even * sin + odd * cos
                    return out


                gen = np.random.default_rng(seed=3)
                q, k = gen.standard_normal((2, 8))
                for m, n in [(3, 1), (10, 8), (500, 498)]:
                    print(m - n, round(float(rope(q, m) @ rope(k, n)), 6))
                print(np.allclose(np.linalg.norm(rope(q, 7)), np.linalg.norm(q)))
                """
            ),
            "expected_output": "2 11.209324\n2 11.209324\n2 11.209324\nTrue\n",
        }
    ],
    "questions": [
        {
            "prompt": "A query at position 12 meets a key at position 9. What does the score "
            "depend on?",
            "explanation": "Rotating both vectors and taking the dot product leaves only the "
            "difference of the two rotations.",
            "choices": [
                ("The offset, 3.", True, "Right: $R_m^\\top R_n = R_{n-m}$."),
                (
                    "Both positions, 12 and 9, separately.",
                    False,
                    "Only their difference is left after the rotations meet.",
                ),
                (
                    "Neither: RoPE ignores position.",
                    False,
                    "Then it would not be a position encoding.",
                ),
            ],
        },
        {
            "prompt": "Does RoPE change the length of a query vector?",
            "explanation": "Each pair is rotated, and rotations keep lengths, as the last "
            "line of the code checks.",
            "choices": [
                ("No.", True, "Right: rotations preserve norms."),
                (
                    "Yes, it grows with the position.",
                    False,
                    "That would be the case for an added position vector, not a rotation.",
                ),
            ],
        },
        {
            "prompt": "Which pairs of features rotate fastest?",
            "explanation": "$\\theta_i = b^{-2i/d}$ is largest at $i = 0$ and shrinks "
            "geometrically.",
            "choices": [
                ("The first pairs (small $i$).", True, "Right."),
                ("The last pairs (large $i$).", False, "Those turn slowest."),
                ("All at the same speed.", False, "Then long and short offsets would alias."),
            ],
        },
    ],
}

# --- capstone -------------------------------------------------------------------------------

CAPSTONE = {
    "slug": "capstone-three-equations",
    "title": "Capstone: read three equations from real papers",
    "summary": "Scaled dot-product attention, the Adam update and layer normalization, as "
    "their papers wrote them. Label the parts, then put each through the seven questions.",
    "prerequisites_note": "The rest of the track, or as much of it as you like",
    "symbols": ["softmax", "transpose", "square-root", "epsilon", "hadamard", "eta"],
    "idea": """
        This chapter is the test the track has been preparing you for: three equations lifted
        from well-known, freely available papers, read without a guide. Scaled dot-product
        attention comes from the paper that introduced the Transformer, the update rule from
        the Adam paper, and the normalization from the layer-norm paper. We use today's usual
        notation; the commentary is ours.

        Work through them in two passes. First give every part a role (output, input, learned,
        constant or operation) and check. Then ask the seven questions yourself: what comes
        out, what goes in, which shapes meet, what each function does, what happens at the
        extremes. Nothing here is new: transposes, softmax, square roots, a small $\\epsilon$,
        element-wise products and running averages all appeared earlier.

        If a symbol stops you, paste the equation into the notation explorer's Decode box.
        Real papers define their notation far less carefully than these lessons; most of the
        work is spotting conventions, and you have now seen the common ones.
    """,
    "try_it_intro": """
        Choose an equation and give each part a role. Call a part *input* when it arrives from
        outside the equation (data, or something an earlier step computed), *learned* when
        training sets it, and *constant* when a person fixes it in advance.
    """,
    "equations": [
        {
            "title": "Scaled dot-product attention",
            "latex": r"\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\left("
            r"\frac{QK^\top}{\sqrt{d_k}}\right)V",
            "shape_note": "$Q$, $K$: tokens × $d_k$. $V$: tokens × $d_v$. $QK^\\top$: "
            "tokens × tokens.",
            "widget": "attention",
            "parts": [
                (
                    r"\operatorname{Attention}(Q, K, V)",
                    OUT,
                    "What the layer hands on: a new vector for every token.",
                ),
                ("Q", IN, "Queries arrive already projected from the token vectors."),
                ("K", IN, "Keys arrive already projected, like the queries."),
                ("V", IN, "Values are the vectors being mixed; they come in ready-made."),
                (r"^\top", OP, "Flips $K$ so each query meets each key in a dot product."),
                (r"\sqrt{d_k}", CONST, "The key width is fixed by the architecture, not trained."),
                (
                    r"\operatorname{softmax}",
                    OP,
                    "Turns each row of scores into weights that add up to 1.",
                ),
            ],
        },
        {
            "title": "Adam's running averages",
            "latex": r"m_t = \beta_1 m_{t-1} + (1 - \beta_1)\,g_t, \qquad "
            r"v_t = \beta_2 v_{t-1} + (1 - \beta_2)\,g_t^2",
            "shape_note": "Every symbol has the shape of the parameters $\\theta$. The first "
            "average is momentum; the second tracks squared gradients.",
            "widget": "",
            "parts": [
                ("m_t", OUT, "The new average of gradients after step $t$."),
                ("v_t", OUT, "The new average of squared gradients."),
                (r"\beta_1", CONST, "A decay rate set before training, typically 0.9."),
                (r"\beta_2", CONST, "A second decay rate, typically 0.999."),
                ("g_t", IN, "This step's gradient, computed by backpropagation beforehand."),
                ("m_{t-1}", IN, "The average from the previous step, carried over."),
            ],
        },
        {
            "title": "Adam's step",
            "latex": r"\hat{m}_t = \frac{m_t}{1 - \beta_1^{\,t}}, \quad \hat{v}_t = "
            r"\frac{v_t}{1 - \beta_2^{\,t}}, \qquad \theta_t = \theta_{t-1} - \eta\,"
            r"\frac{\hat{m}_t}{\sqrt{\hat{v}_t} + \epsilon}",
            "shape_note": "The hats undo the averages' pull towards 0 during the first steps.",
            "widget": "adam",
            "parts": [
                (r"\theta_t", OUT, "The updated parameters: the point of the whole rule."),
                (r"\theta_{t-1}", IN, "The parameters before this step."),
                (r"\eta", CONST, "The learning rate, chosen by the person training the model."),
                (r"\epsilon", CONST, "A tiny constant that keeps the division safe."),
                (r"\hat{m}_t", IN, "Computed just before, from $m_t$."),
                (r"\sqrt{\hat{v}_t}", OP, "Scales each parameter's step by its gradient size."),
            ],
        },
        {
            "title": "Layer normalization",
            "latex": r"\operatorname{LN}(\mathbf{x}) = \boldsymbol{\gamma} \odot "
            r"\frac{\mathbf{x} - \mu}{\sqrt{\sigma^2 + \epsilon}} + \boldsymbol{\beta}, \quad "
            r"\mu = \frac{1}{d}\sum_{i} x_i, \quad \sigma^2 = \frac{1}{d}\sum_{i}(x_i - \mu)^2",
            "shape_note": "$\\mu$ and $\\sigma^2$ are computed across the $d$ features of a "
            "single token.",
            "widget": "norms",
            "parts": [
                (r"\operatorname{LN}(\mathbf{x})", OUT, "The normalised, rescaled token."),
                (r"\mathbf{x}", IN, "One token's features from the previous layer."),
                (r"\boldsymbol{\gamma}", LEARNED, "A per-feature gain that training adjusts."),
                (r"\boldsymbol{\beta}", LEARNED, "A per-feature shift that training adjusts."),
                (r"\epsilon", CONST, "Picked by hand to keep the square root away from 0."),
                (r"\odot", OP, "Multiplies feature by feature."),
            ],
        },
    ],
    "listings": [
        {
            "filename": "read_three.py",
            "source": _code(
                '''
                """Attention, layer norm and Adam, each written straight from its equation."""

                import numpy as np


                def scaled_dot_product_attention(queries, keys, values):
                    d_k = keys.shape[-1]
                    scores = queries @ keys.T / np.sqrt(d_k)  # (tokens, tokens)
                    scores -= scores.max(axis=-1, keepdims=True)  # same softmax, no overflow
                    weights = np.exp(scores)
                    weights /= weights.sum(axis=-1, keepdims=True)  # each row now sums to 1
                    return weights @ values, weights


                gen = np.random.default_rng(seed=7)
                queries, keys, values = gen.standard_normal((3, 4, 8))  # 4 tokens, d = 8 each
                mixed, weights = scaled_dot_product_attention(queries, keys, values)
                print(mixed.shape, weights.shape, weights.sum(axis=-1).round(6).tolist())


                def layer_norm(x, gamma=1.0, beta=0.0, eps=1e-5):
                    centred = x - x.mean(axis=-1, keepdims=True)
                    variance = (centred**2).mean(axis=-1, keepdims=True)  # divide by d, not d - 1
                    return gamma * centred / np.sqrt(variance + eps) + beta


                normed = layer_norm(np.array([2.0, 4.0, 6.0, 8.0]))
                print(normed.round(3).tolist(), abs(normed.mean()).round(6), normed.std().round(3))


                def adam(grad, theta, steps, lr=0.1, beta1=0.9, beta2=0.999, eps=1e-8):
                    m = v = 0.0
                    for t in range(1, steps + 1):
                        g = grad(theta)
                        m = beta1 * m + (1 - beta1) * g  # running mean of gradients
                        v = beta2 * v + (1 - beta2) * g**2  # running mean of squared gradients
                        m_hat, v_hat = m / (1 - beta1**t), v / (1 - beta2**t)  # undo the pull to 0
                        theta = theta - lr * m_hat / (np.sqrt(v_hat) + eps)
                    return theta


                # The loss is theta squared, so the gradient is 2 * theta and the minimum sits at 0.
                print(round(adam(lambda theta: 2 * theta, theta=3.0, steps=200), 4))
                '''
            ),
            "expected_output": "(4, 8) (4, 4) [1.0, 1.0, 1.0, 1.0]\n"
            "[-1.342, -0.447, 0.447, 1.342] 0.0 1.0\n"
            "-0.0001\n",
        }
    ],
    "questions": [
        {
            "prompt": "Why does attention divide $QK^\\top$ by $\\sqrt{d_k}$?",
            "explanation": "A dot product of two $d_k$-long vectors with unit-variance entries "
            "has variance $d_k$. Without the division, wide heads produce huge scores, the "
            "softmax puts nearly all weight on one token, and its gradients almost vanish.",
            "choices": [
                (
                    "To keep the scores' spread from growing with $d_k$, so softmax does not "
                    "saturate.",
                    True,
                    "Right: dividing by the standard deviation $\\sqrt{d_k}$ "
                    "brings the spread back to about 1.",
                ),
                (
                    "To make each row of weights add up to 1.",
                    False,
                    "The softmax already does that, whatever the scale of the scores.",
                ),
                (
                    "To normalise the values $V$.",
                    False,
                    "$V$ is not touched by the division; only the scores are.",
                ),
                (
                    "To make $QK^\\top$ square.",
                    False,
                    "It is tokens × tokens before and after the division.",
                ),
            ],
        },
        {
            "prompt": "In layer normalization, which symbols does training learn?",
            "explanation": "$\\mu$ and $\\sigma^2$ are recomputed from every token, "
            "$\\epsilon$ is fixed by hand, and only $\\boldsymbol{\\gamma}$ and "
            "$\\boldsymbol{\\beta}$ are parameters.",
            "choices": [
                (
                    "$\\boldsymbol{\\gamma}$ and $\\boldsymbol{\\beta}$",
                    True,
                    "Right: a learned gain and a learned shift per feature.",
                ),
                (
                    "$\\mu$ and $\\sigma^2$",
                    False,
                    "They are statistics of the input, computed again for each token.",
                ),
                ("$\\epsilon$", False, "It is a constant chosen before training."),
                ("$\\mathbf{x}$", False, "That is the input."),
            ],
        },
        {
            "prompt": "What is Adam's $\\epsilon$ for?",
            "explanation": "When a parameter's squared-gradient average $\\hat{v}_t$ is "
            "close to 0, dividing by its square root alone would make the step explode.",
            "choices": [
                (
                    "It keeps the denominator away from zero.",
                    True,
                    "Right: a tiny floor under $\\sqrt{\\hat{v}_t}$.",
                ),
                ("It is the learning rate.", False, "That is $\\eta$."),
                (
                    "It removes the bias of the early averages.",
                    False,
                    "The hats, dividing by $1 - \\beta^t$, do that.",
                ),
                ("It sets how fast the momentum decays.", False, "That is $\\beta_1$."),
            ],
        },
        {
            "prompt": "For 4 tokens, what shape is $QK^\\top$?",
            "explanation": "$Q$ is 4 × $d_k$ and $K^\\top$ is $d_k$ × 4, so the product holds "
            "one score for every pair of tokens.",
            "choices": [
                ("4 × 4", True, "Right: one row per query, one column per key."),
                ("4 × $d_k$", False, "That is the shape of $Q$ itself."),
                ("$d_k$ × $d_k$", False, "That would be $Q^\\top K$."),
                ("4 × $d_v$", False, "That is the shape of the output after multiplying by $V$."),
            ],
        },
    ],
}

COURSE = {
    "slug": "reading-ml-papers",
    "title": "Reading ML papers",
    "summary": "From softmax to rotary embeddings: read the equations of modern architectures "
    "one symbol at a time, then check yourself against real papers.",
    "chapters": [SOFTMAX, NORMS, ROPE, CAPSTONE],
}


# --- loader ---------------------------------------------------------------------------------


def load_glossary() -> int:
    for entry in GLOSSARY:
        Symbol.objects.update_or_create(
            slug=entry["slug"],
            defaults={
                k: entry[k]
                for k in ("name", "glyph", "latex", "tokens", "explanation", "kind", "extremes")
            },
        )
    return len(GLOSSARY)


def _upsert_children(model, parent_field: str, parent, rows: list[dict]) -> list:
    """Update rows by position (``order``), create missing ones, delete the surplus."""
    objects = []
    for order, values in enumerate(rows, start=1):
        obj, _ = model.objects.update_or_create(
            **{parent_field: parent, "order": order}, defaults=values
        )
        objects.append(obj)
    model.objects.filter(**{parent_field: parent, "order__gt": len(rows)}).delete()
    return objects


def _load_chapter(course: Course, order: int, spec: dict) -> Chapter:
    chapter, _ = Chapter.objects.update_or_create(
        course=course,
        slug=spec["slug"],
        defaults={
            "title": spec["title"],
            "summary": spec["summary"],
            "order": order,
            "published": True,
            "prerequisites_note": spec["prerequisites_note"],
            "idea": dedent(spec["idea"]).strip(),
            "try_it_intro": dedent(spec["try_it_intro"]).strip(),
        },
    )
    symbols = {s.slug: s for s in Symbol.objects.filter(slug__in=spec["symbols"])}
    ChapterSymbol.objects.filter(chapter=chapter).exclude(symbol__slug__in=symbols).delete()
    for position, slug in enumerate(spec["symbols"], start=1):
        if slug in symbols:
            ChapterSymbol.objects.update_or_create(
                chapter=chapter, symbol=symbols[slug], defaults={"order": position}
            )
    equations = _upsert_children(
        Equation,
        "chapter",
        chapter,
        [{k: e[k] for k in ("title", "latex", "shape_note", "widget")} for e in spec["equations"]],
    )
    for equation, equation_spec in zip(equations, spec["equations"], strict=True):
        _upsert_children(
            EquationPart,
            "equation",
            equation,
            [{"latex": la, "role": r, "reason": why} for la, r, why in equation_spec["parts"]],
        )
    _upsert_children(CodeListing, "chapter", chapter, spec["listings"])
    questions = _upsert_children(
        Question,
        "chapter",
        chapter,
        [{"prompt": q["prompt"], "explanation": q["explanation"]} for q in spec["questions"]],
    )
    for question, question_spec in zip(questions, spec["questions"], strict=True):
        _upsert_children(
            Choice,
            "question",
            question,
            [
                {"text": text, "is_correct": ok, "explanation": why}
                for text, ok, why in question_spec["choices"]
            ],
        )
    return chapter


def load() -> str:
    """Create or update the glossary and the demo course. Returns a one-line summary."""
    symbols = load_glossary()
    course, _ = Course.objects.update_or_create(
        slug=COURSE["slug"],
        defaults={"title": COURSE["title"], "summary": COURSE["summary"], "published": True},
    )
    chapters = [
        _load_chapter(course, order, spec) for order, spec in enumerate(COURSE["chapters"], start=1)
    ]
    *earlier, capstone = chapters
    capstone.prerequisites.set(earlier)
    capstone.related_chapters.set(earlier)
    for chapter in earlier:
        chapter.related_chapters.set([capstone])
    _link_notes(capstone)
    unchecked = CodeListing.objects.filter(chapter__course=course, checked_at__isnull=True)
    for listing in unchecked:
        services.check_listing(listing=listing)
    return f"{symbols} symbols, course “{course.title}” with {len(chapters)} chapters"


NOTE_WORDS = ("attention", "adam", "norm")


def _link_notes(chapter: Chapter) -> None:
    """Point "You'll see this in" at published notebook notes on the same topics, if any."""
    from django.db.models import Q

    from notebook.models import Note

    match = Q()
    for word in NOTE_WORDS:
        match |= Q(title__icontains=word)
    chapter.related_notes.set(Note.objects.published().filter(match).order_by("-date")[:3])

d_model = 512
plain = 2 * d_model * (4 * d_model)  # up and down projections
naive_swiglu = 3 * d_model * (4 * d_model)  # gate, up, down with the same width
d_ff = int(8 * d_model / 3)
matched = 3 * d_model * d_ff
print("plain FFN:        ", plain)
print("SwiGLU at 4x:     ", naive_swiglu, f"(+{naive_swiglu / plain - 1:.0%})")
print("SwiGLU at 8/3 x:  ", matched, f"(d_ff = {d_ff})")

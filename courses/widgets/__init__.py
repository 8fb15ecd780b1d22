"""The htmx widget endpoints: kernels (pure numpy), forms, figures, the registry and its views,
the notation explorer and the seven-questions walk-through.

Nothing is imported here, so ``courses.widgets.kernels`` can be imported without Django.
"""

"""Attention sinks in a tiny transformer: the induction experiment of the paper's section 7.

The config, the task, the sink metric and run files need only NumPy. Training
(``polarize.sinks.train``, with ``model`` and ``attention``) needs the optional
extra ``pip install 'polarize[sinks]'`` (JAX and optax), imported only there.
"""

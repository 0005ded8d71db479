"""The talk: the presenter view's eight-step story, as data and figures, computed once and replayed.

``story`` computes each step's numbers (the cone, paraphrases, STSb, Table 1, a pair explained, the
cost, the live training, the room), ``slides`` draws them for a projector or a phone,
``rehearsal`` keeps every computed step (in memory and in the cache folder) so that a step on stage
answers at once, and ``training`` runs the talk's own siamese-GloVe training where no user model lives.

May import: config, shared, views, formatting, plot_style, models, data, encoding, explore, benchmark, analysis, training, audience, gpu.
"""

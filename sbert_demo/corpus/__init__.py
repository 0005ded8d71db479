"""Corpora of up to a million sentences: read as streams, embedded in content-keyed shards on disk (in one
process or on a Ray cluster), laid out from a sample, clustered, searched through an index.

``sources`` reads files, folders of Parquet shards and Hugging Face datasets; ``library`` keeps what was
read; ``shards`` and ``embed`` hold and compute the embeddings; ``ray_embed`` is the Ray leaf (Ray may be
absent); ``layout``, ``clusters`` and ``search`` make the map; ``large_map`` puts them together in the
corpus map's result shape, for the page, the API and the command line.

May import: config, shared, views, formatting, plot_style, hub, models, data, encoding, explore, gpu.
"""

"""``python -m sbert_demo embed`` and ``map``: corpora of up to a million sentences, in one process or on Ray.

    python -m sbert_demo embed CORPUS --model KEY [--ray [ADDRESS]] [--workers N] [--dtype fp16|int8]
    python -m sbert_demo map --file CORPUS --models KEYS [--k 20] [--json OUT]

``CORPUS`` is a ``.parquet``, ``.csv``, ``.tsv``, ``.txt`` or ``.jsonl`` file or a folder of Parquet
shards; ``--dataset`` names a Hugging Face dataset instead (``--config``, ``--split``, ``--data-files``
for local files, e.g. ``--dataset parquet --data-files 'shards/*.parquet'``). ``embed`` writes the
corpus's embeddings as shards in the cache folder (:mod:`sbert_demo.corpus.shards`), where ``map``
and the app find them; ``--ray`` alone starts a local Ray cluster for the run, ``--ray auto`` joins
the one running here, ``--ray HOST:PORT`` another. ``map`` keeps today's JSON (every point's ``x`` and
``y``); past 20,000 sentences it lays the corpus out from a sample (:mod:`sbert_demo.corpus.layout`).
"""

from __future__ import annotations

import argparse
import sys
import time

from ..corpus.shards import SHARD
from .output import format_table, progress_bar


def spec_from(args: argparse.Namespace):
    from ..corpus.sources import SourceSpec

    files = tuple(f for f in (args.data_files or "").split(",") if f)
    path = getattr(args, "corpus", None) or getattr(args, "file", None)
    if not path and not args.dataset:
        return None
    chosen = getattr(args, "columns", None)
    fields = None if chosen is None else tuple(name.strip() for name in chosen.split(",") if name.strip())
    return SourceSpec(path=path, dataset=args.dataset, config=args.config, split=args.split, data_files=files,
                      text_column=args.text_column, label_column=args.label_column, fields=fields)


def cmd_embed(args: argparse.Namespace) -> int:
    from ..corpus.embed import embed_corpus
    from ..corpus.library import open_corpus

    spec = spec_from(args)
    if spec is None:
        raise ValueError("Give the corpus to embed: a file or folder, or --dataset.")
    with progress_bar("reading") as progress:
        corpus = open_corpus(spec, progress=progress)
    print(corpus.describe(), file=sys.stderr)
    for note in corpus.notes:  # what reading changed: rows skipped, texts cut or cleaned
        print(f"note: {note}", file=sys.stderr)
    started = time.perf_counter()
    with progress_bar("embedding") as progress:
        if args.ray is not None:
            from ..corpus.ray_embed import embed_with_ray

            embedded = embed_with_ray(corpus, args.model, address=None if args.ray == "" else args.ray,
                                      workers=args.workers, fast=not args.lossless, dtype=args.dtype, progress=progress,
                                      shard_size=args.shard_size)
        else:
            embedded = embed_corpus(corpus, args.model, fast=not args.lossless, dtype=args.dtype, progress=progress,
                                    shard_size=args.shard_size)
    seconds = time.perf_counter() - started
    rate = f"{embedded.computed / seconds:,.0f} sentences/s" if embedded.computed else "all read from disk"
    print(format_table(["model", "sentences", "computed now", "seconds", "rate", "computed with", "shards"],
                       [[embedded.key, f"{embedded.n:,}", f"{embedded.computed:,}", f"{seconds:.1f}", rate,
                         embedded.runtime, str(embedded.store.folder)]]))
    return 0


MAX_SHARD = 1_000_000


def shard_size(text: str) -> int:
    """``--shard-size``: a whole number of sentences from 1 to :data:`MAX_SHARD`."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_SHARD:
        raise argparse.ArgumentTypeError(f"a shard holds 1 to {MAX_SHARD:,} sentences, not {text[:20]!r}")
    return value


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``embed`` to ``python -m sbert_demo`` (``map`` is :mod:`.analysis`'s, with the same corpus flags)."""
    embed = commands.add_parser("embed", help="embed a corpus of up to 1,000,000 sentences as shards in the cache "
                                              "folder, in this process or on a Ray cluster")
    embed.add_argument("corpus", nargs="?", help=".parquet/.csv/.tsv/.txt/.jsonl file or a folder of Parquet files")
    embed.add_argument("--model", required=True, help="registry key")
    embed.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                       help="on Ray: alone, a local cluster for the run; 'auto' the one running here; or HOST:PORT")
    embed.add_argument("--workers", type=int, help="Ray actors (default: one per CPU, or per GPU where there are GPUs)")
    embed.add_argument("--dtype", choices=("fp16", "int8"), default="fp16", help="how the shards keep the vectors")
    embed.add_argument("--shard-size", type=shard_size, default=SHARD,
                       help=f"sentences per shard, 1 to {MAX_SHARD:,} (default {SHARD:,})")
    embed.add_argument("--lossless", action="store_true",
                       help="the runtime of reported numbers (default: the fast one the maps use)")
    add_corpus_flags(embed)
    embed.set_defaults(run=cmd_embed)


def add_corpus_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", help="a Hugging Face dataset (id, a builder such as parquet with --data-files, "
                                          "or a folder saved with save_to_disk)")
    parser.add_argument("--config", help="the dataset's configuration")
    parser.add_argument("--split", default="train", help="the dataset's split (default train)")
    parser.add_argument("--data-files", help="comma-separated files or patterns for a builder dataset")
    parser.add_argument("--text-column", help="the text column (default: found by name)")
    parser.add_argument("--label-column", help="the label column (default: found by name; '' for none)")
    parser.add_argument("--columns", help="the corpus's columns kept beside the text, comma-separated (default: "
                                          "every one; '' for none): colour, filter and judge the models by them")

"""``python -m sbert_demo explain``, ``anisotropy`` and ``map`` (a corpus map: clusters, their words, coordinates)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .corpus import add_corpus_flags
from .output import format_table, progress_bar


def _keys(text: str) -> list[str]:
    from ..models.registry import get_registry

    keys = [k.strip() for k in text.split(",") if k.strip()]
    if not keys:
        raise ValueError("Name at least one model with --models (see: python -m sbert_demo models).")
    for key in keys:
        get_registry().get(key)  # a typo stops with exit status 2 before any work
    return keys


COMPACT_PAST = 20_000  # sentences: a larger map's JSON is written without indentation


def _write_json(path: str | None, rows: dict) -> None:
    if path:
        # Indented for people to read; a large map compact: indenting runs json's pure-Python encoder, 1.3 s of
        # a 200,000-sentence map's 4 s re-open.
        compact = rows.get("n", 0) > COMPACT_PAST
        Path(path).write_text(json.dumps(rows, **({"separators": (",", ":")} if compact else {"indent": 2})) + "\n")
        print(f"Wrote {path}", file=sys.stderr)


def cmd_explain(args: argparse.Namespace) -> int:
    from ..analysis.explanation import explain_pair

    results = explain_pair(_keys(args.models), args.a, args.b)
    failed = [r for r in results if r.error]
    done = [r for r in results if r.ok]
    for result in done:
        print(f"\n{result.label} ({result.key}): cosine {result.cosine:.4f}, {result.method}")
        for note in result.notes:
            print(f"  note: {note}")
        if result.exact:
            print(f"  contributions sum to {result.contributions.sum():.6f}")
            rows = [[result.tokens_a[i], result.tokens_b[j], f"{value:+.4f}", f"{value / result.cosine:+.1%}"
                     if abs(result.cosine) > 1e-9 else "-"] for i, j, value in result.top_pairs()]
            print(format_table(["token A", "token B", "contribution", "of cosine"], rows))
            shares = result.shares()
            print("  " + ", ".join(f"{name}: {value:+.4f}" for name, value in shares.items()))
        else:
            print(f"  not exact: {result.why_not_exact}")
            for name, tokens, deltas in (("A", result.tokens_a, result.leave_one_out_a),
                                         ("B", result.tokens_b, result.leave_one_out_b)):
                shown = ", ".join(f"{t} {d:+.3f}" for t, d in zip(tokens, deltas) if d == d)
                print(f"  without each token of {name}: {shown}")
    for result in failed:
        print(f"error: {result.key}: {result.error}", file=sys.stderr)
    _write_json(args.json, {r.key: r.as_json() for r in done})
    return 0 if not failed else 1


def cmd_anisotropy(args: argparse.Namespace) -> int:
    from ..analysis.anisotropy import anisotropy_many

    keys = _keys(args.models)
    with progress_bar("measuring") as progress:
        results = anisotropy_many(keys, args.split, progress=progress, max_models=len(keys))
    done = [r for r in results if r.ok]
    rows = [[r.key, r.family, f"{r.mean_random_cosine:.3f}", f"{r.similar.mean():.3f}", f"{r.unrelated.mean():.3f}",
             f"{r.auc:.3f}", len(r.random), r.runtime] for r in done]
    print(format_table(["model", "family", "mean random cos", "similar", "unrelated", "AUC", "random pairs",
                        "computed with"], rows))
    for result in results:
        if result.error:
            print(f"error: {result.key}: {result.error}", file=sys.stderr)
    _write_json(args.json, {r.key: r.as_json() for r in done})
    return 0 if len(done) == len(results) else 1


def cmd_map(args: argparse.Namespace) -> int:
    from ..corpus.large_map import as_corpus, map_large_corpus
    from ..corpus.library import open_corpus
    from ..data.corpora import MAX_CORPUS_SENTENCES, stsb_corpus
    from ..explore.corpus_map import map_corpus
    from .corpus import spec_from

    keys = _keys(args.models)
    spec = spec_from(args)
    with progress_bar("reading") as progress:
        large = open_corpus(spec, progress=progress) if spec else None
    corpus = as_corpus(large) if large is not None else stsb_corpus()
    print(corpus.describe(), file=sys.stderr)
    for found in corpus.fields:  # the corpus's own columns, each with its type
        print(f"column {found.describe()}", file=sys.stderr)
    for note in large.notes if large is not None else ():  # what reading changed: rows skipped, texts cut or cleaned
        print(f"note: {note}", file=sys.stderr)
    with progress_bar("mapping") as progress:
        if large is not None and len(large) > MAX_CORPUS_SENTENCES:  # laid out from a sample, kept on disk
            result = map_large_corpus(large, keys, args.k, progress=progress)
        else:
            result = map_corpus(corpus, keys, args.k, progress=progress)
    for note in result.notes:
        print(f"note: {note}", file=sys.stderr)
    for model in result.succeeded:
        silhouette = "" if model.clustering.silhouette is None else f", silhouette {model.clustering.silhouette:.3f}"
        ari = "" if model.agreement is None else f", ARI vs labels {model.agreement:.3f}"
        print(f"\n{model.label} ({model.key}): {model.method} map, {model.clustering.k} clusters{silhouette}{ari}, "
              f"{model.seconds:.1f} s, {model.runtime}")
        rows = [[cluster, size, ", ".join(model.cluster_words.get(cluster, ()))]
                for cluster, size in model.clusters_by_size()]
        print(format_table(["cluster", "sentences", "distinctive words (c-TF-IDF)"], rows))
    _write_json(args.json, result.as_json())
    if result.succeeded:
        from ..atlas import compare
        from ..atlas.store import publish

        atlas = publish(result)
        print(f"\nmap view: /atlas/?map={atlas.id} (python app.py, then open http://127.0.0.1:7860/atlas/?map={atlas.id})")
        if args.compare and len(atlas.models) > 1:
            with progress_bar("comparing") as progress:
                found = compare.compare_all(atlas, progress=progress)
            for (a, b), counts in found.items():
                print(f"{atlas.models[a]['label']} and {atlas.models[b]['label']} share {counts.mean():.2f} of each "
                      f"sentence's {compare.K} nearest neighbours on average")
        if args.compare and atlas.meta.get("fields"):
            from ..atlas.agreement import agreement_all, report

            print(report(agreement_all(atlas)))
    return 0 if len(result.succeeded) == len(result.models) else 1


def add_parsers(commands: argparse._SubParsersAction) -> None:
    """Add ``explain``, ``anisotropy`` and ``map`` to ``python -m sbert_demo``."""
    explain = commands.add_parser("explain", help="which token pairs make two sentences similar (exact for "
                                                  "mean and max pooling)")
    explain.add_argument("--models", required=True, help="comma-separated registry keys (up to 4)")
    explain.add_argument("--a", required=True, help="sentence A")
    explain.add_argument("--b", required=True, help="sentence B")
    explain.add_argument("--json", help="write the contributions as JSON to this file")
    explain.set_defaults(run=cmd_explain)

    cone = commands.add_parser("anisotropy", help="mean cosine of random STSb pairs, and the AUC of similar vs "
                                                  "unrelated pairs")
    cone.add_argument("--models", required=True, help="comma-separated registry keys")
    cone.add_argument("--split", choices=["train", "dev", "test"], default="train")
    cone.add_argument("--json", help="write results as JSON to this file")
    cone.set_defaults(run=cmd_anisotropy)

    corpus = commands.add_parser("map", help="a corpus map (up to 1,000,000 sentences): k-means clusters and their "
                                             "words, 2-D coordinates as JSON")
    corpus.add_argument("--models", required=True, help="comma-separated registry keys (up to 4)")
    corpus.add_argument("--file", help=".txt, .csv, .tsv, .parquet or .jsonl corpus, or a folder of Parquet files "
                                       "(default: the STSb sentences)")
    corpus.add_argument("--k", type=int, default=12, help="k-means clusters (2-40, default 12)")
    add_corpus_flags(corpus)
    corpus.add_argument("--json", help="write coordinates, clusters and words as JSON to this file")
    corpus.add_argument("--compare", action="store_true",
                        help="also find each sentence's 10 nearest neighbours under each model and compare every pair "
                             "(the map view's shared neighbours at once; publish then writes them without computing)")
    corpus.set_defaults(run=cmd_map)

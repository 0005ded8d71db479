"""Command line: ``python -m sbert_demo models | eval | explain | anisotropy | train | board | prepare | publish``.

A leaf over the core, like the web app: it parses arguments, calls one core function per command
and prints. User errors (unknown model, missing data, bad file) end with a one-line message and
exit status 2, never a traceback. One module per group of commands: :mod:`.evaluate` (``models``,
``eval``), :mod:`.analysis` (``explain``, ``anisotropy``), :mod:`.train` (``train``), :mod:`.board`
(``board export``), :mod:`.prepare` (``prepare``), :mod:`.publish` (``publish``); :mod:`.output`
formats what they print.

May import: config, shared, views, formatting, hub, plot_style, models, data, encoding, explore, benchmark, analysis, training, audience, talk, corpus, atlas, publish.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence

from ..config import Settings, quiet_libraries, use_settings
from . import analysis, board, corpus, evaluate, prepare, publish, train

logger = logging.getLogger(__name__)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m sbert_demo", description="Sentence similarity: naive vs SBERT.")
    parser.add_argument("--data-dir", help="folder with stsbenchmark/ and nli/ (default: $SBERT_DEMO_DATA, else the Hub)")
    parser.add_argument("--fit-sentences", help="sentence file (.txt/.csv/.tsv) the training-free fixes "
                                                "(K+center, K+abttD, K+whiten[N]) are fitted on (default: STSb train)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details")
    commands = parser.add_subparsers(dest="command", required=True)
    evaluate.add_parsers(commands)
    analysis.add_parsers(commands)
    train.add_train_parser(commands)
    board.add_parsers(commands)
    prepare.add_parsers(commands)
    corpus.add_parsers(commands)
    publish.add_parsers(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    args.data_dir = getattr(args, "data_dir_sub", None) or args.data_dir
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    quiet_libraries(args.verbose)
    try:
        # The flags win over the environment for this command; every layer reads them from settings().
        chosen = Settings.from_environment(data_dir=args.data_dir or None, fit_sentences=args.fit_sentences or None)
        with use_settings(chosen):
            return args.run(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130

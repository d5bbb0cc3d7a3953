"""The ``mlcourse`` command: build the website, release, grade and check assignments."""

from __future__ import annotations

import argparse
import subprocess
import sys


def _cmd_build(args):
    from ._book import build_book

    html = build_book(instructor=args.instructor, out=args.out)
    print(f"built {'instructor' if args.instructor else 'student'} edition: {html / 'index.html'}")
    return 0


def make_parser():
    parser = argparse.ArgumentParser(prog="mlcourse", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("build", help="build the course website")
    p.add_argument("--instructor", action="store_true", help="show solutions and teaching notes")
    p.add_argument("--out", default=None, help="output folder (default _build)")
    p.set_defaults(func=_cmd_build)
    return parser


def main(argv=None):
    args = make_parser().parse_args(argv)
    try:
        return args.func(args)
    except subprocess.CalledProcessError as exc:
        print(f"mlcourse {args.command}: {exc.cmd[0]} failed with exit status {exc.returncode}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())

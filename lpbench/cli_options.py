"""Options that a command's kind does not read are refused (exit 2), never silently ignored.

argparse keeps no record of which options were typed, so an option counts as given when its value differs from
its default. Flags and defaults are read from the parser itself (stored on the namespace by ``remember_parser``),
so a default changed in the parser cannot make a plain run look as if it had given an option.
"""
from __future__ import annotations

from .errors import InputError

#: options every kind of a command reads (the output and its overwrite switch), never refused
ALWAYS_READ = frozenset({"help", "out", "force"})


def remember_parser(parser) -> None:
    """Keep the subcommand's parser on its namespace, for ``refuse_unread``."""
    parser.set_defaults(_parser=parser)


def refuse_unread(args, command: str, reads) -> None:
    """Exit 2 naming every option given that ``command`` (e.g. 'plot ratio') does not read.

    ``reads`` are argparse dests; --out, --force and the positional arguments are always read."""
    options = [a for a in args._parser._actions if a.option_strings and a.dest not in ALWAYS_READ]
    flag = {a.dest: a.option_strings[0] for a in options}
    given = [flag[a.dest] for a in options if a.dest not in reads and getattr(args, a.dest) != a.default]
    if given:
        takes = ", ".join(flag[d] for d in reads) or "no other option"
        raise InputError(f"{', '.join(given)}: {command} does not use {'it' if len(given) == 1 else 'them'}; "
                         f"it takes {takes} (and --out, --force)")

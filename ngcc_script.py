"""The ``ngcc`` console script: :func:`ngcc.cli.main.main`, imported inside a guard.

It lies outside the package because importing any ``ngcc`` module first imports the
package (``ngcc/__init__.py``) and then the command line's modules (a fifth of a second
of CPU on a busy host; a command loads what it runs when it runs); a Ctrl-C then would
end in a traceback. Here it ends with one line and exit status 130, as a Ctrl-C later
in a command does.
"""

import sys


def main() -> int:
    """Run the ``ngcc`` command line; 130 when interrupted while it starts."""
    try:
        from ngcc.cli.main import main as command_line
    except KeyboardInterrupt:
        print("ngcc: interrupted while starting; nothing was done", file=sys.stderr)
        return 130
    return command_line()


if __name__ == "__main__":
    sys.exit(main())

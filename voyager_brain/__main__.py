"""`python -m voyager_brain` is the `voyager-brain` command."""

from .cli import main

if __name__ == "__main__":
    main()

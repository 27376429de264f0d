"""`python -m chatjudge.cli`."""

from chatjudge.cli import main

if __name__ == "__main__":
    main()

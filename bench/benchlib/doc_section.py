"""A bench's results in docs/benchmarks.md: what stands between its two
markers is replaced, the prose around them stays. Every bench writes its
table through this."""

from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"


def replace_section(begin: str, end: str, text: str, heading: str) -> None:
    """Puts text between the markers begin and end; where the document has
    no such pair yet, it is added at its end under ## heading."""
    doc = DOC.read_text()
    block = f"{begin}\n{text.rstrip()}\n{end}"
    if begin in doc and end in doc:
        head, rest = doc.split(begin, 1)
        doc = head + block + rest.split(end, 1)[1]
    else:
        doc = doc.rstrip("\n") + f"\n\n## {heading}\n\n{block}\n"
    DOC.write_text(doc)

"""Every record of a magic-v2 batch checked before an append, as Kafka's leader checks it.

``walk_batch`` takes one batch whose 61-byte header has been read (framing, magic and
CRC are batch.py's and the caller's business), decompresses its records section when
the batch is compressed, and walks every record (``record_scan``). It answers the
records' max timestamp (Kafka's LogValidator recomputes it from the records: the header's
may disagree), or the Kafka error to refuse the batch with: INVALID_RECORD (87) for a record that does
not parse or records that do not fill the batch exactly (Kafka's InvalidRecordException),
CORRUPT_MESSAGE (2) for a payload that does not decompress, and
UNSUPPORTED_COMPRESSION_TYPE (76) for a codec Kafka does not have. ``check_batch`` is the
same walk answering only the problem, or None.

The walk has two forms with one behaviour: the compiled ``_record_scan`` (built by
setup.py) and the pure-Python ``record_scan``. The compiled one is used when it is
installed; ``KIPPER_RECORD_SCAN=python`` picks the Python one, ``=c`` demands the
compiled one (an import error otherwise).
"""

from __future__ import annotations

import os
from typing import NamedTuple

from kipper.protocol import batch as b
from kipper.protocol import compression, record_scan

try:
    from kipper.protocol import _record_scan
except ImportError as exc:  # no C compiler at install time: the pure-Python form
    _record_scan = None
    COMPILED_IMPORT_ERROR: str | None = str(exc)
else:
    COMPILED_IMPORT_ERROR = None

COMPILED = _record_scan is not None
# every form installed here, by name: the tests run each
SCANS = {"python": record_scan.scan, **({"c": _record_scan.scan} if COMPILED else {})}

_CHOICE = os.environ.get("KIPPER_RECORD_SCAN", "").strip().lower()
if _CHOICE == "c" and not COMPILED:
    raise ImportError(f"KIPPER_RECORD_SCAN=c but the compiled record parser is not installed "
                      f"({COMPILED_IMPORT_ERROR}); reinstall kipper with a C compiler present")
if _CHOICE not in ("", "c", "python"):
    raise ImportError(f"KIPPER_RECORD_SCAN={_CHOICE!r}: expected 'c' or 'python'")
SCAN_NAME = "python" if _CHOICE == "python" or not COMPILED else "c"
scan = SCANS[SCAN_NAME]


MESSAGE_TOO_LARGE = 10
# kipper's limit on a compressed batch's records once decompressed (Kafka has none: its
# leader streams them). A batch of a 1 MB payload that expands past it is almost surely
# a decompression bomb; every consumer would have to expand it too. MESSAGE_TOO_LARGE
# makes Kafka's producers split the batch and send the halves.
MAX_UNCOMPRESSED_BYTES = compression.SCRATCH_BYTES


class RecordProblem(NamedTuple):
    """Why a batch is refused: a Kafka error code, the index in the batch of the record
    at fault (-1 when no one record is: bytes after the last record, a bad payload) and
    a message for the Produce response and the log."""

    code: int
    batch_index: int
    message: str


def check_batch(buf, start: int, end: int, header: b.BatchHeader, scan=scan,
                max_uncompressed_bytes: int = MAX_UNCOMPRESSED_BYTES) -> RecordProblem | None:
    """None when every record of the batch ``buf[start:end]`` (``header`` read from it)
    parses and the records fill it exactly; else the problem (``walk_batch``)."""
    found = walk_batch(buf, start, end, header, scan, max_uncompressed_bytes)
    return found if type(found) is RecordProblem else None


def walk_batch(buf, start: int, end: int, header: b.BatchHeader, scan=scan,
               max_uncompressed_bytes: int = MAX_UNCOMPRESSED_BYTES) -> RecordProblem | int:
    """The records' max timestamp (-1 when none has one) when every record of the batch
    ``buf[start:end]`` (``header`` read from it) parses and the records fill it exactly;
    else the problem. ``scan`` is one of ``SCANS`` (the installed default unless a test
    picks one). A compressed batch whose records take more than ``max_uncompressed_bytes``
    is refused (MESSAGE_TOO_LARGE)."""
    count = header.records_count
    base_timestamp = header.base_timestamp
    codec = header.attributes & b.COMPRESSION_MASK
    if codec == compression.NONE:
        found = scan(buf, start + b.HEADER_SIZE, end, count, base_timestamp)
        return found if type(found) is int else RecordProblem(*found)
    name = compression.NAMES.get(codec)
    if name is None:
        return RecordProblem(b.UNSUPPORTED_COMPRESSION_TYPE, -1, f"unknown compression codec {codec}")
    view = buf if type(buf) is memoryview else memoryview(buf)
    try:
        found = compression.read_decompressed(
            codec, view[start + b.HEADER_SIZE:end],
            lambda payload: scan(payload, 0, len(payload), count, base_timestamp), max_uncompressed_bytes)
    except compression.TooLarge as exc:
        return RecordProblem(MESSAGE_TOO_LARGE, -1, f"the {name} payload of the record batch is too large: {exc}")
    except compression.Undecompressable as exc:
        return RecordProblem(b.CORRUPT_MESSAGE, -1,
                             f"the {name} payload of the record batch does not decompress: {exc}")
    return found if type(found) is int else RecordProblem(*found)

"""Record-batch compression codecs (attributes bits 0-2), all through cramjam.

Snappy uses the xerial block framing that Kafka's Java client writes; raw
snappy is also accepted on read because librdkafka sends it. LZ4 is the
standard frame format (Kafka magic >= 1), zstd and gzip their usual frames.
"""

from __future__ import annotations

import struct

import cramjam

NONE, GZIP, SNAPPY, LZ4, ZSTD = 0, 1, 2, 3, 4
NAMES = {NONE: "none", GZIP: "gzip", SNAPPY: "snappy", LZ4: "lz4", ZSTD: "zstd"}
BY_NAME = {v: k for k, v in NAMES.items()}

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK = 32 * 1024
_I32 = struct.Struct(">i")


class UnsupportedCodec(ValueError):
    pass


DecompressionError = cramjam.DecompressionError


def _snappy_compress(data) -> bytes:
    out = [_XERIAL_HEADER]
    view = memoryview(data)
    for start in range(0, len(view), _XERIAL_BLOCK):
        block = bytes(cramjam.snappy.compress_raw(view[start:start + _XERIAL_BLOCK]))
        out.append(_I32.pack(len(block)))
        out.append(block)
    return b"".join(out)


def _snappy_decompress(data) -> bytes:
    data = bytes(data)
    if not data.startswith(_XERIAL_MAGIC):
        return bytes(cramjam.snappy.decompress_raw(data))
    pos = len(_XERIAL_HEADER)
    out = []
    while pos < len(data):
        (size,) = _I32.unpack_from(data, pos)
        pos += 4
        if size < 0 or pos + size > len(data):
            raise ValueError("truncated xerial snappy block")
        out.append(bytes(cramjam.snappy.decompress_raw(data[pos:pos + size])))
        pos += size
    return b"".join(out)


def _lz4_frame(data, level: int | None = None) -> bytes:
    """An LZ4 frame with independent blocks and no content checksum, as Kafka's
    KafkaLZ4BlockOutputStream writes: Kafka refuses linked ("dependent") blocks with
    "Dependent block stream is unsupported", cramjam's default."""
    out = cramjam.lz4.Compressor(level=level, content_checksum=False, block_linked=False)
    out.compress(data)
    return bytes(out.finish())


_COMPRESS = {
    GZIP: lambda d: bytes(cramjam.gzip.compress(d)),
    SNAPPY: _snappy_compress,
    LZ4: _lz4_frame,
    ZSTD: lambda d: bytes(cramjam.zstd.compress(d)),
}
_DECOMPRESS = {
    GZIP: lambda d: bytes(cramjam.gzip.decompress(d)),
    SNAPPY: _snappy_decompress,
    LZ4: lambda d: bytes(cramjam.lz4.decompress(d)),
    ZSTD: lambda d: bytes(cramjam.zstd.decompress(d)),
}


_LEVELED = {
    GZIP: lambda d, level: bytes(cramjam.gzip.compress(d, level=level)),
    LZ4: _lz4_frame,
    ZSTD: lambda d, level: bytes(cramjam.zstd.compress(d, level=level)),
}
# Kafka's "use the codec's default" levels (compression.<codec>.level defaults)
DEFAULT_LEVELS = {GZIP: -1, LZ4: 9, ZSTD: 3}


def compress(codec: int, data, level: int | None = None) -> bytes:
    """``level``: a codec level as Kafka's compression.<codec>.level gives it (gzip's -1 is
    the codec default); None keeps cramjam's default."""
    if codec == NONE:
        return bytes(data)
    if level is not None and codec in _LEVELED and not (codec == GZIP and level == -1):
        return _LEVELED[codec](data, level)
    try:
        return _COMPRESS[codec](data)
    except KeyError:
        raise UnsupportedCodec(f"unknown compression codec {codec}") from None


def decompress(codec: int, data) -> bytes:
    if codec == NONE:
        return bytes(data)
    try:
        fn = _DECOMPRESS[codec]
    except KeyError:
        raise UnsupportedCodec(f"unknown compression codec {codec}") from None
    return fn(data)

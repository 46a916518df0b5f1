"""Deterministic test content shared by http_server.py and the clients.

content(size, seed) yields the same bytes on both sides (a seeded PRNG in
64 KiB chunks), so a client checks a download's SHA-256 without the server
sending a digest, and no two chunks of a transfer are alike (a reordered or
duplicated chunk changes the digest).
"""
import hashlib
import random

CHUNK = 64 * 1024

CONTENT_TYPES = {
    "html": "text/html; charset=utf-8",
    "js": "application/javascript",
    "css": "text/css",
    "png": "image/png",
    "jpg": "image/jpeg",
    "bin": "application/octet-stream",
}


def content(size, seed):
    rng = random.Random("egw-%s" % seed)
    left = size
    while left > 0:
        n = min(CHUNK, left)
        yield rng.randbytes(n)
        left -= n


def digest(size, seed):
    h = hashlib.sha256()
    for chunk in content(size, seed):
        h.update(chunk)
    return h.hexdigest()


def digest_of(read):
    """(SHA-256 hex, size) of what read(65536) returns until b"" (an HTTP
    response's read, a socket's recv)."""
    h = hashlib.sha256()
    size = 0
    while True:
        data = read(1 << 16)
        if not data:
            return h.hexdigest(), size
        h.update(data)
        size += len(data)


def content_type(path):
    """The Content-Type for a path by its extension (default octet-stream)."""
    name = path.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[1].lower() if "." in name else "bin"
    return CONTENT_TYPES.get(ext, "application/octet-stream")

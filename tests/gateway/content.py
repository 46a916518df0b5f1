"""Deterministic test content shared by http_server.py and client.py.

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


def content_type(path):
    """The Content-Type for a path by its extension (default octet-stream)."""
    name = path.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[1].lower() if "." in name else "bin"
    return CONTENT_TYPES.get(ext, "application/octet-stream")

